import { describe, expect, it } from 'vitest'
import { SlidingWindowFilter } from '../../src/index.js'

describe('SlidingWindowFilter (library)', () => {
  it('forgets the oldest items of a COUNT window and keeps the last ones', () => {
    const window = new SlidingWindowFilter({ window: 'count', capacity: 1000, errorRate: 0.001 })
    for (let i = 0; i < 10_000; i++) window.add(`item-${i}`)
    for (let i = 9000; i < 10_000; i++) expect(window.has(`item-${i}`)).toBe(true)
    let remembered = 0
    for (let i = 0; i < 5000; i++) if (window.has(`item-${i}`)) remembered++
    expect(remembered).toBeLessThan(20)
    expect(window.info().kind).toBe('count')
  })

  it('answers by the times it is given for a TIME window, and round-trips through bytes', () => {
    const day = new SlidingWindowFilter({ window: 'time', windowSeconds: 86_400, capacity: 10_000, errorRate: 0.01 })
    const t0 = Date.UTC(2026, 10, 24)
    expect(day.add('order-42', t0)).toBe(true)
    expect(day.add('order-42', t0 + 3_600_000)).toBe(false)
    expect(day.has('order-42', t0 + 86_000_000)).toBe(true) // 23.9 h after the last add
    expect(day.has('order-42', t0 + 3 * 86_400_000)).toBe(false)
    const copy = SlidingWindowFilter.fromBytes(day.toBytes('daily'))
    expect(copy.has('order-42', t0 + 3_700_000)).toBe(true)
    expect(copy.info(t0).window).toBe(86_400)
  })
})
