/**
 * Bitmaps live in shared WebAssembly memories (arena.ts: `shared: true`, so every bitmap is a view
 * of a SharedArrayBuffer). Every path that hands bitmap bytes to Node (socket writes of SCANDUMP
 * chunks and DUMP payloads, file writes and the CRC-32 of BF.SAVE and snapshots, reads back into an
 * arena) must give the same bytes as the filter holds: checked here over real sockets against a
 * filter built in this process from the same items.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { ScalableBloomFilter } from '../../../src/core/scalable-filter.js'
import { WindowFilter } from '../../../src/core/window-filter.js'
import { startServer, type RunningServer } from '../../helpers/start-server.js'
import { tempDirsRemovedAfterAll } from '../../helpers/temp-dir.js'

const tempDir = tempDirsRemovedAfterAll()

const encoder = new TextEncoder()
const items = Array.from({ length: 3000 }, (_, i) => `shared-${i}`)
const probes = Array.from({ length: 400 }, (_, i) => `shared-${i * 9}`)

async function client(bfs: RunningServer): Promise<Redis> {
  const redis = new Redis({ port: bfs.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 })
  await redis.connect()
  return redis
}

/** SCANDUMP's chunks, each with the iterator LOADCHUNK takes it with. */
async function scandumpWithIterators(redis: Redis, key: string): Promise<[number, Buffer][]> {
  const chunks: [number, Buffer][] = []
  let iterator = 0
  do {
    const [next, data] = (await redis.callBuffer('BF.SCANDUMP', key, String(iterator))) as [number, Buffer]
    iterator = Number(next)
    if (iterator !== 0) chunks.push([iterator, data])
  } while (iterator !== 0)
  return chunks
}

async function scandump(redis: Redis, key: string): Promise<Buffer[]> {
  return (await scandumpWithIterators(redis, key)).map(([, data]) => data)
}

async function windowAnswers(redis: Redis): Promise<unknown> {
  return redis.call('APBF.EXISTS', 'w', ...probes)
}

describe('bitmap bytes out of shared arenas', () => {
  it('the filter in this process has its bitmaps in a SharedArrayBuffer (what the server does too)', () => {
    const filter = new ScalableBloomFilter({ capacity: 1000, errorRate: 0.01, expansion: 2, nonScaling: false })
    expect((filter.layers[0]!.bitmap as Uint8Array).buffer).toBeInstanceOf(SharedArrayBuffer)
    expect(new WindowFilter({ kind: 'count', errorRate: 0.01, capacity: 500 }).slices[0]!.bitmap.buffer).toBeInstanceOf(
      SharedArrayBuffer,
    )
  })

  it('SCANDUMP, LOADCHUNK, BF.SAVE, BF.LOAD, DUMP, RESTORE, DEBUG RELOAD and a restart give the bits the filter holds', async () => {
    const dir = tempDir()
    let bfs = await startServer({ dir, 'enable-debug-command': 'yes' })
    try {
      const redis = await client(bfs)
      await redis.call('BF.RESERVE', 'f', '0.01', '1000')
      await redis.call('BF.MADD', 'f', ...items)
      await redis.call('APBF.RESERVE', 'w', 'COUNT', '0.01', '500')
      for (let i = 0; i < 1200; i += 100) await redis.call('APBF.ADD', 'w', ...items.slice(i, i + 100))
      const expected = new ScalableBloomFilter({ capacity: 1000, errorRate: 0.01, expansion: 2, nonScaling: false })
      for (const item of items) expected.add(encoder.encode(item))
      expect(expected.layers.length).toBeGreaterThan(1)
      const bits = Buffer.concat(expected.layers.map((layer) => layer.bitmap as Uint8Array))
      const firstLayer = Buffer.from(expected.layers[0]!.bitmap as Uint8Array)

      const chunks = await scandump(redis, 'f')
      expect(Buffer.concat(chunks.slice(1)).equals(bits)).toBe(true)
      // LOADCHUNK into a new key, SCANDUMP again: the same chunks.
      for (const [iterator, chunk] of await scandumpWithIterators(redis, 'f')) {
        expect(await redis.call('BF.LOADCHUNK', 'g', String(iterator), chunk)).toBe('OK')
      }
      const chunksOf = async (key: string): Promise<Buffer> => Buffer.concat(await scandump(redis, key))
      expect((await chunksOf('g')).equals(Buffer.concat(chunks))).toBe(true)
      // BF.SAVE writes a file holding the bits; BF.LOAD reads it back into an arena.
      expect(await redis.call('BF.SAVE', 'f', 'f.bf')).toBe('OK')
      expect(readFileSync(path.join(dir, 'f.bf')).includes(firstLayer)).toBe(true)
      expect(await redis.call('BF.LOAD', 'h', 'f.bf')).toBe('OK')
      expect((await chunksOf('h')).equals(Buffer.concat(chunks))).toBe(true)
      // DUMP's payload over the socket, RESTORE from it.
      const payload = (await redis.callBuffer('DUMP', 'f')) as Buffer
      expect(payload.includes(firstLayer)).toBe(true)
      expect(await redis.call('RESTORE', 'r', '0', payload)).toBe('OK')
      expect((await chunksOf('r')).equals(Buffer.concat(chunks))).toBe(true)
      const windowBefore = await windowAnswers(redis)
      expect((windowBefore as number[]).filter((answer) => answer === 1).length).toBeGreaterThan(0)
      // A snapshot written and read back (DEBUG RELOAD), then a restart from it.
      expect(await redis.call('DEBUG', 'RELOAD')).toBe('OK')
      expect((await chunksOf('f')).equals(Buffer.concat(chunks))).toBe(true)
      expect(await windowAnswers(redis)).toEqual(windowBefore)
      redis.disconnect()
      await bfs.stop()
      bfs = await startServer({ dir })
      const again = await client(bfs)
      expect(Buffer.concat(await scandump(again, 'f')).equals(Buffer.concat(chunks))).toBe(true)
      expect(await windowAnswers(again)).toEqual(windowBefore)
      again.disconnect()
    } finally {
      await bfs.stop()
    }
  })
})
