/**
 * A filter whose bitmaps are regions of WebAssembly arenas (core/arena.ts: views at an offset into
 * a larger memory) is written and dumped as the same bytes as its twin on plain arrays: the
 * background save's slices, BF.SAVE's file, the encoder's pieces and every SCANDUMP chunk.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { arenaOf } from '../../src/core/arena.js'
import { ScalableBloomFilter, type FilterParts } from '../../src/core/scalable-filter.js'
import { encodeFilter } from '../../src/format/codec.js'
import { crc32 } from '../../src/format/crc32.js'
import { DUMP_ITER_DONE, DUMP_ITER_INIT, dumpChunkAt } from '../../src/format/dump-chunk.js'
import { SLICE_BYTES, writeFilterFileAsync, writeFilterFileSync } from '../../src/store/filter-file-write.js'
import { tempDirRemovedAfterAll } from '../helpers/temp-dir.js'

const dir = tempDirRemovedAfterAll('bfs-arena-bytes-')

const name = new TextEncoder().encode('twins')

/** A filter of three layers in arenas (the last one larger than a save's slice), and its twin. */
function twins(): { arena: FilterParts; plain: FilterParts } {
  const filter = new ScalableBloomFilter({ capacity: 1_000_000, errorRate: 0.001, expansion: 2, nonScaling: false })
  const encoder = new TextEncoder()
  let i = 0
  while (filter.layers.length < 3) filter.add(encoder.encode(`item-${i++}`))
  for (let j = 0; j < 1000; j++) filter.add(encoder.encode(`last-${j}`))
  const arena = filter.toParts()
  const plain = {
    ...arena,
    layers: arena.layers.map((layer) => ({ ...layer, bitmap: Uint8Array.from(layer.bitmap as Uint8Array) })),
  }
  for (const layer of arena.layers) expect(arenaOf(layer.bitmap as Uint8Array)).toBeDefined()
  for (const layer of plain.layers) expect(arenaOf(layer.bitmap)).toBeUndefined()
  expect(arena.layers.some((layer) => (layer.bitmap as Uint8Array).byteOffset > 0)).toBe(true)
  expect(arena.layers[2]!.bitmap.length).toBeGreaterThan(SLICE_BYTES)
  return { arena, plain }
}

/** Byte equality without a diff of megabytes when it fails: the first differing offset. */
function expectSame(a: Uint8Array, b: Uint8Array): void {
  expect(a.length).toBe(b.length)
  let first = -1
  for (let i = 0; i < a.length && first < 0; i += 4096) {
    if (Buffer.compare(a.subarray(i, i + 4096), b.subarray(i, i + 4096)) !== 0) first = i
  }
  expect(first, 'first differing 4 KiB block').toBe(-1)
}

const job = () => ({ checkAbort: () => undefined, longestStepMs: 0 })

function dumpAll(parts: FilterParts, maxChunkBytes?: number): Uint8Array[] {
  const chunks: Uint8Array[] = []
  let iterator = DUMP_ITER_INIT
  do {
    const chunk = dumpChunkAt(parts, iterator, maxChunkBytes)
    chunks.push(Uint8Array.from(chunk.data))
    iterator = chunk.next
  } while (iterator !== DUMP_ITER_DONE)
  return chunks
}

describe('arena bitmaps serialize as plain arrays do', () => {
  const { arena, plain } = twins()

  it('a background save writes the same file', async () => {
    const files = [path.join(dir, 'arena.bfs'), path.join(dir, 'plain.bfs')]
    expect(await writeFilterFileAsync(files[0]!, { name, parts: arena }, job())).toBe(
      await writeFilterFileAsync(files[1]!, { name, parts: plain }, job()),
    )
    expectSame(readFileSync(files[0]!), readFileSync(files[1]!))
  })

  it('BF.SAVE and the encoder write the same bytes', () => {
    const files = [path.join(dir, 'arena-sync.bfs'), path.join(dir, 'plain-sync.bfs')]
    writeFilterFileSync(files[0]!, { name, parts: arena })
    writeFilterFileSync(files[1]!, { name, parts: plain })
    const written = readFileSync(files[0]!)
    expectSame(written, readFileSync(files[1]!))
    expectSame(readFileSync(path.join(dir, 'arena.bfs')), written) // the background save's file too
    const joined = (parts: FilterParts) => Buffer.concat(encodeFilter({ name, parts }, crc32))
    expectSame(joined(arena), joined(plain))
  })

  it('SCANDUMP sends the same chunks, whole layers or cut in pieces', () => {
    for (const maxChunkBytes of [undefined, 100_000, 4096 + 7]) {
      const chunks = dumpAll(arena, maxChunkBytes)
      expect(chunks.length).toBeGreaterThan(arena.layers.length)
      const twinChunks = dumpAll(plain, maxChunkBytes)
      expect(chunks.length).toBe(twinChunks.length)
      chunks.forEach((chunk, i) => expectSame(chunk, twinChunks[i]!))
    }
  })
})
