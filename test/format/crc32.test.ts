import { crc32 as zlibCrc32 } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { crc32 } from '../../src/format/crc32.js'

function randomBytes(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length)
  let x = seed >>> 0 || 1
  for (let i = 0; i < length; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    out[i] = x & 0xff
  }
  return out
}

describe('crc32', () => {
  it('gives the standard check value', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926)
    expect(crc32(new Uint8Array(0))).toBe(0)
    expect(crc32(new Uint8Array(0), 0xdeadbeef)).toBe(0xdeadbeef)
  })

  it('matches zlib.crc32 for every length 0..300 and some seeds', () => {
    const data = randomBytes(300, 7)
    for (let n = 0; n <= data.length; n++) {
      const slice = data.subarray(0, n)
      expect(crc32(slice)).toBe(zlibCrc32(slice))
      expect(crc32(slice, 0x12345678)).toBe(zlibCrc32(slice, 0x12345678))
    }
  })

  it('continues across slices, at any split and on unaligned views', () => {
    const data = randomBytes(1000, 99)
    const whole = zlibCrc32(data)
    for (const split of [0, 1, 3, 7, 8, 9, 500, 999, 1000]) {
      expect(crc32(data.subarray(split), crc32(data.subarray(0, split)))).toBe(whole)
    }
    const shifted = new Uint8Array(1003)
    shifted.set(data, 3)
    expect(crc32(shifted.subarray(3))).toBe(whole)
  })
})
