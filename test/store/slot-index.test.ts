import { describe, expect, it } from 'vitest'
import { FilterRegistry } from '../../src/store/registry.js'
import { Databases, moveKey } from '../../src/store/databases.js'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'
import { keyHashSlot, slotOf } from '../../src/core/key-slot.js'
import { slotOfName } from '../../src/store/slot-index.js'

const filter = (): ScalableBloomFilter =>
  new ScalableBloomFilter({ capacity: 100, errorRate: 0.01, expansion: 2, nonScaling: false })

/** The keys redis's tests and the cluster spec use, with their known slots. */
describe('slotOfName', () => {
  it("is keyHashSlot of the key's raw bytes (names are latin1 strings of those bytes)", () => {
    expect(slotOfName('foo')).toBe(12182)
    expect(slotOfName('{user1000}.following')).toBe(slotOf('user1000'))
    const bytes = Buffer.from([0xff, 0x00, 0xc3, 0x7b, 0x61, 0x7d])
    expect(slotOfName(FilterRegistry.nameOf(bytes))).toBe(keyHashSlot(bytes))
    const long = Buffer.alloc(1000, 0xe9)
    expect(slotOfName(FilterRegistry.nameOf(long))).toBe(keyHashSlot(long))
  })
})

describe('FilterRegistry slot index', () => {
  it('counts and lists the keys of a slot, kept on set, delete, rename, expiry deletion and clear', () => {
    const registry = new FilterRegistry()
    registry.indexSlots()
    registry.set('{a}1', filter())
    registry.set('{a}2', filter())
    registry.set('{a}2', filter()) // a replace: still one key
    registry.set('b', filter())
    const slotA = slotOf('a')
    expect(registry.countKeysInSlot(slotA)).toBe(2)
    expect(registry.keysInSlot(slotA, 10)).toEqual(['{a}1', '{a}2'])
    expect(registry.keysInSlot(slotA, 1)).toEqual(['{a}1'])
    expect(registry.keysInSlot(slotA, 0)).toEqual([])
    registry.delete('{a}1')
    expect(registry.keysInSlot(slotA, 10)).toEqual(['{a}2'])
    registry.rename('{a}2', 'c')
    expect(registry.countKeysInSlot(slotA)).toBe(0)
    expect(registry.keysInSlot(slotOf('c'), 10)).toEqual(['c'])
    let now = 1000
    registry.expiry = { now: () => now, mode: () => 'delete', expired: () => {} }
    registry.setExpiry(registry.get('c')!, 1500)
    now = 2000
    expect(registry.get('c')).toBeUndefined() // deleted as expired
    expect(registry.countKeysInSlot(slotOf('c'))).toBe(0)
    registry.clear()
    expect(registry.countKeysInSlot(slotOf('b'))).toBe(0)
  })

  it('indexes the keys already held when turned on, and answers the same without it by walking', () => {
    const plain = new FilterRegistry()
    for (let i = 0; i < 300; i++) plain.set(`k${i}`, filter())
    const expected = new Map<number, string[]>()
    for (let i = 0; i < 300; i++) {
      const slot = slotOf(`k${i}`)
      expected.set(slot, [...(expected.get(slot) ?? []), `k${i}`])
    }
    for (const [slot, names] of expected) {
      expect(plain.countKeysInSlot(slot)).toBe(names.length)
      expect(plain.keysInSlot(slot, 100)).toEqual(names)
    }
    expect(plain.slotsIndexed).toBe(false)
    plain.indexSlots()
    expect(plain.slotsIndexed).toBe(true)
    for (const [slot, names] of expected) {
      expect(plain.countKeysInSlot(slot)).toBe(names.length)
      expect(plain.keysInSlot(slot, 100)).toEqual(names)
    }
  })

  it('follows SWAPDB (each database keeps its own on/off), MOVE and FLUSHALL', () => {
    const databases = new Databases(2)
    const zero = databases.db(0)
    const one = databases.db(1)
    zero.indexSlots()
    zero.set('x', filter())
    one.set('y', filter())
    databases.swap(0, 1)
    expect(zero.slotsIndexed).toBe(true)
    expect(one.slotsIndexed).toBe(false)
    expect(zero.countKeysInSlot(slotOf('y'))).toBe(1)
    expect(zero.countKeysInSlot(slotOf('x'))).toBe(0)
    moveKey(one, zero, one.get('x')!)
    expect(zero.keysInSlot(slotOf('x'), 5)).toEqual(['x'])
    databases.clear()
    expect(zero.countKeysInSlot(slotOf('x'))).toBe(0)
    expect(zero.countKeysInSlot(slotOf('y'))).toBe(0)
  })
})
