/**
 * BF.MERGE destkey sourcekey [sourcekey ...] over real sockets (ioredis and raw bytes): the union
 * has no false negatives, replaces the destination as SUNIONSTORE does, refuses what cannot be
 * merged with a clear error, works inside MULTI and touches a WATCHed destination, respects the
 * memory limits, and comes back with identical bits after SAVE and after kill -9 (the log replays it).
 */
import { rmSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { ask, encodeCommand } from '../../helpers/resp.js'
import { serverPerTest } from '../../helpers/server-hooks.js'
import { makeTempDir } from '../../helpers/temp-dir.js'
import { childClient, killChildServer, startChildServer } from '../../helpers/child-server.js'
import { freePort, type InteractiveTool } from '../../helpers/tools.js'
import { seededRandom } from '../../helpers/seeded-random.js'

const { start, connect } = serverPerTest()
const dirs: string[] = []
const children: InteractiveTool[] = []
afterAll(() => {
  for (const child of children) child.kill()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

async function redisOn(port: number): Promise<Redis> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true })
  await redis.connect()
  return redis
}

/** Every BF.SCANDUMP chunk of a filter: its header and each layer's bits, as a replay must rebuild them. */
async function scandump(redis: Redis, key: string): Promise<Buffer[]> {
  const chunks: Buffer[] = []
  let iterator = 0
  do {
    const [next, data] = (await redis.callBuffer('BF.SCANDUMP', key, String(iterator))) as [number, Buffer]
    iterator = Number(next)
    if (iterator !== 0) chunks.push(data)
  } while (iterator !== 0)
  return chunks
}

/** Fills three filters reserved alike (one grown to three layers) and merges them into `dest`. */
async function mergeThree(redis: Redis): Promise<string[][]> {
  const random = seededRandom(17)
  const added: string[][] = [[], [], []]
  for (const [i, key] of ['s1', 's2', 's3'].entries()) {
    expect(await redis.call('BF.RESERVE', key, '0.01', '500')).toBe('OK')
    const count = [200, 1800, 450][i]!
    for (let j = 0; j < count; j++) added[i]!.push(`item-${Math.floor(random() * 1e9)}`)
    await redis.call('BF.MADD', key, ...added[i]!)
  }
  expect(await redis.call('BF.MERGE', 'dest', 's1', 's2', 's3')).toBe('OK')
  return added
}

describe('BF.MERGE', () => {
  it('makes the union: no false negatives, the layers of the longest source, BF.INFO and BF.CARD from the estimate', async () => {
    const { port } = await start()
    const redis = await redisOn(port)
    try {
      const added = await mergeThree(redis)
      for (const items of added) {
        const found = (await redis.call('BF.MEXISTS', 'dest', ...items)) as number[]
        expect(found.every((one) => one === 1)).toBe(true)
      }
      const probes = Array.from({ length: 3000 }, (_, i) => `probe-${i}`)
      const [p1, p2, p3, pd] = (await Promise.all(
        ['s1', 's2', 's3', 'dest'].map((key) => redis.call('BF.MEXISTS', key, ...probes)),
      )) as number[][]
      probes.forEach((_, i) => {
        if (p1![i] === 1 || p2![i] === 1 || p3![i] === 1) expect(pd![i]).toBe(1)
      })
      expect(await redis.call('BF.INFO', 'dest', 'FILTERS')).toEqual([3])
      expect(await redis.call('BF.INFO', 'dest', 'CAPACITY')).toEqual(await redis.call('BF.INFO', 's2', 'CAPACITY'))
      const card = Number(await redis.call('BF.CARD', 'dest'))
      expect(await redis.call('BF.INFO', 'dest', 'ITEMS')).toEqual([card])
      // Layers 1 and 2 are full (500 + 1000) in s2; the third holds the rest, more after the union.
      const s2Card = Number(await redis.call('BF.CARD', 's2'))
      expect(card).toBeGreaterThanOrEqual(s2Card)
      expect(card).toBeLessThanOrEqual(500 + 1000 + 2000)
      expect(await redis.call('TTL', 'dest')).toBe(-1)
    } finally {
      redis.disconnect()
    }
  })

  it('replaces the destination whatever it held, may merge into one of its sources, and copies one source exactly', async () => {
    const { port } = await start()
    const client = await connect(port)
    expect(await ask(client, 'BF.RESERVE', 'a', '0.01', '100')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.RESERVE', 'b', '0.01', '100')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.RESERVE', 'dest', '0.2', '5', 'NONSCALING')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.MADD', 'a', 'x', 'y')).toBe('*2\r\n:1\r\n:1\r\n')
    expect(await ask(client, 'BF.ADD', 'b', 'z')).toBe(':1\r\n')
    expect(await ask(client, 'BF.MERGE', 'dest', 'a', 'b')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.INFO', 'dest')).toBe(
      '*10\r\n+Capacity\r\n:100\r\n+Size\r\n:240\r\n+Number of filters\r\n:1\r\n+Number of items inserted\r\n:3\r\n+Expansion rate\r\n:2\r\n',
    )
    expect(await ask(client, 'BF.MEXISTS', 'dest', 'x', 'y', 'z')).toBe('*3\r\n:1\r\n:1\r\n:1\r\n')
    // Into a source: a keeps its own items and gains b's.
    expect(await ask(client, 'BF.MERGE', 'a', 'a', 'b')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.MEXISTS', 'a', 'x', 'y', 'z')).toBe('*3\r\n:1\r\n:1\r\n:1\r\n')
    expect(await ask(client, 'BF.CARD', 'a')).toBe(':3\r\n')
    // One source: a copy, count included; the copy is independent of its source.
    expect(await ask(client, 'BF.MERGE', 'copy', 'b')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.CARD', 'copy')).toBe(':1\r\n')
    expect(await ask(client, 'BF.ADD', 'copy', 'w')).toBe(':1\r\n')
    expect(await ask(client, 'BF.EXISTS', 'b', 'w')).toBe(':0\r\n')
    expect(await ask(client, 'BF.MERGE', 'b', 'b', 'b')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.CARD', 'b')).toBe(':1\r\n')
  })

  it('refuses a missing source, sources not reserved alike and a wrong arity, and leaves the destination as it was', async () => {
    const { port } = await start()
    const client = await connect(port)
    for (const args of [
      ['a', '0.01', '1000'],
      ['b', '0.01', '2000'],
      ['c', '0.001', '1000'],
      ['d', '0.01', '1000', 'EXPANSION', '4'],
      ['e', '0.01', '1000', 'NONSCALING'],
      ['dest', '0.01', '1000'],
    ]) {
      expect(await ask(client, 'BF.RESERVE', ...args)).toBe('+OK\r\n')
    }
    expect(await ask(client, 'BF.ADD', 'dest', 'kept')).toBe(':1\r\n')
    expect(await ask(client, 'BF.MERGE', 'dest', 'a', 'nosuch')).toBe('-ERR not found\r\n')
    expect(await ask(client, 'BF.MERGE', 'dest', 'a', 'b')).toBe(
      '-ERR filters differ in capacity (a has 1000, b has 2000)\r\n',
    )
    expect(await ask(client, 'BF.MERGE', 'dest', 'a', 'c')).toBe(
      '-ERR filters differ in error rate (a has 0.01, c has 0.001)\r\n',
    )
    expect(await ask(client, 'BF.MERGE', 'dest', 'a', 'd')).toBe(
      '-ERR filters differ in expansion (a has 2, d has 4)\r\n',
    )
    expect(await ask(client, 'BF.MERGE', 'dest', 'a', 'a', 'e')).toBe(
      '-ERR filters differ in scaling (a has scaling, e has NONSCALING)\r\n',
    )
    expect(await ask(client, 'BF.MERGE', 'dest')).toBe("-ERR wrong number of arguments for 'bf.merge' command\r\n")
    expect(await ask(client, 'BF.MERGE')).toBe("-ERR wrong number of arguments for 'bf.merge' command\r\n")
    expect(await ask(client, 'BF.MERGE', 'new', 'nosuch')).toBe('-ERR not found\r\n')
    expect(await ask(client, 'EXISTS', 'new')).toBe(':0\r\n')
    expect(await ask(client, 'BF.EXISTS', 'dest', 'kept')).toBe(':1\r\n')
    expect(await ask(client, 'BF.CARD', 'dest')).toBe(':1\r\n')
  })

  it('works inside MULTI/EXEC, and touches a WATCHed destination but not a WATCHed source', async () => {
    const { port } = await start()
    const client = await connect(port)
    const other = await connect(port)
    expect(await ask(client, 'BF.ADD', 'a', 'x')).toBe(':1\r\n')
    expect(await ask(client, 'BF.ADD', 'b', 'y')).toBe(':1\r\n')
    client.write(
      Buffer.concat(
        [
          ['MULTI'],
          ['BF.MERGE', 'u', 'a', 'b'],
          ['BF.MERGE', 'u', 'nosuch'],
          ['BF.MEXISTS', 'u', 'x', 'y'],
          ['EXEC'],
        ].map((c) => encodeCommand(c)),
      ),
    )
    const expected = '+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n-ERR not found\r\n*2\r\n:1\r\n:1\r\n'
    expect((await client.read(expected.length)).toString('latin1')).toBe(expected)
    // As every BF.* command (arity -1 registered), the count is checked when it runs, in EXEC.
    expect(await ask(client, 'MULTI')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.MERGE', 'u')).toBe('+QUEUED\r\n')
    expect(await ask(client, 'EXEC')).toBe("*1\r\n-ERR wrong number of arguments for 'bf.merge' command\r\n")
    /** WATCH `watched`, let `other` send `merge`, then MULTI / BF.CARD `card` / EXEC: EXEC's reply. */
    async function watchedExec(watched: string, merge: string[], mergeReply: string, card: string): Promise<string> {
      expect(await ask(client, 'WATCH', watched)).toBe('+OK\r\n')
      expect(await ask(other, 'BF.MERGE', ...merge)).toBe(mergeReply)
      expect(await ask(client, 'MULTI')).toBe('+OK\r\n')
      expect(await ask(client, 'BF.CARD', card)).toBe('+QUEUED\r\n')
      return ask(client, 'EXEC')
    }
    // A merge into the WATCHed key by another client: EXEC answers a null array.
    expect(await watchedExec('u', ['u', 'a'], '+OK\r\n', 'u')).toBe('*-1\r\n')
    // A merge that only reads the WATCHed key (a source): EXEC runs.
    expect(await watchedExec('a', ['v', 'a', 'b'], '+OK\r\n', 'v')).toBe('*1\r\n:2\r\n')
    // A refused merge does not touch the WATCHed destination.
    expect(await watchedExec('u', ['u', 'nosuch'], '-ERR not found\r\n', 'u')).toBe('*1\r\n:1\r\n')
  })

  it('is refused over max-filter-bytes and maxmemory before anything is allocated', async () => {
    const { port } = await start()
    const client = await connect(port)
    expect(await ask(client, 'BF.RESERVE', 'a', '0.01', '100000')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.RESERVE', 'b', '0.01', '100000')).toBe('+OK\r\n')
    const bytes = Number((await ask(client, 'MEMORY', 'USAGE', 'a')).slice(1, -2))
    expect(await ask(client, 'CONFIG', 'SET', 'max-filter-bytes', '100000')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.MERGE', 'm', 'a', 'b')).toBe('-ERR filter would exceed the maximum filter size\r\n')
    expect(await ask(client, 'CONFIG', 'SET', 'max-filter-bytes', '0')).toBe('+OK\r\n')
    expect(await ask(client, 'CONFIG', 'SET', 'maxmemory', String(Math.floor(bytes * 2.5)))).toBe('+OK\r\n')
    expect(await ask(client, 'BF.MERGE', 'm', 'a', 'b')).toBe(
      "-OOM command not allowed when used memory > 'maxmemory'.\r\n",
    )
    expect(await ask(client, 'EXISTS', 'm')).toBe(':0\r\n')
    expect(await ask(client, 'CONFIG', 'SET', 'maxmemory', String(bytes * 4))).toBe('+OK\r\n')
    expect(await ask(client, 'BF.MERGE', 'm', 'a', 'b')).toBe('+OK\r\n')
  })

  it("is listed by COMMAND INFO as a write of keys 1 to the last, key specs as SUNIONSTORE's", async () => {
    const { port } = await start()
    const redis = await redisOn(port)
    try {
      expect(await redis.call('COMMAND', 'INFO', 'BF.MERGE')).toEqual([
        [
          'bf.merge',
          -1,
          ['write', 'denyoom'],
          1,
          -1,
          1,
          ['@write', '@slow', '@bloom'],
          [],
          [
            [
              'flags',
              ['OW', 'update'],
              'begin_search',
              ['type', 'index', 'spec', ['index', 1]],
              'find_keys',
              ['type', 'range', 'spec', ['lastkey', 0, 'keystep', 1, 'limit', 0]],
            ],
            [
              'flags',
              ['RO', 'access'],
              'begin_search',
              ['type', 'index', 'spec', ['index', 2]],
              'find_keys',
              ['type', 'range', 'spec', ['lastkey', -1, 'keystep', 1, 'limit', 0]],
            ],
          ],
          [],
        ],
      ])
    } finally {
      redis.disconnect()
    }
  })

  it('comes back with identical bits after SAVE and a restart', async () => {
    const dir = makeTempDir('bfs-merge-save-')
    dirs.push(dir)
    const first = await start({ dir })
    let redis = await redisOn(first.port)
    await mergeThree(redis)
    const before = [await scandump(redis, 'dest'), await redis.call('BF.INFO', 'dest')]
    expect(await redis.call('SAVE')).toBe('OK')
    redis.disconnect()
    await first.stop()
    const second = await start({ dir })
    redis = await redisOn(second.port)
    try {
      expect([await scandump(redis, 'dest'), await redis.call('BF.INFO', 'dest')]).toEqual(before)
    } finally {
      redis.disconnect()
    }
  })

  it('is replayed from the append-only log after kill -9 to identical bits', async () => {
    const dir = makeTempDir('bfs-merge-aof-')
    dirs.push(dir)
    const port = await freePort()
    const args = ['--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always']
    const first = await startChildServer(args)
    children.push(first.bfs)
    let redis = childClient(port)
    await mergeThree(redis)
    // Written after the merge: the replay must merge before these, as it was done.
    await redis.call('BF.MADD', 's1', 'after-1', 'after-2')
    expect(await redis.call('BF.MERGE', 's3', 's3', 's1')).toBe('OK')
    const keys = ['dest', 's1', 's2', 's3']
    const before = await Promise.all(
      keys.map(async (key) => [await scandump(redis, key), await redis.call('BF.INFO', key)]),
    )
    await killChildServer(first.bfs)
    redis.disconnect()
    const second = await startChildServer(args)
    children.push(second.bfs)
    redis = childClient(port)
    try {
      const after = await Promise.all(
        keys.map(async (key) => [await scandump(redis, key), await redis.call('BF.INFO', key)]),
      )
      expect(after).toEqual(before)
    } finally {
      redis.disconnect()
      await killChildServer(second.bfs)
    }
  })
})
