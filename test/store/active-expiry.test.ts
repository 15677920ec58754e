/**
 * The registry's expiry (store/registry.ts: lazy check on every lookup, by mode) and the active
 * cycle (store/active-expiry.ts), on a clock the test moves.
 */
import { describe, expect, it } from 'vitest'
import { FilterRegistry, type ExpiryMode } from '../../src/store/registry.js'
import { ActiveExpiry } from '../../src/store/active-expiry.js'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'
import { Stats } from '../../src/runtime/stats.js'

const filter = (): ScalableBloomFilter =>
  new ScalableBloomFilter({ capacity: 100, errorRate: 0.01, expansion: 2, nonScaling: false })

/** A registry on a clock at `time.now`, in `time.mode`, recording what expired. */
function registryOnClock(): { registry: FilterRegistry; time: { now: number; mode: ExpiryMode }; expired: string[] } {
  const registry = new FilterRegistry()
  const time = { now: 1000, mode: 'delete' as ExpiryMode }
  const expired: string[] = []
  registry.expiry = { now: () => time.now, mode: () => time.mode, expired: (name) => expired.push(name) }
  return { registry, time, expired }
}

describe('FilterRegistry expiry', () => {
  it('a key is expired strictly after its time; a lookup then deletes it and tells the policy once', () => {
    const { registry, time, expired } = registryOnClock()
    registry.setExpiry(registry.set('k', filter()), 2000)
    time.now = 2000
    expect(registry.lookup(Buffer.from('k'))).toBeDefined()
    time.now = 2001
    expect(registry.lookup(Buffer.from('k'))).toBeUndefined()
    expect(registry.get('k')).toBeUndefined()
    expect(registry.size).toBe(0)
    expect(registry.expiringCount).toBe(0)
    expect(expired).toEqual(['k'])
  })

  it('hide: reads see no key, nothing is deleted; keep: the key as it is', () => {
    const { registry, time, expired } = registryOnClock()
    registry.setExpiry(registry.set('k', filter()), 2000)
    registry.set('other', filter())
    time.now = 5000
    time.mode = 'hide'
    expect(registry.get('k')).toBeUndefined()
    expect(registry.has('k')).toBe(false)
    expect([...registry.names()]).toEqual(['other'])
    expect(registry.liveSize()).toBe(1)
    expect(registry.keyspaceFigures()).toEqual({ keys: 1, expires: 0, avgTtlMs: 0 })
    expect(registry.size).toBe(2)
    expect(registry.peek('k')).toBeDefined()
    time.mode = 'keep'
    expect(registry.get('k')).toBeDefined()
    expect(expired).toEqual([])
  })

  it("RENAME carries the expiry and drops the destination's; set() and delete() drop it", () => {
    const { registry } = registryOnClock()
    registry.setExpiry(registry.set('a', filter()), 9000)
    registry.setExpiry(registry.set('b', filter()), 8000)
    registry.rename('a', 'b')
    expect(registry.get('b')!.expiresAt).toBe(9000)
    expect(registry.expiringCount).toBe(1)
    registry.set('b', filter())
    expect(registry.get('b')!.expiresAt).toBeUndefined()
    expect(registry.expiringCount).toBe(0)
    registry.setExpiry(registry.get('b')!, 9000)
    registry.delete('b')
    expect(registry.expiringCount).toBe(0)
  })

  it('INFO keyspace figures: live keys, keys with an expiry, their mean time left', () => {
    const { registry } = registryOnClock()
    registry.set('plain', filter())
    registry.setExpiry(registry.set('a', filter()), 3000)
    registry.setExpiry(registry.set('b', filter()), 5001)
    expect(registry.keyspaceFigures()).toEqual({ keys: 3, expires: 2, avgTtlMs: 3000 })
  })
})

describe('ActiveExpiry', () => {
  it('deletes the expired keys and keeps the others, without any lookup; counts its cycles', () => {
    const { registry, time, expired } = registryOnClock()
    const stats = new Stats()
    for (let i = 0; i < 1000; i++) registry.setExpiry(registry.set(`k${i}`, filter()), i % 10 === 0 ? 900_000 : 1500)
    time.now = 2000
    const active = new ActiveExpiry(registry, stats)
    let deleted = 0
    for (let cycle = 0; cycle < 100 && registry.size > 100; cycle++) deleted += active.cycle('slow', 1, 10)
    expect(deleted).toBe(900)
    expect(registry.size).toBe(100)
    expect(expired.length).toBe(900)
    expect(stats.expiredStalePerc).toBeGreaterThan(0)
    expect(stats.expireCycleMicros).toBeGreaterThan(0)
  })

  it('deletes nothing unless the mode is delete (a replica, or loading)', () => {
    const { registry, time } = registryOnClock()
    registry.setExpiry(registry.set('k', filter()), 1500)
    time.now = 2000
    const active = new ActiveExpiry(registry, new Stats())
    for (const mode of ['hide', 'keep'] as const) {
      time.mode = mode
      expect(active.cycle('slow', 1, 10)).toBe(0)
    }
    expect(registry.size).toBe(1)
  })

  it('the fast cycle runs only after a cycle that could not keep up', () => {
    const { registry, time } = registryOnClock()
    registry.setExpiry(registry.set('k', filter()), 1500)
    time.now = 2000
    const active = new ActiveExpiry(registry, new Stats())
    expect(active.cycle('fast', 1, 10)).toBe(0)
    expect(registry.size).toBe(1)
  })
})
