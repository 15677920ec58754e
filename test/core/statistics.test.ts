import { describe, expect, it } from 'vitest'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'

// 16-byte keys built in one reused buffer: byte 0 tells the two sets apart, bytes 1..4 hold i,
// and the rest is a multiplicative scramble of i so that keys differ in every word.
function key(buf: Uint8Array, prefix: number, i: number): Uint8Array {
  buf[0] = prefix
  const scrambled = Math.imul(i, 0x9e3779b1)
  for (let j = 0; j < 4; j++) {
    buf[1 + j] = (i >>> (8 * j)) & 0xff
    buf[5 + j] = (scrambled >>> (8 * j)) & 0xff
    buf[9 + j] = (scrambled >>> (8 * (3 - j))) & 0xff
  }
  buf[13] = buf[14] = buf[15] = 0x5a
  return buf
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
