import { describe, expect, it } from 'vitest'
import { BloomLayer } from '../../src/core/bloom-layer.js'
import { countSetBits } from '../../src/core/bitmap.js'
import { createHashPair, hashRedisBloom } from '../../src/core/hashing.js'
import { layerGeometry } from '../../src/core/sizing.js'
import { fromHex, vectors } from './vectors.js'

function setBits(bitmap: Uint8Array): number[] {
  const out: number[] = []
  for (let i = 0; i < bitmap.length * 8; i++) if (bitmap[i >> 3] & (1 << (i & 7))) out.push(i)
  return out
}

describe('BloomLayer', () => {
  it('sets exactly the bits bloom.c sets, for every golden item and layer', () => {
    const pair = createHashPair()
    for (const v of vectors.layerPositions) {
      v.positions.forEach((want, index) => {
        const g = layerGeometry(v.capacity, v.errorRate)
        expect(g.bitCount).toBe(v.bitCount)
        expect(g.hashCount).toBe(v.hashCount)
        const layer = BloomLayer.create(v.capacity, v.errorRate, g)
        const item = fromHex(vectors.redisbloomPairs[index].item)
        hashRedisBloom(item, 0, item.length, pair)
        expect(layer.hasHashed(pair)).toBe(false)
        expect(layer.addHashed(pair)).toBe(true)
        expect(setBits(layer.bitmap)).toEqual(want)
        expect(layer.hasHashed(pair)).toBe(true)
        expect(layer.items).toBe(1)
        expect(layer.addHashed(pair)).toBe(false) // nothing changed: not counted again
        expect(layer.items).toBe(1)
      })
    }
  })

  it('reports full once items reach capacity', () => {
    const layer = BloomLayer.create(2, 0.01, layerGeometry(2, 0.01))
    const pair = createHashPair()
    for (const s of ['a', 'b']) {
      expect(layer.isFull()).toBe(false)
      const item = new TextEncoder().encode(s)
      hashRedisBloom(item, 0, item.length, pair)
      layer.addHashed(pair)
    }
    expect(layer.isFull()).toBe(true)
  })

  it('with hashCount 0 answers present for everything and sets nothing', () => {
    const layer = new BloomLayer({ capacity: 1000, errorRate: 0.99, bitsPerEntry: 0.02, hashCount: 0, bitCount: 64, items: 0, bitmap: new Uint8Array(8) })
    expect(layer.hasHashed(createHashPair())).toBe(true)
    expect(layer.addHashed(createHashPair())).toBe(false)
    expect(countSetBits(layer.bitmap)).toBe(0)
  })

  it('rejects inconsistent parts', () => {
    const good = { capacity: 10, errorRate: 0.01, bitsPerEntry: 9.5, hashCount: 7, bitCount: 128, items: 0, bitmap: new Uint8Array(16) }
    expect(() => new BloomLayer(good)).not.toThrow()
    const bad: Partial<typeof good>[] = [
      { bitCount: 120 },
      { bitmap: new Uint8Array(8) },
      { bitCount: 0, bitmap: new Uint8Array(0) },
      { capacity: 0 },
      { capacity: 1.5 },
      { errorRate: 0 },
      { errorRate: 1 },
      { errorRate: NaN },
      { bitsPerEntry: Infinity },
      { hashCount: -1 },
      { hashCount: 2.5 },
      { hashCount: 100_000 },
      { items: -1 },
      { items: 0.5 },
    ]
    for (const change of bad) expect(() => new BloomLayer({ ...good, ...change }), JSON.stringify(change)).toThrow(RangeError)
  })
})
