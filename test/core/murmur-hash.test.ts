import { describe, expect, it } from 'vitest'
import { murmurHash64A, murmurHash64AChained, murmurHash64ABig } from '../../src/core/murmur-hash.js'
import { fromHex, rng, vectors } from './vectors.js'

function fast(data: Uint8Array, seed: bigint, start = 0, end = data.length): bigint {
  const out = new Uint32Array(2)
  murmurHash64A(data, start, end, Number(seed >> 32n), Number(seed & 0xffffffffn), out)
  return (BigInt(out[0]) << 32n) | BigInt(out[1])
}

describe('murmurHash64A', () => {
  it('matches RedisBloom MurmurHash64A_Bloom on the golden vectors (fast and BigInt)', () => {
    expect(vectors.murmur.length).toBeGreaterThan(100)
    for (const v of vectors.murmur) {
      const item = fromHex(v.item)
      const seed = BigInt('0x' + v.seed)
      const want = BigInt('0x' + v.hash)
      expect(fast(item, seed), `item ${v.item} seed ${v.seed}`).toBe(want)
      expect(murmurHash64ABig(item, seed)).toBe(want)
    }
  })

  it('hashes empty input with seed 0 to 0', () => {
    expect(fast(new Uint8Array(0), 0n)).toBe(0n)
  })

  it('agrees with the BigInt reference on thousands of random inputs of every length 0..64', () => {
    const random = rng(12345)
    const u32 = () => BigInt(Math.floor(random() * 4294967296))
    for (let t = 0; t < 6500; t++) {
      const len = t % 65
      const pad = Math.floor(random() * 9)
      const buf = new Uint8Array(pad + len + 3)
      for (let i = 0; i < buf.length; i++) buf[i] = Math.floor(random() * 256)
      const seed = (u32() << 32n) | u32()
      const want = murmurHash64ABig(buf.subarray(pad, pad + len), seed)
      expect(fast(buf, seed, pad, pad + len)).toBe(want)
    }
  })

  it('reads only [start, end) and writes at outIndex', () => {
    const buf = Uint8Array.of(9, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9)
    const out = new Uint32Array(4).fill(7)
    murmurHash64A(buf, 2, 10, 0, 0, out, 2)
    expect(out[0]).toBe(7)
    expect(out[1]).toBe(7)
    const want = murmurHash64ABig(buf.slice(2, 10), 0n)
    expect((BigInt(out[2]) << 32n) | BigInt(out[3])).toBe(want)
  })
})

describe('murmurHash64AChained', () => {
  it('equals two reference hashes, the second seeded with h1 or with (u32)((h1 >> 32) ^ h1)', () => {
    const random = rng(2024)
    const out = new Uint32Array(4)
    for (let t = 0; t < 1200; t++) {
      const len = t < 600 ? t % 65 : Math.floor(random() * 700) // past the 32-block cache too
      const pad = Math.floor(random() * 5)
      const buf = new Uint8Array(pad + len + 2)
      for (let i = 0; i < buf.length; i++) buf[i] = Math.floor(random() * 256)
      const item = buf.subarray(pad, pad + len)
      const seedHi = Math.floor(random() * 4294967296)
      const seedLo = Math.floor(random() * 4294967296)
      const seed = (BigInt(seedHi) << 32n) | BigInt(seedLo)
      const h1 = murmurHash64ABig(item, seed)
      for (const fold of [false, true]) {
        murmurHash64AChained(buf, pad, pad + len, seedHi, seedLo, fold, out)
        const seed2 = fold ? ((h1 >> 32n) ^ h1) & 0xffffffffn : h1
        const h2 = murmurHash64ABig(item, seed2)
        expect((BigInt(out[0]) << 32n) | BigInt(out[1]), `len ${len}`).toBe(h1)
        expect((BigInt(out[2]) << 32n) | BigInt(out[3]), `len ${len} fold ${fold}`).toBe(h2)
      }
    }
  })
})
