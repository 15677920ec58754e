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
        expect(setBits(layer.bitmap as Uint8Array)).toEqual(want)
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
    const layer = new BloomLayer({
      capacity: 1000,
      errorRate: 0.99,
      bitsPerEntry: 0.02,
      hashCount: 0,
      bitCount: 64,
      items: 0,
      bitmap: new Uint8Array(8),
    })
    expect(layer.hasHashed(createHashPair())).toBe(true)
    expect(layer.addHashed(createHashPair())).toBe(false)
    expect(countSetBits(layer.bitmap)).toBe(0)
  })

  it('rejects inconsistent parts', () => {
    const good = {
      capacity: 10,
      errorRate: 0.01,
      bitsPerEntry: 9.5,
      hashCount: 7,
      bitCount: 128,
      items: 0,
      bitmap: new Uint8Array(16),
    }
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
    for (const change of bad)
      expect(() => new BloomLayer({ ...good, ...change }), JSON.stringify(change)).toThrow(RangeError)
  })
})

describe('BloomLayer write guard (a capture reading the layer)', () => {
  /** Indexes of the non-zero bytes of `bitmap`, found eight bytes at a time. */
  function nonZeroBytes(bitmap: Uint8Array): number[] {
    const words = new Float64Array(bitmap.buffer, bitmap.byteOffset, bitmap.length / 8)
    const found: number[] = []
    for (let w = 0; w < words.length; w++) {
      if (words[w] !== 0) for (let i = w * 8; i < w * 8 + 8; i++) if (bitmap[i] !== 0) found.push(i)
    }
    return found
  }

  // Below 2^30 bits the probe loop steps in int32 arithmetic, from 2^30 up it takes mod64 of x:
  // the guard's positions must match both.
  it.each([
    ['a small layer (int32 stepping)', 1000, 0.01, 50],
    ['a layer of 2^30 bits or more (mod64 positions)', 230_000_000, 0.1, 3],
  ])('is told every byte an add changes, before it changes, in %s', (_, capacity, errorRate, adds) => {
    const layer = BloomLayer.create(capacity, errorRate, layerGeometry(capacity, errorRate))
    if (adds === 3) expect(layer.bitCount).toBeGreaterThanOrEqual(2 ** 30)
    const told = new Map<number, number>() // byte → its value when the guard was told
    layer.writeGuard = {
      beforeWrite: (start, end) => {
        for (let i = start; i < end; i++) if (!told.has(i)) told.set(i, (layer.bitmap as Uint8Array)[i]!)
      },
    }
    const pair = createHashPair()
    for (let n = 0; n < adds; n++) {
      const item = Buffer.from(`guarded:${n}`)
      hashRedisBloom(item, 0, item.length, pair)
      expect(layer.addHashed(pair)).toBe(true)
    }
    const changed = nonZeroBytes(layer.bitmap as Uint8Array)
    expect(changed.length).toBeGreaterThan(adds)
    // Every byte an add set was told of, and told while it was still 0 (before the write).
    for (const byte of changed) expect(told.get(byte), `byte ${byte}`).toBe(0)
  })

  it('is told the range a chunk replaces, and the no-guard path is the plain write', () => {
    const layer = BloomLayer.create(1000, 0.01, layerGeometry(1000, 0.01))
    const ranges: [number, number][] = []
    layer.writeGuard = { beforeWrite: (start, end) => ranges.push([start, end]) }
    layer.writeBytes(Uint8Array.of(1, 2, 3), 40)
    expect(ranges).toEqual([[40, 43]])
    layer.writeGuard = null
    layer.writeBytes(Uint8Array.of(7), 0)
    expect(ranges).toHaveLength(1)
    expect([...(layer.bitmap as Uint8Array).subarray(40, 43)]).toEqual([1, 2, 3])
    expect((layer.bitmap as Uint8Array)[0]).toBe(7)
    expect(new BloomLayer({ ...layer, items: layer.items, bitmap: layer.bitmap }).writeGuard).toBeNull()
  })
})

describe('BloomLayer atomic adds (another thread adding: server/thread-answers.ts)', () => {
  it.each([
    ['a small layer (int32 stepping)', 1000, 0.01, 200],
    ['a layer of 2^30 bits or more (mod64 positions)', 230_000_000, 0.1, 5],
  ])(
    'clearHashed counts the clear positions and orHashed sets the bits addHashed sets, in %s',
    (_, capacity, errorRate, adds) => {
      const geometry = layerGeometry(capacity, errorRate)
      const plain = BloomLayer.create(capacity, errorRate, geometry)
      const atomic = BloomLayer.create(capacity, errorRate, geometry)
      if (adds === 5) expect(atomic.bitCount).toBeGreaterThanOrEqual(2 ** 30)
      const pair = createHashPair()
      for (let n = 0; n < adds; n++) {
        // Every item twice: the second time nothing is clear and nothing is turned on.
        const item = Buffer.from(`atomic:${n % Math.ceil(adds / 2)}`)
        hashRedisBloom(item, 0, item.length, pair)
        const before = plain.setBits
        const added = plain.addHashed(pair)
        const clear = atomic.clearHashed(pair)
        expect(clear === 0).toBe(atomic.hasHashed(pair))
        const flipped = atomic.orHashed(pair)
        expect(flipped).toBe(plain.setBits - before)
        expect(flipped > 0).toBe(added)
        expect(flipped).toBeLessThanOrEqual(clear)
        expect(atomic.clearHashed(pair)).toBe(0)
      }
      expect(Buffer.from(atomic.bitmap as Uint8Array).equals(Buffer.from(plain.bitmap as Uint8Array))).toBe(true)
    },
  )
})
