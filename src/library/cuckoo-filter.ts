/**
 * CuckooFilter: the in-process face of bfs's Cuckoo filter, beside {@link BloomFilter}. It wraps
 * the exact filter behind every CF.* key (core/cuckoo-filter.ts: RedisBloom 2.4's buckets,
 * fingerprints and kicks), takes strings as well as bytes, defaults what CF.RESERVE defaults, and
 * throws one error where CF.ADD answers `Filter is full`.
 *
 * Strings are encoded as UTF-8, as Redis clients send a JavaScript string: the same items added
 * in the same order leave the same buckets as `CF.ADD key item` does, so `filter.has('x')` in
 * process answers what `CF.EXISTS key x` answers over the wire for the same filter.
 */
import {
  CuckooFilter as CoreCuckooFilter,
  CF_DEFAULT_BUCKET_SIZE,
  CF_DEFAULT_EXPANSION,
  CF_DEFAULT_MAX_ITERATIONS,
  CF_MAX_BUCKET_SIZE,
  CF_MAX_EXPANSION,
  CF_MAX_ITERATIONS,
  EXISTS,
  INSERTED,
  NO_SPACE,
  reserveSettings,
} from '../core/cuckoo-filter.js'
import { cuckooHealth } from '../core/cuckoo-health.js'
import type { FilterHealth } from '../core/filter-health.js'
import { decodeCuckooFile, encodeCuckooFile } from '../format/cuckoo-file.js'
import { itemBytes, type Item } from './bloom-filter.js'

/** How to build a {@link CuckooFilter}; omitted fields take CF.RESERVE's defaults. */
export interface CuckooFilterOptions {
  /** Items the first sub-filter is planned for: an integer ≥ 2 × bucketSize (its buckets: capacity / bucketSize, up to a power of two). */
  capacity: number
  /** Fingerprints per bucket, 1..255. Default 2 (RedisBloom's). */
  bucketSize?: number
  /** Fingerprints an add moves before it grows the filter or gives up, 1..65535. Default 20. */
  maxIterations?: number
  /** Size factor of each new sub-filter, 0..32768, rounded up to a power of two; 0 never grows. Default 1. */
  expansion?: number
}

/** What CF.INFO reports, by name. */
export interface CuckooFilterInfo {
  /** Bytes as CF.INFO "Size" counts them: 40 + 16 per sub-filter + the buckets. */
  readonly sizeBytes: number
  /** Buckets of the first sub-filter. */
  readonly numBuckets: number
  /** Sub-filters. */
  readonly numFilters: number
  /** Items inserted less items deleted. */
  readonly items: number
  /** Deletes since the last compaction. */
  readonly deletes: number
  readonly bucketSize: number
  readonly expansion: number
  readonly maxIterations: number
}

/**
 * Thrown by {@link CuckooFilter.add} when the item could not be stored: the filter cannot grow
 * (EXPANSION 0) and its kick walk found no room (`full`), or growing would pass bfs's limits
 * (`growth-failed`: more than 65535 sub-filters or 2 GiB of buckets). The filter is unchanged.
 */
export class CuckooFilterFullError extends Error {
  /** `full` (CF.ADD's `Filter is full`) or `growth-failed` (`Memory allocation failure`). */
  readonly code: 'full' | 'growth-failed'

  /** Creates the error for an add's outcome. */
  constructor(code: 'full' | 'growth-failed') {
    super(code === 'full' ? 'Filter is full' : 'the filter cannot grow')
    this.name = 'CuckooFilterFullError'
    this.code = code
  }
}

function checkedInteger(value: number, name: string, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${value}`)
  return value
}

/**
 * A Cuckoo filter in your own process: `add`, `has`, `count` and `delete` with RedisBloom 2.4's
 * fingerprints and buckets; it grows by a sub-filter when full unless `expansion` is 0.
 *
 * ```ts
 * const sessions = new CuckooFilter({ capacity: 100_000 })
 * sessions.add('s-1')
 * sessions.has('s-1')      // true
 * sessions.delete('s-1')   // true: forgotten
 * ```
 *
 * Delete only items you added: deleting one never added may remove another item that shares its
 * fingerprint and bucket (CF.DEL does the same).
 */
export class CuckooFilter {
  /** The core filter, shared, not copied: hand it to a server's registry to serve it over the wire. */
  readonly core: CoreCuckooFilter

  /**
   * Creates an empty filter with one sub-filter, as CF.RESERVE does.
   *
   * @throws RangeError when an option is out of CF.RESERVE's bounds, or capacity is under 2 × bucketSize
   */
  constructor(options: CuckooFilterOptions) {
    const bucketSize = checkedInteger(options.bucketSize ?? CF_DEFAULT_BUCKET_SIZE, 'bucketSize', 1, CF_MAX_BUCKET_SIZE)
    const maxIterations = checkedInteger(
      options.maxIterations ?? CF_DEFAULT_MAX_ITERATIONS,
      'maxIterations',
      1,
      CF_MAX_ITERATIONS,
    )
    const expansion = checkedInteger(options.expansion ?? CF_DEFAULT_EXPANSION, 'expansion', 0, CF_MAX_EXPANSION)
    const capacity = checkedInteger(options.capacity, 'capacity', 2 * bucketSize, Number.MAX_SAFE_INTEGER)
    this.core = new CoreCuckooFilter(reserveSettings(capacity, bucketSize, maxIterations, expansion))
  }

  /** Wraps an existing core filter (for instance one taken from a server's registry); nothing is copied. */
  static wrap(filter: CoreCuckooFilter): CuckooFilter {
    const wrapped = Object.create(CuckooFilter.prototype) as { core: CoreCuckooFilter }
    wrapped.core = filter
    return wrapped as CuckooFilter
  }

  /**
   * Decodes a Cuckoo filter file (what {@link toBytes} or a bfs snapshot writes; docs/FORMAT.md).
   * The buckets are views into `bytes`: do not reuse that array afterwards.
   *
   * @throws DecodeError when the bytes are not a whole, valid Cuckoo filter file
   */
  static fromBytes(bytes: Uint8Array): CuckooFilter {
    return CuckooFilter.wrap(CoreCuckooFilter.fromParts(decodeCuckooFile(bytes).parts))
  }

  /**
   * Adds a copy of the item (CF.ADD): an item added twice is stored twice and needs two deletes.
   *
   * @throws CuckooFilterFullError when it cannot be stored; nothing changed then
   */
  add(item: Item): void {
    const bytes = itemBytes(item)
    this.store(this.core.add(bytes, 0, bytes.length, false))
  }

  /**
   * Adds the item unless it may be present already (CF.ADDNX).
   *
   * @returns true when it was added, false when it may already be there
   * @throws CuckooFilterFullError when it cannot be stored; nothing changed then
   */
  addIfAbsent(item: Item): boolean {
    const bytes = itemBytes(item)
    return this.store(this.core.add(bytes, 0, bytes.length, true))
  }

  private store(outcome: number): boolean {
    if (outcome === INSERTED) return true
    if (outcome === EXISTS) return false
    throw new CuckooFilterFullError(outcome === NO_SPACE ? 'full' : 'growth-failed')
  }

  /** Whether the item may have been added (CF.EXISTS): false is certain. */
  has(item: Item): boolean {
    const bytes = itemBytes(item)
    return this.core.has(bytes, 0, bytes.length)
  }

  /** Copies of the item's fingerprint in its buckets (CF.COUNT): an upper bound of its adds less deletes. */
  count(item: Item): number {
    const bytes = itemBytes(item)
    return this.core.count(bytes, 0, bytes.length)
  }

  /**
   * Removes one copy of the item (CF.DEL). Only for items that were added: see the class notes.
   *
   * @returns true when a copy of its fingerprint was found and removed
   */
  delete(item: Item): boolean {
    const bytes = itemBytes(item)
    return this.core.delete(bytes, 0, bytes.length)
  }

  /** Moves fingerprints into older sub-filters and frees emptied newest ones (CF.COMPACT). */
  compact(): void {
    this.core.compact(true)
  }

  /** Items inserted less items deleted (CF.INFO "Number of items inserted"). */
  get size(): number {
    return Number(this.core.numItems)
  }

  /** What CF.INFO reports. */
  info(): CuckooFilterInfo {
    const core = this.core
    return {
      sizeBytes: core.sizeBytes(),
      numBuckets: core.numBuckets,
      numFilters: core.numFilters,
      items: Number(core.numItems),
      deletes: Number(core.numDeletes),
      bucketSize: core.bucketSize,
      expansion: core.expansion,
      maxIterations: core.maxIterations,
    }
  }

  /** Fill, estimated false-positive rate and verdict, as BFS.HEALTH reports them (core/cuckoo-health.ts). */
  health(): FilterHealth {
    return cuckooHealth(this.core)
  }

  /**
   * The filter as one bfs Cuckoo filter file (docs/FORMAT.md), readable by {@link fromBytes};
   * `name` is stored in it (empty by default).
   */
  toBytes(name: Item = ''): Uint8Array {
    return encodeCuckooFile({ name: itemBytes(name), parts: this.core.toParts() })
  }
}
