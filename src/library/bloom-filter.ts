/**
 * BloomFilter: the in-process face of bfs's filter for programs that import the library. It wraps
 * one {@link ScalableBloomFilter} (the exact filter behind every BF.* key, answering as RedisBloom
 * 2.4 does), takes strings as well as bytes, defaults what BF.RESERVE defaults, and turns the
 * core's error values into one thrown error so that `add` can return a plain boolean.
 *
 * Strings are encoded as UTF-8, which is what Redis clients send for a JavaScript string: the
 * answer of `filter.has('x')` in process is the answer of `BF.EXISTS key x` over the wire for the
 * same filter.
 */
import { ScalableBloomFilter, type FilterInfo } from '../core/scalable-filter.js'
import { isFilterError, type FilterErrorCode } from '../core/filter-error.js'
import { decodeFilter, encodeFilter } from '../format/codec.js'

/** An item or a filter name: a string (encoded as UTF-8) or raw bytes (used as they are). */
export type Item = string | Uint8Array

/** How to build a {@link BloomFilter}; omitted fields take BF.RESERVE's defaults. */
export interface BloomFilterOptions {
  /** Items the first layer is planned for: an integer ≥ 1. */
  capacity: number
  /** Target false-positive rate in (0, 1), e.g. 0.001. */
  errorRate: number
  /** Capacity factor of each new layer once the newest is full. Default 2 (RedisBloom's). */
  expansion?: number
  /** When true the filter never grows and `add` throws {@link FilterFullError} past capacity. Default false. */
  nonScaling?: boolean
  /** When set, growth that would need a layer bitmap above this many bytes throws {@link FilterFullError}. */
  maxLayerBytes?: number
}

/** RedisBloom's default expansion (rebloom.c `BFDefaultExpansion`). */
export const DEFAULT_EXPANSION = 2

/**
 * Thrown by {@link BloomFilter.add} when the item could not be stored: the filter is non-scaling
 * and full (`non-scaling-full`) or growing would pass its byte limit (`too-large`). The filter is
 * unchanged when this is thrown.
 */
export class FilterFullError extends Error {
  /** The core's reason, the same code a BF.ADD error reply comes from. */
  readonly code: FilterErrorCode

  /** Creates the error for a core outcome `code`. */
  constructor(code: FilterErrorCode) {
    super(code === 'non-scaling-full' ? 'non scaling filter is full' : 'filter would exceed its maximum layer size')
    this.name = 'FilterFullError'
    this.code = code
  }
}

const encoder = new TextEncoder()

/** The bytes of an item: strings as UTF-8, byte arrays as they are (not copied). */
export function itemBytes(item: Item): Uint8Array {
  return typeof item === 'string' ? encoder.encode(item) : item
}

/**
 * A Bloom filter in your own process: `add` and `has` with RedisBloom 2.4's hashes, layer sizes
 * and false positives, scalable by default.
 *
 * ```ts
 * const seen = new BloomFilter({ capacity: 1_000_000, errorRate: 0.001 })
 * seen.add('https://example.com/')   // true: new
 * seen.has('https://example.com/')   // true
 * ```
 */
export class BloomFilter {
  /** The core filter, shared, not copied: hand it to a server's registry to serve it over the wire. */
  readonly scalable: ScalableBloomFilter

  /**
   * Creates an empty filter with one layer.
   *
   * @throws RangeError when capacity is not an integer ≥ 1, errorRate is not in (0, 1), expansion
   *   is not an integer in [0, 2^32), or the first layer cannot be allocated or passes maxLayerBytes
   */
  constructor(options: BloomFilterOptions) {
    this.scalable = new ScalableBloomFilter({
      capacity: options.capacity,
      errorRate: options.errorRate,
      expansion: options.expansion ?? DEFAULT_EXPANSION,
      nonScaling: options.nonScaling ?? false,
      maxLayerBytes: options.maxLayerBytes,
    })
  }

  /** Wraps an existing core filter (for instance one taken from a server's registry); nothing is copied. */
  static wrap(filter: ScalableBloomFilter): BloomFilter {
    const wrapped = Object.create(BloomFilter.prototype) as { scalable: ScalableBloomFilter }
    wrapped.scalable = filter
    return wrapped as BloomFilter
  }

  /**
   * Decodes a filter file (what {@link toBytes} or a bfs snapshot writes, or a file of the
   * original C library). The bitmaps are views into `bytes`: do not reuse that array afterwards.
   *
   * @throws DecodeError when the bytes are not a whole, valid filter file
   * @throws RangeError when the decoded parts are inconsistent
   */
  static fromBytes(bytes: Uint8Array): BloomFilter {
    return BloomFilter.wrap(ScalableBloomFilter.fromParts(decodeFilter(bytes).parts))
  }

  /**
   * Adds an item.
   *
   * @returns true when it was new, false when it was (maybe) present already (BF.ADD's 1 and 0)
   * @throws FilterFullError when it cannot be stored; nothing changed then
   */
  add(item: Item): boolean {
    const outcome = this.scalable.add(itemBytes(item))
    if (isFilterError(outcome)) throw new FilterFullError(outcome.code)
    return outcome === 1
  }

  /**
   * Adds every item, in order.
   *
   * @returns how many were new
   * @throws FilterFullError at the first item that cannot be stored; the ones before it stay added
   */
  addAll(items: Iterable<Item>): number {
    let added = 0
    for (const item of items) if (this.add(item)) added++
    return added
  }

  /** Whether the item may have been added: false is certain, true is wrong at about the error rate. */
  has(item: Item): boolean {
    return this.scalable.has(itemBytes(item))
  }

  /** Items stored so far (BF.CARD): adds that returned true. */
  get size(): number {
    return this.scalable.info().items
  }

  /** Capacity, size in bytes, layers, items and expansion, as BF.INFO reports them. */
  info(): FilterInfo {
    return this.scalable.info()
  }

  /**
   * The filter as one bfs file (docs/FORMAT.md; version 2 only past 64 layers or a 64 KiB name),
   * readable by {@link fromBytes} and `decodeFilter`. `name` is stored in the file's trailer
   * (empty by default).
   *
   * @throws RangeError when the filter or the name breaks a format limit (a name of 4 GiB or more)
   */
  toBytes(name: Item = ''): Uint8Array {
    const pieces = encodeFilter({ name: itemBytes(name), parts: this.scalable.toParts() })
    let length = 0
    for (const piece of pieces) length += piece.length
    const bytes = new Uint8Array(length)
    let offset = 0
    for (const piece of pieces) {
      bytes.set(piece, offset)
      offset += piece.length
    }
    return bytes
  }
}
