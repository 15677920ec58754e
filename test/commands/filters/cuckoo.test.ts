/**
 * CF.* over real sockets beyond the recorded reference (test/commands/filters/cuckoo-reference-replies.test.ts):
 * where RedisBloom 2.4.23 crashes or loses data bfs answers an error and keeps every item,
 * CF.SCANDUMP / CF.LOADCHUNK round trips across sub-filters and 16 MiB chunks, the size limits, and
 * the keyspace commands on a Cuckoo key.
 */
import { describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { exchange } from '../../helpers/resp.js'
import { serverPerTest } from '../../helpers/server-hooks.js'
import { replyOrError } from '../../helpers/reply-or-error.js'
import type { Config } from '../../../src/runtime/config.js'

const { start, connect } = serverPerTest()
const clients: Redis[] = []

async function redis(config: Partial<Config> = {}): Promise<{ client: Redis; port: number }> {
  const { port } = await start(config)
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true })
  await client.connect()
  clients.push(client)
  return { client, port }
}

function header(fields: { buckets?: bigint; filters?: bigint; bucketSize?: number; expansion?: number }): Buffer {
  const bytes = Buffer.alloc(38)
  bytes.writeBigUInt64LE(1n, 0)
  bytes.writeBigUInt64LE(fields.buckets ?? 2n, 8)
  bytes.writeBigUInt64LE(fields.filters ?? 1n, 24)
  bytes.writeUInt16LE(fields.bucketSize ?? 2, 32)
  bytes.writeUInt16LE(20, 34)
  bytes.writeUInt16LE(fields.expansion ?? 1, 36)
  return bytes
}

/** Every chunk of a CF.SCANDUMP, with its cursor. */
async function scandump(client: Redis, key: string): Promise<[number, Buffer][]> {
  const chunks: [number, Buffer][] = []
  let cursor = 0
  for (;;) {
    const [next, data] = (await client.callBuffer('CF.SCANDUMP', key, String(cursor))) as [number, Buffer | null]
    if (next === 0 || data === null) return chunks
    chunks.push([next, data])
    cursor = next
  }
}

async function close(): Promise<void> {
  for (const client of clients.splice(0)) client.disconnect()
}

describe('where RedisBloom 2.4.23 crashes or loses data', () => {
  it("answers an option keyword as CF.RESERVE's last argument with an error (RedisBloom reads past its arguments and crashes)", async () => {
    const { port } = await start()
    const raw = await connect(port)
    expect(await exchange(raw, [['CF.RESERVE', 'kept', '100']], '+OK\r\n')).toBe('+OK\r\n')
    const cases: [string[], string][] = [
      [['CF.RESERVE', 'k', '100', 'x', 'BUCKETSIZE'], "-Couldn't parse BUCKETSIZE\r\n"],
      [['CF.RESERVE', 'k', '100', 'x', 'maxiterations'], "-Couldn't parse MAXITERATIONS\r\n"],
      [['CF.RESERVE', 'k', '100', 'BUCKETSIZE', '4', 'x', 'Expansion'], "-Couldn't parse EXPANSION\r\n"],
      [['EXISTS', 'kept', 'k'], ':1\r\n'],
    ]
    for (const [command, reply] of cases) expect(await exchange(raw, [command], reply)).toBe(reply)
  })

  it('refuses a chunk past the end of the last sub-filter and keeps every item (RedisBloom overwrites fingerprints)', async () => {
    const { client } = await redis()
    await client.call('CF.RESERVE', 'k', '1000')
    const items = Array.from({ length: 300 }, (_, i) => `item${i}`)
    await client.call('CF.INSERT', 'k', 'ITEMS', ...items)
    for (const cursor of ['1039', '1030', '1026']) {
      expect(await replyOrError(client, ['CF.LOADCHUNK', 'k', cursor, 'abcd'])).toBe("Couldn't load chunk!")
    }
    expect(await client.call('CF.MEXISTS', 'k', ...items)).toEqual(items.map(() => 1))
    expect(await client.call('CF.LOADCHUNK', 'k', '1025', 'abcd')).toBe('OK') // the last four bytes: inside
    await close()
  })

  it('refuses headers RedisBloom takes and then loses items with, or truncates, or cannot allocate', async () => {
    const { client } = await redis({ 'max-filter-bytes': 1024 * 1024 })
    const cases: [Buffer, string][] = [
      [header({ expansion: 3 }), "Couldn't create filter!"],
      [header({ filters: 65537n }), "Couldn't create filter!"],
      [header({ filters: 2n, expansion: 0 }), "Couldn't create filter!"],
      [header({ buckets: 3n }), "Couldn't create filter!"],
      [header({ buckets: 2n ** 40n }), 'ERR Insufficient memory to create filter'],
      [header({ buckets: 2n ** 20n }), 'ERR Insufficient memory to create filter'],
      [header({ buckets: 2n ** 10n, filters: 20n, expansion: 2 }), 'ERR Insufficient memory to create filter'],
    ]
    for (const [bytes, reply] of cases)
      expect(await replyOrError(client, ['CF.LOADCHUNK', 'h', '1', bytes])).toBe(reply)
    expect(await client.call('EXISTS', 'h')).toBe(0)
    expect(await client.call('CF.LOADCHUNK', 'h', '1', header({ buckets: 2n ** 10n, filters: 3n, expansion: 2 }))).toBe(
      'OK',
    )
    expect(await client.call('CF.DEBUG', 'h')).toBe(
      'bktsize:2 buckets:1024 items:1 deletes:0 filters:3 max_iterations:20 expansion:2',
    )
    await close()
  })
})

describe('CF.SCANDUMP and CF.LOADCHUNK', () => {
  it('copy a grown filter chunk by chunk: the same replies and the same dump', async () => {
    const { client } = await redis()
    await client.call('CF.RESERVE', 'src', '4', 'BUCKETSIZE', '1', 'MAXITERATIONS', '1', 'EXPANSION', '2')
    const items = Array.from({ length: 200 }, (_, i) => `g${i}`)
    await client.call('CF.INSERT', 'src', 'ITEMS', ...items)
    await client.call('CF.DEL', 'src', 'g3')
    const dump = await scandump(client, 'src')
    expect(dump.length).toBeGreaterThan(3)
    await client.call('CF.LOADCHUNK', 'dst', '1', dump[0]![1])
    for (const [cursor, data] of dump.slice(1))
      expect(await client.call('CF.LOADCHUNK', 'dst', String(cursor), data)).toBe('OK')
    expect(await client.call('CF.INFO', 'dst')).toEqual(await client.call('CF.INFO', 'src'))
    expect(await scandump(client, 'dst')).toEqual(dump)
    const probes = [...items, 'x1', 'x2', 'x3']
    expect(await client.call('CF.MEXISTS', 'dst', ...probes)).toEqual(await client.call('CF.MEXISTS', 'src', ...probes))
    expect(await client.call('CF.ADD', 'dst', 'new')).toBe(1)
    expect(await client.call('CF.ADD', 'src', 'new')).toBe(1)
    expect(await scandump(client, 'dst')).toEqual(await scandump(client, 'src'))
    await close()
  })

  it('sends a sub-filter over 16 MiB in 16 MiB pieces', async () => {
    const { client } = await redis()
    await client.call('CF.RESERVE', 'big', String(2 ** 25), 'BUCKETSIZE', '1')
    await client.call('CF.INSERT', 'big', 'ITEMS', 'a', 'b', 'c')
    const dump = await scandump(client, 'big')
    expect(dump.map(([cursor, data]) => [cursor, data.length])).toEqual([
      [1, 38],
      [1 + 2 ** 24, 2 ** 24],
      [1 + 2 ** 25, 2 ** 24],
    ])
    for (const [cursor, data] of dump) await client.call('CF.LOADCHUNK', 'copy', String(cursor), data)
    expect(await client.call('CF.MEXISTS', 'copy', 'a', 'b', 'c')).toEqual([1, 1, 1])
    await close()
  })
})

describe('limits and keys', () => {
  it('bounds a new filter by max-filter-bytes and maxmemory, and a growth by max-filter-bytes', async () => {
    const { client } = await redis({ 'max-filter-bytes': 4096 })
    expect(await replyOrError(client, ['CF.RESERVE', 'k', '10000'])).toBe('ERR Insufficient memory to create filter')
    expect(await replyOrError(client, ['CF.INSERT', 'k', 'CAPACITY', '10000', 'ITEMS', 'a'])).toBe(
      'ERR Insufficient memory to create filter',
    )
    await client.call('CF.RESERVE', 'g', '2048', 'BUCKETSIZE', '1', 'MAXITERATIONS', '1', 'EXPANSION', '2')
    const replies = (await client.call(
      'CF.INSERT',
      'g',
      'ITEMS',
      ...Array.from({ length: 3000 }, (_, i) => `i${i}`),
    )) as number[]
    expect(replies).toContain(-1)
    expect(await client.call('CF.DEBUG', 'g')).toMatch(/ filters:1 /)
    let refused: unknown
    for (let i = 0; refused === undefined; i++) {
      const reply = await replyOrError(client, ['CF.ADD', 'g', `more${i}`])
      if (reply !== 1) refused = reply
    }
    expect(refused).toBe('Memory allocation failure')
    await client.call('CONFIG', 'SET', 'max-filter-bytes', '0')
    await client.call('CONFIG', 'SET', 'maxmemory', '1000000')
    expect(String(await replyOrError(client, ['CF.RESERVE', 'm', '100000000']))).toMatch(/^OOM /)
    await close()
  })

  it('answers TYPE MBbloomCF and follows DEL, EXISTS and RENAME', async () => {
    const { client } = await redis()
    await client.call('CF.ADD', 'c', 'x')
    expect(await client.call('TYPE', 'c')).toBe('MBbloomCF')
    expect(await client.call('RENAME', 'c', 'd')).toBe('OK')
    expect(await client.call('CF.EXISTS', 'd', 'x')).toBe(1)
    expect(await client.call('EXISTS', 'c', 'd')).toBe(1)
    expect(await client.call('DEL', 'd')).toBe(1)
    expect(await replyOrError(client, ['CF.INFO', 'd'])).toBe('ERR not found')
    await close()
  })

  it("puts CF.* in ACL @cuckoo (RedisBloom 8's category), not @bloom, with @read/@write by flags", async () => {
    const { client, port } = await redis()
    const cuckoo = ((await client.call('ACL', 'CAT', 'cuckoo')) as string[]).sort()
    expect(cuckoo).toEqual([
      'cf.add',
      'cf.addnx',
      'cf.compact',
      'cf.count',
      'cf.debug',
      'cf.del',
      'cf.exists',
      'cf.info',
      'cf.insert',
      'cf.insertnx',
      'cf.loadchunk',
      'cf.mexists',
      'cf.reserve',
      'cf.scandump',
    ])
    expect((await client.call('ACL', 'CAT', 'bloom')) as string[]).not.toContain('cf.add')
    expect((await client.call('ACL', 'CAT', 'write')) as string[]).toContain('cf.compact')
    expect((await client.call('ACL', 'CAT', 'read')) as string[]).toContain('cf.exists')
    await client.call('ACL', 'SETUSER', 'cuckoos', 'on', '>pw', '~*', '+@cuckoo')
    const user = new Redis({ port, host: '127.0.0.1', username: 'cuckoos', password: 'pw', lazyConnect: true })
    await user.connect()
    clients.push(user)
    expect(await user.call('CF.ADD', 'c', 'x')).toBe(1)
    expect(String(await replyOrError(user, ['BF.ADD', 'b', 'x']))).toMatch(/^NOPERM/)
    await close()
  })

  it("answers MEMORY USAGE as RedisBloom's CFMemUsage (CF.INFO Size) plus the key", async () => {
    const { client } = await redis()
    await client.call('CF.RESERVE', 'c', '1000')
    await client.call('BF.RESERVE', 'b', '0.01', '1000')
    const bloomSize = ((await client.call('BF.INFO', 'b', 'SIZE')) as number[])[0]!
    const overhead = Number(await client.call('MEMORY', 'USAGE', 'b')) - bloomSize
    expect(await client.call('MEMORY', 'USAGE', 'c')).toBe(1080 + overhead)
    await close()
  })
})
