/**
 * What cluster clients that route by COMMAND read from it. redis-py's RedisCluster
 * (redis/_parsers/commands.py CommandsParser.get_keys) runs COMMAND once and takes a line's keys
 * from each row's first key, last key and step (COMMAND GETKEYS for a `movablekeys` row), and
 * refuses a command missing from the reply; go-redis's ClusterClient takes the row's first key
 * position and its `readonly` flag. Every BF.* and APBF.* row must give them the key, as RedisBloom
 * 2.4.23 registers its commands (`bf.add -1 write denyoom module 1 1 1`), and COMMAND INFO's key
 * specs, which newer clients read, must say the same as COMMAND GETKEYS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../../helpers/start-server.js'

/** A COMMAND row as ioredis parses a RESP2 reply: [name, arity, flags, first, last, step, categories, tips, key specs, subcommands]. */
type Row = [string, number, string[], number, number, number, string[], unknown[], unknown[], unknown[]]

/** redis-py CommandsParser.get_keys for a row without movablekeys: range(first, last + 1, step) over the line. */
function redisPyKeys(row: Row, line: readonly string[]): string[] | null {
  const [, , flags, first, last, step] = row
  if (flags.includes('movablekeys') || flags.includes('pubsub')) return null
  if (first === 0 && last === 0 && step === 0) return null
  const lastPos = last < 0 ? line.length - Math.abs(last) : last
  const keys: string[] = []
  for (let pos = first; pos <= lastPos; pos += step) keys.push(line[pos]!)
  return keys
}

/** A line a row accepts: its name, then `k1`, `k2`, ... (its arity's count; 4 at least when variadic). */
function lineFor(row: Row): string[] {
  const length = row[1] > 0 ? row[1] : Math.max(-row[1], 4)
  return [row[0], ...Array.from({ length: length - 1 }, (_, i) => `k${i + 1}`)]
}

/** Key spec rows as ioredis gives them: [flags, [...], begin_search, [...], find_keys, [...]]. */
function keySpecFlags(row: Row): string[][] {
  return (row[8] as unknown[][]).map((spec) => spec[1] as string[])
}

const BLOOM_READS = [
  'bf.exists',
  'bf.mexists',
  'bf.info',
  'bf.card',
  'bf.debug',
  'bf.scandump',
  'bfs.health',
  'apbf.exists',
  'apbf.info',
]
const BLOOM_WRITES = [
  'bf.reserve',
  'bf.add',
  'bf.madd',
  'bf.insert',
  'bf.loadchunk',
  'bf.load',
  'apbf.reserve',
  'apbf.add',
  'apbf.addat',
]

describe('COMMAND rows as cluster clients read them', () => {
  let bfs: RunningServer
  let client: Redis
  let rows: Map<string, Row>

  beforeAll(async () => {
    bfs = await startServer(
      {},
      {
        commands: [
          {
            name: 'EXT.TOUCH',
            arity: 2,
            flags: ['write'],
            keys: [1, 1, 1],
            handler: (ctx) => ctx.client.reply.simple('OK'),
          },
        ],
      },
    )
    client = new Redis({ port: bfs.port, lazyConnect: true })
    await client.connect()
    rows = new Map(((await client.call('COMMAND')) as Row[]).map((row) => [row[0], row]))
  })

  afterAll(async () => {
    client?.disconnect()
    await bfs?.stop()
  })

  it("RedisBloom 2.4.23's rows: arity -1, its flags, key 1 1 1; reads are readonly (go-redis sends those to replicas)", () => {
    expect(rows.get('bf.add')!.slice(0, 6)).toEqual(['bf.add', -1, ['write', 'denyoom', 'module'], 1, 1, 1])
    expect(rows.get('bf.exists')!.slice(0, 6)).toEqual(['bf.exists', -1, ['readonly', 'module', 'fast'], 1, 1, 1])
    for (const name of [...BLOOM_READS, ...BLOOM_WRITES]) {
      const row = rows.get(name)
      expect(row, name).toBeDefined()
      expect(row!.slice(3, 6), name).toEqual([1, 1, 1])
      expect(row![2].includes(BLOOM_READS.includes(name) ? 'readonly' : 'write'), name).toBe(true)
    }
    expect(rows.get('bf.merge')!.slice(0, 6)).toEqual(['bf.merge', -1, ['write', 'denyoom'], 1, -1, 1])
  })

  it("every command with keys: redis-py's keys from the row are COMMAND GETKEYS's, and its key specs find them too", async () => {
    const checked: string[] = []
    for (const row of rows.values()) {
      if (row[3] === 0 || row[2].includes('movablekeys')) continue
      const line = lineFor(row)
      const fromRow = redisPyKeys(row, line)
      const fromServer = await client.call('COMMAND', 'GETKEYS', ...line).catch((error: Error) => error.message)
      if (row[2].includes('pubsub')) {
        expect(fromRow, row[0]).toBeNull() // redis-py takes shard channels itself
        continue
      }
      expect(fromServer, row[0]).toEqual(fromRow)
      expect(row[8].length, `${row[0]} has key specs`).toBeGreaterThan(0)
      checked.push(row[0])
    }
    expect(checked).toEqual(
      expect.arrayContaining([...BLOOM_READS, ...BLOOM_WRITES, 'bf.merge', 'del', 'rename', 'ext.touch']),
    )
  })

  it("BF.MERGE's key specs: the destination is written, the sources read, as SUNIONSTORE's", async () => {
    expect(keySpecFlags(rows.get('bf.merge')!)).toEqual([
      ['OW', 'update'],
      ['RO', 'access'],
    ])
    expect(await client.call('COMMAND', 'GETKEYSANDFLAGS', 'bf.merge', 'dest', 'a', 'b')).toEqual([
      ['dest', ['OW', 'update']],
      ['a', ['RO', 'access']],
      ['b', ['RO', 'access']],
    ])
  })

  it('an extension command with keys has the key spec its row derives', () => {
    expect(rows.get('ext.touch')!.slice(3, 6)).toEqual([1, 1, 1])
    expect(keySpecFlags(rows.get('ext.touch')!)).toEqual([['RW', 'access', 'update']])
  })
})
