/**
 * One Cuckoo sub-filter's buckets, exactly as RedisBloom 2.4's src/cuckoo.c handles them: a
 * Uint8Array of `numBuckets * bucketSize` one-byte fingerprints (0 = empty slot), bucket `b`
 * at bytes [b * bucketSize, (b + 1) * bucketSize).
 *
 * An item's 64-bit MurmurHash64A (seed 0) gives its fingerprint `hash % 255 + 1` and its two
 * buckets: `hash % numBuckets` and `(hash ^ (fingerprint * 0x5bd1e995)) % numBuckets`. Bucket
 * counts are powers of two of at most 2^32 (see {@link MAX_SUB_FILTER_BYTES}), so only the low
 * 32 bits of either hash ever pick a bucket, and the XOR pairs the two buckets both ways.
 */

/** RedisBloom's alternate-bucket multiplier (cuckoo.c getAltHash). */
const ALT_MULTIPLIER = 0x5bd1e995

/**
 * Largest sub-filter, in bytes: RedisBloom's SubCF_GetIndex computes a bucket's byte offset as a
 * `uint32_t`, so a larger sub-filter would be addressed differently by its lookups and its kicks.
 */
export const MAX_SUB_FILTER_BYTES = 2 ** 32

/** `hash % numBuckets` for a power-of-two `numBuckets` of at most 2^32, `hash` the low 32 bits of the hash (as a u32 or an i32). */
export function bucketIndex(hash: number, numBuckets: number): number {
  return numBuckets >= 0x1_0000_0000 ? hash >>> 0 : hash & (numBuckets - 1)
}

/** Low 32 bits of cuckoo.c's getAltHash(fp, index): `index ^ (fp * 0x5bd1e995)`. */
export function altHash(fp: number, index: number): number {
  return (index ^ Math.imul(fp, ALT_MULTIPLIER)) >>> 0
}

/**
 * cuckoo.c getLookupParams's fingerprint: `hash % 255 + 1` of the u64 hash (hi, lo). As 256 ≡ 1
 * (mod 255), the hash is congruent to the sum of its eight bytes: small integers only (no
 * floating-point remainder on the hot path).
 */
export function fingerprintOf(hashHi: number, hashLo: number): number {
  const bytes =
    (hashHi & 0xff) +
    ((hashHi >>> 8) & 0xff) +
    ((hashHi >>> 16) & 0xff) +
    (hashHi >>> 24) +
    (hashLo & 0xff) +
    ((hashLo >>> 8) & 0xff) +
    ((hashLo >>> 16) & 0xff) +
    (hashLo >>> 24)
  return (bytes % 255) + 1
}

/** The slot holding `fp` in the bucket at byte `at`, or -1 (Bucket_Find). */
export function findInBucket(data: Uint8Array, at: number, bucketSize: number, fp: number): number {
  for (let i = at, end = at + bucketSize; i < end; i++) if (data[i] === fp) return i
  return -1
}

/** The first empty slot of the bucket at byte `at`, or -1 (Bucket_FindAvailable). */
export function freeSlot(data: Uint8Array, at: number, bucketSize: number): number {
  return findInBucket(data, at, bucketSize, 0)
}

/** How many slots of the bucket at byte `at` hold `fp` (bucketCount). */
export function countInBucket(data: Uint8Array, at: number, bucketSize: number, fp: number): number {
  let count = 0
  for (let i = at, end = at + bucketSize; i < end; i++) if (data[i] === fp) count++
  return count
}

/**
 * cuckoo.c Filter_KOInsert on one sub-filter: puts `fp` in slot `victim` of its first bucket
 * (h1), carries the fingerprint it displaced to that one's other bucket, and so on, the victim
 * slot advancing by one each step, until a displaced fingerprint finds an empty slot (true). After
 * `maxIterations` steps without one, every swap is undone in reverse order (false): the buckets
 * are as they were, and the caller grows the filter or answers it full.
 */
export function kickInsert(
  data: Uint8Array,
  numBuckets: number,
  bucketSize: number,
  maxIterations: number,
  fp: number,
  h1: number,
): boolean {
  let victim = 0
  let index = bucketIndex(h1, numBuckets)
  let carried = fp
  for (let step = 0; step < maxIterations; step++) {
    const slot = index * bucketSize + victim
    const displaced = data[slot]!
    data[slot] = carried
    carried = displaced
    index = bucketIndex(altHash(carried, index), numBuckets)
    const empty = freeSlot(data, index * bucketSize, bucketSize)
    if (empty !== -1) {
      data[empty] = carried
      return true
    }
    victim = (victim + 1) % bucketSize
  }
  // The roll back, as RedisBloom writes it: each step returns to the bucket the carried
  // fingerprint came from and swaps it back into the slot it was taken from.
  for (let step = 0; step < maxIterations; step++) {
    victim = (victim + bucketSize - 1) % bucketSize
    index = bucketIndex(altHash(carried, index), numBuckets)
    const slot = index * bucketSize + victim
    const displaced = data[slot]!
    data[slot] = carried
    carried = displaced
  }
  return false
}
