import { describe, expect, it } from 'vitest'
import { isFilterError } from '../../src/core/filter-error.js'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'
import type { FilterOptions, FilterParts } from '../../src/core/scalable-filter.js'
import { bitsPerEntryFor, layerGeometry } from '../../src/core/sizing.js'
import { fromHex, toHex, utf8, vectors } from './vectors.js'

const scalable = (capacity: number, errorRate: number, expansion = 2): FilterOptions => ({
  capacity,
  errorRate,
  expansion,
  nonScaling: false,
})

describe('ScalableBloomFilter against RedisBloom 2.4 SBChain (golden chains)', () => {
  for (const chain of vectors.chains) {
    it(`${chain.name}: same add results, layers, bitmaps, Size and false positives`, () => {
      const filter = new ScalableBloomFilter({
        capacity: chain.capacity,
        errorRate: chain.errorRate,
        expansion: chain.expansion,
        nonScaling: chain.nonScaling,
      })
      const results = []
      for (let i = 0; i < chain.addCount; i++) {
        const outcome = filter.add(utf8(chain.addPrefix + (i % chain.addRepeatAfter)))
        results.push(isFilterError(outcome) ? (outcome.code === 'non-scaling-full' ? -2 : -1) : outcome)
      }
      expect(results).toEqual(chain.addResults)

      const present = []
      for (let i = 0; i < chain.probeCount; i++) if (filter.has(utf8(chain.probePrefix + i))) present.push(i)
      expect(present).toEqual(chain.probePresent)

      const info = filter.info()
      expect(info.items).toBe(chain.items)
      expect(info.sizeBytes).toBe(chain.sizeBytes)
      expect(info.layerCount).toBe(chain.layers.length)
      expect(info.capacity).toBe(chain.layers.reduce((sum, l) => sum + l.capacity, 0))
      expect(info.expansion).toBe(chain.nonScaling ? null : chain.expansion)
      filter.layers.forEach((layer, i) => {
        const want = chain.layers[i]
        expect({
          capacity: layer.capacity,
          errorRate: layer.errorRate,
          bitsPerEntry: layer.bitsPerEntry,
          hashCount: layer.hashCount,
          bitCount: layer.bitCount,
          byteCount: layer.bitmap.length,
          items: layer.items,
        }).toEqual({ ...want, bitmapHex: undefined })
        expect(toHex(layer.bitmap as Uint8Array)).toBe(want.bitmapHex)
      })
    })
  }
})

describe('ScalableBloomFilter behaviour', () => {
  it('adds, reports duplicates as 0, and counts items', () => {
    const filter = new ScalableBloomFilter(scalable(1000, 0.01))
    expect(filter.add(utf8('hello'))).toBe(1)
    expect(filter.add(utf8('hello'))).toBe(0)
    expect(filter.has(utf8('hello'))).toBe(true)
    expect(filter.has(utf8('nope'))).toBe(false)
    expect(filter.add(utf8('a'))).toBe(1)
    expect(filter.add(utf8('b'))).toBe(1)
    expect(filter.info()).toEqual({ capacity: 1000, sizeBytes: 1480, layerCount: 1, items: 3, expansion: 2 })
  })

  it('grows by expansion with error rates halving each layer', () => {
    const filter = new ScalableBloomFilter(scalable(10, 0.01, 3))
    for (let i = 0; filter.layers.length < 4; i++) filter.add(utf8(`item-${i}`))
    expect(filter.layers.map((l) => l.capacity)).toEqual([10, 30, 90, 270])
    expect(filter.layers.map((l) => l.errorRate)).toEqual([0.005, 0.0025, 0.00125, 0.000625])
    for (const layer of filter.layers.slice(0, 3)) expect(layer.items).toBe(layer.capacity)
    expect(filter.layers[3].items).toBe(1) // the add that triggered growth went to the new layer
    for (const layer of filter.layers) {
      const g = layerGeometry(layer.capacity, layer.errorRate)
      expect(layer.bitCount).toBe(g.bitCount)
      expect(layer.hashCount).toBe(g.hashCount)
    }
    const info = filter.info()
    expect(info.capacity).toBe(400)
    expect(info.layerCount).toBe(4)
    expect(info.items).toBe(filter.layers.reduce((s, l) => s + l.items, 0))
    expect(info.sizeBytes).toBe(32 + filter.layers.reduce((s, l) => s + 64 + l.bitmap.length, 0))
    // Every added item is still found (no false negatives across layers).
    for (let i = 0; i < 100; i++) expect(filter.has(utf8(`item-${i}`))).toBe(true)
  })

  it('NONSCALING uses the error rate as given and refuses items once full', () => {
    const filter = new ScalableBloomFilter({ capacity: 2, errorRate: 0.01, expansion: 2, nonScaling: true })
    expect(filter.layers[0].errorRate).toBe(0.01)
    expect(filter.info()).toEqual({ capacity: 2, sizeBytes: 104, layerCount: 1, items: 0, expansion: null })
    // BF.MADD ns 1 2 3 4 → :1 :1 -ERR non scaling filter is full (3 and 4 alike)
    expect(filter.add(utf8('1'))).toBe(1)
    expect(filter.add(utf8('2'))).toBe(1)
    expect(filter.add(utf8('3'))).toEqual({ code: 'non-scaling-full' })
    expect(filter.add(utf8('5'))).toEqual({ code: 'non-scaling-full' })
    expect(filter.add(utf8('1'))).toBe(0) // present items still answer 0
    expect(filter.info().items).toBe(2)
    expect(filter.has(utf8('3'))).toBe(false)
  })

  it('EXPANSION 0 behaves as non-scaling once full but still reports expansion 0', () => {
    const filter = new ScalableBloomFilter(scalable(10, 0.01, 0))
    expect(filter.info()).toEqual({ capacity: 10, sizeBytes: 112, layerCount: 1, items: 0, expansion: 0 })
    expect(filter.layers[0].errorRate).toBe(0.005)
    let stored = 0
    for (let i = 0; i < 11; i++) if (filter.add(utf8(`e0-${i}`)) === 1) stored++
    expect(stored).toBe(10)
    const outcome = filter.add(utf8('one more'))
    expect(isFilterError(outcome) && outcome.code).toBe('non-scaling-full')
    expect(filter.info()).toMatchObject({ layerCount: 1, items: 10, expansion: 0 })
  })

  it('returns too-large instead of allocating a layer above maxLayerBytes', () => {
    const filter = new ScalableBloomFilter({ ...scalable(100, 0.01, 4), maxLayerBytes: 1000 })
    let outcome
    for (let i = 0; i < 1000; i++) {
      outcome = filter.add(utf8(`big-${i}`))
      if (isFilterError(outcome)) break
    }
    expect(outcome).toEqual({ code: 'too-large' })
    expect(filter.layers.length).toBe(2) // 100 → 400 (≈ 560 B) fit, 1600 (≈ 2.4 KB) does not
    expect(filter.layers[1].items).toBe(400)
    expect(() => new ScalableBloomFilter({ ...scalable(10_000, 0.01), maxLayerBytes: 1000 })).toThrow(RangeError)
  })

  it('rejects invalid options with RangeError', () => {
    const bad: Partial<FilterOptions>[] = [
      { capacity: 0 },
      { capacity: -1 },
      { capacity: 1.5 },
      { errorRate: 0 },
      { errorRate: 1 },
      { errorRate: 1.5 },
      { errorRate: NaN },
      { expansion: -1 },
      { expansion: 1.5 },
      { expansion: 2 ** 32 },
      { nonScaling: 'yes' as unknown as boolean },
      { hashing: { kind: 'seeded', seed: -1 } },
      { hashing: { kind: 'other' } as unknown as FilterOptions['hashing'] },
      { maxLayerBytes: 0 },
    ]
    for (const change of bad) {
      expect(() => new ScalableBloomFilter({ ...scalable(100, 0.01), ...change }), JSON.stringify(change)).toThrow(
        RangeError,
      )
    }
    expect(() => new ScalableBloomFilter(scalable(100, 0.01, 40000))).not.toThrow()
  })

  it('accepts every kind of byte string, including empty and binary', () => {
    const filter = new ScalableBloomFilter(scalable(100, 0.01))
    for (const v of vectors.redisbloomPairs)
      expect(filter.add(fromHex(v.item))).not.toEqual(expect.objectContaining({ code: expect.anything() }))
    for (const v of vectors.redisbloomPairs) expect(filter.has(fromHex(v.item))).toBe(true)
  })
})

describe('seeded (original library) filters', () => {
  it('are sized by the original rules, keep the error rate, and refuse items once full', () => {
    const filter = new ScalableBloomFilter({
      capacity: 3,
      errorRate: 0.01,
      expansion: 2,
      nonScaling: false,
      hashing: { kind: 'seeded', seed: 0x9747b28c },
    })
    expect(filter.layers[0]).toMatchObject({ bitCount: 64, hashCount: 15, errorRate: 0.01 })
    expect(filter.add(utf8('a'))).toBe(1)
    expect(filter.add(utf8('b'))).toBe(1)
    expect(filter.add(utf8('c'))).toBe(1)
    expect(filter.add(utf8('d'))).toEqual({ code: 'non-scaling-full' })
    expect(filter.has(utf8('a'))).toBe(true)
    expect(filter.hashing).toEqual({ kind: 'seeded', seed: 0x9747b28c })
  })

  it('answer with the original positions (h1 + i*h2) mod m', async () => {
    const { bitPositions } = await import('../../src/core/hashing.js')
    const filter = new ScalableBloomFilter({
      capacity: 100,
      errorRate: 0.01,
      expansion: 2,
      nonScaling: true,
      hashing: { kind: 'seeded', seed: 12345 },
    })
    const layer = filter.layers[0]
    for (const v of vectors.seededPairs.filter((p) => p.seed === 12345)) {
      const pair = Uint32Array.of(
        parseInt(v.a.slice(0, 8), 16),
        parseInt(v.a.slice(8), 16),
        parseInt(v.b.slice(0, 8), 16),
        parseInt(v.b.slice(8), 16),
      )
      filter.add(fromHex(v.item))
      for (const pos of bitPositions(pair, layer.hashCount, layer.bitCount))
        expect((layer.bitmap as Uint8Array)[pos >> 3] & (1 << (pos & 7))).not.toBe(0)
    }
  })
})

describe('toParts / fromParts', () => {
  function filled(): ScalableBloomFilter {
    const filter = new ScalableBloomFilter(scalable(50, 0.01))
    for (let i = 0; i < 300; i++) filter.add(utf8(`rt-${i}`))
    return filter
  }

  it('round-trips: same layers, shared bitmaps, same answers', () => {
    const filter = filled()
    const parts = filter.toParts()
    expect(parts.layers[0].bitmap).toBe(filter.layers[0].bitmap) // shared, not copied
    const copy = ScalableBloomFilter.fromParts(parts)
    expect(copy.info()).toEqual(filter.info())
    expect(copy.toParts()).toEqual(parts)
    for (let i = 0; i < 2000; i++) expect(copy.has(utf8(`probe-${i}`))).toBe(filter.has(utf8(`probe-${i}`)))
    // It keeps scaling like the original would.
    const a = filled()
    // A copy of the bitmaps, not structuredClone: an arena is a shared memory, and structuredClone
    // of a view of a SharedArrayBuffer shares the bytes instead of copying them.
    const copied = a.toParts()
    const b = ScalableBloomFilter.fromParts({
      ...copied,
      layers: copied.layers.map((layer) => ({ ...layer, bitmap: (layer.bitmap as Uint8Array).slice() })),
    })
    for (let i = 300; i < 800; i++) expect(b.add(utf8(`rt-${i}`))).toBe(a.add(utf8(`rt-${i}`)))
    expect(b.toParts()).toEqual(a.toParts())
  })

  it('round-trips non-scaling, expansion 0 and seeded filters', () => {
    for (const options of [
      { capacity: 5, errorRate: 0.1, expansion: 2, nonScaling: true },
      { capacity: 5, errorRate: 0.1, expansion: 0, nonScaling: false },
      { capacity: 5, errorRate: 0.1, expansion: 2, nonScaling: false, hashing: { kind: 'seeded', seed: 7 } as const },
    ]) {
      const filter = new ScalableBloomFilter(options)
      for (let i = 0; i < 10; i++) filter.add(utf8(`x${i}`))
      const copy = ScalableBloomFilter.fromParts(filter.toParts())
      expect(copy.info()).toEqual(filter.info())
      expect(copy.hashing).toEqual(filter.hashing)
      expect(copy.add(utf8('another'))).toEqual(filter.add(utf8('another')))
    }
  })

  it('applies maxLayerBytes to later scale-ups', () => {
    const filter = new ScalableBloomFilter(scalable(100, 0.01))
    const copy = ScalableBloomFilter.fromParts(filter.toParts(), 100)
    let outcome
    for (let i = 0; i < 200 && !isFilterError(outcome); i++) outcome = copy.add(utf8(`m${i}`))
    expect(outcome).toEqual({ code: 'too-large' })
  })

  it('rejects inconsistent parts with RangeError', () => {
    const base = (): FilterParts => structuredClone(filled().toParts())
    const mutations: ((p: FilterParts) => void)[] = [
      (p) => {
        p.layers = []
      },
      (p) => {
        p.layers[1].bitCount += 64
      },
      (p) => {
        p.layers[1].bitmap = new Uint8Array(p.layers[1].bitmap.length - 8)
      },
      (p) => {
        p.layers[0].bitCount = 96
        p.layers[0].bitmap = new Uint8Array(12)
      }, // not whole 64-bit words
      (p) => {
        p.layers[0].hashCount += 1
      },
      (p) => {
        p.layers[0].bitsPerEntry = bitsPerEntryFor(0.5)
      },
      (p) => {
        p.layers[0].capacity = 0
      },
      (p) => {
        p.layers[0].errorRate = 1
      },
      (p) => {
        p.layers[0].items = -1
      },
      (p) => {
        p.expansion = -2
      },
      (p) => {
        p.nonScaling = true
      }, // more than one layer
      (p) => {
        p.hashing = { kind: 'seeded', seed: 1 }
      }, // more than one layer
      (p) => {
        p.hashing = { kind: 'seeded', seed: 2 ** 32 }
      },
      (p) => {
        p.layers[0].bitmap = [0, 0] as unknown as Uint8Array
      },
    ]
    for (const mutate of mutations) {
      const parts = base()
      mutate(parts)
      expect(() => ScalableBloomFilter.fromParts(parts), mutate.toString()).toThrow(RangeError)
    }
    // A seeded layer may use any whole number of bytes (the original's m is a multiple of 64, but
    // the file format only requires m = 8 * filterSize).
    const seeded = new ScalableBloomFilter({
      capacity: 5,
      errorRate: 0.1,
      expansion: 2,
      nonScaling: true,
      hashing: { kind: 'seeded', seed: 1 },
    }).toParts()
    seeded.layers[0].bitmap = new Uint8Array(3)
    seeded.layers[0].bitCount = 24
    expect(() => ScalableBloomFilter.fromParts(seeded)).not.toThrow()
  })
})
