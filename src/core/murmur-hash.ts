/**
 * MurmurHash64A (Austin Appleby's 64-bit MurmurHash2 for x64), exactly as RedisBloom 2.4 uses it
 * (deps/murmur2/MurmurHash2.c, `MurmurHash64A_Bloom`): m = 0xc6a4a7935bd1e995, r = 47, initial state
 * `seed ^ (len * m)`, 8-byte little-endian blocks, a 1..7 byte tail, then the final mix.
 *
 * Items of up to {@link WASM_MAX_ITEM_BYTES} are hashed by a small WebAssembly module
 * (murmur-hash.wat), whose native 64-bit multiplies make it 3-4 times faster than JavaScript. The
 * JavaScript version, used for longer items and as the reference the module is tested against,
 * avoids BigInt: a 64-bit value is a (hi, lo) pair of 32-bit halves kept as int32, and the
 * multiply by m is done from 16-bit limbs (low half) and `Math.imul` (cross terms).
 */

import { MURMUR_WASM_MODULE } from './murmur-wasm-module.js'

// lib.dom.d.ts declares WebAssembly; this project compiles against ES2022 and Node's types only.
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> }
}

/** High 32 bits of the MurmurHash64A multiplier m = 0xc6a4a7935bd1e995. */
export const MURMUR_M_HI = 0xc6a4a793
/** Low 32 bits of the MurmurHash64A multiplier m = 0xc6a4a7935bd1e995. */
export const MURMUR_M_LO = 0x5bd1e995

const M_LO_HI16 = 0x5bd1
const M_LO_LO16 = 0xe995

// Result of mulM, returned through module scratch so that the hot path allocates nothing.
let productHi = 0
let productLo = 0

/** (hi, lo) * m mod 2^64 → (productHi, productLo), both as int32. */
function mulM(hi: number, lo: number): void {
  // Full 64-bit product of the low halves from 16-bit limbs (every partial product is below 2^32,
  // so exact as a double), plus the two cross terms, which only matter modulo 2^32.
  const a0 = lo & 0xffff
  const a1 = lo >>> 16
  const p00 = a0 * M_LO_LO16
  const p01 = a0 * M_LO_HI16
  const p10 = a1 * M_LO_LO16
  const p11 = a1 * M_LO_HI16
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff)
  productLo = (mid << 16) | (p00 & 0xffff)
  productHi =
    (p11 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16) + Math.imul(hi, MURMUR_M_LO) + Math.imul(lo, MURMUR_M_HI)) | 0
}

/**
 * MurmurHash64A of `data[start..end)` with a 64-bit seed given as two unsigned 32-bit halves.
 *
 * Reads the bytes in place (no copy) and allocates nothing. The hash is written to
 * `out[outIndex]` (high 32 bits) and `out[outIndex + 1]` (low 32 bits).
 *
 * @param data the bytes to hash
 * @param start first byte (inclusive)
 * @param end last byte (exclusive); `end - start` must be below 2^31 like the C `int len`
 * @param seedHi high 32 bits of the seed
 * @param seedLo low 32 bits of the seed
 * @param out receives [hi, lo] of the hash
 * @param outIndex where in `out` to write (default 0)
 */
export function murmurHash64A(
  data: Uint8Array,
  start: number,
  end: number,
  seedHi: number,
  seedLo: number,
  out: Uint32Array,
  outIndex = 0,
): void {
  const len = end - start
  mulM(0, len)
  let hHi = seedHi ^ productHi
  let hLo = seedLo ^ productLo

  const blocksEnd = end - (len & 7)
  let p = start
  while (p < blocksEnd) {
    let kLo = data[p] | (data[p + 1] << 8) | (data[p + 2] << 16) | (data[p + 3] << 24)
    let kHi = data[p + 4] | (data[p + 5] << 8) | (data[p + 6] << 16) | (data[p + 7] << 24)
    p += 8
    mulM(kHi, kLo) // k *= m
    kHi = productHi
    kLo = productLo ^ (productHi >>> 15) // k ^= k >> r
    mulM(kHi, kLo) // k *= m
    mulM(hHi ^ productHi, hLo ^ productLo) // h ^= k; h *= m
    hHi = productHi
    hLo = productLo
  }

  const tail = len & 7
  if (tail !== 0) {
    if (tail >= 7) hHi ^= data[p + 6] << 16
    if (tail >= 6) hHi ^= data[p + 5] << 8
    if (tail >= 5) hHi ^= data[p + 4]
    if (tail >= 4) hLo ^= data[p + 3] << 24
    if (tail >= 3) hLo ^= data[p + 2] << 16
    if (tail >= 2) hLo ^= data[p + 1] << 8
    mulM(hHi, hLo ^ data[p])
    hHi = productHi
    hLo = productLo
  }

  mulM(hHi, hLo ^ (hHi >>> 15)) // h ^= h >> r; h *= m
  out[outIndex] = productHi
  out[outIndex + 1] = productLo ^ (productHi >>> 15) // h ^= h >> r
}

// The WebAssembly module: [0, 16) receives the pair, the item goes at ITEM_OFFSET followed by 8
// zero bytes. The results are read as u32 words, so a big-endian machine uses JavaScript only.
const wasm = new WebAssembly.Instance(new WebAssembly.Module(MURMUR_WASM_MODULE), {}).exports
const wasmMemory = (wasm.memory as { buffer: ArrayBuffer }).buffer
const wasmBytes = new Uint8Array(wasmMemory)
const wasmWords = new Uint32Array(wasmMemory)
const wasmHashPair = wasm.hashPair as (len: number, seedHi: number, seedLo: number, fold: number) => void
const wasmHashOne = wasm.hashOne as (len: number, seedHi: number, seedLo: number) => void
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1
const ITEM_OFFSET = 16
/** Longest item hashed by the WebAssembly module: its 64 KiB page less the pair and 8 zero bytes. */
export const WASM_MAX_ITEM_BYTES = LITTLE_ENDIAN ? wasmBytes.length - ITEM_OFFSET - 8 : -1
// Up to this length, assembling words beats TypedArray.set on a fresh subarray.
const WORD_COPY_MAX_BYTES = 64

/**
 * Two chained MurmurHash64A of `data[start..end)`: h1 with the given seed, then h2 seeded from h1,
 * either with all of h1 (`foldSeed` false: RedisBloom's `bloom_calc_hash64`) or with the u32
 * `(h1 >> 32) ^ h1` (`foldSeed` true: the original library of FORMAT.md). Writes
 * `[h1Hi, h1Lo, h2Hi, h2Lo]` to `out`. Allocates nothing for items of up to 64 bytes.
 */
export function murmurHash64AChained(
  data: Uint8Array,
  start: number,
  end: number,
  seedHi: number,
  seedLo: number,
  foldSeed: boolean,
  out: Uint32Array,
): void {
  const len = end - start
  if (len > WASM_MAX_ITEM_BYTES) {
    murmurHash64AChainedJs(data, start, end, seedHi, seedLo, foldSeed, out)
    return
  }
  stageItem(data, start, end)
  wasmHashPair(len, seedHi, seedLo, foldSeed ? 1 : 0)
  out[0] = wasmWords[0]
  out[1] = wasmWords[1]
  out[2] = wasmWords[2]
  out[3] = wasmWords[3]
}

/**
 * One MurmurHash64A of `data[start..end)` (seed 0), written to out[0] (high 32 bits) and out[1]
 * (low): a Cuckoo filter's hash, without the second one {@link murmurHash64AChained} adds.
 */
export function murmurHash64AOne(data: Uint8Array, start: number, end: number, out: Uint32Array): void {
  const len = end - start
  if (len > WASM_MAX_ITEM_BYTES) {
    murmurHash64A(data, start, end, 0, 0, out, 0)
    return
  }
  stageItem(data, start, end)
  wasmHashOne(len, 0, 0)
  out[0] = wasmWords[0]
  out[1] = wasmWords[1]
}

/** Copies `data[start..end)` (at most {@link WASM_MAX_ITEM_BYTES}) into the module's page, 8 zero bytes after it. */
function stageItem(data: Uint8Array, start: number, end: number): void {
  const len = end - start
  if (len <= WORD_COPY_MAX_BYTES) {
    let word = ITEM_OFFSET / 4
    let p = start
    for (const whole = end - 3; p < whole; p += 4) {
      wasmWords[word++] = data[p] | (data[p + 1] << 8) | (data[p + 2] << 16) | (data[p + 3] << 24)
    }
    let last = 0
    for (let shift = 0; p < end; p++, shift += 8) last |= data[p] << shift
    wasmWords[word] = last
    wasmWords[word + 1] = 0
    wasmWords[word + 2] = 0
  } else {
    wasmBytes.set(data.subarray(start, end), ITEM_OFFSET)
    wasmBytes.fill(0, ITEM_OFFSET + len, ITEM_OFFSET + len + 8)
  }
}

// Mixed blocks (k after `k *= m; k ^= k >> r; k *= m`) of the first hash, reused by the second:
// they do not depend on the seed. 32 blocks cover items up to 256 bytes; longer ones rehash.
const CACHED_BLOCKS = 32
const blockCache = new Int32Array(CACHED_BLOCKS * 2)

/**
 * {@link murmurHash64AChained} in JavaScript, for items too long for the WebAssembly module's page.
 * Same results as two {@link murmurHash64A} calls, but the seed-independent block mixing is done
 * once. Allocates nothing.
 */
export function murmurHash64AChainedJs(
  data: Uint8Array,
  start: number,
  end: number,
  seedHi: number,
  seedLo: number,
  foldSeed: boolean,
  out: Uint32Array,
): void {
  const len = end - start
  const blocks = len >>> 3
  if (blocks > CACHED_BLOCKS) {
    murmurHash64A(data, start, end, seedHi, seedLo, out, 0)
    if (foldSeed) murmurHash64A(data, start, end, 0, out[0] ^ out[1], out, 2)
    else murmurHash64A(data, start, end, out[0], out[1], out, 2)
    return
  }
  mulM(0, len)
  const lenHi = productHi
  const lenLo = productLo

  // First hash, filling the block cache.
  let hHi = seedHi ^ lenHi
  let hLo = seedLo ^ lenLo
  let p = start
  for (let b = 0; b < blocks; b++) {
    const kLo = data[p] | (data[p + 1] << 8) | (data[p + 2] << 16) | (data[p + 3] << 24)
    const kHi = data[p + 4] | (data[p + 5] << 8) | (data[p + 6] << 16) | (data[p + 7] << 24)
    p += 8
    mulM(kHi, kLo)
    mulM(productHi, productLo ^ (productHi >>> 15))
    blockCache[2 * b] = productHi
    blockCache[2 * b + 1] = productLo
    mulM(hHi ^ productHi, hLo ^ productLo)
    hHi = productHi
    hLo = productLo
  }
  // The tail bytes, xored into h the same way for both hashes.
  const tail = len & 7
  let tHi = 0
  let tLo = 0
  if (tail !== 0) {
    if (tail >= 7) tHi ^= data[p + 6] << 16
    if (tail >= 6) tHi ^= data[p + 5] << 8
    if (tail >= 5) tHi ^= data[p + 4]
    if (tail >= 4) tLo ^= data[p + 3] << 24
    if (tail >= 3) tLo ^= data[p + 2] << 16
    if (tail >= 2) tLo ^= data[p + 1] << 8
    tLo ^= data[p]
    mulM(hHi ^ tHi, hLo ^ tLo)
    hHi = productHi
    hLo = productLo
  }
  mulM(hHi, hLo ^ (hHi >>> 15))
  const h1Hi = productHi
  const h1Lo = productLo ^ (productHi >>> 15)
  out[0] = h1Hi
  out[1] = h1Lo

  chainedSecondHash(h1Hi, h1Lo, lenHi, lenLo, blocks, tail !== 0, tHi, tLo, foldSeed, out)
}

/**
 * The second hash of {@link murmurHash64AChainedJs}, from the blocks the first one mixed and left
 * in the block cache, and the same tail word: its result goes to out[2], out[3].
 */
function chainedSecondHash(
  h1Hi: number,
  h1Lo: number,
  lenHi: number,
  lenLo: number,
  blocks: number,
  hasTail: boolean,
  tHi: number,
  tLo: number,
  foldSeed: boolean,
  out: Uint32Array,
): void {
  let hHi = foldSeed ? lenHi : h1Hi ^ lenHi
  let hLo = foldSeed ? h1Hi ^ h1Lo ^ lenLo : h1Lo ^ lenLo
  for (let b = 0; b < blocks; b++) {
    mulM(hHi ^ blockCache[2 * b], hLo ^ blockCache[2 * b + 1])
    hHi = productHi
    hLo = productLo
  }
  if (hasTail) {
    mulM(hHi ^ tHi, hLo ^ tLo)
    hHi = productHi
    hLo = productLo
  }
  mulM(hHi, hLo ^ (hHi >>> 15))
  out[2] = productHi
  out[3] = productLo ^ (productHi >>> 15)
}

const MASK64 = (1n << 64n) - 1n
const M_BIG = 0xc6a4a7935bd1e995n

/**
 * Reference MurmurHash64A in BigInt, written straight from the C source. For tests only: it is
 * slow and allocates. Never use it on a hot path.
 *
 * @param data the bytes to hash (all of them)
 * @param seed the 64-bit seed (taken modulo 2^64)
 * @returns the 64-bit hash as a BigInt in [0, 2^64)
 */
export function murmurHash64ABig(data: Uint8Array, seed: bigint): bigint {
  const len = data.length
  let h = (BigInt.asUintN(64, seed) ^ ((BigInt(len) * M_BIG) & MASK64)) & MASK64
  const blocks = len - (len & 7)
  for (let i = 0; i < blocks; i += 8) {
    let k = 0n
    for (let j = 7; j >= 0; j--) k = (k << 8n) | BigInt(data[i + j])
    k = (k * M_BIG) & MASK64
    k ^= k >> 47n
    k = (k * M_BIG) & MASK64
    h ^= k
    h = (h * M_BIG) & MASK64
  }
  const tail = len & 7
  if (tail !== 0) {
    for (let j = tail - 1; j >= 0; j--) h ^= BigInt(data[blocks + j]) << BigInt(8 * j)
    h = (h * M_BIG) & MASK64
  }
  h ^= h >> 47n
  h = (h * M_BIG) & MASK64
  h ^= h >> 47n
  return h
}
