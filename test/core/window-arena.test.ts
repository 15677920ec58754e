/**
 * A window filter's slices and the arenas: the window kernel serves a filter only while all its
 * slices share one arena (bitmap-ops.ts windowTable), so a new filter's slices are taken together.
 * In a file of its own, with fresh module state (vitest.config.ts FRESH_ARENAS): the arenas start
 * empty, so the room left in each is known.
 */
import { describe, expect, it } from 'vitest'
import { arenaOf, SCRATCH_BYTES } from '../../src/core/arena.js'
import { allocateBitmap } from '../../src/core/bitmap.js'
import { windowTable } from '../../src/core/bitmap-ops.js'
import { WindowFilter, type WindowOptions } from '../../src/core/window-filter.js'

/** Regions start on a 64-byte cache line (arena.ts). */
const regionBytes = (bytes: number): number => Math.ceil(bytes / 64) * 64

describe("a window filter's slices", () => {
  it('are taken from one arena when the open arenas have room for only some of them', () => {
    const options: WindowOptions = { kind: 'count', errorRate: 0.05, capacity: 40_000 }
    const first = new WindowFilter(options)
    const sliceBytes = first.slices[0]!.bitmap.length
    const count = first.slices.length
    expect(count).toBeGreaterThan(3)
    const held: Uint8Array[] = []
    // Fill the first arena with slice-sized regions until one lands in a new arena...
    const opened = arenaOf(first.slices[0]!.bitmap)!
    let last: Uint8Array
    do {
      last = allocateBitmap(sliceBytes)
      held.push(last)
    } while (arenaOf(last) === opened)
    // ...then leave that new arena room for two slices exactly.
    const second = arenaOf(last)!
    const fits = Math.floor((second.byteLength - SCRATCH_BYTES) / regionBytes(sliceBytes))
    for (let i = 1; i < fits - 2; i++) held.push(allocateBitmap(sliceBytes))
    expect(arenaOf(held[held.length - 1]!)).toBe(second)

    const filter = new WindowFilter(options)
    const arenas = new Set(filter.slices.map((slice) => arenaOf(slice.bitmap)))
    expect(arenas.size).toBe(1)
    expect(arenas.has(undefined)).toBe(false)
    expect(windowTable(filter.slices)).toBeDefined()
    // The regions left are still there for whoever fits them.
    expect(arenaOf(allocateBitmap(sliceBytes))).toBe(second)
  })
})
