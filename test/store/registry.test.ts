import { describe, expect, it } from 'vitest'
import { FilterRegistry } from '../../src/store/registry.js'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'

const filter = (): ScalableBloomFilter =>
  new ScalableBloomFilter({ capacity: 100, errorRate: 0.01, expansion: 2, nonScaling: false })

describe('FilterRegistry.nameOf', () => {
  it("throws ERR_STRING_TOO_LONG for a key past V8's longest string (2^29 - 24), which dispatch answers", () => {
    // allocUnsafe: the pages are never touched, so this costs no memory.
    const tooLong = Buffer.allocUnsafe(2 ** 29 - 23)
    expect(() => FilterRegistry.nameOf(tooLong)).toThrow(expect.objectContaining({ code: 'ERR_STRING_TOO_LONG' }))
    expect(() => new FilterRegistry().lookup(tooLong)).toThrow(expect.objectContaining({ code: 'ERR_STRING_TOO_LONG' }))
  })
})

describe('FilterRegistry.lookup', () => {
  it('finds a filter by the raw bytes of its key, also as a view into a larger buffer', () => {
    const registry = new FilterRegistry()
    const entry = registry.set('bench', filter())
    const chunk = Buffer.from('xxbenchyy')
    expect(registry.lookup(chunk.subarray(2, 7))).toBe(entry)
    expect(registry.lookup(Buffer.from('bench'))).toBe(entry)
    expect(registry.lookup(new Uint8Array(Buffer.from('bench')))).toBe(entry)
    expect(registry.lookup(Buffer.from('bencH'))).toBeUndefined()
    expect(registry.lookup(Buffer.from('benc'))).toBeUndefined()
  })

  it('keeps names as bytes: non-UTF-8 keys round-trip', () => {
    const registry = new FilterRegistry()
    const key = Buffer.from([0xff, 0x00, 0xc3])
    const entry = registry.set(FilterRegistry.nameOf(key), filter())
    expect(registry.lookup(Buffer.from([0xff, 0x00, 0xc3]))).toBe(entry)
    expect(FilterRegistry.bytesOf(entry.name)).toEqual(key)
  })

  it('does not answer from a remembered key after a delete, a replace, a rename or a clear', () => {
    const registry = new FilterRegistry()
    const key = Buffer.from('k')
    const first = registry.set('k', filter())
    expect(registry.lookup(key)).toBe(first)
    const second = registry.set('k', filter())
    expect(registry.lookup(key)).toBe(second)
    registry.rename('k', 'other')
    expect(registry.lookup(key)).toBeUndefined()
    expect(registry.lookup(Buffer.from('other'))).toBe(registry.get('other'))
    registry.delete('other')
    expect(registry.lookup(Buffer.from('other'))).toBeUndefined()
    registry.set('k', filter())
    expect(registry.lookup(key)).toBeDefined()
    registry.clear()
    expect(registry.lookup(key)).toBeUndefined()
  })

  it('looks a key up by a range of a larger buffer', () => {
    const registry = new FilterRegistry()
    const entry = registry.set('bench', filter())
    const chunk = Buffer.from('$5\r\nbench\r\n$5\r\nbenchx')
    expect(registry.lookup(chunk, 4, 9)).toBe(entry)
    expect(registry.lookup(chunk, 4, 9)).toBe(entry)
    expect(registry.lookup(chunk, 15, 21)).toBeUndefined()
    expect(registry.lookup(chunk, 15, 20)).toBe(entry)
    expect(FilterRegistry.nameOf(chunk, 15, 21)).toBe('benchx')
  })

  it('remembers a missing key until a filter is stored under it', () => {
    const registry = new FilterRegistry()
    const key = Buffer.from('later')
    expect(registry.lookup(key)).toBeUndefined()
    expect(registry.lookup(key)).toBeUndefined()
    const entry = registry.set('later', filter())
    expect(registry.lookup(key)).toBe(entry)
    registry.delete('later')
    expect(registry.lookup(key)).toBeUndefined()
  })

  it('does not remember keys too long to keep, and still finds them', () => {
    const registry = new FilterRegistry()
    const name = 'k'.repeat(5000)
    const entry = registry.set(name, filter())
    expect(registry.lookup(Buffer.from(name))).toBe(entry)
    expect(registry.lookup(Buffer.from(name))).toBe(entry)
    expect(registry.lookup(Buffer.from(name.slice(1) + 'j'))).toBeUndefined()
  })

  it('is not fooled by a caller reusing the memory of a key it was given', () => {
    const registry = new FilterRegistry()
    const entry = registry.set('aa', filter())
    const key = Buffer.from('aa')
    expect(registry.lookup(key)).toBe(entry)
    key[1] = 0x62 // 'ab'
    expect(registry.lookup(key)).toBeUndefined()
  })
})
