// Loads the golden vectors produced by RedisBloom 2.4.23's own C code (see the JSON's description).
import { readFileSync } from 'node:fs'

/** One MurmurHash64A case: item bytes (hex), seed and hash as 16-digit hex. */
export interface MurmurVector {
  item: string
  seed: string
  hash: string
}
/** A hash pair of an item (a, b as 16-digit hex); `seed` for the seeded scheme. */
export interface PairVector {
  item: string
  a: string
  b: string
  seed?: number
}
/** Sorted set bits of each pair item added alone to a fresh layer. */
export interface LayerPositionsVector {
  capacity: number
  errorRate: number
  bitCount: number
  hashCount: number
  positions: number[][]
}
/** bloom_init(capacity, errorRate, NOROUND|FORCE64) results. */
export interface SizingVector {
  capacity: number
  errorRate: number
  rc: number
  bitsPerEntry: number
  bitCount: number
  byteCount: number
  hashCount: number
}
/** A layer of a chain after the adds. */
export interface ChainLayerVector {
  capacity: number
  errorRate: number
  bitsPerEntry: number
  hashCount: number
  bitCount: number
  byteCount: number
  items: number
  bitmapHex: string
}
/** An SBChain built by adding `addPrefix + (i % addRepeatAfter)` for i < addCount, then probed. */
export interface ChainVector {
  name: string
  capacity: number
  errorRate: number
  nonScaling: boolean
  expansion: number
  addPrefix: string
  addResults: number[]
  addCount: number
  addRepeatAfter: number
  probePrefix: string
  probeCount: number
  probePresent: number[]
  items: number
  sizeBytes: number
  layers: ChainLayerVector[]
}
/** The whole fixture. */
export interface Vectors {
  description: string
  murmur: MurmurVector[]
  redisbloomPairs: PairVector[]
  seededPairs: PairVector[]
  layerPositions: LayerPositionsVector[]
  sizing: SizingVector[]
  chains: ChainVector[]
}

export const vectors: Vectors = JSON.parse(
  readFileSync(new URL('./fixtures/redisbloom-vectors.json', import.meta.url), 'utf8'),
) as Vectors

export function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16)
  return out
}

export function toHex(bytes: Uint8Array): string {
  let s = ''
  for (const b of bytes) s += b.toString(16).padStart(2, '0')
  return s
}

const encoder = new TextEncoder()
export function utf8(s: string): Uint8Array {
  return encoder.encode(s)
}

/** Reference positions in BigInt: (a + i*b) mod 2^64 mod m. */
export function positionsBig(a: bigint, b: bigint, k: number, m: number): number[] {
  const out: number[] = []
  for (let i = 0n; i < BigInt(k); i++) out.push(Number(((a + i * b) & ((1n << 64n) - 1n)) % BigInt(m)))
  return out
}

/** A pair array [aHi, aLo, bHi, bLo] from two 64-bit BigInts. */
export function pairOf(a: bigint, b: bigint): Uint32Array {
  return Uint32Array.of(Number(a >> 32n), Number(a & 0xffffffffn), Number(b >> 32n), Number(b & 0xffffffffn))
}

/** Deterministic PRNG (mulberry32) so failures reproduce. */
export function rng(seed: number): () => number {
  let t = seed >>> 0
  return () => {
    t = (t + 0x6d2b79f5) >>> 0
    let r = Math.imul(t ^ (t >>> 15), 1 | t)
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296
  }
}
