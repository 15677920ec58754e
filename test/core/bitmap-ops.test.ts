import { describe, expect, it } from 'vitest'
import { Arena, arenaOf, OWN_ARENA_BYTES, PAGE_BYTES, SCRATCH_BYTES } from '../../src/core/arena.js'
import { allocateBitmap, countSetBits, countSetBitsLoop } from '../../src/core/bitmap.js'
import { MAX_WINDOW_ITEM_BYTES, orBitmap, windowTable } from '../../src/core/bitmap-ops.js'
import { WindowFilter, type WindowOptions } from '../../src/core/window-filter.js'
import { seededRandom } from '../helpers/seeded-random.js'

const encoder = new TextEncoder()

function randomBytes(random: () => number, length: number, density = 0.5): Uint8Array {
  const out = new Uint8Array(length)
  for (let i = 0; i < length; i++) {
    let byte = 0
    for (let bit = 0; bit < 8; bit++) if (random() < density) byte |= 1 << bit
    out[i] = byte
  }
  return out
}

describe('fill counting in the arena kernel', () => {
  it('counts any range of an arena bitmap as the JavaScript loop does (odd offsets and lengths)', () => {
    const random = seededRandom(7)
    const bitmap = allocateBitmap(5000)
    expect(arenaOf(bitmap)).toBeDefined()
    bitmap.set(randomBytes(random, 5000, 0.3))
    for (const [start, end] of [
      [0, 5000],
      [1, 4999],
      [3, 3],
      [7, 300],
      [255, 4096],
      [4000, 5000],
      [13, 270],
    ]) {
      expect(countSetBits(bitmap, start, end)).toBe(countSetBitsLoop(bitmap, start, end))
    }
    expect(countSetBits(bitmap.subarray(9, 4001))).toBe(countSetBitsLoop(bitmap, 9, 4001))
  })

  it('counts a full 64 MiB arena of its own', () => {
    const big = allocateBitmap(OWN_ARENA_BYTES)
    expect(arenaOf(big)!.own).toBe(true)
    big.fill(0xff, 0, 1 << 20)
    big[OWN_ARENA_BYTES - 1] = 0x81
    expect(countSetBits(big)).toBe(8 * (1 << 20) + 2)
  })
})

describe('the OR of BF.MERGE in the arena kernel', () => {
  it('gives the bytes of the JavaScript loop: same arena, another arena (through the scratch area), a plain array', () => {
    const random = seededRandom(11)
    const length = SCRATCH_BYTES + 12345 // more than one chunk through the scratch area
    const a = randomBytes(random, length, 0.2)
    const b = randomBytes(random, length, 0.2)
    const expected = a.map((byte, i) => byte | b[i]!)
    const other = new Arena(SCRATCH_BYTES + 2 * length + 2 * PAGE_BYTES, false)
    const inOther = new Uint8Array(other.bytes.buffer, other.take(length)!, length)
    inOther.set(b)
    for (const source of [b, inOther]) {
      const dst = allocateBitmap(length)
      dst.set(a)
      orBitmap(dst, source)
      expect(Buffer.compare(dst, expected)).toBe(0)
    }
    const sameArena = allocateBitmap(length)
    const dst = allocateBitmap(length)
    expect(arenaOf(sameArena)).toBe(arenaOf(dst))
    sameArena.set(b)
    dst.set(a)
    orBitmap(dst, sameArena)
    expect(Buffer.compare(dst, expected)).toBe(0)
    const plain = Uint8Array.from(a)
    orBitmap(plain, inOther)
    expect(Buffer.compare(plain, expected)).toBe(0)
  })
})

/** The same filter with its bitmaps copied out of the arenas: it keeps the JavaScript loops. */
function plainCopy(filter: WindowFilter): WindowFilter {
  const parts = filter.toParts()
  return WindowFilter.fromParts({
    ...parts,
    slices: parts.slices.map((slice) => ({ ...slice, bitmap: slice.bitmap.slice() })),
  })
}

describe('the window filters in the arena kernel', () => {
  it.each<WindowOptions>([
    { kind: 'count', errorRate: 0.01, capacity: 500 },
    { kind: 'count', errorRate: 0.001, capacity: 2000 },
    { kind: 'time', errorRate: 0.01, capacity: 300, windowMs: 10_000 },
    { kind: 'count', errorRate: 0.05, capacity: 40_000 }, // slices of 2^12 bits and more: the kernel's floating-point modulo
  ])('answers and bits as the JavaScript loops: $kind, $errorRate, $capacity', (options) => {
    const kernel = new WindowFilter(options)
    expect(windowTable(kernel.slices)).toBeDefined()
    const sliceBits = kernel.slices.map((slice) => slice.bitCount)
    const loops = plainCopy(kernel)
    expect(windowTable(loops.slices)).toBeUndefined()
    const random = seededRandom(options.capacity)
    let now = 1_000_000
    for (let i = 0; i < 6000; i++) {
      now += Math.floor(random() * 20)
      const item = encoder.encode(
        `item-${Math.floor(random() * 3 * options.capacity)}${i % 7 === 0 ? 'x'.repeat(i % 90) : ''}`,
      )
      if (random() < 0.6) expect(kernel.add(item, 0, item.length, now)).toBe(loops.add(item, 0, item.length, now))
      else expect(kernel.has(item, 0, item.length, now)).toBe(loops.has(item, 0, item.length, now))
    }
    expect(kernel.slices.length).toBe(loops.slices.length)
    if (options.capacity > 10_000) expect(Math.min(...sliceBits)).toBeGreaterThanOrEqual(4096)
    const a = kernel.toParts()
    const b = loops.toParts()
    expect({ ...a, slices: [] }).toEqual({ ...b, slices: [] })
    for (let p = 0; p < a.slices.length; p++) {
      expect({ ...a.slices[p], bitmap: 0 }).toEqual({ ...b.slices[p], bitmap: 0 })
      expect(Buffer.compare(a.slices[p]!.bitmap, b.slices[p]!.bitmap)).toBe(0)
    }
  })

  it('takes an item longer than the scratch area the JavaScript way, with the same answer', () => {
    const filter = new WindowFilter({ kind: 'count', errorRate: 0.01, capacity: 100 })
    const long = new Uint8Array(MAX_WINDOW_ITEM_BYTES + 1).fill(0x61)
    const copy = plainCopy(filter)
    expect(filter.add(long, 0, long.length, 0)).toBe(1)
    expect(filter.has(long, 0, long.length, 0)).toBe(true)
    expect(filter.has(long, 1, long.length, 0)).toBe(copy.has(long, 1, long.length, 0))
  })
})
