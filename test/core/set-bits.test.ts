/**
 * Every layer's live count of set bits (`setBits`, what the health estimate reads) equals a fresh
 * popcount of its bitmap after every path that sets bits: adds (both probe loops, scaling, the
 * original library's hashing), a chunk copied in, a bitmap installed whole (fromParts, the
 * library's fromBytes). And the health figures built on it.
 */
import { describe, expect, it } from 'vitest'
import { BloomLayer } from '../../src/core/bloom-layer.js'
import { countSetBits } from '../../src/core/bitmap.js'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'
import { filterHealth, overTargetSetBits, targetErrorRate } from '../../src/core/filter-health.js'
import { layerGeometry } from '../../src/core/sizing.js'
import { BloomFilter } from '../../src/library/bloom-filter.js'
import { encodeFilter } from '../../src/format/codec.js'
import { seededRandom } from '../helpers/seeded-random.js'
import { applyDumpChunk } from '../../src/format/dump-chunk.js'

const text = new TextEncoder()

function expectCounted(filter: ScalableBloomFilter): void {
  for (const layer of filter.layers) expect(layer.setBits).toBe(countSetBits(layer.bitmap))
}

describe('countSetBits', () => {
  it('counts any range, aligned or not, as a bit-by-bit count does', () => {
    const next = seededRandom(7)
    const backing = new Uint8Array(203)
    for (let i = 0; i < backing.length; i++) backing[i] = Math.floor(next() * 256)
    const bitmap = backing.subarray(3) // not 4-byte aligned
    const slow = (start: number, end: number): number => {
      let n = 0
      for (let i = start * 8; i < end * 8; i++) n += (bitmap[i >> 3]! >> (i & 7)) & 1
      return n
    }
    for (const [start, end] of [
      [0, 200],
      [1, 2],
      [5, 133],
      [7, 7],
      [0, 3],
      [196, 200],
    ] as const) {
      expect(countSetBits(bitmap, start, end)).toBe(slow(start, end))
    }
    expect(countSetBits(new Uint8Array(64).fill(0xff))).toBe(512)
  })
})

describe('setBits', () => {
  it('follows adds through scaling, duplicates and false positives', () => {
    const filter = new ScalableBloomFilter({ capacity: 50, errorRate: 0.01, expansion: 2, nonScaling: false })
    for (let i = 0; i < 1000; i++) filter.add(text.encode(`item-${i % 700}`))
    expect(filter.layers.length).toBeGreaterThan(3)
    expectCounted(filter)
    expect(filter.layers[0]!.setBits).toBeGreaterThan(0)
  })

  it('follows adds with the original library hashing and with a tiny hash-count-heavy layer', () => {
    const seeded = new ScalableBloomFilter({
      capacity: 300,
      errorRate: 0.001,
      expansion: 2,
      nonScaling: true,
      hashing: { kind: 'seeded', seed: 42 },
    })
    for (let i = 0; i < 300; i++) seeded.add(text.encode(`s${i}`))
    expectCounted(seeded)
    const tiny = new ScalableBloomFilter({ capacity: 1, errorRate: 1e-9, expansion: 1, nonScaling: false })
    for (let i = 0; i < 30; i++) tiny.add(text.encode(`t${i}`)) // 64-bit layers, k up to 30s: probes repeat
    expectCounted(tiny)
  })

  it('is counted when a bitmap is installed whole: fromParts and the library fromBytes', () => {
    const next = seededRandom(11)
    const filter = new ScalableBloomFilter({ capacity: 100, errorRate: 0.01, expansion: 2, nonScaling: false })
    for (let i = 0; i < 250; i++) filter.add(text.encode(`x${i}`))
    const parts = filter.toParts()
    const copied = {
      ...parts,
      layers: parts.layers.map((layer) => ({
        ...layer,
        bitmap: (layer.bitmap as Uint8Array).map(() => Math.floor(next() * 256)),
      })),
    }
    const restored = ScalableBloomFilter.fromParts(copied)
    expectCounted(restored)
    expect(restored.layers[0]!.setBits).not.toBe(filter.layers[0]!.setBits)
    const library = BloomFilter.fromBytes(
      Buffer.concat(encodeFilter({ name: new Uint8Array(0), parts: filter.toParts() })),
    )
    expectCounted(library.scalable)
    expect(library.scalable.layers.map((l) => l.setBits)).toEqual(filter.layers.map((l) => l.setBits))
  })

  it('follows a chunk written through the layer, counting only its range', () => {
    const next = seededRandom(3)
    const filter = new ScalableBloomFilter({ capacity: 100, errorRate: 0.01, expansion: 2, nonScaling: false })
    for (let i = 0; i < 250; i++) filter.add(text.encode(`c${i}`))
    const layers = filter.layers
    const chunk = Uint8Array.from({ length: 37 }, () => Math.floor(next() * 256))
    // Iterator past byte 100 of layer 0 (144 bytes), then into layer 1.
    for (const iterator of [1 + 100 + chunk.length, 1 + 144 + 20 + chunk.length]) {
      const outcome = applyDumpChunk(filter.toParts(), iterator, chunk, (index, offset, bytes) =>
        layers[index]!.writeBytes(bytes, offset),
      )
      expect(outcome).toBe('ok')
      expectCounted(filter)
    }
    expect(Array.from((layers[1]!.bitmap as Uint8Array).subarray(20, 20 + chunk.length))).toEqual(Array.from(chunk))
    expect(() => layers[0]!.writeBytes(chunk, 140)).toThrow(RangeError)
  })

  it('starts at 0 for a new layer without scanning its bitmap', () => {
    const layer = BloomLayer.create(1000, 0.01, layerGeometry(1000, 0.01))
    expect(layer.setBits).toBe(0)
  })
})

describe('filterHealth', () => {
  it('reports the fill, the estimate 1 − Π(1 − X^k) and the reserved rate', () => {
    const filter = new ScalableBloomFilter({ capacity: 100, errorRate: 0.01, expansion: 2, nonScaling: false })
    for (let i = 0; i < 150; i++) filter.add(text.encode(`i${i}`))
    const health = filterHealth(filter)
    const [a, b] = filter.layers
    const xa = a!.setBits / a!.bitCount
    const xb = b!.setBits / b!.bitCount
    expect(health.fillRatio).toBe((a!.setBits + b!.setBits) / (a!.bitCount + b!.bitCount))
    expect(health.estimatedErrorRate).toBeCloseTo(1 - (1 - xa ** a!.hashCount) * (1 - xb ** b!.hashCount), 15)
    expect(health.errorRate).toBe(0.01) // reserved 0.01; the first layer keeps 0.005
    expect(health.itemsLeft).toBe(-1)
    expect(health.verdict).toBe('ok')
  })

  it('keeps the rate as given for non-scaling and original-library filters', () => {
    const ns = new ScalableBloomFilter({ capacity: 10, errorRate: 0.02, expansion: 2, nonScaling: true })
    expect(targetErrorRate(ns)).toBe(0.02)
    const seeded = new ScalableBloomFilter({
      capacity: 10,
      errorRate: 0.02,
      expansion: 2,
      nonScaling: false,
      hashing: { kind: 'seeded', seed: 1 },
    })
    expect(targetErrorRate(seeded)).toBe(0.02)
    for (let i = 0; i < 9; i++) ns.add(text.encode(`n${i}`))
    expect(filterHealth(ns)).toMatchObject({ items: 9, capacity: 10, itemsLeft: 1, verdict: 'near full' })
  })

  it('overTargetSetBits is the count of set bits where the verdict turns', () => {
    const filter = new ScalableBloomFilter({ capacity: 100, errorRate: 0.01, expansion: 2, nonScaling: true })
    const layer = filter.layers[0]!
    const threshold = overTargetSetBits(filter, 0.01)
    expect(threshold).toBe(Math.floor(layer.bitCount * 0.01 ** (1 / layer.hashCount)))
    const fill = (bits: number): void => {
      layer.writeBytes(new Uint8Array(layer.bitmap.length), 0)
      const bytes = new Uint8Array(layer.bitmap.length)
      for (let i = 0; i < bits; i++) bytes[i >> 3]! |= 1 << (i & 7)
      layer.writeBytes(bytes, 0)
    }
    fill(threshold)
    expect(filterHealth(filter).verdict).not.toBe('over target')
    fill(threshold + 1)
    expect(filterHealth(filter).verdict).toBe('over target')
  })
})
