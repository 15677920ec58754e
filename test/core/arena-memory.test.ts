/**
 * The arenas' accounting (core/arena.ts `arenaMemory`, read by INFO used_memory): each arena's
 * whole size as reserved, and as used only what it hands out (live regions, and the scratch area
 * of an arena that holds any).
 */
import { describe, expect, it } from 'vitest'
import { allocateArenaBitmap, arenaMemory, arenaOf, OWN_ARENA_BYTES, SCRATCH_BYTES } from '../../src/core/arena.js'

describe('arenaMemory', () => {
  it('counts a small bitmap at its size (rounded to a cache line), its shared arena at its whole size', () => {
    const before = arenaMemory()
    const bitmap = allocateArenaBitmap(100_000)!
    const arena = arenaOf(bitmap)!
    const after = arenaMemory()
    expect(arena.own).toBe(false)
    const scratch = arena.live === 1 ? SCRATCH_BYTES : 0 // the first region of an arena brings its scratch area
    expect(after.used - before.used).toBe(Math.ceil(100_000 / 64) * 64 + scratch)
    expect(after.reserved - before.reserved).toBeLessThanOrEqual(arena.byteLength)
    expect(after.reserved).toBeGreaterThanOrEqual(arena.byteLength)
    expect(bitmap.length).toBe(100_000)
  })

  it('counts an arena of its own at its bitmap and scratch area', () => {
    const before = arenaMemory()
    const bitmap = allocateArenaBitmap(OWN_ARENA_BYTES)!
    const after = arenaMemory()
    expect(arenaOf(bitmap)!.own).toBe(true)
    expect(after.used - before.used).toBe(OWN_ARENA_BYTES + SCRATCH_BYTES)
    expect(after.reserved - before.reserved).toBe(OWN_ARENA_BYTES + SCRATCH_BYTES)
  })

  it('counts the arenas, every one a shared memory (its buffer a SharedArrayBuffer)', () => {
    const bitmap = allocateArenaBitmap(4096)!
    expect(bitmap.buffer instanceof SharedArrayBuffer).toBe(true)
    expect(arenaMemory().used).toBeGreaterThanOrEqual(4096 + SCRATCH_BYTES)
  })
})
