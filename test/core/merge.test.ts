import { describe, expect, it } from 'vitest'
import { countSetBits } from '../../src/core/bitmap.js'
import { estimateItems, mergedBytes, mergeFilters, mergeMismatch, type MergeMismatch } from '../../src/core/merge.js'
import { ScalableBloomFilter, type FilterOptions } from '../../src/core/scalable-filter.js'
import { seededRandom } from '../helpers/seeded-random.js'

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)
const options = (capacity: number, errorRate = 0.01, more: Partial<FilterOptions> = {}): FilterOptions => ({
  capacity,
  errorRate,
  expansion: 2,
  nonScaling: false,
  ...more,
})

function filled(opts: FilterOptions, items: readonly string[]): ScalableBloomFilter {
  const filter = new ScalableBloomFilter(opts)
  for (const item of items) filter.add(utf8(item))
  return filter
}

function merged(sources: ScalableBloomFilter[]): ScalableBloomFilter {
  const result = mergeFilters(sources)
  if (!(result instanceof ScalableBloomFilter)) throw new Error(`unexpected mismatch ${JSON.stringify(result)}`)
  return result
}

describe('mergeFilters', () => {
  it('has no false negatives: every item any source answers 1 for, on random filters (seeded)', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const random = seededRandom(seed)
      const capacity = 50 + Math.floor(random() * 500)
      const sources: ScalableBloomFilter[] = []
      const added: string[][] = []
      const count = 1 + Math.floor(random() * 4)
      for (let s = 0; s < count; s++) {
        // 0 to 5x the capacity: some sources stay in their first layer, others grow to three or four.
        const items = Array.from(
          { length: Math.floor(random() * capacity * 5) },
          () => `i${Math.floor(random() * capacity * 8)}`,
        )
        added.push(items)
        sources.push(filled(options(capacity), items))
      }
      const union = merged(sources)
      for (const items of added)
        for (const item of items) expect(union.has(utf8(item)), `seed ${seed} item ${item}`).toBe(true)
      // Probes never added: a source's positive is the union's positive too.
      for (let i = 0; i < 2000; i++) {
        const probe = utf8(`probe${i}`)
        if (sources.some((source) => source.has(probe))) expect(union.has(probe)).toBe(true)
      }
      const longest = Math.max(...sources.map((source) => source.layers.length))
      expect(union.layers.length).toBe(longest)
    }
  })

  it('ORs each layer: a shorter source contributes to the layers it has; the sources are untouched', () => {
    const long = filled(
      options(100),
      Array.from({ length: 350 }, (_, i) => `long${i}`),
    )
    const short = filled(
      options(100),
      Array.from({ length: 60 }, (_, i) => `short${i}`),
    )
    const before = long.layers.map((layer) => Buffer.from(layer.bitmap as Uint8Array))
    const union = merged([short, long])
    expect(long.layers.length).toBe(3)
    expect(union.layers.length).toBe(3)
    union.layers.forEach((layer, i) => {
      const expected = Buffer.from(long.layers[i]!.bitmap as Uint8Array)
      if (i === 0) for (let j = 0; j < expected.length; j++) expected[j]! |= (short.layers[0]!.bitmap as Uint8Array)[j]!
      expect(Buffer.from(layer.bitmap as Uint8Array).equals(expected)).toBe(true)
      expect(layer.bitmap).not.toBe(long.layers[i]!.bitmap)
      // The live set-bit count BFS.HEALTH reads is right for the new bitmaps.
      expect(layer.setBits).toBe(countSetBits(layer.bitmap))
    })
    long.layers.forEach((layer, i) => expect(Buffer.from(layer.bitmap as Uint8Array).equals(before[i]!)).toBe(true))
    // Older layers stay full (capacity), so the union grows as the longest source would.
    expect(union.layers[0]!.items).toBe(100)
    expect(union.layers[1]!.items).toBe(200)
    expect(union.layers[2]!.items).toBe(long.layers[2]!.items)
    expect(union.expansion).toBe(2)
    expect(mergedBytes([short, long])).toBe(long.layers.reduce((sum, layer) => sum + layer.bitmap.length, 0))
  })

  it('within the first layer, the union has exactly the bits of one filter fed every item', () => {
    const a = Array.from({ length: 300 }, (_, i) => `a${i}`)
    const b = Array.from({ length: 300 }, (_, i) => `a${i + 150}`)
    const union = merged([filled(options(1000), a), filled(options(1000), b)])
    const fed = filled(options(1000), [...a, ...b])
    expect(
      Buffer.from(union.layers[0]!.bitmap as Uint8Array).equals(Buffer.from(fed.layers[0]!.bitmap as Uint8Array)),
    ).toBe(true)
  })

  it('merging a filter with itself gives the same bits and counts', () => {
    const filter = filled(
      options(1000),
      Array.from({ length: 700 }, (_, i) => `x${i}`),
    )
    const union = merged([filter, filter])
    expect(
      Buffer.from(union.layers[0]!.bitmap as Uint8Array).equals(Buffer.from(filter.layers[0]!.bitmap as Uint8Array)),
    ).toBe(true)
    expect(union.info().items).toBe(filter.info().items)
  })

  it("estimates a layer's items from its set bits, within the bounds: capped at capacity, not below a source", () => {
    const a = filled(
      options(1000),
      Array.from({ length: 400 }, (_, i) => `a${i}`),
    )
    const b = filled(
      options(1000),
      Array.from({ length: 400 }, (_, i) => `b${i}`),
    )
    const union = merged([a, b])
    const layer = union.layers[0]!
    const estimate = estimateItems(countSetBits(layer.bitmap), layer.bitCount, layer.hashCount)
    expect(layer.items).toBe(estimate)
    expect(Math.abs(layer.items - 800) / 800).toBeLessThan(0.05)
    // Overlapping sources: the union is 600 distinct items, not 800.
    const c = filled(
      options(1000),
      Array.from({ length: 400 }, (_, i) => `a${i + 200}`),
    )
    expect(Math.abs(merged([a, c]).layers[0]!.items - 600) / 600).toBeLessThan(0.05)
    // Full sources: the estimate is capped at the capacity.
    const full1 = filled(
      options(100),
      Array.from({ length: 100 }, (_, i) => `p${i}`),
    )
    const full2 = filled(
      options(100),
      Array.from({ length: 100 }, (_, i) => `q${i}`),
    )
    expect(merged([full1, full2]).layers[0]!.items).toBe(100)
    expect(estimateItems(0, 800, 7)).toBe(0)
    expect(estimateItems(800, 800, 7)).toBe(Infinity)
    expect(estimateItems(5, 800, 0)).toBe(0)
  })

  it('a union at capacity grows on the next add, as a filter filled by adds would', () => {
    const full1 = filled(
      options(100),
      Array.from({ length: 100 }, (_, i) => `p${i}`),
    )
    const full2 = filled(
      options(100),
      Array.from({ length: 100 }, (_, i) => `q${i}`),
    )
    const union = merged([full1, full2])
    let i = 0
    while (union.layers.length === 1) union.add(utf8(`new${i++}`))
    expect(union.layers.length).toBe(2)
    expect(union.layers[1]!.capacity).toBe(200)
  })

  it('names the first difference between sources not reserved alike', () => {
    const base = new ScalableBloomFilter(options(1000))
    const cases: [ScalableBloomFilter, Partial<MergeMismatch>][] = [
      [new ScalableBloomFilter(options(2000)), { field: 'capacity', firstValue: '1000', otherValue: '2000' }],
      [new ScalableBloomFilter(options(1000, 0.001)), { field: 'error rate', firstValue: '0.01', otherValue: '0.001' }],
      [
        new ScalableBloomFilter(options(1000, 0.01, { expansion: 4 })),
        { field: 'expansion', firstValue: '2', otherValue: '4' },
      ],
      [
        new ScalableBloomFilter(options(1000, 0.01, { nonScaling: true })),
        { field: 'scaling', firstValue: 'scaling', otherValue: 'NONSCALING' },
      ],
      [
        new ScalableBloomFilter(options(1000, 0.01, { hashing: { kind: 'seeded', seed: 7 } })),
        { field: 'hashing', firstValue: 'redisbloom', otherValue: 'seeded' },
      ],
    ]
    for (const [other, expected] of cases) {
      expect(mergeMismatch([base, base, other])).toMatchObject({
        kind: 'mismatch',
        layer: 0,
        first: 0,
        other: 2,
        ...expected,
      })
      expect(mergeFilters([base, other])).toMatchObject({ kind: 'mismatch', ...expected, other: 1 })
    }
    const seeded = (seed: number, capacity = 1000): ScalableBloomFilter =>
      new ScalableBloomFilter(options(capacity, 0.01, { hashing: { kind: 'seeded', seed } }))
    expect(mergeMismatch([seeded(7), seeded(8)])).toMatchObject({ field: 'seed', firstValue: '7', otherValue: '8' })
    expect(mergeMismatch([seeded(7), seeded(7, 999)])).toMatchObject({ field: 'capacity' })
    expect(mergeMismatch([seeded(7), seeded(7)])).toBeUndefined()
  })

  it('merges seeded filters of the same seed and shape', () => {
    const opts = options(500, 0.01, { hashing: { kind: 'seeded', seed: 42 } })
    const a = filled(opts, ['a', 'b'])
    const b = filled(opts, ['c'])
    const union = merged([a, b])
    expect(union.hashing).toEqual({ kind: 'seeded', seed: 42 })
    for (const item of ['a', 'b', 'c']) expect(union.has(utf8(item))).toBe(true)
    expect(union.info().items).toBe(3)
  })

  it('refuses an empty list', () => {
    expect(() => mergeFilters([])).toThrow(RangeError)
  })
})
