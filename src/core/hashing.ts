/**
 * Item bytes → the (a, b) pair of 64-bit hashes that double hashing turns into bit positions.
 *
 * A pair lives in a caller-owned `Uint32Array` of 4: `[aHi, aLo, bHi, bLo]` (see
 * {@link createHashPair}), so hashing allocates nothing.
 *
 * Two schemes:
 * - `redisbloom`: RedisBloom 2.4's `bloom_calc_hash64` (deps/bloom/bloom.c):
 *   a = MurmurHash64A(item, 0xc6a4a7935bd1e995), b = MurmurHash64A(item, a).
 * - `seeded`: the original C library of FORMAT.md: h1 = MurmurHash64A(item, seed) with a u32 seed,
 *   h2 = MurmurHash64A(item, (u32)((h1 >> 32) ^ h1)).
 *
 * Position i of an item in a layer of m bits is `(a + i * b) mod 2^64 mod m` (bloom.c
 * `CHECK_ADD_FUNC` with `T = uint64_t`).
 */

import { murmurHash64AChained } from './murmur-hash.js'

/**
 * Which double-hashing scheme a filter uses: RedisBloom's (every filter bfs creates) or the
 * original library's with its u32 seed (single-layer filters loaded from such files).
 */
export type Hashing = { readonly kind: 'redisbloom' } | { readonly kind: 'seeded'; readonly seed: number }

/** The hashing of every filter created by BF.RESERVE / BF.ADD / BF.INSERT. */
export const REDISBLOOM_HASHING: Hashing = Object.freeze({ kind: 'redisbloom' })

/** High 32 bits of RedisBloom's first seed, 0xc6a4a7935bd1e995 (bloom.c `bloom_calc_hash64`). */
export const REDISBLOOM_SEED_HI = 0xc6a4a793
/** Low 32 bits of RedisBloom's first seed, 0xc6a4a7935bd1e995. */
export const REDISBLOOM_SEED_LO = 0x5bd1e995

/** @returns a zeroed scratch pair `[aHi, aLo, bHi, bLo]` for the functions of this module. */
export function createHashPair(): Uint32Array {
  return new Uint32Array(4)
}

/**
 * RedisBloom's pair for `item[start..end)`: a = MurmurHash64A(item, 0xc6a4a7935bd1e995),
 * b = MurmurHash64A(item, a) with the full 64-bit a as seed. Writes `[aHi, aLo, bHi, bLo]` to `out`.
 */
export function hashRedisBloom(item: Uint8Array, start: number, end: number, out: Uint32Array): void {
  murmurHash64AChained(item, start, end, REDISBLOOM_SEED_HI, REDISBLOOM_SEED_LO, false, out)
}

/**
 * The original library's pair for `item[start..end)` (FORMAT.md): h1 = MurmurHash64A(item, seed),
 * h2 = MurmurHash64A(item, (u32)((h1 >> 32) ^ h1)). Writes `[h1Hi, h1Lo, h2Hi, h2Lo]` to `out`.
 *
 * @param seed the file's u32 seed (taken modulo 2^32)
 */
export function hashSeeded(item: Uint8Array, start: number, end: number, seed: number, out: Uint32Array): void {
  murmurHash64AChained(item, start, end, 0, seed >>> 0, true, out)
}

/**
 * Hashes a whole item with the given scheme into `out` (`[aHi, aLo, bHi, bLo]`).
 */
export function hashItem(hashing: Hashing, item: Uint8Array, out: Uint32Array): void {
  if (hashing.kind === 'seeded') hashSeeded(item, 0, item.length, hashing.seed, out)
  else hashRedisBloom(item, 0, item.length, out)
}

const TWO_POW_12 = 2 ** 12
const TWO_POW_20 = 2 ** 20
const TWO_POW_29 = 2 ** 29
const TWO_POW_36 = 2 ** 36
const TWO_POW_44 = 2 ** 44

/**
 * x mod m for integers with x + m ≤ 2^53, by one correctly rounded division (cheaper than `%` on
 * doubles, which V8 compiles to a call to fmod). The floor of the rounded quotient is the true
 * quotient or one more, so one correction suffices, and quotient * m ≤ x + m is exact.
 */
function modExact(x: number, m: number): number {
  const r = x - Math.floor(x / m) * m
  return r < 0 ? r + m : r
}

/**
 * `(hi * 2^32 + lo) mod m`, exact, for unsigned 32-bit halves and an integer m in [1, 2^53).
 *
 * For the usual layer, 2^12 ≤ m < 2^29 bits, one division: the quotient of the double nearest the
 * 64-bit value is off by at most one (the value is rounded by at most 2^10 and the division adds
 * at most 2^11/m ≤ 1/2), so the remainder it leaves is in [-m, 2m), and a remainder that small is
 * exact in 32-bit arithmetic. Other sizes go to {@link mod64Wide}.
 */
export function mod64(hi: number, lo: number, m: number): number {
  if (m >= TWO_POW_12 && m < TWO_POW_29) {
    const quotient = Math.floor((hi * 4294967296 + lo) / m)
    const r = (lo - Math.imul(quotient, m)) | 0
    return r < 0 ? r + m : r >= m ? r - m : r
  }
  return mod64Wide(hi, lo, m)
}

/**
 * {@link mod64} for any m: the remainder is folded in from the high half so every intermediate
 * stays below 2^52: in one step for m ≤ 2^20, 16 bits at a time for m ≤ 2^36, 8 bits at a time for
 * m ≤ 2^44, BigInt beyond.
 */
function mod64Wide(hi: number, lo: number, m: number): number {
  if (m <= TWO_POW_20) return modExact(modExact(hi, m) * 4294967296 + lo, m)
  if (m <= TWO_POW_36) {
    const r = modExact(modExact(hi, m) * 65536 + (lo >>> 16), m)
    return modExact(r * 65536 + (lo & 0xffff), m)
  }
  if (m <= TWO_POW_44) {
    let r = modExact(hi, m)
    r = modExact(r * 256 + (lo >>> 24), m)
    r = modExact(r * 256 + ((lo >>> 16) & 0xff), m)
    r = modExact(r * 256 + ((lo >>> 8) & 0xff), m)
    return modExact(r * 256 + (lo & 0xff), m)
  }
  return Number(((BigInt(hi) << 32n) | BigInt(lo)) % BigInt(m))
}

/**
 * The carry out of the 32-bit sum `lo = (a + b (+ carry in)) mod 2^32`, as 0 or 1, from the top
 * bits: how x += b (mod 2^64) moves its high half without a branch on the data.
 */
export function carryOut(a: number, b: number, lo: number): number {
  return ((a & b) | ((a | b) & ~lo)) >>> 31
}

/** @returns 2^64 mod m, for an integer m in [1, 2^53). */
export function twoPow64Mod(m: number): number {
  return (mod64(0xffffffff, 0xffffffff, m) + 1) % m
}

/**
 * The `hashCount` bit positions of a hashed item in a layer of `bitCount` bits, in probe order:
 * `position[i] = (a + i * b) mod 2^64 mod bitCount`. Allocates the result; layers compute the same
 * positions in place (see BloomLayer), so this is for tests, tools and debugging.
 *
 * @param pair `[aHi, aLo, bHi, bLo]`
 * @throws RangeError when bitCount is not an integer in [1, 2^51]
 */
export function bitPositions(pair: Uint32Array, hashCount: number, bitCount: number): number[] {
  if (!Number.isSafeInteger(bitCount) || bitCount < 1 || bitCount > 2 ** 51) {
    throw new RangeError(`bitCount must be an integer in [1, 2^51], got ${bitCount}`)
  }
  const positions: number[] = []
  const bHi = pair[2]
  const bLo = pair[3]
  let xHi = pair[0]
  let xLo = pair[1]
  for (let i = 0; i < hashCount; i++) {
    positions.push(mod64(xHi, xLo, bitCount))
    const lo = (xLo + bLo) >>> 0
    xHi = (xHi + bHi + carryOut(xLo, bLo, lo)) >>> 0
    xLo = lo
  }
  return positions
}
