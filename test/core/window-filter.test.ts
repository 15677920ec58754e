import { describe, expect, it } from 'vitest'
import { WindowFilter, windowFilterBytes } from '../../src/core/window-filter.js'
import { chooseWindowShape, runProbability, windowFalsePositiveRate } from '../../src/core/window-sizing.js'

const encoder = new TextEncoder()
const bytes = (s: string): Uint8Array => encoder.encode(s)
const add = (f: WindowFilter, s: string, now = 0): 0 | 1 => {
  const b = bytes(s)
  return f.add(b, 0, b.length, now)
}
const has = (f: WindowFilter, s: string, now = 0): boolean => {
  const b = bytes(s)
  return f.has(b, 0, b.length, now)
}

describe('window sizing (APBF paper, false-positive analysis)', () => {
  it('computes the chance of a run exactly for small cases', () => {
    expect(runProbability([0.5, 0.5], 2)).toBeCloseTo(0.25, 12)
    // runs of 2 among 3 slices of fill 1/2: 110, 011, 111 → 3/8
    expect(runProbability([0.5, 0.5, 0.5], 2)).toBeCloseTo(3 / 8, 12)
    expect(runProbability([1, 0, 1], 2)).toBe(0)
  })

  it('picks shapes that meet the target', () => {
    for (const rate of [0.1, 0.01, 0.001, 0.0001]) {
      const { k, l } = chooseWindowShape(rate)
      expect(windowFalsePositiveRate(k, l)).toBeLessThanOrEqual(rate)
    }
    // a window of 3 items has generations of at least one item
    expect(chooseWindowShape(0.01, 3).l).toBeLessThanOrEqual(3)
  })

  it('refuses rates out of range', () => {
    expect(() => chooseWindowShape(0)).toThrow(RangeError)
    expect(() => chooseWindowShape(1)).toThrow(RangeError)
    expect(() => new WindowFilter({ kind: 'time', errorRate: 0.01, capacity: 10 })).toThrow(RangeError)
  })
})

describe('COUNT window (age-partitioned Bloom filter)', () => {
  it('answers 1 for every one of the last capacity items and forgets older ones', () => {
    const capacity = 2000
    const filter = new WindowFilter({ kind: 'count', errorRate: 0.01, capacity })
    const total = 30_000
    let falseNegatives = 0
    for (let i = 0; i < total; i++) {
      add(filter, `item-${i}`)
      if (i % 997 === 0 && i >= capacity) {
        for (let j = i - capacity + 1; j <= i; j++) if (!has(filter, `item-${j}`)) falseNegatives++
      }
    }
    expect(falseNegatives).toBe(0)
    // Items well past the window (beyond the slack of one generation): only false positives remain.
    let positives = 0
    const old = 20_000
    for (let j = 0; j < old; j++) if (has(filter, `item-${j}`)) positives++
    expect(positives / old).toBeLessThan(0.02)
  }, 60_000)

  it('measures a false-positive rate near the target over never-added items', () => {
    for (const rate of [0.01, 0.001]) {
      const filter = new WindowFilter({ kind: 'count', errorRate: rate, capacity: 5000 })
      for (let i = 0; i < 50_000; i++) add(filter, `a-${i}`)
      let positives = 0
      const probes = 200_000
      for (let i = 0; i < probes; i++) if (has(filter, `b-${i}`)) positives++
      expect(positives / probes).toBeLessThan(rate * 1.5)
    }
  }, 60_000)

  it('re-adding an item keeps it in the window and answers 0', () => {
    const filter = new WindowFilter({ kind: 'count', errorRate: 0.01, capacity: 100 })
    expect(add(filter, 'kept')).toBe(1)
    for (let i = 0; i < 1000; i++) {
      if (i % 50 === 0) expect(add(filter, 'kept')).toBe(0)
      add(filter, `other-${i}`)
    }
    expect(has(filter, 'kept')).toBe(true)
  })

  it('round-trips through its parts', () => {
    const filter = new WindowFilter({ kind: 'count', errorRate: 0.01, capacity: 300 })
    for (let i = 0; i < 1000; i++) add(filter, `x-${i}`)
    // Copies of the bitmaps: structuredClone of a view of an arena (a shared memory) shares its bytes.
    const parts = filter.toParts()
    const copy = WindowFilter.fromParts({
      ...parts,
      slices: parts.slices.map((slice) => ({ ...slice, bitmap: slice.bitmap.slice() })),
    })
    for (let i = 700; i < 1000; i++) expect(has(copy, `x-${i}`)).toBe(true)
    expect(add(copy, 'new')).toBe(add(filter, 'new'))
    expect(copy.toParts()).toEqual(filter.toParts())
    expect(copy.bitmapBytes()).toBe(windowFilterBytes({ kind: 'count', errorRate: 0.01, capacity: 300 }))
  })
})

describe('TIME window (time-limited Bloom filter)', () => {
  const windowMs = 60_000

  it('answers 1 inside the window at any rate, 0 once the window and a generation passed', () => {
    const filter = new WindowFilter({ kind: 'time', errorRate: 0.01, capacity: 1000, windowMs })
    const added: { item: string; at: number }[] = []
    let now = 1_000_000
    let falseNegatives = 0
    // A steady phase, a burst at 20 times the rate, then quiet.
    for (let i = 0; i < 40_000; i++) {
      const burst = i > 10_000 && i < 30_000
      now += burst ? 3 : 60
      const item = `t-${i}`
      add(filter, item, now)
      added.push({ item, at: now })
      if (i % 1500 === 0) {
        for (const { item: old, at } of added) if (now - at < windowMs && !has(filter, old, now)) falseNegatives++
      }
    }
    expect(falseNegatives).toBe(0)
    expect(filter.slices.length).toBeGreaterThan(filter.k) // it grew for the burst
    const later = now + windowMs + filter.generationMs + 1
    let positives = 0
    for (const { item } of added) if (has(filter, item, later)) positives++
    expect(positives).toBe(0) // every slice is past the window: nothing answers
  }, 60_000)

  it('keeps the target rate as the insertion rate rises tenfold', () => {
    const filter = new WindowFilter({ kind: 'time', errorRate: 0.01, capacity: 1000, windowMs })
    let now = 0
    // 10 000 items per window instead of 1000, for three windows.
    for (let i = 0; i < 30_000; i++) add(filter, `r-${i}`, (now += 6))
    let positives = 0
    const probes = 100_000
    for (let i = 0; i < probes; i++) if (has(filter, `never-${i}`, now)) positives++
    expect(positives / probes).toBeLessThan(0.015)
  }, 60_000)

  it('grows with a burst within milliseconds without sizing for a rate it cannot know', () => {
    const filter = new WindowFilter({ kind: 'time', errorRate: 0.01, capacity: 100, windowMs })
    const t0 = 1e12
    let largest = 0
    for (let i = 0; i < 50_000; i++) {
      add(filter, `burst-${i}`, t0 + Math.floor(i / 1000)) // 1000 adds per ms, 100 per minute sized for
      largest = Math.max(largest, filter.bitmapBytes())
    }
    let falseNegatives = 0
    for (let i = 0; i < 50_000; i++) if (!has(filter, `burst-${i}`, t0 + 100)) falseNegatives++
    expect(falseNegatives).toBe(0)
    // 50,000 items at 1% need about 60 KB; a rate taken from 1-ms generations once asked for 28 MB.
    expect(largest).toBeLessThan(2_000_000)
    let positives = 0
    for (let i = 0; i < 50_000; i++) if (has(filter, `probe-${i}`, t0 + 100)) positives++
    expect(positives / 50_000).toBeLessThan(0.01)
  })

  it('never lets time go back, and stays a function of the adds and their times', () => {
    const a = new WindowFilter({ kind: 'time', errorRate: 0.01, capacity: 100, windowMs: 1000 })
    const b = new WindowFilter({ kind: 'time', errorRate: 0.01, capacity: 100, windowMs: 1000 })
    const times = [5, 3, 800, 1200, 1100, 5000, 5001, 9000]
    times.forEach((t, i) => {
      add(a, `i-${i}`, t)
      add(b, `i-${i}`, t)
    })
    expect(a.toParts()).toEqual(b.toParts())
    expect(a.clock).toBe(9000)
    expect(has(a, 'i-7', 9000)).toBe(true)
    expect(has(a, 'i-5', 9000)).toBe(false) // 4 s old, window 1 s
  })

  it('forgets everything after a long quiet spell, and the next adds start clean', () => {
    const filter = new WindowFilter({ kind: 'time', errorRate: 0.01, capacity: 100, windowMs: 1000 })
    for (let i = 0; i < 300; i++) add(filter, `q-${i}`, i * 10)
    expect(has(filter, 'q-299', 3000)).toBe(true)
    expect(has(filter, 'q-299', 100_000)).toBe(false)
    expect(add(filter, 'fresh', 100_000)).toBe(1)
    let revived = 0
    for (let i = 0; i < 300; i++) if (has(filter, `q-${i}`, 100_001)) revived++
    expect(revived).toBeLessThan(5) // only false positives, not the old slices' bits
    expect(filter.slices.length).toBeLessThanOrEqual(filter.k)
  })
})
