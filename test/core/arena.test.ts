import { describe, expect, it } from 'vitest'
import {
  allocateArenaBitmap,
  Arena,
  arenaOf,
  MAX_ARENA_BITMAP_BYTES,
  OWN_ARENA_BYTES,
  PAGE_BYTES,
  SCRATCH_BYTES,
} from '../../src/core/arena.js'
import { allocateBitmap } from '../../src/core/bitmap.js'

describe('Arena', () => {
  it('places regions after the scratch area, cache-line aligned, and refuses what does not fit', () => {
    const arena = new Arena(SCRATCH_BYTES + PAGE_BYTES, false)
    const a = arena.take(100)!
    const b = arena.take(8)!
    expect(a).toBe(SCRATCH_BYTES)
    expect(b).toBe(SCRATCH_BYTES + 128)
    expect(arena.take(PAGE_BYTES)).toBeUndefined()
    expect([arena.live, arena.liveBytes]).toEqual([2, 192])
  })

  it('reuses a freed region of the same size, zeroed', () => {
    const arena = new Arena(SCRATCH_BYTES + PAGE_BYTES, false)
    const a = arena.take(256)!
    arena.take(64)
    arena.bytes.fill(0xff, a, a + 256)
    arena.release(a, 256)
    expect(arena.take(256)).toBe(a)
    expect(arena.bytes.subarray(a, a + 256).every((byte) => byte === 0)).toBe(true)
  })

  it('starts over, zeroed, when its last region is freed', () => {
    const arena = new Arena(SCRATCH_BYTES + PAGE_BYTES, false)
    const a = arena.take(1000)!
    arena.bytes.fill(7, a, a + 1000)
    arena.release(a, 1000)
    expect(arena.live).toBe(0)
    expect(arena.take(PAGE_BYTES)).toBe(SCRATCH_BYTES) // the whole space again
    expect(arena.bytes.subarray(SCRATCH_BYTES).every((byte) => byte === 0)).toBe(true)
  })

  it('never grows: its buffer is the same, full size, after every allocation', () => {
    const arena = new Arena(SCRATCH_BYTES + 4 * PAGE_BYTES, false)
    const buffer = arena.bytes.buffer
    while (arena.take(PAGE_BYTES) !== undefined);
    expect(arena.bytes.buffer).toBe(buffer)
    expect(buffer.byteLength).toBe(SCRATCH_BYTES + 4 * PAGE_BYTES)
  })
})

describe('allocateBitmap: which bitmap goes where', () => {
  it('a small bitmap is a zeroed region of a shared arena; two share one', () => {
    const a = allocateBitmap(1024)
    const b = allocateBitmap(4096)
    expect(arenaOf(a)?.own).toBe(false)
    expect(arenaOf(b)).toBe(arenaOf(a))
    expect(a.every((byte) => byte === 0)).toBe(true)
    expect(a.byteOffset).toBeGreaterThanOrEqual(SCRATCH_BYTES)
  })

  it('a bitmap of 64 MiB has an arena of its own', () => {
    const big = allocateBitmap(OWN_ARENA_BYTES)
    const arena = arenaOf(big)!
    expect(arena.own).toBe(true)
    expect(big.byteOffset).toBe(SCRATCH_BYTES)
    expect(arena.byteLength).toBe(SCRATCH_BYTES + OWN_ARENA_BYTES)
  })

  it('past the largest arena bitmap, and for nothing, the plain-array path', () => {
    expect(allocateArenaBitmap(MAX_ARENA_BITMAP_BYTES + 1)).toBeUndefined()
    expect(allocateArenaBitmap(0)).toBeUndefined()
    const empty = allocateBitmap(0)
    expect([empty.length, arenaOf(empty)]).toEqual([0, undefined])
  })

  it('a subarray of an arena bitmap, or a plain array, is not an arena bitmap', () => {
    const bitmap = allocateBitmap(512)
    expect(arenaOf(bitmap.subarray(0, 64))).toBeUndefined()
    expect(arenaOf(new Uint8Array(512))).toBeUndefined()
  })
})
