/**
 * Sizing of one layer (capacity, error rate → bits and hash count) and RedisBloom's BF.INFO Size.
 *
 * `layerGeometry` is RedisBloom 2.4's `bloom_init` (deps/bloom/bloom.c) with the options every BF
 * filter is created with, `BLOOM_OPT_NOROUND | BLOOM_OPT_FORCE64` (src/rebloom.c, bfCreateChain).
 * `seededGeometry` is the original C library's sizing described in the project's FORMAT.md.
 */

/** ln(2)^2 as written in bloom.c `calc_bpe` (`denom`). */
export const LN2_SQUARED = 0.480453013918201

/** ln(2) as written in bloom.c (`#define LN2`). */
export const LN2 = 0.693147180559945

/** ln(2)^2 as written in the original library (FORMAT.md: `m = ceil(-n * ln(p) / 0.480453)`). */
export const SEEDED_LN2_SQUARED = 0.480453

/** ln(2) as written in the original library (FORMAT.md: `k = round(0.69314 * m / n)`). */
export const SEEDED_LN2 = 0.69314

/** Each new layer's error rate is the previous one's times this (sb.c `ERROR_TIGHTENING_RATIO`). */
export const ERROR_TIGHTENING_RATIO = 0.5

/** `sizeof(SBChain)` on 64-bit RedisBloom 2.4: counted once per filter in BF.INFO Size. */
export const CHAIN_OVERHEAD_BYTES = 32

/** `sizeof(SBLink)` on 64-bit RedisBloom 2.4: counted once per layer in BF.INFO Size. */
export const LAYER_OVERHEAD_BYTES = 64

/**
 * Largest bit count the core accepts. Bit positions are computed with doubles, which stay exact
 * while `2 * bitCount < 2^53` (a Uint8Array is far smaller than this in practice).
 */
export const MAX_BIT_COUNT = 2 ** 51

/** The shape of one layer's bitmap and hashing. */
export interface LayerGeometry {
  /** Bits per entry, -ln(errorRate) / ln(2)^2 (informational; stored by RedisBloom). */
  readonly bitsPerEntry: number
  /** Bits in the bitmap, always `byteCount * 8`. */
  readonly bitCount: number
  /** Bytes in the bitmap. */
  readonly byteCount: number
  /** Bit positions set per item (k). */
  readonly hashCount: number
}

function checkCapacity(capacity: number): void {
  if (!Number.isSafeInteger(capacity) || capacity < 1) {
    throw new RangeError(`capacity must be an integer from 1 to 2^53-1, got ${capacity}`)
  }
}

function checkErrorRate(errorRate: number): void {
  if (!(errorRate > 0 && errorRate < 1)) {
    throw new RangeError(`errorRate must be in (0, 1), got ${errorRate}`)
  }
}

/**
 * RedisBloom's bits per entry for an error rate (bloom.c `calc_bpe`): `|ln(errorRate) / ln(2)^2|`.
 *
 * @throws RangeError when `errorRate` is not in (0, 1)
 */
export function bitsPerEntryFor(errorRate: number): number {
  checkErrorRate(errorRate)
  const bpe = -(Math.log(errorRate) / LN2_SQUARED)
  return bpe < 0 ? -bpe : bpe
}

/**
 * Hash count RedisBloom derives from bits per entry: `(int)ceil(LN2 * bpe)` (bloom.c `bloom_init`,
 * also checked by `bloom_validate_integrity`).
 */
export function hashCountFor(bitsPerEntry: number): number {
  return Math.ceil(LN2 * bitsPerEntry)
}

/**
 * Geometry of one RedisBloom layer: bloom.c `bloom_init(entries = capacity, error = errorRate,
 * BLOOM_OPT_NOROUND | BLOOM_OPT_FORCE64)`.
 *
 *     bpe   = -ln(errorRate) / 0.480453013918201
 *     bits  = (uint64)(capacity * bpe), at least 1
 *     bytes = bits % 64 ? (bits / 64 + 1) * 8 : bits / 8     -- whole 64-bit words
 *     k     = ceil(0.693147180559945 * bpe)
 *
 * `errorRate` is the layer's own rate (already halved for the first layer of a scalable filter;
 * see {@link firstLayerErrorRate}).
 *
 * @throws RangeError when capacity is not an integer in [1, 2^53) or errorRate is not in (0, 1)
 */
export function layerGeometry(capacity: number, errorRate: number): LayerGeometry {
  checkCapacity(capacity)
  const bitsPerEntry = bitsPerEntryFor(errorRate)
  let bits = Math.trunc(capacity * bitsPerEntry)
  if (bits === 0) bits = 1 // bloom.c: "Have at least one bit in the filter."
  const byteCount = bits % 64 !== 0 ? (Math.floor(bits / 64) + 1) * 8 : bits / 8
  return { bitsPerEntry, bitCount: byteCount * 8, byteCount, hashCount: hashCountFor(bitsPerEntry) }
}

/**
 * Geometry of the original C library (FORMAT.md) for n items at false-positive rate p:
 *
 *     m = ceil(-n * ln(p) / 0.480453)
 *     m = (m - m % 64) + 64          -- always adds at least one 64-bit word
 *     k = round(0.69314 * m / n)     -- may be 0 for p close to 1, as in the original
 *
 * `bitsPerEntry` is reported as `-ln(p) / 0.480453`.
 *
 * @throws RangeError when n is not an integer in [1, 2^53) or p is not in (0, 1)
 */
export function seededGeometry(capacity: number, errorRate: number): LayerGeometry {
  checkCapacity(capacity)
  checkErrorRate(errorRate)
  let m = Math.ceil((-capacity * Math.log(errorRate)) / SEEDED_LN2_SQUARED)
  m = m - (m % 64) + 64
  return {
    bitsPerEntry: -Math.log(errorRate) / SEEDED_LN2_SQUARED,
    bitCount: m,
    byteCount: m / 8,
    hashCount: Math.round((SEEDED_LN2 * m) / capacity),
  }
}

/**
 * Error rate of a new filter's first layer (sb.c `SB_NewChain`): halved by
 * {@link ERROR_TIGHTENING_RATIO} when the filter scales, as given when it is non-scaling.
 */
export function firstLayerErrorRate(errorRate: number, nonScaling: boolean): number {
  return nonScaling ? errorRate : errorRate * ERROR_TIGHTENING_RATIO
}

/**
 * BF.INFO Size of a filter whose layers have these bitmap byte counts (rebloom.c `BFMemUsage`):
 * `sizeof(SBChain) + Σ (sizeof(SBLink) + bytes)`.
 */
export function filterSizeBytes(layerByteCounts: readonly number[]): number {
  let size = CHAIN_OVERHEAD_BYTES
  for (const bytes of layerByteCounts) size += LAYER_OVERHEAD_BYTES + bytes
  return size
}

/**
 * BF.INFO Size a new filter would have, computed without allocating anything, so that a caller
 * can refuse an oversized BF.RESERVE first. The bitmap alone is this minus 96 bytes.
 *
 * @throws RangeError when capacity or errorRate is invalid (see {@link layerGeometry})
 */
export function estimateFilterBytes(capacity: number, errorRate: number, nonScaling: boolean): number {
  const { byteCount } = layerGeometry(capacity, firstLayerErrorRate(errorRate, nonScaling))
  return CHAIN_OVERHEAD_BYTES + LAYER_OVERHEAD_BYTES + byteCount
}
