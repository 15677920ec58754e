import { describe, expect, it } from 'vitest'
import { CuckooFilter, reserveSettings, useCuckooKernel, type CuckooSettings } from '../../src/core/cuckoo-filter.js'
import type { ItemList } from '../../src/core/filter-batch.js'

/** A list of separate items (each in an array of its own). */
function listOf(items: Uint8Array[]): ItemList {
  return { bytes: (i) => items[i]!, start: () => 0, end: (i) => items[i]!.length }
}

/** A small deterministic generator (xorshift32). */
function generator(seed: number): () => number {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    return x
  }
}

/** A filter the kernel never serves: the JavaScript loops (cuckoo-buckets.ts), the reference. */
function loopsOnly(settings: CuckooSettings): CuckooFilter {
  useCuckooKernel(false)
  try {
    return new CuckooFilter(settings)
  } finally {
    useCuckooKernel(true)
  }
}

function sameFilters(a: CuckooFilter, b: CuckooFilter, label: string): void {
  expect(a.numFilters, label).toBe(b.numFilters)
  expect(a.numItems, label).toBe(b.numItems)
  expect(a.numDeletes, label).toBe(b.numDeletes)
  a.subFilters.forEach((data, i) =>
    expect(Buffer.from(data).equals(Buffer.from(b.subFilters[i]!)), `${label}: sub-filter ${i}`).toBe(true),
  )
}

describe('the Cuckoo kernel (cuckoo-kernel.wat) against the JavaScript loops', () => {
  it.each([
    { bucketSize: 1, maxIterations: 3, expansion: 1 },
    { bucketSize: 2, maxIterations: 20, expansion: 1 },
    { bucketSize: 2, maxIterations: 5, expansion: 2 },
    { bucketSize: 4, maxIterations: 10, expansion: 4 },
    { bucketSize: 3, maxIterations: 7, expansion: 0 },
  ])(
    'batches of adds, checks, counts and deletes, and compactions, leave the same buckets and answers (bucket size $bucketSize, expansion $expansion)',
    ({ bucketSize, maxIterations, expansion }) => {
      const settings = reserveSettings(64, bucketSize, maxIterations, expansion)
      const batched = new CuckooFilter(settings)
      const reference = loopsOnly(settings)
      batched.occupiedSlots(0) // the taken-slot counts kept up to date by both ways
      reference.occupiedSlots(0)
      const random = generator(bucketSize * 1000 + expansion * 7 + maxIterations)
      // A small universe: items added several times, deleted when never added, long ones too.
      const universe = Array.from({ length: 300 }, (_, i) =>
        Buffer.from(i % 17 === 0 ? `item-${i}-${'x'.repeat(i % 40)}` : `item-${i}`),
      )
      for (let round = 0; round < 400; round++) {
        const n = 1 + (random() % 40)
        const items = Array.from({ length: n }, () => universe[random() % universe.length]!)
        const list = listOf(items)
        const op = random() % 5
        let staged = 0
        while (staged < n && batched.stageItem(list, staged, staged)) staged++
        expect(staged, 'every item staged').toBe(n)
        const label = `round ${round}, op ${op}`
        if (op === 0) {
          const out = new Int8Array(n)
          batched.addStaged(n, out, undefined, 32)
          const expected = items.map((item) =>
            reference.numFilters >= 32 ? -3 : reference.add(item, 0, item.length, false),
          )
          expect([...out], label).toEqual(expected)
        } else if (op === 1) {
          const out = new Uint8Array(n)
          batched.checkStaged(n, out)
          expect([...out], label).toEqual(items.map((item) => (reference.has(item, 0, item.length) ? 1 : 0)))
          const many = new Uint8Array(n)
          batched.hasMany(list, 0, n, many)
          expect([...many], label).toEqual([...out])
          expect(
            items.map((_, i) => batched.countOf(list, i)),
            label,
          ).toEqual(items.map((item) => reference.count(item, 0, item.length)))
        } else if (op === 4) {
          batched.compact(true) // CF.COMPACT
          reference.compact(true)
        } else {
          const out = new Uint8Array(n)
          batched.deleteStaged(n, out)
          expect([...out], label).toEqual(items.map((item) => (reference.delete(item, 0, item.length) ? 1 : 0)))
        }
        sameFilters(batched, reference, label)
        for (let i = 0; i < batched.numFilters; i++)
          expect(batched.occupiedSlots(i), label).toBe(reference.occupiedSlots(i))
      }
    },
  )

  it('stops a batch of adds at the growth it may not make, as add does', () => {
    const settings = reserveSettings(8, 2, 5, 1)
    const batched = new CuckooFilter(settings)
    const reference = loopsOnly(settings)
    const items = Array.from({ length: 40 }, (_, i) => Buffer.from(`k${i % 9}`))
    const list = listOf(items)
    for (let i = 0; i < items.length; i++) expect(batched.stageItem(list, i, i)).toBe(true)
    const out = new Int8Array(items.length)
    let asked = 0
    batched.addStaged(items.length, out, () => ++asked <= 1, 32)
    let refAsked = 0
    const expected = items.map((item) => reference.add(item, 0, item.length, false, () => ++refAsked <= 1))
    expect([...out]).toEqual(expected)
    expect(expected).toContain(-2)
    sameFilters(batched, reference, 'after refused growth')
  })

  it('compacts after the delete that takes the deletes past 10%, never on an item not found', () => {
    // Deletes made while the filter had one sub-filter, then a growth: the next delete of an item
    // found compacts it (RedisBloom checks after a delete only), one of an item not found does not.
    const settings = reserveSettings(8, 2, 1, 1)
    const [batched, reference] = [new CuckooFilter(settings), loopsOnly(settings)]
    const items = Array.from({ length: 12 }, (_, i) => Buffer.from(`d${i}`))
    for (const filter of [batched, reference]) {
      for (const item of items.slice(0, 4)) filter.add(item, 0, item.length, false)
      for (const item of items.slice(0, 2)) filter.delete(item, 0, item.length)
      for (const item of items) filter.add(item, 0, item.length, false)
    }
    expect(reference.numFilters).toBeGreaterThan(1)
    expect(Number(reference.numDeletes)).toBeGreaterThan(Number(reference.numItems) * 0.1)
    for (const item of [Buffer.from('never added'), items[5]!]) {
      const out = new Uint8Array(1)
      expect(batched.stageItem(listOf([item]), 0, 0)).toBe(true)
      batched.deleteStaged(1, out)
      expect(out[0]).toBe(reference.delete(item, 0, item.length) ? 1 : 0)
      sameFilters(batched, reference, `after deleting ${item.toString()}`)
    }
    expect(reference.numDeletes).toBe(0n)
  })

  it.each([1, 2, 4])(
    'compacts as the JavaScript loops do: fingerprints move back, an emptied newest sub-filter goes (expansion %i)',
    (expansion) => {
      const settings = reserveSettings(16, 2, 2, expansion)
      const [kernel, reference] = [new CuckooFilter(settings), loopsOnly(settings)]
      const items = Array.from({ length: 120 }, (_, i) => Buffer.from(`m${i}`))
      for (const filter of [kernel, reference]) {
        for (const item of items) filter.add(item, 0, item.length, false)
      }
      expect(reference.numFilters).toBeGreaterThan(2)
      // Deletes from the oldest sub-filters' items make room there, then CF.COMPACT moves the
      // newer ones' fingerprints back; the automatic compaction of CF.DEL runs on the way.
      for (const item of items.slice(0, 60)) {
        const out = new Uint8Array(1)
        expect(kernel.stageItem(listOf([item]), 0, 0)).toBe(true)
        kernel.deleteStaged(1, out)
        expect(out[0]).toBe(reference.delete(item, 0, item.length) ? 1 : 0)
        sameFilters(kernel, reference, `after deleting ${item.toString()}`)
      }
      const filters = reference.numFilters
      kernel.compact(true)
      reference.compact(true)
      sameFilters(kernel, reference, 'after CF.COMPACT')
      expect(reference.numFilters).toBeLessThan(filters + 1)
      for (const item of items) expect(kernel.count(item, 0, item.length)).toBe(reference.count(item, 0, item.length))
    },
  )
})
