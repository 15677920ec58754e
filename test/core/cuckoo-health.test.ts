/**
 * A Cuckoo filter's health (core/cuckoo-health.ts): the taken-slot counts it reads stay equal to
 * the buckets through adds, kicks, growth, deletes, compaction and loaded bytes, and its
 * false-positive estimate agrees with the rate measured on items never added.
 */
import { describe, expect, it } from 'vitest'
import { CuckooFilter, reserveSettings } from '../../src/core/cuckoo-filter.js'
import { cuckooHealth, nearFullLoad } from '../../src/core/cuckoo-health.js'

const encoder = new TextEncoder()

function reserve(capacity: number, bucketSize = 2, maxIterations = 20, expansion = 1): CuckooFilter {
  return new CuckooFilter(reserveSettings(capacity, bucketSize, maxIterations, expansion))
}

function add(filter: CuckooFilter, item: string): number {
  const b = encoder.encode(item)
  return filter.add(b, 0, b.length, false)
}

function del(filter: CuckooFilter, item: string): boolean {
  const b = encoder.encode(item)
  return filter.delete(b, 0, b.length)
}

/** Taken slots of each sub-filter, read from the buckets. */
function scanned(filter: CuckooFilter): number[] {
  return filter.subFilters.map((data) => data.reduce((taken, byte) => taken + (byte === 0 ? 0 : 1), 0))
}

function counted(filter: CuckooFilter): number[] {
  return filter.subFilters.map((_, i) => filter.occupiedSlots(i))
}

/** The share of `probes` items never added that the filter answers present. */
function measuredRate(filter: CuckooFilter, probes: number): number {
  let hits = 0
  for (let i = 0; i < probes; i++) {
    const b = encoder.encode(`absent-${i}`)
    if (filter.has(b, 0, b.length)) hits++
  }
  return hits / probes
}

describe('taken-slot counts', () => {
  it('follow adds, kicks, growth, deletes, automatic and explicit compaction', () => {
    const filter = reserve(64, 2, 20, 2)
    expect(counted(filter)).toEqual([0]) // counted first: every later change keeps it
    for (let i = 0; i < 600; i++) add(filter, `item-${i}`)
    expect(filter.numFilters).toBeGreaterThan(2)
    expect(counted(filter)).toEqual(scanned(filter))
    for (let i = 0; i < 600; i += 3) del(filter, `item-${i}`) // past 10% deleted: compactions
    expect(counted(filter)).toEqual(scanned(filter))
    for (let i = 0; i < 600; i++) if (i % 3 !== 0) del(filter, `item-${i}`)
    filter.compact(true)
    expect(counted(filter)).toEqual(scanned(filter))
    expect(counted(filter).reduce((a, b) => a + b, 0)).toBe(0)
  })

  it('follow bytes loaded over taken and empty slots', () => {
    const filter = reserve(16, 4)
    for (let i = 0; i < 8; i++) add(filter, `x${i}`)
    expect(counted(filter)).toEqual([8])
    filter.loadBytes(0, 4, new Uint8Array([0, 7, 0, 9, 1, 1, 1, 1]))
    expect(counted(filter)).toEqual(scanned(filter))
  })

  it('are counted from the buckets of a loaded filter', () => {
    const source = reserve(1024)
    for (let i = 0; i < 500; i++) add(source, `item-${i}`)
    const copy = CuckooFilter.fromParts(source.toParts())
    expect(counted(copy)).toEqual(scanned(source))
  })
})

describe('cuckooHealth', () => {
  it('an empty filter: fill 0, estimate 0, the target of one full sub-filter', () => {
    const health = cuckooHealth(reserve(1000, 2))
    expect(health).toMatchObject({
      fillRatio: 0,
      estimatedErrorRate: 0,
      items: 0,
      capacity: 1024,
      itemsLeft: -1,
      verdict: 'ok',
    })
    expect(health.errorRate).toBeCloseTo(1 - (254 / 255) ** 4, 12)
    expect(cuckooHealth(reserve(1000, 4)).errorRate).toBeCloseTo(1 - (254 / 255) ** 8, 12)
  })

  it.each([
    [2, 0.25],
    [2, 0.5],
    [4, 0.75],
    [8, 0.85],
  ])(
    'bucket size %i at load %f: the estimate agrees with the rate measured on 200,000 absent items',
    (bucketSize, load) => {
      const filter = reserve(8192, bucketSize, 20, 0)
      const slots = filter.subFilters[0]!.length
      for (let i = 0; i < Math.round(load * slots); i++) expect(add(filter, `item-${i}`)).toBe(1)
      const health = cuckooHealth(filter)
      expect(health.fillRatio).toBeCloseTo(load, 3)
      const measured = measuredRate(filter, 200_000)
      // Binomial standard deviation of the measurement; the items are fixed, so the outcome is too.
      const sigma = Math.sqrt((health.estimatedErrorRate * (1 - health.estimatedErrorRate)) / 200_000)
      expect(Math.abs(measured - health.estimatedErrorRate)).toBeLessThan(4 * sigma)
    },
  )

  it('a filter that cannot grow: items left and near full past the load where adds may start to be refused', () => {
    const filter = reserve(1024, 2, 20, 0)
    const nearFull = Math.ceil(nearFullLoad(2) * 1024)
    for (let i = 0; i < nearFull - 1; i++) add(filter, `item-${i}`)
    expect(cuckooHealth(filter)).toMatchObject({ verdict: 'ok', itemsLeft: 1024 - (nearFull - 1) })
    add(filter, 'one-more')
    expect(cuckooHealth(filter)).toMatchObject({ verdict: 'near full', itemsLeft: 1024 - nearFull })
  })

  it('a filter that grew past one full sub-filter is over its target', () => {
    const filter = reserve(64, 2, 20, 1)
    for (let i = 0; filter.numFilters < 3; i++) add(filter, `item-${i}`)
    const health = cuckooHealth(filter)
    expect(health.estimatedErrorRate).toBeGreaterThan(health.errorRate)
    expect(health.verdict).toBe('over target')
    expect(health.capacity).toBe(3 * 64)
  })
})
