import { describe, expect, it } from 'vitest'
import {
  murmurHash64A,
  murmurHash64AChained,
  murmurHash64AChainedJs,
  murmurHash64ABig,
  murmurHash64AOne,
  WASM_MAX_ITEM_BYTES,
} from '../../src/core/murmur-hash.js'
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

describe.each([
  ['murmurHash64AChained (WebAssembly)', murmurHash64AChained],
  ['murmurHash64AChainedJs', murmurHash64AChainedJs],
])('%s', (_name, chained) => {
  it('equals two reference hashes, the second seeded with h1 or with (u32)((h1 >> 32) ^ h1)', () => {
    const random = rng(2024)
    const out = new Uint32Array(4)
    for (let t = 0; t < 1200; t++) {
      // Every length to 80 (the word copy ends at 64), then longer ones, past the JS block cache too.
      const len = t < 810 ? t % 81 : Math.floor(random() * 700)
      const pad = Math.floor(random() * 5)
      const buf = new Uint8Array(pad + len + 2)
      for (let i = 0; i < buf.length; i++) buf[i] = Math.floor(random() * 256)
      const item = buf.subarray(pad, pad + len)
      const seedHi = Math.floor(random() * 4294967296)
      const seedLo = Math.floor(random() * 4294967296)
      const seed = (BigInt(seedHi) << 32n) | BigInt(seedLo)
      const h1 = murmurHash64ABig(item, seed)
      for (const fold of [false, true]) {
        chained(buf, pad, pad + len, seedHi, seedLo, fold, out)
        const seed2 = fold ? ((h1 >> 32n) ^ h1) & 0xffffffffn : h1
        const h2 = murmurHash64ABig(item, seed2)
        expect((BigInt(out[0]) << 32n) | BigInt(out[1]), `len ${len}`).toBe(h1)
        expect((BigInt(out[2]) << 32n) | BigInt(out[3]), `len ${len} fold ${fold}`).toBe(h2)
      }
    }
  })

  it('is not affected by a longer item hashed before (the tail beyond the item reads as zeros)', () => {
    const out = new Uint32Array(4)
    const long = new Uint8Array(300).fill(0xff)
    for (const len of [1, 7, 9, 63, 65, 100]) {
      chained(long, 0, long.length, 1, 2, false, out)
      const item = new Uint8Array(len).fill(0xab)
      chained(item, 0, len, 1, 2, false, out)
      const h1 = murmurHash64ABig(item, (1n << 32n) | 2n)
      expect((BigInt(out[0]) << 32n) | BigInt(out[1]), `len ${len}`).toBe(h1)
    }
  })
})

describe('the WebAssembly path', () => {
  it('takes items up to WASM_MAX_ITEM_BYTES and longer ones go to JavaScript, with the same results', () => {
    expect(WASM_MAX_ITEM_BYTES).toBe(65536 - 16 - 8)
    const out = new Uint32Array(4)
    const expected = new Uint32Array(4)
    for (const len of [WASM_MAX_ITEM_BYTES - 1, WASM_MAX_ITEM_BYTES, WASM_MAX_ITEM_BYTES + 1, 200_000]) {
      const buf = new Uint8Array(len + 3)
      for (let i = 0; i < buf.length; i++) buf[i] = (i * 131 + 7) & 0xff
      murmurHash64AChained(buf, 3, len + 3, 0xc6a4a793, 0x5bd1e995, false, out)
      murmurHash64AChainedJs(buf, 3, len + 3, 0xc6a4a793, 0x5bd1e995, false, expected)
      expect([...out], `len ${len}`).toEqual([...expected])
      expect((BigInt(out[0]) << 32n) | BigInt(out[1])).toBe(murmurHash64ABig(buf.subarray(3), 0xc6a4a7935bd1e995n))
    }
  })
})

describe('murmurHash64AOne', () => {
  it('equals the seed-0 reference hash for short, long and page-sized items, read in place', () => {
    const random = rng(7)
    const lengths = [...Array.from({ length: 80 }, (_, i) => i), 1000, WASM_MAX_ITEM_BYTES, WASM_MAX_ITEM_BYTES + 1]
    const out = new Uint32Array(2)
    for (const len of lengths) {
      const data = new Uint8Array(len + 3).map(() => Math.floor(random() * 256))
      murmurHash64AOne(data, 3, len + 3, out)
      const got = (BigInt(out[0]!) << 32n) | BigInt(out[1]!)
      expect(got, `length ${len}`).toBe(murmurHash64ABig(data.subarray(3), 0n))
    }
  })
})
