/**
 * The union of filters reserved alike (BF.MERGE): new layers whose bitmaps are the bitwise OR of
 * the sources' layer i, built through {@link ScalableBloomFilter.fromParts} as a loaded filter is.
 * Every item some source answers 1 for is answered 1 by the union: each layer's bits are a
 * superset of every source's bits for that layer, and a source with fewer layers contributes to
 * those it has.
 */

import { allocateLayerBitmap, countSetBits } from './bitmap.js'
import { type Bitmap, bitmapRange, bitmapSlices } from './pieced-bitmap.js'
import { orBitmap } from './bitmap-ops.js'
import type { BloomLayer } from './bloom-layer.js'
import { ScalableBloomFilter } from './scalable-filter.js'
import type { LayerParts } from './scalable-filter.js'
import { targetErrorRate } from './filter-health.js'

/** What two sources disagree on, so that they cannot be merged. */
export type MergeMismatchField =
  'hashing' | 'seed' | 'scaling' | 'expansion' | 'capacity' | 'error rate' | 'size' | 'hash count'

/** Why the sources cannot be merged: source `other` differs from source `first` in `field`. */
export interface MergeMismatch {
  readonly kind: 'mismatch'
  readonly field: MergeMismatchField
  /** The layer (0 = oldest) the difference is in; 0 too for what the whole filter has (hashing, ...). */
  readonly layer: number
  /** Index in `sources` of the filter compared against, and its value, as text. */
  readonly first: number
  readonly firstValue: string
  /** Index in `sources` of the filter that differs, and its value, as text. */
  readonly other: number
  readonly otherValue: string
}

/**
 * Items a layer of `bitCount` bits and `hashCount` hashes holds when `setBits` of its bits are
 * set (Swamidass & Baldi 2007): n ≈ −(m/k)·ln(1 − X/m), rounded. Infinity when every bit is set;
 * 0 for a layer with no hashes (nothing can be told from its bits).
 */
export function estimateItems(setBits: number, bitCount: number, hashCount: number): number {
  if (hashCount === 0 || setBits === 0) return 0
  if (setBits >= bitCount) return Infinity
  return Math.round((-bitCount / hashCount) * Math.log1p(-setBits / bitCount))
}

/**
 * The item count of a merged layer: the estimate from its set bits, capped at the layer's
 * capacity (so the newest layer is not full before its time, and growth goes on as planned), and
 * never below the largest count a source has for that layer (the union holds all of its items).
 */
function mergedItems(setBits: number, layer: BloomLayer, sourceItems: number): number {
  const estimate = Math.min(estimateItems(setBits, layer.bitCount, layer.hashCount), layer.capacity)
  return Math.max(estimate, sourceItems)
}

function mismatch(
  field: MergeMismatchField,
  layer: number,
  first: number,
  firstValue: unknown,
  other: number,
  otherValue: unknown,
): MergeMismatch {
  return {
    kind: 'mismatch',
    field,
    layer,
    first,
    firstValue: String(firstValue),
    other,
    otherValue: String(otherValue),
  }
}

/** Hashing, scaling and expansion: what the whole filter has. */
function filterMismatch(sources: readonly ScalableBloomFilter[]): MergeMismatch | undefined {
  const a = sources[0]!
  for (let i = 1; i < sources.length; i++) {
    const b = sources[i]!
    if (a.hashing.kind !== b.hashing.kind) return mismatch('hashing', 0, 0, a.hashing.kind, i, b.hashing.kind)
    if (a.hashing.kind === 'seeded' && b.hashing.kind === 'seeded' && a.hashing.seed !== b.hashing.seed) {
      return mismatch('seed', 0, 0, a.hashing.seed, i, b.hashing.seed)
    }
    if (a.nonScaling !== b.nonScaling) return mismatch('scaling', 0, 0, scalingText(a), i, scalingText(b))
    if (a.expansion !== b.expansion) return mismatch('expansion', 0, 0, a.expansion, i, b.expansion)
  }
  return undefined
}

function scalingText(filter: ScalableBloomFilter): string {
  return filter.nonScaling ? 'NONSCALING' : 'scaling'
}

/** The error rate as reserved (a scalable RedisBloom filter's first layer has half of it). */
function reservedErrorRate(filter: ScalableBloomFilter, index: number): number {
  return index === 0 ? targetErrorRate(filter) : filter.layers[index]!.errorRate
}

/** Layer `index` of source `i` against the same layer of source `first`. */
function layerMismatch(
  sources: readonly ScalableBloomFilter[],
  index: number,
  first: number,
  i: number,
): MergeMismatch | undefined {
  const a = sources[first]!.layers[index]!
  const b = sources[i]!.layers[index]!
  if (a.capacity !== b.capacity) return mismatch('capacity', index, first, a.capacity, i, b.capacity)
  if (a.errorRate !== b.errorRate) {
    return mismatch(
      'error rate',
      index,
      first,
      reservedErrorRate(sources[first]!, index),
      i,
      reservedErrorRate(sources[i]!, index),
    )
  }
  if (a.bitCount !== b.bitCount) return mismatch('size', index, first, a.bitCount, i, b.bitCount)
  if (a.hashCount !== b.hashCount) return mismatch('hash count', index, first, a.hashCount, i, b.hashCount)
  return undefined
}

/**
 * Whether the sources were reserved alike: same hashing (and seed), scaling, expansion, and for
 * every layer two of them share the same capacity, error rate, size and hash count. The first
 * difference found, comparing each source with the first one that has the layer, or undefined.
 */
export function mergeMismatch(sources: readonly ScalableBloomFilter[]): MergeMismatch | undefined {
  const found = filterMismatch(sources)
  if (found !== undefined) return found
  const layerCount = longest(sources).layers.length
  for (let index = 0; index < layerCount; index++) {
    const first = sources.findIndex((source) => source.layers.length > index)
    for (let i = first + 1; i < sources.length; i++) {
      if (sources[i]!.layers.length <= index) continue
      const difference = layerMismatch(sources, index, first, i)
      if (difference !== undefined) return difference
    }
  }
  return undefined
}

/** The source with the most layers (the first of them): the union has its layers. */
function longest(sources: readonly ScalableBloomFilter[]): ScalableBloomFilter {
  let found = sources[0]!
  for (const source of sources) if (source.layers.length > found.layers.length) found = source
  return found
}

/** Bitmap bytes the union of these sources holds: the layers of the longest one. */
export function mergedBytes(sources: readonly ScalableBloomFilter[]): number {
  return longest(sources).bitmapBytes()
}

/** Layer `index` of the union: a new bitmap, the OR of every source's layer `index`. */
function mergeLayer(sources: readonly ScalableBloomFilter[], index: number): LayerParts {
  let shape: BloomLayer | undefined
  let bitmap: Bitmap | undefined
  let items = 0
  for (const source of sources) {
    const layer = source.layers[index]
    if (layer === undefined) continue
    if (bitmap === undefined) {
      shape = layer
      bitmap = allocateLayerBitmap(layer.bitmap.length) // a copy, in an arena: the sources stay as they are
      bySlices(bitmap, layer.bitmap, (to, from) => to.set(from))
    } else {
      bySlices(bitmap, layer.bitmap, orBitmap) // in the union's arena's kernel where it has one
    }
    items = Math.max(items, layer.items)
  }
  const { capacity, errorRate, bitsPerEntry, hashCount, bitCount } = shape!
  return {
    capacity,
    errorRate,
    bitsPerEntry,
    hashCount,
    bitCount,
    items: layerItems(sources, index, bitmap!, shape!, items),
    bitmap: bitmap!,
  }
}

/** `apply(slice, same bytes of src)` for each slice of `dst` (a piece, or all of an array). */
function bySlices(dst: Bitmap, src: Bitmap, apply: (to: Uint8Array, from: Uint8Array) => void): void {
  let at = 0
  for (const slice of bitmapSlices(dst)) {
    apply(slice, bitmapRange(src, at, at + slice.length))
    at += slice.length
  }
}

/**
 * The merged layer's count: a source's own when the union's bits are exactly its bits (the other
 * sources added nothing: a copy, a merge with itself or with a subset; the union holds every
 * source's bits, so the same count of set bits means the same bits), else the estimate.
 */
function layerItems(
  sources: readonly ScalableBloomFilter[],
  index: number,
  bitmap: Bitmap,
  shape: BloomLayer,
  largest: number,
): number {
  const setBits = countSetBits(bitmap)
  let exact = -1
  for (const source of sources) {
    const layer = source.layers[index]
    if (layer !== undefined && layer.items > exact && layer.setBits === setBits) exact = layer.items
  }
  return exact >= 0 ? exact : mergedItems(setBits, shape, largest)
}

/**
 * The union of one or more filters reserved alike, as a new filter (the sources are not
 * changed), or the first difference that keeps them from being merged.
 *
 * @throws RangeError when `sources` is empty, or a bitmap cannot be allocated
 */
export function mergeFilters(sources: readonly ScalableBloomFilter[]): ScalableBloomFilter | MergeMismatch {
  if (sources.length === 0) throw new RangeError('nothing to merge')
  const difference = mergeMismatch(sources)
  if (difference !== undefined) return difference
  const first = sources[0]!
  const layerCount = longest(sources).layers.length
  const layers: LayerParts[] = []
  for (let index = 0; index < layerCount; index++) layers.push(mergeLayer(sources, index))
  return ScalableBloomFilter.fromParts({
    hashing: first.hashing,
    expansion: first.expansion,
    nonScaling: first.nonScaling,
    layers,
  })
}
