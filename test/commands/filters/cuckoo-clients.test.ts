/**
 * The CF assertions of the client libraries people use with RedisBloom, against bfs over RESP2:
 * redis-py's test_bloom.py (test_create's CF lines, test_cf_add_and_insert, test_cf_exists_and_del),
 * mirrored command for command with ioredis, and node-redis's @redis/bloom (its own `cf` commands and
 * reply transforms) through a real node-redis client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { RESP_TYPES, createClient } from 'redis'
import { startServer, type RunningServer } from '../../helpers/start-server.js'

let running: RunningServer
let client: Redis

beforeAll(async () => {
  running = await startServer()
  client = new Redis({ port: running.port, host: '127.0.0.1' })
})

afterAll(async () => {
  client.disconnect()
  await running.stop()
})

/** redis-py's info() on RESP2: the flat array as a dict. */
async function info(key: string): Promise<Record<string, unknown>> {
  const flat = (await client.call('CF.INFO', key)) as unknown[]
  const out: Record<string, unknown> = {}
  for (let i = 0; i < flat.length; i += 2) out[String(flat[i])] = flat[i + 1]
  return out
}

describe("redis-py's CF tests, mirrored", () => {
  it('test_create (CF lines)', async () => {
    expect(await client.call('CF.RESERVE', 'cuckoo', '1000')).toBe('OK')
    expect(await client.call('CF.RESERVE', 'cuckoo_e', '1000', 'EXPANSION', '1')).toBe('OK')
    expect(await client.call('CF.RESERVE', 'cuckoo_bs', '1000', 'BUCKETSIZE', '4')).toBe('OK')
    expect(await client.call('CF.RESERVE', 'cuckoo_mi', '1000', 'MAXITERATIONS', '10')).toBe('OK')
    await client.call('FLUSHALL')
  })

  it('test_cf_add_and_insert', async () => {
    expect(await client.call('CF.RESERVE', 'cuckoo', '1000')).toBe('OK')
    expect(await client.call('CF.ADD', 'cuckoo', 'filter')).toBe(1)
    expect(await client.call('CF.ADDNX', 'cuckoo', 'filter')).toBe(0)
    expect(await client.call('CF.ADDNX', 'cuckoo', 'newItem')).toBe(1)
    expect(await client.call('CF.INSERT', 'captest', 'ITEMS', 'foo')).toEqual([1])
    expect(await client.call('CF.INSERT', 'captest', 'CAPACITY', '1000', 'ITEMS', 'foo')).toEqual([1])
    expect(await client.call('CF.INSERTNX', 'captest', 'ITEMS', 'bar')).toEqual([1])
    expect(await client.call('CF.INSERTNX', 'captest', 'NOCREATE', 'ITEMS', 'food')).toEqual([1])
    expect(await client.call('CF.INSERTNX', 'captest', 'ITEMS', 'foo', 'bar', 'baz')).toEqual([0, 0, 1])
    expect(await client.call('CF.INSERTNX', 'captest', 'CAPACITY', '1000', 'ITEMS', 'bar')).toEqual([0])
    expect(await client.call('CF.INSERT', 'empty1', 'CAPACITY', '1000', 'ITEMS', 'foo')).toEqual([1])
    expect(await client.call('CF.INSERTNX', 'empty2', 'CAPACITY', '1000', 'ITEMS', 'bar')).toEqual([1])
    const captest = await info('captest')
    expect([
      captest['Number of items inserted'],
      captest['Number of items deleted'],
      captest['Number of filters'],
    ]).toEqual([5, 0, 1])
    await client.call('FLUSHALL')
  })

  it('test_cf_exists_and_del', async () => {
    expect(await client.call('CF.RESERVE', 'cuckoo', '1000')).toBe('OK')
    expect(await client.call('CF.ADD', 'cuckoo', 'filter')).toBe(1)
    expect(await client.call('CF.EXISTS', 'cuckoo', 'filter')).toBe(1)
    expect(await client.call('CF.EXISTS', 'cuckoo', 'notexist')).toBe(0)
    expect(await client.call('CF.COUNT', 'cuckoo', 'filter')).toBe(1)
    expect(await client.call('CF.COUNT', 'cuckoo', 'notexist')).toBe(0)
    expect(await client.call('CF.DEL', 'cuckoo', 'filter')).toBe(1)
    expect(await client.call('CF.COUNT', 'cuckoo', 'filter')).toBe(0)
    await client.call('FLUSHALL')
  })
})

describe("node-redis's @redis/bloom cf commands", () => {
  it('reserve, add, addNX, insert, insertNX, exists, mExists, count, del, info, scanDump and loadChunk', async () => {
    const redis = createClient({ socket: { port: running.port, host: '127.0.0.1' } })
    await redis.connect()
    try {
      expect(await redis.cf.reserve('n', 4, { BUCKETSIZE: 2, MAXITERATIONS: 20, EXPANSION: 1 })).toBe('OK')
      expect(await redis.cf.scanDump('n', 0)).toEqual({ iterator: 0, chunk: null })
      // Replies as this node-redis version hands them over on RESP2 (integers, the flat CF.INFO array).
      expect(await redis.cf.add('n', 'item')).toBe(1)
      expect(await redis.cf.addNX('n', 'item')).toBe(0)
      expect(await redis.cf.insert('n', ['a', 'b'], { CAPACITY: 100, NOCREATE: true })).toEqual([1, 1])
      expect(await redis.cf.insertNX('n2', ['a', 'a'], { CAPACITY: 100 })).toEqual([1, 0])
      expect(await redis.cf.exists('n', 'item')).toBe(1)
      expect(await redis.cf.mExists('n', ['item', 'missing'])).toEqual([1, 0])
      expect(await redis.cf.count('n', 'item')).toBe(1)
      expect(await redis.cf.del('n', 'item')).toBe(1)
      expect(await redis.cf.info('n')).toEqual([
        'Size',
        60,
        'Number of buckets',
        2,
        'Number of filters',
        1,
        'Number of items inserted',
        2,
        'Number of items deleted',
        1,
        'Bucket size',
        2,
        'Expansion rate',
        1,
        'Max iterations',
        20,
      ])
      const buffers = redis.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer })
      const chunks: { iterator: number; chunk: Buffer }[] = []
      for (let iterator = 0; ;) {
        const reply = (await buffers.cf.scanDump('n', iterator)) as unknown as {
          iterator: number
          chunk: Buffer | null
        }
        if (reply.iterator === 0 || reply.chunk === null) break
        chunks.push({ iterator: reply.iterator, chunk: reply.chunk })
        iterator = reply.iterator
      }
      for (const { iterator, chunk } of chunks) expect(await redis.cf.loadChunk('copy', iterator, chunk)).toBe('OK')
      expect(await redis.cf.mExists('copy', ['a', 'b', 'item'])).toEqual([1, 1, 0])
    } finally {
      redis.destroy()
    }
  })
})
