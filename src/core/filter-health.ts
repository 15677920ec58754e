/**
 * How a filter is doing, from its bits: the share of set bits per layer X, that layer's
 * false-positive rate X^k, and the filter's 1 − Π(1 − X_i^k) beside the rate it was reserved for.
 * What BFS.HEALTH, /metrics and the status page report.
 */
import type { ScalableBloomFilter } from './scalable-filter.js'
import type { BloomLayer } from './bloom-layer.js'

/** A filter is `near full` once a non-scaling one holds this share of its capacity. */
export const NEAR_FULL_SHARE = 0.9

/** `ok`; `near full` (a non-scaling filter at 90% of its capacity); `over target` (the estimate passed the target). */
export type HealthVerdict = 'ok' | 'near full' | 'over target'

/** One layer's fill and the false-positive rate that follows from it. */
export interface LayerHealth {
  /** Set bits over all bits, in [0, 1]. */
  readonly fillRatio: number
  /** fillRatio ^ hashCount: the chance that an item never added finds all its bits set here. */
  readonly estimatedErrorRate: number
}

/** The health of a whole filter (BFS.HEALTH's fields, in its order). */
export interface FilterHealth {
  /** Set bits over all bits, over every layer. */
  readonly fillRatio: number
  /** 1 − Π(1 − X_i^k_i) over the layers. */
  readonly estimatedErrorRate: number
  /** The rate the filter was reserved for (its first layer's, before tightening). */
  readonly errorRate: number
  readonly items: number
  readonly capacity: number
  /** Items a non-scaling filter takes before it is full; -1 for a filter that scales. */
  readonly itemsLeft: number
  readonly verdict: HealthVerdict
  readonly layers: readonly LayerHealth[]
}

/** Bits set in each byte value. */
const POPCOUNT = Uint8Array.from({ length: 256 }, (_, value) => {
  let bits = 0
  for (let v = value; v !== 0; v >>>= 1) bits += v & 1
  return bits
})

/** Set bits of a layer's bitmap, counted. */
export function countSetBits(bitmap: Uint8Array): number {
  let set = 0
  for (let i = 0; i < bitmap.length; i++) set += POPCOUNT[bitmap[i]!]!
  return set
}

/** The set bits of a layer (a layer that keeps a live count may answer without a scan). */
function setBitsOf(layer: BloomLayer): number {
  const counted = (layer as { setBits?: number }).setBits
  return typeof counted === 'number' ? counted : countSetBits(layer.bitmap)
}

/**
 * The filter's health now. `targetErrorRate` is the rate it was reserved with; by default the
 * first layer's own rate (RedisBloom tightens later layers, not the first).
 */
export function filterHealth(filter: ScalableBloomFilter, targetErrorRate = filter.layers[0]!.errorRate): FilterHealth {
  let setBits = 0
  let bits = 0
  let missProbability = 1
  const layers: LayerHealth[] = []
  for (const layer of filter.layers) {
    const set = setBitsOf(layer)
    const fillRatio = set / layer.bitCount
    const estimatedErrorRate = fillRatio ** layer.hashCount
    missProbability *= 1 - estimatedErrorRate
    setBits += set
    bits += layer.bitCount
    layers.push({ fillRatio, estimatedErrorRate })
  }
  const info = filter.info()
  const estimatedErrorRate = 1 - missProbability
  const scales = filter.canScale
  const itemsLeft = scales ? -1 : Math.max(0, info.capacity - info.items)
  let verdict: HealthVerdict = 'ok'
  if (estimatedErrorRate > targetErrorRate) verdict = 'over target'
  else if (!scales && info.items >= NEAR_FULL_SHARE * info.capacity) verdict = 'near full'
  return {
    fillRatio: bits === 0 ? 0 : setBits / bits,
    estimatedErrorRate,
    errorRate: targetErrorRate,
    items: info.items,
    capacity: info.capacity,
    itemsLeft,
    verdict,
    layers,
  }
}
