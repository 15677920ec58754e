/**
 * The named filters. Names are arbitrary bytes, kept as latin1 strings (one char per byte) so a
 * Map can hold them and they convert back to the exact bytes.
 */
import type { ScalableBloomFilter } from '../core/scalable-filter.js'
import type { HealthWatch } from '../core/filter-health.js'
import { WindowFilter } from '../core/window-filter.js'
import { CuckooFilter } from '../core/cuckoo-filter.js'
import { RememberedBytes } from '../protocol/remembered-bytes.js'
import { holdsOwnArena, reclaimSoon } from './memory-reclaim.js'
import { SlotIndex, slotOfName } from './slot-index.js'

/** What a key holds: a Bloom filter (BF.*), a sliding-window filter (APBF.*) or a Cuckoo filter (CF.*). */
export type StoredFilter = ScalableBloomFilter | WindowFilter | CuckooFilter

/** The bookkeeping the store keeps around every key, whatever it holds. */
interface EntryBase {
  readonly name: string
  /** Bumped on every change; a snapshot rewrites a filter only when this moved since it was saved. */
  version: number
  /** Position in insertion order, increasing; SCAN's cursor. */
  readonly seq: number
  /** The over-target warning's state (commands/kernel/health-watch.ts), made on the first add. */
  healthWatch: HealthWatch | undefined
  /** When the key expires, absolute Unix ms (redis's db->expires value); undefined: never. */
  expiresAt: number | undefined
  /** Its index among the keys with an expiry ({@link FilterRegistry.expiringAt}); -1: none. */
  expiryIndex: number
}

/** A key holding a Bloom filter (TYPE MBbloom--). */
export interface BloomEntry extends EntryBase {
  readonly kind: 'bloom'
  filter: ScalableBloomFilter
}

/** A key holding a sliding-window filter (TYPE APBFcTYPE or APBFtTYPE). */
export interface WindowEntry extends EntryBase {
  readonly kind: 'window'
  filter: WindowFilter
}

/** A key holding a Cuckoo filter (TYPE MBbloomCF). */
export interface CuckooEntry extends EntryBase {
  readonly kind: 'cuckoo'
  filter: CuckooFilter
}

/** A key with its value, told apart by `kind`: commands of one family answer -WRONGTYPE on the other. */
export type FilterEntry = BloomEntry | WindowEntry | CuckooEntry

/**
 * What happens to a key found past its expiry (redis expireIfNeeded):
 * - 'delete': it is deleted and {@link ExpiryPolicy.expired} told (a master);
 * - 'hide': it stays, but reads see no key (a replica: its master's DEL removes it);
 * - 'keep': it is seen as it is (while loading, and the master's own stream on a replica).
 */
export type ExpiryMode = 'delete' | 'hide' | 'keep'

/** The server's side of expiry: the clock, the mode of the moment, what a deletion by expiry does. */
export interface ExpiryPolicy {
  now(): number
  mode(): ExpiryMode
  /** After a key was deleted because it expired: count it, propagate its DEL (in database `db`). */
  expired(name: string, db: number): void
}

/** Without a server: the wall clock, and expired keys are deleted silently. */
const STANDALONE_EXPIRY: ExpiryPolicy = { now: Date.now, mode: () => 'delete', expired: () => {} }

/** The longest name a filter can have: V8's longest string (2^29 - 24 characters on 64 bits). */
export const MAX_KEY_BYTES = 2 ** 29 - 24

function nameTooLong(): Error {
  return Object.assign(new Error(`a key longer than ${MAX_KEY_BYTES} bytes cannot be held`), {
    code: 'ERR_STRING_TOO_LONG',
  })
}

/**
 * What the databases of one server share (store/databases.ts): the change counter save rules read
 * (redis server.dirty) and the expiry policy.
 */
export class KeyspaceShared {
  dirty = 0
  expiry: ExpiryPolicy = STANDALONE_EXPIRY
  /** Keys with an expiry in every database (the active cycle's one check while there are none). */
  expiring = 0
  /**
   * Told when what a key holds changes other than by its own filter's adds (set, deleted, renamed,
   * its expiry set or removed), before the command that did it replies; and when every key of a
   * database may have (SWAPDB). Threads answering checks from a copy of a key's layout
   * (server/thread-plane.ts) drop it.
   */
  keyChanged: ((db: number, name: string) => void) | undefined = undefined
  everyKeyChanged: (() => void) | undefined = undefined
}

/** A view of what the databases of a server share: a database's registry, or all of them (store/databases.ts). */
export abstract class KeyspaceView {
  constructor(
    /** What it shares with the other databases of its server. */
    readonly shared: KeyspaceShared,
  ) {}

  /** The server's expiry policy (set by server/key-expiry.ts), shared by every database. */
  get expiry(): ExpiryPolicy {
    return this.shared.expiry
  }

  set expiry(policy: ExpiryPolicy) {
    this.shared.expiry = policy
  }

  /** Changes since the last successful save (redis's server.dirty), counted for every database together. */
  get dirty(): number {
    return this.shared.dirty
  }

  set dirty(changes: number) {
    this.shared.dirty = changes
  }
}

/** The named filters of one database of a server (its keyspace), with the change counter save rules read. */
export class FilterRegistry extends KeyspaceView {
  private filters = new Map<string, FilterEntry>()
  /**
   * The entries with an expiry (redis db->expires). An array, removed from by moving the last
   * entry into the hole: a Set or Map rehashes all of itself when it shrinks by half, and a
   * million keys expiring together made that one deletion take 60 ms or more.
   */
  private expiring: FilterEntry[] = []
  /** Where the active expiry cycle's walk over {@link expiringAt} stopped (redis db->expires_cursor). */
  expiryCursor = 0
  private nextSeq = 1
  /**
   * The last key {@link lookup} looked for, copied, and what it found (undefined: no such filter):
   * a run of commands on one key (the usual traffic) compares bytes instead of making a string and
   * hashing it for every command. Forgotten on every change to the Map.
   */
  private lastKey = new RememberedBytes()
  private lastEntry: FilterEntry | undefined
  /** The keys of each hash slot, once {@link indexSlots} turned it on (cluster mode); else undefined. */
  private slotIndex: SlotIndex | undefined

  /**
   * `index`: the database this is (SELECT's number); `shared`: what it shares with the other
   * databases of its server (a registry made alone has its own).
   */
  constructor(
    readonly index = 0,
    shared = new KeyspaceShared(),
  ) {
    super(shared)
  }

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
    let entry: FilterEntry | undefined
    if (lastKey.matches(key, start, end)) {
      entry = this.lastEntry
    } else {
      entry = this.filters.get(FilterRegistry.nameOf(key, start, end))
      lastKey.remember(key, start, end) // a copy: the argument is in the read buffer
      this.lastEntry = entry
    }
    return entry === undefined || entry.expiresAt === undefined ? entry : this.unlessExpired(entry)
  }

  /**
   * The entry, or undefined when it is past its expiry (redis expireIfNeeded, on every lookup):
   * deleted then, or only hidden, as {@link ExpiryPolicy.mode} says.
   */
  private unlessExpired(entry: FilterEntry): FilterEntry | undefined {
    if (!this.isExpired(entry)) return entry
    const mode = this.expiry.mode()
    if (mode === 'keep') return entry
    if (mode === 'delete') this.deleteExpired(entry)
    return undefined
  }

  /** Whether the entry is past its expiry now (redis keyIsExpired: strictly after the time). */
  isExpired(entry: FilterEntry, now = this.expiry.now()): boolean {
    return entry.expiresAt !== undefined && now > entry.expiresAt
  }

  /** Deletes an entry because it expired, and tells the policy (a DEL to propagate, a count). */
  deleteExpired(entry: FilterEntry): void {
    this.delete(entry.name)
    this.expiry.expired(entry.name, this.index)
  }

  /**
   * Sets or removes (undefined) a key's expiry; counts one change. The filter's version does not
   * move: the snapshot keeps the expiry in its MANIFEST, not in the filter's file.
   */
  setExpiry(entry: FilterEntry, expiresAt: number | undefined): void {
    entry.expiresAt = expiresAt
    this.shared.keyChanged?.(this.index, entry.name)
    if (expiresAt === undefined) this.forgetExpiry(entry)
    else if (entry.expiryIndex < 0) {
      entry.expiryIndex = this.expiring.push(entry) - 1
      this.shared.expiring++
    }
    this.shared.dirty++
  }

  private forgetExpiry(entry: FilterEntry): void {
    const index = entry.expiryIndex
    if (index < 0) return
    this.shared.expiring--
    const last = this.expiring.pop()!
    if (last !== entry) {
      this.expiring[index] = last
      last.expiryIndex = index
    }
    entry.expiryIndex = -1
  }

  /** A copy of the entries with an expiry. */
  withExpiry(): FilterEntry[] {
    return this.expiring.slice()
  }

  /**
   * The `index`th entry with an expiry, for a walk by index (the active cycle's cursor): deleting
   * it moves the last one to `index`.
   */
  expiringAt(index: number): FilterEntry | undefined {
    return this.expiring[index]
  }

  /** How many keys have an expiry (INFO keyspace expires=), logically expired ones included. */
  get expiringCount(): number {
    return this.expiring.length
  }

  /** The raw bytes of a stored name. */
  static bytesOf(name: string): Buffer {
    return Buffer.from(name, 'latin1')
  }

  /** The filter under a name, unless it expired (see {@link lookup}). */
  get(name: string): FilterEntry | undefined {
    const entry = this.filters.get(name)
    return entry === undefined || entry.expiresAt === undefined ? entry : this.unlessExpired(entry)
  }

  has(name: string): boolean {
    return this.get(name) !== undefined
  }

  /** The filter under a name, expired or not, and nothing deleted (SAVE, loading, the expiry cycle). */
  peek(name: string): FilterEntry | undefined {
    return this.filters.get(name)
  }

  /** Stores a filter under a name, replacing any other (and its expiry: the new one has none); counts one change. */
  set(name: string, filter: ScalableBloomFilter): BloomEntry
  set(name: string, filter: WindowFilter): WindowEntry
  set(name: string, filter: CuckooFilter): CuckooEntry
  set(name: string, filter: StoredFilter): FilterEntry
  set(name: string, filter: StoredFilter): FilterEntry {
    this.lastKey.forget()
    // Delete first so the Map's order stays the order of seq.
    this.delete(name, false)
    const base = {
      name,
      version: 1,
      seq: this.nextSeq++,
      healthWatch: undefined,
      expiresAt: undefined,
      expiryIndex: -1,
    }
    const entry: FilterEntry =
      filter instanceof WindowFilter
        ? { ...base, kind: 'window', filter }
        : filter instanceof CuckooFilter
          ? { ...base, kind: 'cuckoo', filter }
          : { ...base, kind: 'bloom', filter }
    this.filters.set(name, entry)
    this.slotIndex?.add(name)
    this.shared.dirty++
    this.shared.keyChanged?.(this.index, name)
    return entry
  }

  /** Records that a filter changed (`changes` items added). */
  touch(entry: FilterEntry, changes = 1): void {
    entry.version++
    this.shared.dirty += changes
  }

  /** Deletes a filter, expired or not, with its expiry. */
  delete(name: string, counted = true): boolean {
    this.lastKey.forget()
    this.lastEntry = undefined // else a deleted filter (and its memory) stays reachable from here
    const entry = this.filters.get(name)
    if (entry === undefined) return false
    this.filters.delete(name)
    this.shared.keyChanged?.(this.index, name)
    this.slotIndex?.remove(name)
    this.forgetExpiry(entry)
    if (counted) this.shared.dirty++
    if (entry.kind === 'bloom' && holdsOwnArena(entry.filter)) reclaimSoon()
    return true
  }

  /** RENAME: moves a filter with its expiry (redis renameGenericCommand), replacing the destination. */
  rename(from: string, to: string): boolean {
    const entry = this.get(from)
    if (!entry) return false
    if (from === to) return true
    this.delete(from)
    const moved = this.set(to, entry.filter)
    moved.healthWatch = entry.healthWatch // warned once, under either name
    if (entry.expiresAt !== undefined) this.setExpiry(moved, entry.expiresAt)
    return true
  }

  clear(): number {
    const count = this.filters.size
    for (const name of [...this.filters.keys()]) this.delete(name)
    return count
  }

  /** Every filter held, logically expired ones not yet deleted included (see {@link liveSize}). */
  get size(): number {
    return this.filters.size
  }

  /** The filters a client can see: {@link size} less the expired ones still held (O(keys with an expiry)). */
  liveSize(): number {
    if (this.expiring.length === 0) return this.filters.size
    const now = this.expiry.now()
    let expired = 0
    for (const entry of this.expiring) if (now > entry.expiresAt!) expired++
    return this.filters.size - expired
  }

  /**
   * INFO keyspace's figures, over the keys a client can see: how many, how many have an expiry,
   * and their mean time left in ms, rounded down (redis estimates it by sampling; this counts).
   */
  keyspaceFigures(): { keys: number; expires: number; avgTtlMs: number } {
    const now = this.expiry.now()
    let expired = 0
    let ttlSum = 0
    for (const entry of this.expiring) {
      if (now > entry.expiresAt!) expired++
      else ttlSum += entry.expiresAt! - now
    }
    const expires = this.expiring.length - expired
    return { keys: this.filters.size - expired, expires, avgTtlMs: expires === 0 ? 0 : Math.floor(ttlSum / expires) }
  }

  /** The names a client can see, in insertion order: expired ones skipped, none deleted. */
  *names(): IterableIterator<string> {
    for (const entry of this.entries()) yield entry.name
  }

  /** The entries a client can see, in insertion order: expired ones skipped, none deleted (redis KEYS). */
  *entries(): IterableIterator<FilterEntry> {
    if (this.expiring.length === 0 || this.expiry.mode() === 'keep') {
      yield* this.filters.values()
      return
    }
    const now = this.expiry.now()
    for (const entry of this.filters.values()) if (entry.expiresAt === undefined || now <= entry.expiresAt) yield entry
  }

  /** The Bloom-filter entries a client can see (the HTTP listing and the health figures: window filters have neither). */
  *bloomEntries(): IterableIterator<BloomEntry> {
    for (const entry of this.entries()) if (entry.kind === 'bloom') yield entry
  }

  /** Every entry held, expired or not (SAVE: redis's RDB holds expired keys, and the load drops them). */
  allEntries(): IterableIterator<FilterEntry> {
    return this.filters.values()
  }

  /**
   * SWAPDB: this database takes the other's keys and the other this one's (redis
   * dbSwapDatabases swaps the dicts, not the databases): every reference to either registry stays
   * with its index.
   */
  swapContents(other: FilterRegistry): void {
    const mine = [this.filters, this.expiring, this.expiryCursor, this.nextSeq, this.lastKey, this.lastEntry] as const
    // The slot index describes the keys: rebuilt on each side rather than swapped (each keeps its own on/off).
    const [mineIndexed, otherIndexed] = [this.slotIndex !== undefined, other.slotIndex !== undefined]
    this.filters = other.filters
    this.expiring = other.expiring
    this.expiryCursor = other.expiryCursor
    this.nextSeq = other.nextSeq
    this.lastKey = other.lastKey
    this.lastEntry = other.lastEntry
    ;[other.filters, other.expiring, other.expiryCursor, other.nextSeq, other.lastKey, other.lastEntry] = mine
    this.slotIndex = undefined
    other.slotIndex = undefined
    this.shared.everyKeyChanged?.()
    if (mineIndexed) this.indexSlots()
    if (otherIndexed) other.indexSlots()
  }

  /**
   * Keeps the keys of each hash slot from now on (cluster mode, database 0: redis slot_to_keys),
   * for {@link countKeysInSlot} and {@link keysInSlot}; indexes the keys held now. Off by default,
   * so that a server outside cluster mode pays nothing per key.
   */
  indexSlots(): void {
    if (this.slotIndex !== undefined) return
    const index = new SlotIndex()
    for (const name of this.filters.keys()) index.add(name)
    this.slotIndex = index
  }

  /** Whether {@link indexSlots} turned the slot index on. */
  get slotsIndexed(): boolean {
    return this.slotIndex !== undefined
  }

  /**
   * How many keys hash to `slot` (0 .. 16383), expired ones not yet deleted included (redis
   * countKeysInSlot). Without the index, a walk over every key.
   */
  countKeysInSlot(slot: number): number {
    if (this.slotIndex !== undefined) return this.slotIndex.count(slot)
    let count = 0
    for (const name of this.filters.keys()) if (slotOfName(name) === slot) count++
    return count
  }

  /** At most `count` names of keys that hash to `slot` (redis getKeysInSlot), oldest first. */
  keysInSlot(slot: number, count: number): string[] {
    if (this.slotIndex !== undefined) return this.slotIndex.names(slot, count)
    const found: string[] = []
    for (const name of this.filters.keys()) {
      if (found.length >= count) break
      if (slotOfName(name) === slot) found.push(name)
    }
    return found
  }

  /** Bytes of bitmap held by all filters. */
  bitmapBytes(): number {
    let total = 0
    for (const entry of this.filters.values()) total += entry.filter.bitmapBytes()
    return total
  }
}
