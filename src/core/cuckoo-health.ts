/**
 * A Cuckoo filter's health, in the shape of a Bloom filter's (core/filter-health.ts): its fill,
 * its live false-positive estimate, and the rate one full sub-filter reaches as its target.
 *
 * The estimate. A lookup of an item never added computes its fingerprint f (1..255) and its two
 * buckets, and answers "maybe" when any slot of those buckets, in any sub-filter, holds f. A slot
 * of sub-filter i is taken with probability load_i (its taken slots over its slots), and a taken
 * slot holds a fingerprint that, for an absent item, equals f with probability 1/255 (fingerprints
 * are `hash % 255 + 1`, spread evenly; the bucket comes from the hash's low bits, independent of
 * it modulo 255). So one slot matches with probability load_i / 255, and with the 2·b slots of the
 * two buckets taken as independent:
 *
 *   P(false positive) = 1 − Π_i (1 − load_i / 255)^(2·b)
 *
 * (b slots when a sub-filter has one bucket: both buckets are that one). For small rates this is
 * 2·b·Σ load_i / 255, and the often-quoted 1 − (1 − 1/255)^(2·b·load) is the same to first order.
 * A full sub-filter alone gives 1 − (254/255)^(2·b): 1.56% for b = 2, 3.1% for b = 4, the
 * target here; a filter that grew adds each sub-filter's share, so it passes that target once its
 * loads sum past one: a Cuckoo filter's rate rises as it grows, where a scalable Bloom filter's
 * tightens.
 */
import type { CuckooFilter } from './cuckoo-filter.js'
import type { FilterHealth, HealthVerdict } from './filter-health.js'

/** Fingerprint values a taken slot may hold (RedisBloom's one-byte `hash % 255 + 1`). */
const FINGERPRINTS = 255

/**
 * The load past which a filter that cannot grow is `near full`: a little under where RedisBloom's
 * kick walk (the same in bfs: a fixed first bucket, the victim slot advancing by one) with the
 * default 20 iterations was measured to refuse its first add, over three streams of 131,072
 * slots: at 38-44% of the slots for 1-slot buckets, 55-62% for 2, 77-80% for 3, 81-83% for 4,
 * 88-90% for 8. The walk fills far less than the 84% (2) or 95% (4) of a random walk.
 */
export function nearFullLoad(bucketSize: number): number {
  if (bucketSize <= 1) return 0.35
  if (bucketSize === 2) return 0.5
  if (bucketSize === 3) return 0.7
  if (bucketSize < 8) return 0.75
  return 0.85
}

/** Slots a lookup reads in one sub-filter of `buckets` buckets: two buckets, or one when there is only one. */
function slotsRead(buckets: number, bucketSize: number): number {
  return buckets === 1 ? bucketSize : 2 * bucketSize
}

/** The false-positive rate of a lookup in one sub-filter at `load`: 1 − (1 − load/255)^slots read. */
function subFilterMiss(load: number, buckets: number, bucketSize: number): number {
  return (1 - load / FINGERPRINTS) ** slotsRead(buckets, bucketSize)
}

/**
 * The filter's health now. Fill and estimate come from its taken slots per sub-filter, counted
 * once and then kept by every change ({@link CuckooFilter.occupiedSlots}): no bucket is read
 * after the first call. Items is CF.INFO's "Number of items inserted"; capacity, the slots of
 * every sub-filter; items left, for a filter that cannot grow (EXPANSION 0), its empty slots
 * (an upper bound: adds are refused before the last slot), else -1.
 */
export function cuckooHealth(filter: CuckooFilter): FilterHealth {
  const size = filter.bucketSize
  let taken = 0
  let slots = 0
  let miss = 1
  for (let i = 0; i < filter.numFilters; i++) {
    const occupied = filter.occupiedSlots(i)
    const length = filter.subFilters[i]!.length
    const buckets = length / size
    miss *= subFilterMiss(occupied / length, buckets, size)
    taken += occupied
    slots += length
  }
  const estimatedErrorRate = 1 - miss
  const errorRate = 1 - subFilterMiss(1, filter.numBuckets, size)
  const grows = filter.expansion !== 0
  let verdict: HealthVerdict = 'ok'
  if (estimatedErrorRate > errorRate) verdict = 'over target'
  else if (!grows && taken >= nearFullLoad(size) * slots) verdict = 'near full'
  return {
    fillRatio: taken / slots,
    estimatedErrorRate,
    errorRate,
    items: Number(filter.numItems),
    capacity: slots,
    itemsLeft: grows ? -1 : slots - taken,
    verdict,
  }
}
