/**
 * Every state the commands can reach is saveable (issue 15): a filter of more than 64 layers
 * (EXPANSION 1), one of the most layers BF.LOADCHUNK accepts, and key names longer than 64 KiB go
 * through SAVE, BGREWRITEAOF and a kill -9 of a real bfs process (dist/main.js), and answer the
 * same afterwards. One layer more is refused at BF.LOADCHUNK, before anything changes.
 */
import { rmSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import type { Redis } from 'ioredis'
import { makeTempDir } from '../helpers/temp-dir.js'
import { freePort, type InteractiveTool } from '../helpers/tools.js'
import { childClient, killChildServer, startChildServer } from '../helpers/child-server.js'

const dirs: string[] = []
const children: InteractiveTool[] = []

afterAll(() => {
  for (const child of children) child.kill()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

async function startChild(port: number, dir: string): Promise<{ child: InteractiveTool; redis: Redis }> {
  const args = ['--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'yes']
  const { bfs: child } = await startChildServer(args)
  children.push(child)
  return { child, redis: childClient(port) }
}

/** BGREWRITEAOF, then waits for it to end; returns INFO persistence's rewrite status. */
async function rewriteLog(redis: Redis): Promise<string | undefined> {
  expect(await redis.call('BGREWRITEAOF')).toBe('Background append only file rewriting started')
  let info = await redis.info('persistence')
  while (/aof_rewrite_in_progress:1|aof_rewrite_scheduled:1/.test(info)) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    info = await redis.info('persistence')
  }
  return /aof_last_bgrewrite_status:(\w+)/.exec(info)?.[1]
}

/**
 * Runs `fill` on a fresh bfs, then SAVE and BGREWRITEAOF (both must succeed), kill -9, a restart
 * on the same dir, and returns what `answers` gives before and after.
 */
async function throughRestart(fill: (redis: Redis) => Promise<void>, answers: (redis: Redis) => Promise<unknown>) {
  const dir = makeTempDir('bfs-limits-')
  dirs.push(dir)
  const port = await freePort()
  const first = await startChild(port, dir)
  let before: unknown
  try {
    await fill(first.redis)
    expect(await first.redis.call('SAVE')).toBe('OK')
    expect(await rewriteLog(first.redis)).toBe('ok')
    expect(await first.redis.call('SAVE')).toBe('OK')
    before = await answers(first.redis)
  } finally {
    first.redis.disconnect()
    await killChildServer(first.child)
  }
  const second = await startChild(port, dir)
  try {
    return { before, after: await answers(second.redis) }
  } finally {
    second.redis.disconnect()
    second.child.child.kill('SIGTERM')
    expect(await second.child.waitExit()).toBe(0)
  }
}

const BATCH = 1000

async function inBatches(redis: Redis, command: string, key: string, total: number): Promise<unknown[]> {
  const pipe = redis.pipeline()
  for (let i = 0; i < total; i += BATCH) {
    pipe.call(command, key, ...Array.from({ length: Math.min(BATCH, total - i) }, (_, j) => `i${i + j}`))
  }
  const results = (await pipe.exec()) ?? []
  for (const [error] of results) expect(error).toBeNull()
  return results.flatMap(([, reply]) => reply as unknown[])
}

describe('a filter of more than 64 layers', () => {
  it('saves, rewrites the log, copies through SCANDUMP and comes back whole after kill -9', async () => {
    const total = 70_000
    const { before, after } = await throughRestart(
      async (redis) => {
        expect(await redis.call('BF.RESERVE', 'deep', '0.01', '1000', 'EXPANSION', '1')).toBe('OK')
        await inBatches(redis, 'BF.MADD', 'deep', total)
        expect(Number(await redis.call('BF.INFO', 'deep', 'FILTERS'))).toBeGreaterThan(64)
        // SCANDUMP of the deep filter, LOADCHUNK into a copy: the same filter.
        let iterator = 0
        do {
          const [next, data] = (await redis.callBuffer('BF.SCANDUMP', 'deep', String(iterator))) as [number, Buffer]
          if (Number(next) !== 0) expect(await redis.call('BF.LOADCHUNK', 'copy', String(next), data)).toBe('OK')
          iterator = Number(next)
        } while (iterator !== 0)
        expect(await redis.call('BF.INFO', 'copy')).toEqual(await redis.call('BF.INFO', 'deep'))
      },
      async (redis) => {
        const found = await inBatches(redis, 'BF.MEXISTS', 'deep', total)
        expect(found.every((reply) => reply === 1)).toBe(true)
        return [await redis.call('BF.INFO', 'deep'), await redis.call('BF.INFO', 'copy'), found.length]
      },
    )
    expect(after).toEqual(before)
  })
})

describe('a key name longer than 64 KiB', () => {
  it('saves, rewrites the log and comes back after kill -9', async () => {
    const long = 'k'.repeat(70_000)
    const longer = Buffer.alloc(2 * 1024 * 1024, 0xfe)
    const { before, after } = await throughRestart(
      async (redis) => {
        expect(await redis.call('BF.ADD', long, 'x')).toBe(1)
        expect(await redis.call('BF.ADD', longer, 'y')).toBe(1)
      },
      async (redis) => [
        await redis.call('BF.EXISTS', long, 'x'),
        await redis.call('BF.EXISTS', longer, 'y'),
        await redis.call('BF.INFO', long),
        await redis.call('BF.INFO', longer),
        await redis.call('DBSIZE'),
      ],
    )
    expect(before).toEqual([1, 1, expect.anything(), expect.anything(), 2])
    expect(after).toEqual(before)
  })
})

/** A SCANDUMP header (RedisBloom src/sb.c dumpedChainHeader) of `count` empty 64-bit layers. */
function dumpHeaderOf(count: number): Buffer {
  const header = Buffer.alloc(20 + 53 * count)
  header.writeUInt32LE(count, 8)
  header.writeUInt32LE(5, 12) // NOROUND | FORCE64
  header.writeUInt32LE(1, 16) // growth
  for (let i = 0; i < count; i++) {
    const at = 20 + 53 * i
    header.writeUInt32LE(8, at) // bytes
    header.writeUInt32LE(64, at + 8) // bits
    header.writeDoubleLE(0.5, at + 24) // error
    header.writeDoubleLE(1.44, at + 32) // bpe: ceil(ln 2 * 1.44) = 1 hash
    header.writeUInt32LE(1, at + 40) // hashes
    header.writeUInt32LE(1, at + 44) // entries
  }
  return header
}

describe('the most layers a filter may have (65535, through BF.LOADCHUNK)', () => {
  it('are saved and come back; one more is refused at the door', async () => {
    const { before, after } = await throughRestart(
      async (redis) => {
        await expect(redis.call('BF.LOADCHUNK', 'over', '1', dumpHeaderOf(65536))).rejects.toThrow(
          'ERR received bad data',
        )
        expect(await redis.call('EXISTS', 'over')).toBe(0)
        expect(await redis.call('BF.LOADCHUNK', 'most', '1', dumpHeaderOf(65535))).toBe('OK')
        expect(await redis.call('BF.ADD', 'most', 'x')).toBe(1)
      },
      async (redis) => [await redis.call('BF.INFO', 'most'), await redis.call('BF.EXISTS', 'most', 'x')],
    )
    expect(before).toEqual([expect.arrayContaining(['Number of filters', 65535]), 1])
    expect(after).toEqual(before)
  })
})
