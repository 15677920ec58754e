/**
 * The filter behind every BF.* key: a chain of {@link BloomLayer}s with RedisBloom 2.4's scaling
 * (src/sb.c `SB_NewChain`, `SBChain_Add`, `SBChain_Check`) and BF.INFO accounting
 * (src/rebloom.c `BFCapacity`, `BFMemUsage`).
 */

import { BloomLayer } from './bloom-layer.js'
import { NON_SCALING_FULL, TOO_LARGE } from './filter-error.js'
import type { Bitmap } from './pieced-bitmap.js'
import { addBatch, addStaged, checkStaged, hasBatch, kernelServes, stagedItems, stageItem } from './filter-batch.js'
import type { ItemList } from './filter-batch.js'
import type { FilterError } from './filter-error.js'
import { createHashPair, hashRedisBloom, hashSeeded, REDISBLOOM_HASHING } from './hashing.js'
import type { Hashing } from './hashing.js'
import type { LayerGeometry } from './sizing.js'
import {
  ERROR_TIGHTENING_RATIO,
  filterSizeBytes,
  firstLayerErrorRate,
  hashCountFor,
  layerGeometry,
  seededGeometry,
} from './sizing.js'

export type { Hashing } from './hashing.js'

/** Largest expansion: RedisBloom keeps it in an `unsigned` (`SBChain.growth`). */
export const MAX_EXPANSION = 0xffffffff

/** How to build a new filter. */
export interface FilterOptions {
  /** Items the first layer is planned for: an integer ≥ 1. */
  capacity: number
  /** Target false-positive rate in (0, 1). A scalable filter's first layer uses half of it. */
  errorRate: number
  /**
   * Capacity factor of each new layer: an integer in [0, 2^32). 0 is accepted as in RedisBloom,
   * but (unlike RedisBloom, which then silently stores nothing) the filter refuses new items once
   * full, like a non-scaling one.
   */
  expansion: number
  /** When true the filter never grows: adds past capacity return `non-scaling-full`. */
  nonScaling: boolean
  /** Hashing scheme; RedisBloom's by default. A `seeded` filter is sized by the original library's rules. */
  hashing?: Hashing
  /** When set, a scale-up needing a bitmap above this many bytes returns `too-large`. */
  maxLayerBytes?: number
}

/** One layer as plain data (for the codec). */
export interface LayerParts {
  /** Items the layer is planned for. */
  capacity: number
  /** The layer's own error rate. */
  errorRate: number
  /** Bits per entry (RedisBloom `bpe`). */
  bitsPerEntry: number
  /** Bit positions per item. */
  hashCount: number
  /** Bits in the bitmap: `bitmap.length * 8`. */
  bitCount: number
  /** Items stored in the layer. */
  items: number
  /** The bitmap, shared with the live filter: one array, or pieces (core/pieced-bitmap.ts). */
  bitmap: Bitmap
}

/** A whole filter as plain data (for the codec). Oldest layer first. */
export interface FilterParts {
  /** Hashing scheme. */
  hashing: Hashing
  /** Capacity factor for new layers (kept even when non-scaling). */
  expansion: number
  /** Whether the filter refuses to grow. */
  nonScaling: boolean
  /** The layers, oldest first; at least one. */
  layers: LayerParts[]
}

/** What BF.INFO reports. */
export interface FilterInfo {
  /** Sum of the layers' capacities (rebloom.c `BFCapacity`). */
  capacity: number
  /** RedisBloom's memory accounting: 32 + Σ (64 + layer bytes) (rebloom.c `BFMemUsage`). */
  sizeBytes: number
  /** Number of layers ("Number of filters"). */
  layerCount: number
  /** Items added (sum over layers; BF.CARD). */
  items: number
  /** Expansion rate, or null for a non-scaling filter. */
  expansion: number | null
}

/** Result of {@link ScalableBloomFilter.add}: 1 added, 0 maybe present already, or why not stored. */
export type AddOutcome = 0 | 1 | FilterError

// One pair for every filter: add/has are synchronous, so sharing it allocates nothing per call.
const PAIR = createHashPair()

function checkHashing(hashing: Hashing): void {
  if (hashing.kind === 'redisbloom') return
  if (hashing.kind === 'seeded') {
    if (!Number.isInteger(hashing.seed) || hashing.seed < 0 || hashing.seed > 0xffffffff) {
      throw new RangeError(`seed must be a u32, got ${hashing.seed}`)
    }
    return
  }
  throw new RangeError(`unknown hashing ${(hashing as { kind: unknown }).kind}`)
}

function checkExpansion(expansion: number): void {
  if (!Number.isInteger(expansion) || expansion < 0 || expansion > MAX_EXPANSION) {
    throw new RangeError(`expansion must be an integer from 0 to 2^32-1, got ${expansion}`)
  }
}

function freezeHashing(hashing: Hashing): Hashing {
  return hashing.kind === 'seeded' ? Object.freeze({ kind: 'seeded', seed: hashing.seed }) : REDISBLOOM_HASHING
}

/**
 * A scalable Bloom filter answering exactly as RedisBloom 2.4 does: same hashes, same layer sizes,
 * same false positives.
 *
 * - `add` hashes once, reports 0 when any layer (newest first) has the item, otherwise stores it in
 *   the newest layer, first adding a layer of `capacity * expansion` items at half the error rate
 *   when the newest is full.
 * - Non-scaling filters (NONSCALING, EXPANSION 0, seeded filters) return `non-scaling-full` instead.
 * - add/has allocate nothing; only a scale-up allocates (one Uint8Array).
 */
export class ScalableBloomFilter {
  /** Capacity factor of new layers (reported by BF.INFO unless non-scaling). */
  readonly expansion: number
  /** Whether the filter was created NONSCALING. */
  readonly nonScaling: boolean
  /** Hashing scheme of every layer. */
  readonly hashing: Hashing
  /** Byte limit for layers added by scale-ups (Infinity when none). */
  readonly maxLayerBytes: number
  private readonly layerList: BloomLayer[]
  /**
   * Told once a layer was added, before the add that needed it returns: another thread that
   * answers checks from this filter's layers (server/thread-plane.ts) must stop using the old list.
   */
  onGrow: (() => void) | undefined = undefined
  private readonly seed: number
  private readonly seeded: boolean

  /**
   * Creates an empty filter with one layer.
   *
   * @throws RangeError when capacity is not an integer ≥ 1, errorRate not in (0, 1), expansion not
   *   an integer in [0, 2^32), nonScaling not a boolean, a seeded hash's seed not a u32,
   *   maxLayerBytes not a positive number, the first layer larger than maxLayerBytes, or the bitmap
   *   cannot be allocated
   */
  constructor(options: FilterOptions) {
    const { capacity, errorRate, expansion, nonScaling } = options
    const hashing = options.hashing ?? REDISBLOOM_HASHING
    // Checked here and not only per layer: a scalable filter's first layer halves the rate.
    if (!(errorRate > 0 && errorRate < 1)) throw new RangeError(`errorRate must be in (0, 1), got ${errorRate}`)
    checkHashing(hashing)
    checkExpansion(expansion)
    if (typeof nonScaling !== 'boolean') throw new RangeError('nonScaling must be a boolean')
    const maxLayerBytes = options.maxLayerBytes ?? Infinity
    if (!(maxLayerBytes > 0)) throw new RangeError(`maxLayerBytes must be positive, got ${maxLayerBytes}`)

    let layerErrorRate: number
    let geometry: LayerGeometry
    if (hashing.kind === 'seeded') {
      // The original library: one layer sized by its own formulas, error rate as given.
      layerErrorRate = errorRate
      geometry = seededGeometry(capacity, errorRate)
    } else {
      // sb.c SB_NewChain: the first layer gets errorRate * 0.5 unless BLOOM_OPT_NO_SCALING.
      layerErrorRate = firstLayerErrorRate(errorRate, nonScaling)
      geometry = layerGeometry(capacity, layerErrorRate)
    }
    if (geometry.byteCount > maxLayerBytes) {
      throw new RangeError(`a layer of ${geometry.byteCount} bytes exceeds maxLayerBytes ${maxLayerBytes}`)
    }
    this.expansion = expansion
    this.nonScaling = nonScaling
    this.hashing = freezeHashing(hashing)
    this.maxLayerBytes = maxLayerBytes
    this.seeded = hashing.kind === 'seeded'
    this.seed = hashing.kind === 'seeded' ? hashing.seed : 0
    this.layerList = [BloomLayer.create(capacity, layerErrorRate, geometry)]
  }

  /** The layers, oldest first. Treat as read-only. */
  get layers(): readonly BloomLayer[] {
    return this.layerList
  }

  /** Whether a full newest layer refuses new items instead of adding a layer. */
  get canScale(): boolean {
    return !this.nonScaling && this.expansion !== 0 && !this.seeded
  }

  private hash(item: Uint8Array, start: number, end: number): Uint32Array {
    if (this.seeded) hashSeeded(item, start, end, this.seed, PAIR)
    else hashRedisBloom(item, start, end, PAIR)
    return PAIR
  }

  /**
   * Adds an item, `item[start, end)` (sb.c `SBChain_Add`): the whole array unless a range is given.
   *
   * @returns 1 when stored, 0 when some layer already reports it (present or a false positive),
   *   `non-scaling-full` when it cannot grow, `too-large` when growing would exceed
   *   `maxLayerBytes` or what can be allocated. Nothing changes unless 1 is returned.
   */
  add(item: Uint8Array, start = 0, end = item.length): AddOutcome {
    const pair = this.hash(item, start, end)
    const layers = this.layerList
    const newest = layers.length - 1
    const current = layers[newest]
    if (current.items < current.capacity) {
      for (let i = newest - 1; i >= 0; i--) {
        if (layers[i].hasHashed(pair)) return 0
      }
      // Setting bits that are all set already changes nothing, so testing and setting the newest
      // layer in one pass answers exactly like SBChain_Add's check-then-add, with half the probes.
      return current.addHashed(pair) ? 1 : 0
    }
    for (let i = newest; i >= 0; i--) {
      if (layers[i].hasHashed(pair)) return 0
    }
    if (!this.canScale) return NON_SCALING_FULL
    const grown = this.addLayer(current)
    if (grown === null) return TOO_LARGE
    return grown.addHashed(pair) ? 1 : 0
  }

  /**
   * Records an add that an I/O thread answered 1 for (BF.ADDED: the form the append-only log and
   * the replicas take the threads' adds in): the item's bits are set in the newest layer and it is
   * counted there, whether or not its bits were all set already, so that two threads that both
   * answered 1 for one new item count it twice here too, as on the server that answered them. The
   * threads only add into room they claimed in the newest layer, so a replay finds it there; a
   * full newest layer (no thread's record) gets the item as {@link add} gives it.
   */
  addRecorded(item: Uint8Array, start = 0, end = item.length): AddOutcome {
    const layers = this.layerList
    const current = layers[layers.length - 1]
    if (current.items >= current.capacity) return this.add(item, start, end)
    if (!current.addHashed(this.hash(item, start, end))) current.items++
    return 1
  }

  /**
   * Whether the item, `item[start, end)`, may have been added (sb.c `SBChain_Check`): true when
   * every position is set in some layer. False positives are exactly RedisBloom's.
   */
  has(item: Uint8Array, start = 0, end = item.length): boolean {
    const pair = this.hash(item, start, end)
    const layers = this.layerList
    for (let i = layers.length - 1; i >= 0; i--) {
      if (layers[i].hasHashed(pair)) return true
    }
    return false
  }

  /**
   * {@link add} for items[from, to) in a few calls of the Bloom kernel (filter-batch.ts), while the
   * newest layer has room: `out[outAt + j]` gets item `from + j`'s outcome (1 or 0).
   *
   * @returns the index of the first item not handled: `to` when all were; less (`from` when
   *   none) when the newest layer is or became full, an item is too long for one call, or the
   *   kernel does not serve this filter (seeded hashing, a layer outside the arenas, a capture
   *   reading a layer): the caller adds that item with {@link add} and calls again
   */
  addMany(items: ItemList, from: number, to: number, out: Uint8Array, outAt: number): number {
    const layers = this.layerList
    const newest = layers[layers.length - 1]!
    // A capture reading the newest layer must hear of each write first (bloom-layer.ts addHashed).
    if (this.seeded || newest.items >= newest.capacity || newest.writeGuard !== null || !kernelServes(layers))
      return from
    return addBatch(layers, items, from, to, out, outAt)
  }

  /**
   * {@link has} for items[from, to) in a few calls of the Bloom kernel: `out[outAt + j]` gets 1
   * when item `from + j` may be present, else 0.
   *
   * @returns the index of the first item not answered (see {@link addMany}): the caller answers
   *   it with {@link has} and calls again
   */
  hasMany(items: ItemList, from: number, to: number, out: Uint8Array, outAt: number): number {
    const layers = this.layerList
    if (this.seeded || !kernelServes(layers)) return from
    return hasBatch(layers, items, from, to, out, outAt)
  }

  /**
   * Stages item i of `items` for a later {@link checkStaged}, after the `staged` items staged
   * before it since the last: checks that commands of one read add one item each to
   * (commands/kernel/read-batch.ts). Nothing may change the filter until checkStaged.
   *
   * @returns false when the kernel does not serve this filter or the item does not fit: the
   *   caller answers it with {@link has}, after checkStaged for those staged before it
   */
  stageCheck(items: ItemList, i: number, staged: number): boolean {
    const layers = this.layerList
    return !this.seeded && kernelServes(layers) && stageItem(layers[layers.length - 1]!.home!, items, i, staged)
  }

  /** {@link hasMany}'s answers for the n items {@link stageCheck} staged: `out[j]` for item j. */
  checkStaged(n: number, out: Uint8Array): void {
    checkStaged(this.layerList, n, out, 0)
  }

  /**
   * Stages item i of `items` for a later {@link addStaged}, after the `staged` items staged before
   * it: adds that commands of one read make one item each. Only while the newest layer has room
   * for all of them (no scale-up, no error) and no capture reads it; nothing may change the filter
   * until addStaged.
   *
   * @returns false when the kernel cannot take it so: the caller adds it with {@link addMany} or
   *   {@link add}, after addStaged for those staged before it
   */
  stageAdd(items: ItemList, i: number, staged: number): boolean {
    const layers = this.layerList
    const newest = layers[layers.length - 1]!
    return (
      !this.seeded &&
      newest.writeGuard === null &&
      newest.items + staged < newest.capacity &&
      kernelServes(layers) &&
      stageItem(newest.home!, items, i, staged)
    )
  }

  /** {@link addMany} for the n items {@link stageAdd} staged: `out[j]` = 1 when item j was added. */
  addStaged(n: number, out: Uint8Array): void {
    addStaged(this.layerList, n, out, 0)
  }

  /** The items staged, where they lie, right after {@link addStaged} (valid until the next staging). */
  stagedItems(): ItemList {
    const layers = this.layerList
    return stagedItems(layers[layers.length - 1]!.home!)
  }

  // sb.c SBChain_Add: a new link of entries * growth items at error * ERROR_TIGHTENING_RATIO.
  private addLayer(previous: BloomLayer): BloomLayer | null {
    const capacity = previous.capacity * this.expansion
    const errorRate = previous.errorRate * ERROR_TIGHTENING_RATIO
    if (!Number.isSafeInteger(capacity) || !(errorRate > 0)) return null
    const geometry = layerGeometry(capacity, errorRate)
    if (geometry.byteCount > this.maxLayerBytes) return null
    let layer: BloomLayer
    try {
      layer = BloomLayer.create(capacity, errorRate, geometry)
    } catch (err) {
      if (err instanceof RangeError) return null // beyond the typed-array limit or out of memory
      throw err
    }
    this.layerList.push(layer)
    this.onGrow?.()
    return layer
  }

  /** Bytes of bitmap its layers hold: what max-filter-bytes and maxmemory count. */
  bitmapBytes(): number {
    let total = 0
    for (const layer of this.layerList) total += layer.bitmap.byteLength
    return total
  }

  /** BF.INFO's Size, which MEMORY USAGE reports too. */
  sizeBytes(): number {
    return this.info().sizeBytes
  }

  /** The numbers BF.INFO and BF.CARD report. */
  info(): FilterInfo {
    let capacity = 0
    let items = 0
    const byteCounts: number[] = []
    for (const layer of this.layerList) {
      capacity += layer.capacity
      items += layer.items
      byteCounts.push(layer.bitmap.length)
    }
    return {
      capacity,
      sizeBytes: filterSizeBytes(byteCounts),
      layerCount: this.layerList.length,
      items,
      expansion: this.nonScaling ? null : this.expansion,
    }
  }

  /** The filter as plain data, oldest layer first. Bitmaps are shared with the filter, not copied. */
  toParts(): FilterParts {
    return {
      hashing: this.hashing,
      expansion: this.expansion,
      nonScaling: this.nonScaling,
      layers: this.layerList.map((layer) => ({
        capacity: layer.capacity,
        errorRate: layer.errorRate,
        bitsPerEntry: layer.bitsPerEntry,
        hashCount: layer.hashCount,
        bitCount: layer.bitCount,
        items: layer.items,
        bitmap: layer.bitmap,
      })),
    }
  }

  /**
   * Rebuilds a filter from parts (bitmaps used in place, not copied).
   *
   * @param parts what {@link toParts} or the codec produced
   * @param maxLayerBytes optional limit for later scale-ups (not applied to the given layers)
   * @throws RangeError when anything is inconsistent: no layers; more than one layer for a
   *   non-scaling or seeded filter; a bad hashing or expansion; a layer whose bitCount is not
   *   `bitmap.length * 8`, whose numbers are out of range (see BloomLayer), or — for RedisBloom
   *   hashing — whose bitCount is not a whole number of 64-bit words or whose hashCount is not
   *   `ceil(ln2 * bitsPerEntry)` (bloom.c `bloom_validate_integrity`)
   */
  static fromParts(parts: FilterParts, maxLayerBytes?: number): ScalableBloomFilter {
    if (typeof parts !== 'object' || parts === null) throw new RangeError('parts must be an object')
    const { hashing, expansion, nonScaling, layers } = parts
    if (typeof hashing !== 'object' || hashing === null) throw new RangeError('bad hashing')
    checkHashing(hashing)
    checkExpansion(expansion)
    if (typeof nonScaling !== 'boolean') throw new RangeError('nonScaling must be a boolean')
    if (!Array.isArray(layers) || layers.length === 0) throw new RangeError('a filter needs at least one layer')
    if (nonScaling && layers.length !== 1) throw new RangeError('a non-scaling filter has exactly one layer')
    if (hashing.kind === 'seeded' && layers.length !== 1) throw new RangeError('a seeded filter has exactly one layer')
    if (maxLayerBytes !== undefined && !(maxLayerBytes > 0)) {
      throw new RangeError(`maxLayerBytes must be positive, got ${maxLayerBytes}`)
    }

    const built = layers.map((parts, index) => {
      const layer = new BloomLayer(parts)
      if (hashing.kind === 'redisbloom') {
        if (layer.bitCount % 64 !== 0) {
          throw new RangeError(`layer ${index}: bitCount ${layer.bitCount} is not a whole number of 64-bit words`)
        }
        if (layer.hashCount !== hashCountFor(layer.bitsPerEntry)) {
          throw new RangeError(
            `layer ${index}: hashCount ${layer.hashCount} does not match bitsPerEntry ${layer.bitsPerEntry}`,
          )
        }
      }
      return layer
    })

    // The constructor always allocates a fresh first layer, so a restored filter is assembled
    // directly from its checked fields instead.
    const filter = Object.create(ScalableBloomFilter.prototype) as ScalableBloomFilter
    const fields = filter as unknown as {
      expansion: number
      nonScaling: boolean
      hashing: Hashing
      maxLayerBytes: number
      layerList: BloomLayer[]
      seed: number
      seeded: boolean
    }
    fields.expansion = expansion
    fields.nonScaling = nonScaling
    fields.hashing = freezeHashing(hashing)
    fields.maxLayerBytes = maxLayerBytes ?? Infinity
    fields.layerList = built
    fields.seeded = hashing.kind === 'seeded'
    fields.seed = hashing.kind === 'seeded' ? hashing.seed : 0
    return filter
  }
}
