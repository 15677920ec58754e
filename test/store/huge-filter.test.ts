/**
 * Sizes past 32 bits in the store: the CRC-32 of an array of 4 GiB (zlib takes a 32-bit length)
 * and a snapshot round trip of a filter of more than 2^32 bits. Slow, and the round trip holds
 * about 1 GB: the `slow` project (`npm run test:slow`).
 */
import { describe, expect, it } from 'vitest'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'
import { crc32 } from '../../src/format/crc32.js'
import { FilterRegistry } from '../../src/store/registry.js'
import { nativeCrc32, SnapshotStore } from '../../src/store/snapshot.js'
import { bloomOf } from '../helpers/bloom-of.js'
import { tempDirRemovedAfterAll } from '../helpers/temp-dir.js'

describe('nativeCrc32', () => {
  it('checksums arrays of 4 GiB and more (zlib alone takes a 32-bit length)', () => {
    // An array of 2^32 zero bytes as nativeCrc32 sees it: its length, and the pieces it hands to
    // zlib, each a view of one reused array of zeros, so the test holds one piece (1 GiB), not
    // 4 GiB. The value is Python's zlib.crc32 over 2^32 zero bytes, an independent implementation.
    const length = 2 ** 32
    let zeros = new Uint8Array(0)
    const pieces: Array<[number, number]> = []
    const huge = {
      length,
      subarray(start: number, end: number): Uint8Array {
        pieces.push([start, end])
        if (zeros.length < end - start) zeros = new Uint8Array(end - start)
        return zeros.subarray(0, end - start)
      },
    } as unknown as Uint8Array
    expect(nativeCrc32(huge, 0)).toBe(0xd202ef8d)
    // The pieces cover the 4 GiB in order, none of them 2^32 bytes or more.
    expect(pieces.length).toBeGreaterThan(1)
    pieces.forEach(([start, end], i) => {
      expect(start).toBe(i === 0 ? 0 : pieces[i - 1]![1])
      expect(end - start).toBeGreaterThan(0)
      expect(end - start).toBeLessThan(2 ** 32)
    })
    expect(pieces.at(-1)![1]).toBe(length)
    expect(nativeCrc32(zeros.subarray(0, 1000), 0)).toBe(crc32(zeros.subarray(0, 1000), 0))
  })
})

describe('SnapshotStore', () => {
  const dir = tempDirRemovedAfterAll('bfs-huge-filter-')
  const quiet = { debug: () => {}, verbose: () => {}, notice: () => {}, warning: () => {} }
  async function loaded(): Promise<{ snapshots: SnapshotStore; registry: FilterRegistry }> {
    const snapshots = new SnapshotStore({ dir, log: quiet, onCorrupt: () => 'refuse' })
    const registry = new FilterRegistry()
    await snapshots.loadAll(registry)
    return { snapshots, registry }
  }
  const items = Array.from({ length: 1000 }, (_, i) => `h${i}`)

  it('round-trips a filter of more than 2^32 bits', async () => {
    const { snapshots, registry } = await loaded()
    // 2^32 bits is 512 MiB: a seeded (original-library) layer is sized m ≈ -n ln p / ln²2.
    const filter = new ScalableBloomFilter({ capacity: 460_000_000, errorRate: 0.01, expansion: 0, nonScaling: true })
    const layer = filter.toParts().layers[0]!
    expect(layer.bitCount).toBeGreaterThan(2 ** 32)
    const entry = registry.set('huge', filter)
    for (const item of items) filter.add(Buffer.from(item))
    // A bit beyond 2^32 set by hand, so the high part of the bitmap is checked too.
    const high = layer.bitmap as Uint8Array
    high[high.length - 1] = 0x80
    registry.touch(entry)
    await snapshots.saveAll(registry, { background: true })
    registry.clear()
    const again = await loaded()
    const back = bloomOf(again.registry.get('huge'))
    const parts = back.toParts().layers[0]!
    expect(parts.bitCount).toBe(layer.bitCount)
    expect((parts.bitmap as Uint8Array)[(parts.bitmap as Uint8Array).length - 1]).toBe(0x80)
    expect(back.info()).toEqual(filter.info())
    for (const item of items) expect(back.has(Buffer.from(item))).toBe(true)
  }, 60_000)
})
