import { describe, expect, it } from 'vitest'
import type { FilterParts } from '../../src/core/scalable-filter.js'
import { applyDumpChunk, dumpChunkAt, MAX_DUMP_CHUNK_BYTES } from '../../src/format/dump-chunk.js'
import { decodeDumpHeader, encodeDumpHeader } from '../../src/format/dump-header.js'
import { concat, makeLayer, makeScalable, toHex } from './layer-fixtures.js'

const t10 = (): FilterParts => ({
  hashing: { kind: 'redisbloom' },
  expansion: 2,
  nonScaling: false,
  layers: [makeLayer(10, 0.005)],
})

describe('dumpChunkAt (BF.SCANDUMP)', () => {
  it('replays the recorded t10 session: 0 → header, 1 → 16 bytes and 17, 17 → [0, ""]', () => {
    const parts = t10()
    const header = dumpChunkAt(parts, 0)
    expect(header.next).toBe(1)
    expect(toHex(header.data)).toBe(toHex(encodeDumpHeader(parts)))
    const first = dumpChunkAt(parts, 1)
    expect(first.next).toBe(17)
    expect(first.data).toEqual(new Uint8Array(16))
    expect(dumpChunkAt(parts, 17)).toEqual({ next: 0, data: new Uint8Array(0) })
  })

  it('uses 16 MiB chunks by default', () => {
    expect(MAX_DUMP_CHUNK_BYTES).toBe(16 * 1024 * 1024)
  })

  it('answers [0, ""] for negative, past-the-end and unsafe iterators', () => {
    const parts = t10()
    for (const iterator of [-1, -17, 18, 1000, 2 ** 60]) {
      expect(dumpChunkAt(parts, iterator)).toEqual({ next: 0, data: new Uint8Array(0) })
    }
  })

  it('starts mid-layer, stops at the layer end, never crosses into the next layer, returns views', () => {
    const parts = makeScalable(3)
    const [a, b] = parts.layers as [FilterParts['layers'][0], FilterParts['layers'][0]]
    const chunk = dumpChunkAt(parts, 1 + a.bitmap.length - 3, 100)
    expect(chunk.data.length).toBe(3)
    expect(chunk.next).toBe(1 + a.bitmap.length)
    expect(chunk.data.buffer).toBe((a.bitmap as Uint8Array).buffer)
    const next = dumpChunkAt(parts, chunk.next, 5)
    expect(next.data).toEqual((b.bitmap as Uint8Array).subarray(0, 5))
    expect(next.next).toBe(chunk.next + 5)
  })

  it('walks a multi-layer filter; LOADCHUNK of every (iterator, chunk) rebuilds it exactly', () => {
    const source = makeScalable(4)
    const target = decodeDumpHeader(dumpChunkAt(source, 0).data)
    const chunks: Uint8Array[] = []
    let iterator = 1
    for (;;) {
      const { next, data } = dumpChunkAt(source, iterator, 7)
      if (next === 0) {
        expect(data.length).toBe(0)
        break
      }
      expect(data.length).toBeGreaterThan(0)
      expect(data.length).toBeLessThanOrEqual(7)
      expect(next).toBe(iterator + data.length)
      expect(applyDumpChunk(target, next, data)).toBe('ok')
      chunks.push(data)
      iterator = next
    }
    expect(toHex(concat(chunks))).toBe(toHex(concat(source.layers.map((l) => l.bitmap as Uint8Array))))
    expect(target.layers.map((l) => toHex(l.bitmap as Uint8Array))).toEqual(
      source.layers.map((l) => toHex(l.bitmap as Uint8Array)),
    )
  })

  it('refuses a chunk size below 1', () => {
    expect(() => dumpChunkAt(t10(), 1, 0)).toThrow(RangeError)
  })
})

describe('applyDumpChunk (BF.LOADCHUNK on an existing filter)', () => {
  it('copies a chunk to iterator - length - 1', () => {
    const parts = t10()
    expect(applyDumpChunk(parts, 17, Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))).toBe('ok')
    expect((parts.layers[0]!.bitmap as Uint8Array)[15]).toBe(16)
    expect(applyDumpChunk(parts, 12, Uint8Array.of(0xaa, 0xbb))).toBe('ok')
    expect(Array.from((parts.layers[0]!.bitmap as Uint8Array).subarray(8, 11))).toEqual([9, 0xaa, 0xbb])
  })

  it('bad-data: iterator <= 0, or smaller than the chunk (src/sb.c since v2.4.8)', () => {
    const parts = t10()
    expect(applyDumpChunk(parts, 0, new Uint8Array(0))).toBe('bad-data')
    expect(applyDumpChunk(parts, -4, new Uint8Array(1))).toBe('bad-data')
    expect(applyDumpChunk(parts, 3, new Uint8Array(4))).toBe('bad-data')
    // BF.LOADCHUNK key 1 <header> on a key that exists lands here too.
    expect(applyDumpChunk(parts, 1, encodeDumpHeader(parts))).toBe('bad-data')
  })

  it('no-link: the chunk starts before byte 0 or past the last layer', () => {
    const parts = t10()
    expect(applyDumpChunk(parts, 4, new Uint8Array(4))).toBe('no-link')
    expect(applyDumpChunk(parts, 18, new Uint8Array(0))).toBe('no-link')
    expect(applyDumpChunk(parts, 40, new Uint8Array(8))).toBe('no-link')
  })

  it('too-big: the chunk runs past the end of its layer, even into a next layer; nothing is written', () => {
    const parts = makeScalable(2)
    const first = parts.layers[0]!.bitmap.length
    const before = parts.layers.map((l) => toHex(l.bitmap as Uint8Array))
    expect(applyDumpChunk(parts, first + 2, new Uint8Array(2).fill(0xff))).toBe('too-big')
    expect(applyDumpChunk(t10(), 18, new Uint8Array(2))).toBe('too-big')
    expect(parts.layers.map((l) => toHex(l.bitmap as Uint8Array))).toEqual(before)
  })

  it('an empty chunk inside the bitmaps is ok and writes nothing', () => {
    expect(applyDumpChunk(t10(), 5, new Uint8Array(0))).toBe('ok')
  })
})
