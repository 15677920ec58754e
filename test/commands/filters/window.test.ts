/**
 * APBF.* over real sockets: every command's replies and errors in RESP2 (exact bytes) and RESP3,
 * -WRONGTYPE both ways, the keyspace commands on window keys, MULTI/EXEC, the memory limits, and
 * items leaving a TIME window (APBF.ADDAT places adds in the past, so nothing waits for a clock).
 */
import { describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { exchange, type RawClient } from '../../helpers/resp.js'
import { serverPerTest } from '../../helpers/server-hooks.js'

const { start, connect } = serverPerTest()

async function redisOn(port: number): Promise<Redis> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true })
  await redis.connect()
  return redis
}

const WRONGTYPE = '-WRONGTYPE Operation against a key holding the wrong kind of value\r\n'

async function raw(): Promise<RawClient> {
  const { port } = await start()
  return connect(port)
}

describe('APBF.RESERVE', () => {
  it('creates COUNT and TIME windows and refuses bad arguments in BF.RESERVE style', async () => {
    const client = await raw()
    const cases: [string[], string][] = [
      [['APBF.RESERVE', 'c', 'COUNT', '0.01', '1000'], '+OK\r\n'],
      [['APBF.RESERVE', 't', 'time', '0.001', '500', '60'], '+OK\r\n'],
      [['APBF.RESERVE', 'c', 'COUNT', '0.01', '1000'], '-ERR item exists\r\n'],
      [['APBF.RESERVE', 'x', 'HOUR', '0.01', '10'], '-ERR bad window type (COUNT or TIME)\r\n'],
      [['APBF.RESERVE', 'x', 'COUNT', 'abc', '10'], '-ERR bad error rate\r\n'],
      [['APBF.RESERVE', 'x', 'COUNT', '1', '10'], '-ERR (0 < error rate range < 1) \r\n'],
      [['APBF.RESERVE', 'x', 'COUNT', '0', '10'], '-ERR (0 < error rate range < 1) \r\n'],
      [['APBF.RESERVE', 'x', 'COUNT', '1e-15', '10'], '-ERR (1e-12 <= error rate < 1)\r\n'],
      [['APBF.RESERVE', 'x', 'COUNT', '0.01', 'ten'], '-ERR bad capacity\r\n'],
      [['APBF.RESERVE', 'x', 'COUNT', '0.01', '0'], '-ERR (capacity should be larger than 0)\r\n'],
      [['APBF.RESERVE', 'x', 'COUNT', '0.01', '10', '60'], '-ERR COUNT windows take no time span\r\n'],
      [['APBF.RESERVE', 'x', 'TIME', '0.01', '10'], '-ERR TIME windows need a time span\r\n'],
      [['APBF.RESERVE', 'x', 'TIME', '0.01', '10', 'soon'], '-ERR bad time span\r\n'],
      [['APBF.RESERVE', 'x', 'TIME', '0.01', '10', '0'], '-ERR (0 < time span <= 35184372088)\r\n'],
      [['APBF.RESERVE', 'x', 'COUNT', '0.01'], "-ERR wrong number of arguments for 'apbf.reserve' command\r\n"],
      [
        ['APBF.RESERVE', 'x', 'TIME', '0.01', '10', '60', 'extra'],
        "-ERR wrong number of arguments for 'apbf.reserve' command\r\n",
      ],
      [['EXISTS', 'x'], ':0\r\n'],
    ]
    for (const [command, reply] of cases) expect(await exchange(client, [command], reply)).toBe(reply)
  })
})

describe('APBF.ADD, APBF.EXISTS, APBF.INFO', () => {
  it('answer in RESP2 byte for byte', async () => {
    const client = await raw()
    const replies = [
      ['APBF.RESERVE', 'w', 'COUNT', '0.01', '1000'],
      '+OK\r\n',
      ['APBF.ADD', 'w', 'a', 'b', 'a'],
      '*3\r\n:1\r\n:1\r\n:0\r\n',
      ['APBF.EXISTS', 'w', 'a', 'b', 'never'],
      '*3\r\n:1\r\n:1\r\n:0\r\n',
      ['APBF.EXISTS', 'missing', 'a', 'b'],
      '*2\r\n:0\r\n:0\r\n',
      ['APBF.ADD', 'missing', 'a'],
      '-ERR not found\r\n',
      ['APBF.INFO', 'missing'],
      '-ERR not found\r\n',
      ['APBF.ADD', 'w'],
      "-ERR wrong number of arguments for 'apbf.add' command\r\n",
      ['APBF.EXISTS', 'w'],
      "-ERR wrong number of arguments for 'apbf.exists' command\r\n",
      ['APBF.INFO', 'w', 'x'],
      "-ERR wrong number of arguments for 'apbf.info' command\r\n",
      ['APBF.INFO', 'w'],
      '*16\r\n+Type\r\n+COUNT\r\n+Capacity\r\n:1000\r\n+Window\r\n:1000\r\n+Error rate\r\n$4\r\n0.01\r\n+Size\r\n:4264\r\n' +
        '+Slices\r\n:50\r\n+Hash functions\r\n:11\r\n+Items in window\r\n:2\r\n',
      ['APBF.ADDAT', 'w', 'yesterday', 'a'],
      '-ERR bad timestamp\r\n',
    ] as const
    for (let i = 0; i < replies.length; i += 2) {
      const reply = replies[i + 1] as string
      expect(await exchange(client, [replies[i] as readonly string[]], reply)).toBe(reply)
    }
  })

  it('answer in RESP3: APBF.INFO is a map, its error rate a double', async () => {
    const { port } = await start()
    const client = await connect(port)
    client.write('*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n*1\r\n$4\r\nPING\r\n')
    await client.readUntil((bytes) => bytes.toString('latin1').endsWith('+PONG\r\n'))
    const info = '%8\r\n+Type\r\n+TIME\r\n+Capacity\r\n:100\r\n+Window\r\n:60\r\n+Error rate\r\n,0.001\r\n+Size\r\n:'
    const reserve = await exchange(client, [['APBF.RESERVE', 't', 'TIME', '0.001', '100', '60']], '+OK\r\n')
    expect(reserve).toBe('+OK\r\n')
    expect(await exchange(client, [['APBF.ADD', 't', 'x', 'y']], '*2\r\n:1\r\n:1\r\n')).toBe('*2\r\n:1\r\n:1\r\n')
    client.write('*2\r\n$9\r\nAPBF.INFO\r\n$1\r\nt\r\n')
    const reply = (
      await client.readUntil((bytes) => bytes.toString('latin1').includes('Items in window\r\n:2\r\n'))
    ).toString('latin1')
    expect(reply.startsWith(info)).toBe(true)
    expect(reply).toMatch(/\+Slices\r\n:15\r\n\+Hash functions\r\n:15\r\n\+Items in window\r\n:2\r\n$/)
    expect(await exchange(client, [['APBF.EXISTS', 't', 'x', 'z']], '*2\r\n:1\r\n:0\r\n')).toBe('*2\r\n:1\r\n:0\r\n')
  })
})

describe('window keys among the other keys', () => {
  it('answer -WRONGTYPE both ways; BF.EXISTS and BF.MEXISTS answer 0 as RedisBloom 2.4 does', async () => {
    const client = await raw()
    await exchange(
      client,
      [
        ['APBF.RESERVE', 'w', 'COUNT', '0.01', '100'],
        ['BF.ADD', 'b', 'x'],
        ['APBF.ADD', 'w', 'x'],
      ],
      '+OK\r\n:1\r\n*1\r\n:1\r\n',
    )
    const cases: [string[], string][] = [
      [['BF.ADD', 'w', 'x'], WRONGTYPE],
      [['BF.MADD', 'w', 'x'], WRONGTYPE],
      [['BF.INSERT', 'w', 'ITEMS', 'x'], WRONGTYPE],
      [['BF.RESERVE', 'w', '0.01', '100'], WRONGTYPE],
      [['BF.INFO', 'w'], WRONGTYPE],
      [['BF.CARD', 'w'], WRONGTYPE],
      [['BF.SCANDUMP', 'w', '0'], WRONGTYPE],
      [['BF.LOADCHUNK', 'w', '1', 'abc'], WRONGTYPE],
      [['BF.DEBUG', 'w'], WRONGTYPE],
      [['BFS.HEALTH', 'w'], WRONGTYPE],
      [['BF.MERGE', 'd', 'b', 'w'], WRONGTYPE],
      [['BF.EXISTS', 'w', 'x'], ':0\r\n'],
      [['BF.MEXISTS', 'w', 'x', 'y'], '*2\r\n:0\r\n:0\r\n'],
      [['APBF.ADD', 'b', 'x'], WRONGTYPE],
      [['APBF.ADDAT', 'b', '1000', 'x'], WRONGTYPE],
      [['APBF.EXISTS', 'b', 'x'], WRONGTYPE],
      [['APBF.INFO', 'b'], WRONGTYPE],
      [['APBF.RESERVE', 'b', 'COUNT', '0.01', '100'], WRONGTYPE],
    ]
    for (const [command, reply] of cases)
      expect(await exchange(client, [command], reply), command.join(' ')).toBe(reply)
  })

  it('work with TYPE, SCAN TYPE, DEL, RENAME, EXPIRE/TTL, MEMORY USAGE, DBSIZE and INFO', async () => {
    const { port } = await start()
    const redis = await redisOn(port)
    try {
      await redis.call('APBF.RESERVE', 'c', 'COUNT', '0.01', '1000')
      await redis.call('APBF.RESERVE', 't', 'TIME', '0.01', '1000', '3600')
      await redis.call('BF.ADD', 'b', 'x')
      expect(await redis.type('c')).toBe('APBFcTYPE')
      expect(await redis.type('t')).toBe('APBFtTYPE')
      expect(await redis.type('b')).toBe('MBbloom--')
      expect((await redis.scan('0', 'TYPE', 'APBFcTYPE'))[1]).toEqual(['c'])
      expect((await redis.scan('0', 'TYPE', 'apbfttype'))[1]).toEqual(['t'])
      expect((await redis.scan('0', 'TYPE', 'MBbloom--'))[1]).toEqual(['b'])
      const size = ((await redis.call('APBF.INFO', 'c')) as unknown[])[9] as number
      // Its Size, the key's sds (8) and dictEntry (24), as for a Bloom filter's key.
      expect(await redis.call('MEMORY', 'USAGE', 'c')).toBe(size + 32)
      expect(await redis.dbsize()).toBe(3)
      expect(await redis.expire('c', 100)).toBe(1)
      expect(await redis.ttl('c')).toBeGreaterThan(90)
      await redis.call('APBF.ADD', 'c', 'kept')
      expect(await redis.rename('c', 'c2')).toBe('OK')
      expect(await redis.ttl('c2')).toBeGreaterThan(90)
      expect(await redis.call('APBF.EXISTS', 'c2', 'kept')).toEqual([1])
      expect(await redis.type('c2')).toBe('APBFcTYPE')
      expect(await redis.info('keyspace')).toContain('db0:keys=3,expires=1')
      expect(await redis.info('memory')).toMatch(/used_memory:\d+/)
      expect(await redis.del('c2', 't')).toBe(2)
      expect(await redis.dbsize()).toBe(1)
      const [row] = (await redis.call('COMMAND', 'INFO', 'APBF.ADD')) as unknown[][]
      expect(row!.slice(0, 6)).toEqual(['apbf.add', -1, ['write', 'denyoom', 'module'], 1, 1, 1])
      expect(((await redis.call('COMMAND', 'INFO', 'APBF.EXISTS')) as unknown[][])[0]!.slice(2, 6)).toEqual([
        ['readonly', 'module', 'fast'],
        1,
        1,
        1,
      ])
      const docs = (await redis.call('COMMAND', 'DOCS', 'APBF.RESERVE')) as unknown[]
      expect(JSON.stringify(docs)).toContain('Creates a sliding-window filter')
    } finally {
      redis.disconnect()
    }
  })

  it('count in /metrics (keys, filter bytes) and stay out of the Bloom-only listing and health figures', async () => {
    const { port, server } = await start({ 'http-port': -1 })
    const redis = await redisOn(port)
    try {
      await redis.call('APBF.RESERVE', 'w', 'COUNT', '0.01', '10000')
      await redis.call('APBF.ADD', 'w', 'a', 'b')
      await redis.call('BF.ADD', 'b', 'x')
      const text = await (await fetch(`http://127.0.0.1:${server.httpPort}/metrics`)).text()
      const value = (name: string): number =>
        Number(
          text
            .split('\n')
            .find((line) => line.startsWith(`${name} `))!
            .split(' ')[1],
        )
      expect(value('bfs_filters')).toBe(2)
      const info = (await redis.call('APBF.INFO', 'w')) as number[]
      const windowBitmap = info[9]! - 64 - 32 * info[11]! // Size less its header and slice structs
      expect(windowBitmap).toBeGreaterThan(20_000)
      expect(value('bfs_filter_bytes')).toBeGreaterThan(windowBitmap) // the Bloom filter's bits on top
      const listing = (await (await fetch(`http://127.0.0.1:${server.httpPort}/filters`)).json()) as
        { name: string }[] | { filters: { name: string }[] }
      const names = (Array.isArray(listing) ? listing : listing.filters).map((row) => row.name)
      expect(names).toEqual(['b'])
    } finally {
      redis.disconnect()
    }
  })

  it('runs inside MULTI/EXEC', async () => {
    const { port } = await start()
    const redis = await redisOn(port)
    try {
      const result = await redis
        .multi()
        .call('APBF.RESERVE', 'm', 'COUNT', '0.01', '100')
        .call('APBF.ADD', 'm', 'a', 'a')
        .call('APBF.EXISTS', 'm', 'a', 'b')
        .exec()
      expect(result).toEqual([
        [null, 'OK'],
        [null, [1, 0]],
        [null, [1, 0]],
      ])
    } finally {
      redis.disconnect()
    }
  })

  it('are refused past max-filter-bytes and maxmemory before anything is allocated', async () => {
    const { port } = await start({ 'max-filter-bytes': 100_000 })
    const redis = await redisOn(port)
    try {
      await expect(redis.call('APBF.RESERVE', 'big', 'COUNT', '0.01', '1000000')).rejects.toThrow(
        'ERR filter would exceed the maximum filter size',
      )
      expect(await redis.exists('big')).toBe(0)
      await redis.call('CONFIG', 'SET', 'max-filter-bytes', '0')
      await redis.call('CONFIG', 'SET', 'maxmemory', '200000')
      await expect(redis.call('APBF.RESERVE', 'big', 'TIME', '0.01', '1000000', '60')).rejects.toThrow(/^OOM /)
      expect(await redis.call('APBF.RESERVE', 'small', 'COUNT', '0.01', '1000')).toBe('OK')
    } finally {
      redis.disconnect()
    }
  })
})

describe('window filters in a database other than 0', () => {
  it("count every database's bitmaps against maxmemory when a TIME window grows a slice", async () => {
    const { port } = await start()
    const redis = await redisOn(port)
    try {
      // A large Bloom filter in database 1, a small TIME window in database 0.
      await redis.select(1)
      expect(await redis.call('BF.RESERVE', 'big', '0.01', '1000000')).toBe('OK')
      await redis.select(0)
      expect(await redis.call('APBF.RESERVE', 'day', 'TIME', '0.01', '1000', '10')).toBe('OK')
      const now = Date.now()
      expect(await redis.call('APBF.ADDAT', 'day', String(now), 'a')).toEqual([1])
      const used = Number(/bfs_filter_bytes:(\d+)/.exec(await redis.info('memory'))![1])
      await redis.call('CONFIG', 'SET', 'maxmemory', String(used + 1))
      // A new slice an hour later does not fit beside database 1's filter: the array ends with OOM.
      const reply = (await redis.call('APBF.ADDAT', 'day', String(now + 3_600_000), 'b')) as unknown[]
      expect(reply).toHaveLength(1)
      expect(String(reply[0])).toMatch(/OOM /)
      expect(await redis.call('APBF.EXISTS', 'day', 'a')).toEqual([1])
    } finally {
      redis.disconnect()
    }
  })
})

describe('a TIME window forgets', () => {
  it('items older than the window, as the times of the adds say', async () => {
    const { port } = await start()
    const redis = await redisOn(port)
    try {
      await redis.call('APBF.RESERVE', 'day', 'TIME', '0.01', '1000', '10')
      const now = Date.now()
      expect(await redis.call('APBF.ADDAT', 'day', String(now - 60_000), 'old-1', 'old-2')).toEqual([1, 1])
      expect(await redis.call('APBF.ADDAT', 'day', String(now - 4_000), 'recent')).toEqual([1])
      expect(await redis.call('APBF.ADD', 'day', 'now', 'recent')).toEqual([1, 0])
      expect(await redis.call('APBF.EXISTS', 'day', 'old-1', 'old-2', 'recent', 'now')).toEqual([0, 0, 1, 1])
      // Time never goes back: an add stamped before the latest counts as made at the latest.
      expect(await redis.call('APBF.ADDAT', 'day', String(now - 60_000), 'late')).toEqual([1])
      expect(await redis.call('APBF.EXISTS', 'day', 'late')).toEqual([1])
    } finally {
      redis.disconnect()
    }
  })
})
