/**
 * How a filter is doing, from its bits: the share of set bits per layer X, that layer's
 * false-positive rate X^k, and the filter's 1 − Π(1 − X_i^k) beside the rate it was reserved for.
 * What BFS.HEALTH, /metrics and the status page report.
 */
import type { ScalableBloomFilter } from './scalable-filter.js'
import type { BloomLayer } from './bloom-layer.js'
import { ERROR_TIGHTENING_RATIO } from './sizing.js'

/** A filter is `near full` once a non-scaling one holds this share of its capacity. */
const NEAR_FULL_SHARE = 0.9

/** `ok`; `near full` (a non-scaling filter at 90% of its capacity); `over target` (the estimate passed the target). */
export type HealthVerdict = 'ok' | 'near full' | 'over target'

/**
 * The health of a whole filter (BFS.HEALTH's fields, in its order). A Cuckoo filter's
 * (core/cuckoo-health.ts) has the same fields over its slots instead of its bits.
 */
export interface FilterHealth {
  /** Set bits over all bits, over every layer (a Cuckoo filter: taken slots over all slots). */
  readonly fillRatio: number
  /** 1 − Π(1 − X_i^k_i) over the layers (a Cuckoo filter: 1 − Π(1 − load_i/255)^(2·b) over its sub-filters). */
  readonly estimatedErrorRate: number
  /** The rate the filter was reserved for (its first layer's, before tightening; a Cuckoo filter: one full sub-filter's). */
  readonly errorRate: number
  readonly items: number
  readonly capacity: number
  /** Items a non-scaling filter takes before it is full; -1 for a filter that scales. */
  readonly itemsLeft: number
  readonly verdict: HealthVerdict
}

/** What a filter's over-target watch keeps (see {@link overTargetSetBits}). */
export interface HealthWatch {
  /** The newest layer when the threshold was computed. */
  layer: BloomLayer
  /** Set bits of that layer above which the estimate is to be checked. */
  alertBits: number
  /** Whether the filter was reported over its target. */
  warned: boolean
}

/**
 * The rate the filter was reserved with. A RedisBloom filter that may scale keeps half of it in its
 * first layer (sb.c SB_NewChain: `error * ERROR_TIGHTENING_RATIO` unless NONSCALING, EXPANSION 0
 * included); a non-scaling one and the original library's keep it as given.
 */
export function targetErrorRate(filter: ScalableBloomFilter): number {
  const first = filter.layers[0]!.errorRate
  return filter.nonScaling || filter.hashing.kind === 'seeded' ? first : first / ERROR_TIGHTENING_RATIO
}

/**
 * The count of set bits in the newest layer above which the filter's estimate passes `target`,
 * the older layers staying as they are: with P = Π(1 − X_j^k_j) over those, the estimate
 * 1 − P·(1 − x^k) passes the target once x > (1 − (1 − target)/P)^(1/k). -1 when the older
 * layers alone are over (or k is 0: every item is reported present); Infinity when out of reach.
 * What lets an add check the target with one comparison instead of computing the estimate.
 */
export function overTargetSetBits(filter: ScalableBloomFilter, target: number): number {
  const layers = filter.layers
  const newest = layers[layers.length - 1]!
  let missProbability = 1
  for (let i = 0; i < layers.length - 1; i++) {
    const layer = layers[i]!
    missProbability *= 1 - (layer.setBits / layer.bitCount) ** layer.hashCount
  }
  const newestRate = 1 - (1 - target) / missProbability
  if (!(newestRate > 0) || newest.hashCount === 0) return -1
  if (newestRate >= 1) return Infinity
  return Math.floor(newest.bitCount * newestRate ** (1 / newest.hashCount))
}

/** The filter's health now, against the rate it was reserved with ({@link targetErrorRate}). */
export function filterHealth(filter: ScalableBloomFilter): FilterHealth {
  const target = targetErrorRate(filter)
  let setBits = 0
  let bits = 0
  let missProbability = 1
  for (const layer of filter.layers) {
    const set = layer.setBits
    const fillRatio = set / layer.bitCount
    const estimatedErrorRate = fillRatio ** layer.hashCount
    missProbability *= 1 - estimatedErrorRate
    setBits += set
    bits += layer.bitCount
  }
  const info = filter.info()
  const estimatedErrorRate = 1 - missProbability
  const scales = filter.canScale
  const itemsLeft = scales ? -1 : Math.max(0, info.capacity - info.items)
  let verdict: HealthVerdict = 'ok'
  if (estimatedErrorRate > target) verdict = 'over target'
  else if (!scales && info.items >= NEAR_FULL_SHARE * info.capacity) verdict = 'near full'
  return {
    fillRatio: bits === 0 ? 0 : setBits / bits,
    estimatedErrorRate,
    errorRate: target,
    items: info.items,
    capacity: info.capacity,
    itemsLeft,
    verdict,
  }
}
