import { describe, expect, it } from 'vitest'
import { allocateBitmap, countSetBits, setBit, testBit } from '../../src/core/bitmap.js'

describe('bitmap', () => {
  it('is LSB first: bit i is (byte[i >> 3] >> (i & 7)) & 1', () => {
    const bits = allocateBitmap(2)
    expect(setBit(bits, 0)).toBe(true)
    expect(setBit(bits, 9)).toBe(true)
    expect(setBit(bits, 15)).toBe(true)
    expect(Array.from(bits)).toEqual([0x01, 0x82])
    expect(setBit(bits, 9)).toBe(false)
    expect(testBit(bits, 9)).toBe(true)
    expect(testBit(bits, 10)).toBe(false)
    expect(countSetBits(bits)).toBe(3)
  })

  it('counts every bit of every byte value', () => {
    const bits = Uint8Array.from({ length: 256 }, (_, i) => i)
    expect(countSetBits(bits)).toBe(256 * 4)
  })

  it('rejects a bad size', () => {
    expect(() => allocateBitmap(-1)).toThrow(RangeError)
    expect(() => allocateBitmap(1.5)).toThrow(RangeError)
  })
})
