/**
 * A filter of one layer larger than a WebAssembly memory (and than a typed array on Node 20):
 * `BF.RESERVE big 0.001 3000000000 NONSCALING`, 5.02 GiB, held in pieces (core/pieced-bitmap.ts)
 * by a real bfs process at the default `max-filter-bytes`. Items whose bit positions lie at
 * both ends of the range and around the seam of the pieces are added and checked, then the
 * server is killed (-9, append-only log on, `appendfsync always`) and restarted, then saved and
 * shut down cleanly and restarted from the snapshot: every answer stays the same. SCANDUMP chunks
 * are compared with RedisBloom's, built here from bloom.c's positions `(a + i*b) mod 2^64 mod m`
 * (BigInt, test/core/vectors.ts) and sb.c's dump layout, independently of bfs's encoders.
 *
 * The `huge` project (vitest.config.ts), one file at a time, after the others: about 6 GiB of
 * RAM (the server holds the whole bitmap resident after loading the snapshot) and 6 GiB of disk
 * (the 5.02 GiB snapshot and the log), 1-4 minutes.
 */
import { rmSync } from 'node:fs'
import type { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { createHashPair, hashRedisBloom } from '../../src/core/hashing.js'
import { layerGeometry } from '../../src/core/sizing.js'
import { childClient, killChildServer, startChildServer } from '../helpers/child-server.js'
import { makeTempDir } from '../helpers/temp-dir.js'
import { freePort } from '../helpers/tools.js'
import { positionsBig, utf8 } from '../core/vectors.js'

const CAPACITY = 3_000_000_000
const ERROR_RATE = 0.001
/** RedisBloom's SCANDUMP chunk (sb.c MAX_SCANDUMP_SIZE). */
const CHUNK = 16 * 1024 * 1024
/** Where bfs's first piece ends (core/arena.ts PIECE_BYTES: 4 GiB less the scratch and list areas). */
const SEAM = 2 ** 32 - 512 * 1024
const geometry = layerGeometry(CAPACITY, ERROR_RATE)
const m = geometry.bitCount
const k = geometry.hashCount
const bytes = geometry.byteCount

/** The positions of an item, as bloom.c computes them. */
function positions(item: string): number[] {
  const pair = createHashPair()
  const data = utf8(item)
  hashRedisBloom(data, 0, data.length, pair)
  const a = (BigInt(pair[0]!) << 32n) | BigInt(pair[1]!)
  const b = (BigInt(pair[2]!) << 32n) | BigInt(pair[3]!)
  return positionsBig(a, b, k, m)
}

/** `count` items `prefix-i` with a position where `wanted` says. */
function itemsWhere(prefix: string, count: number, wanted: (pos: number) => boolean): string[] {
  const found: string[] = []
  for (let i = 0; found.length < count; i++) if (positions(`${prefix}-${i}`).some(wanted)) found.push(`${prefix}-${i}`)
  return found
}

const edge = m / 4000
const low = itemsWhere('low', 10, (pos) => pos < edge)
const high = itemsWhere('high', 10, (pos) => pos >= m - edge)
const seam = itemsWhere('seam', 10, (pos) => Math.abs(pos - SEAM * 8) < edge)
const bulk = Array.from({ length: 2000 }, (_, i) => `item-${i}`)
const added = [...low, ...high, ...seam, ...bulk]
const absent = Array.from({ length: 2000 }, (_, i) => `absent-${i}`)
const setPositions = added.flatMap(positions)

/** RedisBloom's chunk at byte `offset`: the bits of every added item's positions there. */
function expectedChunk(offset: number, length: number): Buffer {
  const chunk = Buffer.alloc(length)
  for (const pos of setPositions) {
    const byte = Math.floor(pos / 8) - offset
    if (byte >= 0 && byte < length) chunk[byte]! |= 1 << (pos % 8)
  }
  return chunk
}

/** RedisBloom's SCANDUMP header of this filter holding `items` (sb.c dumpedChainHeader, one link). */
function expectedHeader(items: number): Buffer {
  const header = Buffer.alloc(20 + 53)
  header.writeBigUInt64LE(BigInt(items), 0)
  header.writeUInt32LE(1, 8) // nfilters
  header.writeUInt32LE(1 | 4 | 8, 12) // NOROUND | FORCE64 | NO_SCALING
  header.writeUInt32LE(2, 16) // growth
  header.writeBigUInt64LE(BigInt(bytes), 20)
  header.writeBigUInt64LE(BigInt(m), 28)
  header.writeBigUInt64LE(BigInt(items), 36)
  header.writeDoubleLE(ERROR_RATE, 44)
  header.writeDoubleLE(geometry.bitsPerEntry, 52)
  header.writeUInt32LE(k, 60)
  header.writeBigUInt64LE(BigInt(CAPACITY), 64)
  header.writeUInt8(0, 72) // n2
  return header
}

/** SCANDUMP chunks checked: the first, the one across the seam of the pieces, the last, and those holding the highest bits. */
const chunkOffsets = [
  ...new Set([
    0,
    Math.floor(SEAM / CHUNK) * CHUNK,
    Math.floor((bytes - 1) / CHUNK) * CHUNK,
    ...high
      .flatMap(positions)
      .filter((pos) => pos >= m - edge)
      .map((pos) => Math.floor(pos / 8 / CHUNK) * CHUNK),
  ]),
]

async function expectSameAnswers(redis: Redis, items: number): Promise<void> {
  expect(await redis.call('BF.MEXISTS', 'big', ...added)).toEqual(added.map(() => 1))
  expect(await redis.call('BF.MEXISTS', 'big', ...absent)).toEqual(absent.map(() => 0))
  for (const item of [...low, ...high]) expect(await redis.call('BF.EXISTS', 'big', item)).toBe(1)
  const info = (await redis.call('BF.INFO', 'big')) as unknown[]
  expect(info.slice(0, 8)).toEqual([
    'Capacity',
    CAPACITY,
    'Size',
    bytes + 96,
    'Number of filters',
    1,
    'Number of items inserted',
    items,
  ])
  const health = (await redis.call('BFS.HEALTH', 'big')) as unknown[]
  expect(Number(health[1])).toBeCloseTo(new Set(setPositions).size / m, 15) // the fill: set bits over m
  const header = (await redis.callBuffer('BF.SCANDUMP', 'big', '0')) as [number, Buffer]
  expect(header[0]).toBe(1)
  expect(header[1].equals(expectedHeader(items))).toBe(true)
  for (const offset of chunkOffsets) {
    const [next, data] = (await redis.callBuffer('BF.SCANDUMP', 'big', String(offset + 1))) as [number, Buffer]
    const length = Math.min(CHUNK, bytes - offset)
    expect(next).toBe(offset + 1 + length)
    expect(data.equals(expectedChunk(offset, length))).toBe(true)
  }
}

describe('a 5 GiB filter (one layer of 43 billion bits)', () => {
  it("reserves, adds, checks, survives kill -9 and a clean restart, and dumps RedisBloom's chunks", async () => {
    expect(bytes).toBe(5_391_595_344)
    expect(Math.min(...low.flatMap(positions))).toBeLessThan(edge)
    expect(Math.max(...high.flatMap(positions))).toBeGreaterThanOrEqual(m - edge)
    const dir = makeTempDir('bfs-huge-')
    const port = await freePort()
    // The default max-filter-bytes takes it; restarts load it with the log replayed or the snapshot read.
    const args = ['--port', String(port), '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', '']
    const start = async () => {
      const { bfs } = await startChildServer(args, { readyTimeoutMs: 180_000 })
      return { bfs, redis: childClient(port) }
    }
    let server = await start()
    try {
      expect(await server.redis.call('BF.RESERVE', 'big', String(ERROR_RATE), String(CAPACITY), 'NONSCALING')).toBe(
        'OK',
      )
      expect(await server.redis.call('BF.MADD', 'big', ...low, ...seam)).toEqual([...low, ...seam].map(() => 1))
      for (const item of high) expect(await server.redis.call('BF.ADD', 'big', item)).toBe(1)
      expect(await server.redis.call('BF.MADD', 'big', ...bulk)).toEqual(bulk.map(() => 1))
      expect(await server.redis.call('BF.ADD', 'big', high[0]!)).toBe(0)
      await expectSameAnswers(server.redis, added.length)

      // kill -9: the log alone brings it back.
      await killChildServer(server.bfs)
      server.redis.disconnect()
      server = await start()
      await expectSameAnswers(server.redis, added.length)

      // A clean restart from the snapshot: SAVE, then SHUTDOWN.
      expect(await server.redis.call('SAVE')).toBe('OK')
      await server.redis.call('SHUTDOWN').catch(() => undefined)
      expect(await server.bfs.waitExit(120_000)).toBe(0)
      server.redis.disconnect()
      server = await start()
      await expectSameAnswers(server.redis, added.length)
      expect(await server.redis.call('DEL', 'big')).toBe(1)
    } finally {
      server.redis.disconnect()
      server.bfs.kill()
      await server.bfs.waitExit().catch(() => undefined)
      rmSync(dir, { recursive: true, force: true })
    }
  }, 600_000)
})
