/**
 * DUMP / RESTORE / RESTORE-ASKING over real sockets, beside a real redis-server 7.0.15: a bfs
 * payload round-trips byte for byte (Bloom and window filters), its TTL options behave as redis's,
 * every refusal has redis's words (a bfs payload given to redis and a redis payload given to bfs
 * are both "DUMP payload version or checksum are wrong"), and a restored filter comes back after a
 * restart (the append-only log) and reaches a replica.
 */
import { rmSync } from 'node:fs'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { besideRedis } from '../../helpers/beside-redis.js'
import { startServer, type RunningServer } from '../../helpers/start-server.js'
import { makeTempDir } from '../../helpers/temp-dir.js'
import { infoFields, until } from '../../helpers/replication-info.js'
import { crc64, writeCrc64 } from '../../../src/format/crc64.js'
import { replyOrError } from '../../helpers/reply-or-error.js'

const servers = besideRedis()
const clients: Redis[] = []
const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
afterAll(() => {
  for (const client of clients) client.disconnect()
})

function open(port: number): Redis {
  const client = new Redis({ port, host: '127.0.0.1' })
  clients.push(client)
  return client
}

/** The reply (bulk replies as Buffers), or the error's text, of a command. */
function answer(client: Redis, ...args: (string | Buffer)[]): Promise<unknown> {
  return replyOrError(client, args, true)
}

/** What bfs and redis-server answer to the same command (replies as text). */
async function both(...args: (string | Buffer)[]): Promise<[string, string]> {
  const text = (reply: unknown): string => (Buffer.isBuffer(reply) ? reply.toString('latin1') : String(reply))
  return [text(await answer(open(servers.bfs.port), ...args)), text(await answer(open(servers.redis.port), ...args))]
}

describe('DUMP and RESTORE', () => {
  it('round-trip a Bloom filter and a window filter byte for byte, the items found again', async () => {
    const bfs = open(servers.bfs.port)
    await bfs.call('BF.RESERVE', 'bloom', '0.001', '1000', 'EXPANSION', '3')
    for (let i = 0; i < 3000; i++) await bfs.call('BF.ADD', 'bloom', `item:${i}`) // three layers
    await bfs.call('APBF.RESERVE', 'window', 'COUNT', '0.01', '1000')
    await bfs.call('APBF.ADD', 'window', 'w1')
    for (const key of ['bloom', 'window']) {
      const payload = (await bfs.callBuffer('DUMP', key)) as Buffer
      expect(await bfs.call('RESTORE', `${key}:copy`, '0', payload)).toBe('OK')
      expect(((await bfs.callBuffer('DUMP', `${key}:copy`)) as Buffer).equals(payload)).toBe(true)
      expect(await bfs.call('TYPE', `${key}:copy`)).toBe(await bfs.call('TYPE', key))
    }
    expect(await bfs.call('BF.MEXISTS', 'bloom:copy', 'item:0', 'item:2999')).toEqual([1, 1])
    expect(await bfs.call('BF.INFO', 'bloom:copy', 'ITEMS')).toEqual(await bfs.call('BF.INFO', 'bloom', 'ITEMS'))
    expect(await bfs.call('APBF.EXISTS', 'window:copy', 'w1')).toEqual([1])
    expect(await bfs.call('DUMP', 'missing')).toBeNull()
  })

  it('refuse what redis refuses, with its words and in its order', async () => {
    await open(servers.bfs.port).call('BF.ADD', 'taken', 'x')
    await open(servers.redis.port).call('SET', 'taken', 'x')
    const redisPayload = (await open(servers.redis.port).callBuffer('DUMP', 'taken')) as Buffer
    for (const args of [
      ['RESTORE', 'k', '0', 'xx'],
      ['RESTORE', 'k', '-1', 'xx'],
      ['RESTORE', 'k', 'x', 'xx'],
      ['RESTORE', 'taken', '0', 'xx'],
      ['RESTORE', 'taken', '-1', 'xx'],
      ['RESTORE', 'k', '0', 'xx', 'IDLETIME', '-1'],
      ['RESTORE', 'k', '0', 'xx', 'IDLETIME', 'x'],
      ['RESTORE', 'k', '0', 'xx', 'FREQ', '256'],
      ['RESTORE', 'k', '0', 'xx', 'IDLETIME', '1', 'FREQ', '1'],
      ['RESTORE', 'k', '0', 'xx', 'FOO'],
      ['RESTORE', 'k', '0'],
      ['RESTORE-ASKING', 'k', '0', 'xx'],
      ['DUMP'],
      ['DUMP', 'a', 'b'],
    ]) {
      const [ours, theirs] = await both(...args)
      expect(ours, args.join(' ')).toBe(theirs)
    }
    // Each refuses the other's payload the same way (redis: its version is past RDB_VERSION).
    const bfsPayload = (await open(servers.bfs.port).callBuffer('DUMP', 'taken')) as Buffer
    expect(await answer(open(servers.bfs.port), 'RESTORE', 'k', '0', redisPayload)).toBe(
      'ERR DUMP payload version or checksum are wrong',
    )
    expect(await answer(open(servers.redis.port), 'RESTORE', 'k', '0', bfsPayload)).toBe(
      'ERR DUMP payload version or checksum are wrong',
    )
    // A damaged byte: the checksum.
    const damaged = Buffer.from(bfsPayload)
    damaged[20] ^= 1
    expect(await answer(open(servers.bfs.port), 'RESTORE', 'k', '0', damaged)).toBe(
      'ERR DUMP payload version or checksum are wrong',
    )
    // A sound frame around bad content (an unknown kind, a cut file): "Bad data format", as redis for a bad object.
    for (const mutate of [
      (p: Buffer) => {
        p[0] = 0x07
      },
      (p: Buffer) => {
        p[10] ^= 0xff
      },
    ]) {
      const reframed = Buffer.from(bfsPayload)
      mutate(reframed)
      writeCrc64(
        new DataView(reframed.buffer, reframed.byteOffset, reframed.byteLength),
        reframed.length - 8,
        crc64(reframed, 0, reframed.length - 8),
      )
      expect(await answer(open(servers.bfs.port), 'RESTORE', 'k', '0', reframed)).toBe('ERR Bad data format')
    }
    expect(await open(servers.bfs.port).exists('k')).toBe(0)
  })

  it('REPLACE, a TTL in ms, ABSTTL, and an ABSTTL already past (no key), as redis', async () => {
    const bfs = open(servers.bfs.port)
    await bfs.call('BF.ADD', 'src', 'a')
    const payload = (await bfs.callBuffer('DUMP', 'src')) as Buffer
    expect(await bfs.call('RESTORE', 'ttl', '60000', payload)).toBe('OK')
    expect(await bfs.pttl('ttl')).toBeGreaterThan(50_000)
    const at = Date.now() + 120_000
    expect(await bfs.call('RESTORE', 'abs', String(at), payload, 'ABSTTL', 'IDLETIME', '10')).toBe('OK')
    expect(await bfs.call('PEXPIRETIME', 'abs')).toBe(at)
    expect(await bfs.call('RESTORE', 'past', '1', payload, 'ABSTTL')).toBe('OK')
    expect(await bfs.exists('past')).toBe(0)
    await bfs.call('BF.ADD', 'other', 'b')
    expect(await answer(bfs, 'RESTORE', 'other', '0', payload)).toBe('BUSYKEY Target key name already exists.')
    expect(await bfs.call('RESTORE', 'other', '0', payload, 'REPLACE', 'FREQ', '5')).toBe('OK')
    expect(await bfs.call('BF.MEXISTS', 'other', 'a', 'b')).toEqual([1, 0])
    expect(await bfs.call('RESTORE-ASKING', 'asked', '0', payload)).toBe('OK')
    expect(await bfs.call('BF.EXISTS', 'asked', 'a')).toBe(1)
  })

  it('a restored filter survives a restart (append-only log) and reaches a replica', async () => {
    const dir = makeTempDir()
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    let master: RunningServer = await startServer({ dir, appendonly: true })
    const replica = await startServer()
    cleanups.push(() => replica.stop())
    const replicaClient = open(replica.port)
    await replicaClient.call('REPLICAOF', '127.0.0.1', String(master.port))
    await until(
      async () => (await infoFields(replicaClient, 'replication')).get('master_link_status') === 'up',
      'link up',
    )
    let client = open(master.port)
    await client.call('BF.ADD', 'src', 'a')
    const payload = (await client.callBuffer('DUMP', 'src')) as Buffer
    const at = Date.now() + 3_600_000
    expect(await client.call('RESTORE', 'restored', '3600000', payload)).toBe('OK')
    expect(await client.call('WAIT', '1', '10000')).toBe(1)
    expect(((await replicaClient.callBuffer('DUMP', 'restored')) as Buffer).equals(payload)).toBe(true)
    // Propagated with the absolute expiry, as redis rewrites it: the replica agrees to the ms.
    expect(await replicaClient.call('PEXPIRETIME', 'restored')).toBe(await client.call('PEXPIRETIME', 'restored'))
    expect(Number(await client.call('PEXPIRETIME', 'restored'))).toBeLessThanOrEqual(at + 1000)
    client.disconnect()
    await master.stop()
    master = await startServer({ dir, appendonly: true })
    cleanups.push(() => master.stop())
    client = open(master.port)
    expect(((await client.callBuffer('DUMP', 'restored')) as Buffer).equals(payload)).toBe(true)
    expect(await client.pttl('restored')).toBeGreaterThan(3_000_000)
  })
})
