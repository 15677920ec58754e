import { describe, expect, it } from 'vitest'
import {
  bitPositions,
  createHashPair,
  hashItem,
  hashRedisBloom,
  hashSeeded,
  mod64,
  twoPow64Mod,
} from '../../src/core/hashing.js'
import { fromHex, pairOf, positionsBig, rng, vectors } from './vectors.js'

function pairHex(p: Uint32Array): { a: string; b: string } {
  const h = (x: number) => x.toString(16).padStart(8, '0')
  return { a: h(p[0]) + h(p[1]), b: h(p[2]) + h(p[3]) }
}

describe('hash pairs', () => {
  it('redisbloom: matches bloom_calc_hash64 on the golden vectors', () => {
    const out = createHashPair()
    for (const v of vectors.redisbloomPairs) {
      const item = fromHex(v.item)
      hashRedisBloom(item, 0, item.length, out)
      expect(pairHex(out), v.item).toEqual({ a: v.a, b: v.b })
      hashItem({ kind: 'redisbloom' }, item, out)
      expect(pairHex(out)).toEqual({ a: v.a, b: v.b })
    }
  })

  it('seeded: matches the original library scheme (h2 seeded with the folded h1)', () => {
    const out = createHashPair()
    for (const v of vectors.seededPairs) {
      const item = fromHex(v.item)
      hashSeeded(item, 0, item.length, v.seed!, out)
      expect(pairHex(out), `${v.item} seed ${v.seed}`).toEqual({ a: v.a, b: v.b })
      hashItem({ kind: 'seeded', seed: v.seed! }, item, out)
      expect(pairHex(out)).toEqual({ a: v.a, b: v.b })
    }
  })

  it('hashes a sub-range in place', () => {
    const buf = Uint8Array.of(1, 2, 104, 101, 108, 108, 111, 3) // "hello" inside
    const a = createHashPair()
    const b = createHashPair()
    hashRedisBloom(buf, 2, 7, a)
    hashRedisBloom(new TextEncoder().encode('hello'), 0, 5, b)
    expect(Array.from(a)).toEqual(Array.from(b))
  })
})

describe('mod64', () => {
  it('is exact for moduli across every branch, including above 2^32 and 2^45', () => {
    const random = rng(7)
    const moduli = [
      1,
      2,
      3,
      7,
      64,
      1000,
      2 ** 12 - 1,
      2 ** 12,
      2 ** 12 + 1,
      2 ** 20 - 1,
      2 ** 20,
      2 ** 20 + 1,
      11_027_000,
      110_000_064,
      2 ** 29 - 64,
      2 ** 29 - 1,
      2 ** 29,
      2 ** 29 + 1,
      2 ** 32 - 1,
      2 ** 32,
      2 ** 32 + 64,
      8 * 1_480_000_000,
      2 ** 36 - 1,
      2 ** 36,
      2 ** 36 + 1,
      2 ** 40 + 12345,
      2 ** 44,
      2 ** 44 + 1,
      2 ** 51,
      2 ** 53 - 1,
    ]
    for (let t = 0; t < 400; t++) moduli.push(Math.floor(random() * 2 ** (1 + Math.floor(random() * 52))) + 1)
    for (const m of moduli) {
      for (let t = 0; t < 40; t++) {
        const hi = Math.floor(random() * 4294967296)
        const lo = Math.floor(random() * 4294967296)
        const want = Number(((BigInt(hi) << 32n) | BigInt(lo)) % BigInt(m))
        expect(mod64(hi, lo, m), `${hi}:${lo} mod ${m}`).toBe(want)
      }
      expect(mod64(0xffffffff, 0xffffffff, m)).toBe(Number(((1n << 64n) - 1n) % BigInt(m)))
      expect(twoPow64Mod(m)).toBe(Number((1n << 64n) % BigInt(m)))
    }
  })
})

describe('bitPositions', () => {
  it('equals (a + i*b) mod 2^64 mod m computed in BigInt, wraps included', () => {
    const random = rng(99)
    const u64 = () => (BigInt(Math.floor(random() * 4294967296)) << 32n) | BigInt(Math.floor(random() * 4294967296))
    const moduli = [
      64,
      1000,
      11_072,
      2 ** 21 + 64,
      958_528,
      2 ** 32 + 64,
      4_312_000_000,
      2 ** 35,
      2 ** 40 + 64,
      2 ** 46 + 8,
    ]
    for (const m of moduli) {
      for (let t = 0; t < 200; t++) {
        const a = u64()
        const b = t % 10 === 0 ? (1n << 64n) - 1n - BigInt(t) : u64() // big steps force wraps
        const k = 1 + (t % 30)
        expect(bitPositions(pairOf(a, b), k, m)).toEqual(positionsBig(a, b, k, m))
      }
    }
  })

  it('gives the bits bloom.c sets, for every golden item and layer', () => {
    for (const layer of vectors.layerPositions) {
      layer.positions.forEach((want, index) => {
        const v = vectors.redisbloomPairs[index]
        const pair = pairOf(BigInt('0x' + v.a), BigInt('0x' + v.b))
        const got = [...new Set(bitPositions(pair, layer.hashCount, layer.bitCount))].sort((x, y) => x - y)
        expect(got, `${layer.capacity}/${layer.errorRate} item ${v.item}`).toEqual(want)
      })
    }
  })

  it('rejects a bit count out of range', () => {
    expect(() => bitPositions(createHashPair(), 3, 0)).toThrow(RangeError)
    expect(() => bitPositions(createHashPair(), 3, 2 ** 52)).toThrow(RangeError)
  })
})
