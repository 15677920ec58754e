/**
 * The named filters. Names are arbitrary bytes, kept as latin1 strings (one char per byte) so a
 * Map can hold them and they convert back to the exact bytes.
 */
import type { ScalableBloomFilter } from '../core/scalable-filter.js'
import type { HealthWatch } from '../core/filter-health.js'
import { RememberedBytes } from '../protocol/same-bytes.js'

/** A filter with the bookkeeping the store needs around it. */
export interface FilterEntry {
  readonly name: string
  filter: ScalableBloomFilter
  /** Bumped on every change; a snapshot rewrites a filter only when this moved since it was saved. */
  version: number
  /** Position in insertion order, increasing; SCAN's cursor. */
  readonly seq: number
  /** The over-target warning's state (commands/health-watch.ts), made on the first add. */
  healthWatch: HealthWatch | undefined
}

/** The longest name a filter can have: V8's longest string (2^29 - 24 characters on 64 bits). */
export const MAX_KEY_BYTES = 2 ** 29 - 24

function nameTooLong(): Error {
  return Object.assign(new Error(`a key longer than ${MAX_KEY_BYTES} bytes cannot be held`), { code: 'ERR_STRING_TOO_LONG' })
}

/** The named filters of one server (its keyspace), with the change counter save rules read. */
export class FilterRegistry {
  private readonly filters = new Map<string, FilterEntry>()
  /** Changes since the last successful save (redis's server.dirty). */
  dirty = 0
  private nextSeq = 1
  /**
   * The last key {@link lookup} looked for, copied, and what it found (undefined: no such filter):
   * a run of commands on one key (the usual traffic) compares bytes instead of making a string and
   * hashing it for every command. Forgotten on every change to the Map.
   */
  private readonly lastKey = new RememberedBytes()
  private lastEntry: FilterEntry | undefined

  /**
   * The name under which a raw key argument, `key[start, end)`, is stored.
   * @throws Error with code `ERR_STRING_TOO_LONG` (Node's own, which dispatch answers) for a key
   *   longer than {@link MAX_KEY_BYTES}, at once: Node would copy the whole key before refusing
   */
  static nameOf(key: Uint8Array, start = 0, end = key.length): string {
    if (end - start > MAX_KEY_BYTES) throw nameTooLong()
    const bytes = Buffer.isBuffer(key) ? key : Buffer.from(key.buffer, key.byteOffset, key.byteLength)
    return bytes.toString('latin1', start, end)
  }

  /**
   * The filter stored under a raw key argument, `key[start, end)`: `get(nameOf(key))`, without
   * the string when the key is the last one looked for.
   */
  lookup(key: Uint8Array, start = 0, end = key.length): FilterEntry | undefined {
    const lastKey = this.lastKey
    if (lastKey.matches(key, start, end)) return this.lastEntry
    const entry = this.filters.get(FilterRegistry.nameOf(key, start, end))
    lastKey.remember(key, start, end) // a copy: the argument is in the read buffer
    this.lastEntry = entry
    return entry
  }

  /** The raw bytes of a stored name. */
  static bytesOf(name: string): Buffer {
    return Buffer.from(name, 'latin1')
  }

  get(name: string): FilterEntry | undefined {
    return this.filters.get(name)
  }

  has(name: string): boolean {
    return this.filters.has(name)
  }

  /** Stores a filter under a name, replacing any other; counts one change. */
  set(name: string, filter: ScalableBloomFilter): FilterEntry {
    this.lastKey.forget()
    // Delete first so the Map's order stays the order of seq.
    this.filters.delete(name)
    const entry: FilterEntry = { name, filter, version: 1, seq: this.nextSeq++, healthWatch: undefined }
    this.filters.set(name, entry)
    this.dirty++
    return entry
  }

  /** Records that a filter changed (`changes` items added). */
  touch(entry: FilterEntry, changes = 1): void {
    entry.version++
    this.dirty += changes
  }

  delete(name: string): boolean {
    this.lastKey.forget()
    if (!this.filters.delete(name)) return false
    this.dirty++
    return true
  }

  /** RENAME: moves a filter, replacing the destination. */
  rename(from: string, to: string): boolean {
    const entry = this.filters.get(from)
    if (!entry) return false
    if (from === to) return true
    this.delete(from)
    this.set(to, entry.filter).healthWatch = entry.healthWatch // warned once, under either name
    return true
  }

  clear(): number {
    const count = this.filters.size
    for (const name of [...this.filters.keys()]) this.delete(name)
    return count
  }

  get size(): number {
    return this.filters.size
  }

  names(): IterableIterator<string> {
    return this.filters.keys()
  }

  entries(): IterableIterator<FilterEntry> {
    return this.filters.values()
  }

  /** Bytes of bitmap held by all filters. */
  bitmapBytes(): number {
    let total = 0
    for (const entry of this.filters.values()) {
      for (const layer of entry.filter.layers) total += layer.bitmap.byteLength
    }
    return total
  }
}
