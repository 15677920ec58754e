import { describe, expect, it } from 'vitest'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'

// 16-byte keys built in one reused buffer: distinct prefixes keep the two sets disjoint.
function key(buf: Uint8Array, prefix: number, i: number): Uint8Array {
  buf[0] = prefix
  for (let j = 1; j < 16; j++) buf[j] = (i >>> ((j % 4) * 8)) & 0xff
  buf[15] = j15(i)
  return buf
}
function j15(i: number): number {
  return (i * 2654435761) >>> 24
}

function measure(nonScaling: boolean): { falsePositiveRate: number; falseNegatives: number; layers: number } {
  const filter = new ScalableBloomFilter({ capacity: 100_000, errorRate: 0.01, expansion: 2, nonScaling })
  const buf = new Uint8Array(16)
  for (let i = 0; i < 100_000; i++) filter.add(key(buf, 1, i))
  let falseNegatives = 0
  for (let i = 0; i < 100_000; i++) if (!filter.has(key(buf, 1, i))) falseNegatives++
  let falsePositives = 0
  for (let i = 0; i < 100_000; i++) if (filter.has(key(buf, 2, i))) falsePositives++
  return { falsePositiveRate: falsePositives / 100_000, falseNegatives, layers: filter.layers.length }
}

describe('false-positive rate at capacity (100000 items, error 0.01)', () => {
  it('non-scaling layer at 0.01: rate within 0.007..0.013, no false negatives', () => {
    const { falsePositiveRate, falseNegatives, layers } = measure(true)
    expect(falseNegatives).toBe(0)
    expect(layers).toBe(1)
    // Theory for k = 7 at 9.59 bits per item: 0.0100; the binomial σ over 100k probes is 0.0003.
    expect(falsePositiveRate).toBeGreaterThan(0.007)
    expect(falsePositiveRate).toBeLessThan(0.013)
  })

  it('scalable filter (first layer tightened to 0.005): rate within 0.0035..0.0065, no false negatives', () => {
    const { falsePositiveRate, falseNegatives, layers } = measure(false)
    expect(falseNegatives).toBe(0)
    expect(layers).toBe(1)
    expect(falsePositiveRate).toBeGreaterThan(0.0035)
    expect(falsePositiveRate).toBeLessThan(0.0065)
  })
})
