/**
 * The status page's pieces without a server: the listing's query string, the reserved rate a
 * filter is judged against, and the chart's curve against the rate measured from real bits.
 */
import { describe, expect, it } from 'vitest'
import { filterHealth } from '../../src/core/filter-health.js'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'
import { listFilters, parseListingQuery } from '../../src/http/filters-json.js'
import { targetErrorRate as reservedErrorRate } from '../../src/core/filter-health.js'
import { expectedErrorRate, rateChart } from '../../src/http/status-chart.js'
import { escapeHtml } from '../../src/http/status-page.js'
import { FilterRegistry } from '../../src/store/registry.js'

function filled(filter: ScalableBloomFilter, count: number): ScalableBloomFilter {
  for (let i = 0; i < count; i++) filter.add(Buffer.from(`item:${i}`))
  return filter
}

describe('parseListingQuery', () => {
  it('defaults to the first 100 by name and reads each parameter', () => {
    expect(parseListingQuery('')).toEqual({ limit: 100, offset: 0, sort: 'name' })
    expect(parseListingQuery('sort=bytes&offset=20&limit=1000')).toEqual({ limit: 1000, offset: 20, sort: 'bytes' })
    expect(parseListingQuery('sort=estimatedErrorRate')).toMatchObject({ sort: 'estimatedErrorRate' })
    expect(() => parseListingQuery('limit=99999999999999999999')).toThrow('limit must be an integer from 1 to 1000')
    expect(() => parseListingQuery('%ff=1')).toThrow("unknown parameter '?' (known: limit, offset, sort)")
  })
})

describe('reservedErrorRate', () => {
  it('is the rate given to BF.RESERVE, whatever the first layer was tightened to', () => {
    expect(
      reservedErrorRate(new ScalableBloomFilter({ capacity: 100, errorRate: 0.01, expansion: 2, nonScaling: false })),
    ).toBe(0.01)
    expect(
      reservedErrorRate(new ScalableBloomFilter({ capacity: 100, errorRate: 0.01, expansion: 2, nonScaling: true })),
    ).toBe(0.01)
    expect(
      reservedErrorRate(new ScalableBloomFilter({ capacity: 100, errorRate: 0.01, expansion: 0, nonScaling: false })),
    ).toBe(0.01)
    const seeded = new ScalableBloomFilter({
      capacity: 100,
      errorRate: 0.02,
      expansion: 0,
      nonScaling: true,
      hashing: { kind: 'seeded', seed: 7 },
    })
    expect(reservedErrorRate(seeded)).toBe(0.02)
  })
})

describe('listFilters', () => {
  it('orders by name, by bytes (largest first) and by estimated rate (worst first), ties by name', () => {
    const registry = new FilterRegistry()
    registry.set(
      'b',
      filled(new ScalableBloomFilter({ capacity: 1000, errorRate: 0.01, expansion: 2, nonScaling: true }), 900),
    )
    registry.set(
      'a',
      filled(new ScalableBloomFilter({ capacity: 1000, errorRate: 0.01, expansion: 2, nonScaling: true }), 10),
    )
    registry.set(
      'c',
      filled(new ScalableBloomFilter({ capacity: 10, errorRate: 0.01, expansion: 2, nonScaling: false }), 5),
    )
    const names = (sort: 'name' | 'bytes' | 'estimatedErrorRate', offset = 0, limit = 100) =>
      listFilters(registry, { sort, offset, limit }).filters.map((listed) => listed.row.name)
    expect(names('name')).toEqual(['a', 'b', 'c'])
    expect(names('bytes')).toEqual(['a', 'b', 'c'])
    expect(names('estimatedErrorRate')).toEqual(['b', 'c', 'a'])
    expect(names('name', 1, 1)).toEqual(['b'])
    expect(listFilters(registry, { sort: 'name', offset: 5, limit: 1 })).toEqual({ total: 3, filters: [] })
  })
})

describe('expectedErrorRate', () => {
  it('is 0 with no items and reaches about the layer rate at capacity', () => {
    const filter = new ScalableBloomFilter({ capacity: 10_000, errorRate: 0.01, expansion: 2, nonScaling: true })
    expect(expectedErrorRate(filter.layers, 0)).toBe(0)
    const atCapacity = expectedErrorRate(filter.layers, 10_000)
    expect(atCapacity).toBeGreaterThan(0.005)
    expect(atCapacity).toBeLessThan(0.012)
    expect(expectedErrorRate(filter.layers, 20_000)).toBeGreaterThan(atCapacity * 5)
  })

  it('follows the rate measured from the bits of a filter that scaled, and one filled past its capacity', () => {
    const scaled = filled(
      new ScalableBloomFilter({ capacity: 1000, errorRate: 0.01, expansion: 2, nonScaling: false }),
      5000,
    )
    expect(scaled.layers.length).toBe(3)
    const health = filterHealth(scaled)
    expect(expectedErrorRate(scaled.layers, health.items) / health.estimatedErrorRate).toBeCloseTo(1, 0)
    // A one-layer filter holding 2.5 times its capacity: every item past it lands in that layer.
    const layer = scaled.layers[0]!
    const overfull = { capacity: layer.capacity, bitCount: layer.bitCount, hashCount: layer.hashCount }
    const expected = (1 - Math.exp((-layer.hashCount * 2500) / layer.bitCount)) ** layer.hashCount
    expect(expectedErrorRate([overfull], 2500)).toBeCloseTo(expected, 12)
  })
})

describe('rateChart', () => {
  it('is inline SVG naming no URL, marked when over target', () => {
    const filter = filled(
      new ScalableBloomFilter({ capacity: 100, errorRate: 0.01, expansion: 2, nonScaling: true }),
      50,
    )
    const input = {
      layers: filter.layers,
      items: 50,
      capacity: 100,
      estimatedErrorRate: 0.001,
      errorRate: 0.01,
      over: false,
    }
    const svg = rateChart(input)
    expect(svg).toMatch(/^<svg class="chart" viewBox="0 0 160 48"[^>]*>.*<\/svg>$/)
    expect(svg).not.toMatch(/https?:|xmlns|href/)
    expect(svg.match(/<polyline class="curve" points="([^"]*)"/)![1]!.split(' ')).toHaveLength(41)
    expect(rateChart({ ...input, over: true })).toMatch(/^<svg class="chart over"/)
    expect(escapeHtml(`<a href="x">&'`)).toBe('&#60;a href=&#34;x&#34;&#62;&#38;&#39;')
  })
})
