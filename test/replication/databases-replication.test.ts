/**
 * Databases and replication: the live stream carries a SELECT before a write of another database
 * than the last one sent, byte for byte as redis-server 7.0.15's stream (a raw replica reads both),
 * the full-sync payload carries each key's database, and a bfs replica ends with every key in its
 * database, by the payload and by the stream.
 */
import { readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { makeTempDir } from '../helpers/temp-dir.js'
import type { Config } from '../../src/runtime/config.js'
import { startRedisServer } from '../helpers/redis-server.js'
import { RawClient, encodeCommand } from '../helpers/resp.js'
import { infoFields, until } from '../helpers/replication-info.js'

const cleanups: (() => Promise<unknown> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function node(config: Partial<Config> = {}): Promise<RunningServer> {
  const running = await startServer({ 'repl-diskless-sync-delay': 0, ...config })
  cleanups.push(() => running.stop())
  return running
}

async function linkUp(replica: Redis): Promise<void> {
  await until(
    async () => (await infoFields(replica, 'replication')).get('master_link_status') === 'up',
    'master_link_status:up',
  )
}

function open(port: number): Redis {
  const client = new Redis({ port, host: '127.0.0.1' })
  cleanups.push(() => client.disconnect())
  return client
}

/** A raw replica: the handshake, PSYNC ? -1, the diskless payload skipped; its socket reads the stream next. */
async function rawReplica(port: number): Promise<RawClient> {
  const link = await RawClient.connect(port)
  cleanups.push(() => link.close())
  link.write(encodeCommand(['REPLCONF', 'capa', 'eof', 'capa', 'psync2']))
  expect((await link.read(5)).toString('latin1')).toBe('+OK\r\n')
  link.write(encodeCommand(['PSYNC', '?', '-1']))
  let head = (await link.readUntil((bytes) => /\$EOF:[0-9a-f]{40}\r\n/.test(bytes.toString('latin1')))).toString(
    'latin1',
  )
  const mark = /\$EOF:([0-9a-f]{40})\r\n/.exec(head)![1]!
  head = head.slice(head.indexOf(mark) + 42)
  while (!head.includes(mark)) head += (await link.readUntil((bytes) => bytes.length > 0)).toString('latin1')
  const rest = head.slice(head.indexOf(mark) + 40)
  expect(rest).toBe('') // nothing written yet
  await online(port, link)
  return link
}

/**
 * Waits until the master lists the raw replica online, ACKing meanwhile. redis-server's full sync
 * ends only once it has reaped the child that wrote the payload (its cron, after the last byte was
 * sent), and a FLUSHALL before then kills that child and closes the replica's link (redis 7.0
 * flushAllDataAndResetRDB → killRDBChild, then "SYNC failed"); bfs puts it online at its first ACK.
 */
async function online(port: number, link: RawClient): Promise<void> {
  const admin = open(port)
  await until(async () => {
    link.write(encodeCommand(['REPLCONF', 'ACK', '0']))
    return /\r\nslave0:[^\r]*,state=online,/.test((await admin.info('replication')) as string)
  }, 'the raw replica online')
}

/**
 * The first `length` bytes of the stream. redis starts an online diskless replica's stream at its
 * next ACK (repl_start_cmd_stream_on_ack): it ACKs until the stream comes.
 */
async function streamOf(link: RawClient, length: number): Promise<Buffer> {
  for (let attempt = 0; ; attempt++) {
    link.write(encodeCommand(['REPLCONF', 'ACK', '0']))
    try {
      const stream = await link.read(length, 500)
      if (link.closed && stream.length < length)
        throw new Error(`the master closed the link after ${JSON.stringify(stream.toString('latin1'))}`)
      return stream
    } catch (error) {
      if (attempt === 40 || link.closed) throw error
    }
  }
}

/** Writes in several databases, from two clients, a transaction among them (commands redis has too). */
async function writes(port: number): Promise<void> {
  const a = open(port)
  const b = open(port)
  await a.select(1)
  await a.call('FLUSHDB')
  await a.call('FLUSHDB')
  await b.call('SWAPDB', '0', '1')
  await a.multi().call('FLUSHDB').select(2).call('FLUSHDB').exec()
  await a.call('FLUSHALL')
  await b.call('FLUSHDB')
}

const record = (...args: string[]): string => encodeCommand(args).toString('latin1')

const EXPECTED_STREAM = [
  record('SELECT', '1'),
  record('FLUSHDB'),
  record('FLUSHDB'),
  record('SELECT', '0'),
  record('SWAPDB', '0', '1'),
  // MULTI in its first command's database, EXEC in its last one's (redis 7.0 propagatePendingCommands).
  record('SELECT', '1'),
  record('MULTI'),
  record('FLUSHDB'),
  record('SELECT', '2'),
  record('FLUSHDB'),
  record('EXEC'),
  record('FLUSHALL'),
  record('SELECT', '0'),
  record('FLUSHDB'),
].join('')

describe('the replication stream', () => {
  it("carries SELECT as redis-server 7.0.15's does, byte for byte", async () => {
    const bfs = await node()
    const redis = await startRedisServer()
    cleanups.push(() => redis.stop())
    await open(redis.port).config('SET', 'repl-diskless-sync-delay', '0')
    const streams: string[] = []
    for (const port of [bfs.port, redis.port]) {
      const link = await rawReplica(port)
      await writes(port)
      streams.push((await streamOf(link, EXPECTED_STREAM.length)).toString('latin1'))
    }
    expect(streams[0]).toBe(EXPECTED_STREAM)
    expect(streams[1]).toBe(EXPECTED_STREAM)
  })
})

describe('bfs replicating bfs', () => {
  it('the full sync and the stream put every key in its database, with its expiry', async () => {
    const [master, replica] = [await node(), await node()]
    const writer = open(master.port)
    const expireAt = String(Date.now() + 3_600_000)
    await writer.call('BF.ADD', 'k', 'in-0')
    await writer.select(4)
    await writer.call('BF.ADD', 'k', 'in-4')
    await writer.call('PEXPIREAT', 'k', expireAt)
    await writer.select(9)
    await writer.call('BF.ADD', 'nine', 'x')
    const reader = open(replica.port)
    await reader.call('REPLICAOF', '127.0.0.1', String(master.port))
    await linkUp(reader)
    // The stream: writes in other databases, a MOVE and a SWAPDB.
    await writer.call('BF.ADD', 'nine', 'y')
    await writer.select(2)
    await writer.call('BF.ADD', 'two', 'z')
    await writer.call('MOVE', 'two', '3')
    await writer.call('SWAPDB', '9', '10')
    expect(await writer.call('WAIT', '1', '10000')).toBe(1)
    expect(await reader.call('INFO', 'keyspace')).toMatch(
      /^# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\ndb3:keys=1,expires=0,avg_ttl=0\r\ndb4:keys=1,expires=1,avg_ttl=\d+\r\ndb10:keys=1,expires=0,avg_ttl=0\r\n$/,
    )
    expect(await reader.call('BF.MEXISTS', 'k', 'in-0', 'in-4')).toEqual([1, 0])
    await reader.select(4)
    expect(await reader.call('BF.MEXISTS', 'k', 'in-0', 'in-4')).toEqual([0, 1])
    expect(await reader.call('PEXPIRETIME', 'k')).toBe(Number(expireAt))
    await reader.select(10)
    expect(await reader.call('BF.MEXISTS', 'nine', 'x', 'y')).toEqual([1, 1])
    await reader.select(3)
    expect(await reader.call('BF.EXISTS', 'two', 'z')).toBe(1)
  })

  it('a window filter (APBF.*) travels in its database, in the full sync and in the stream', async () => {
    const [master, replica] = [await node(), await node()]
    const writer = open(master.port)
    await writer.select(7)
    expect(await writer.call('APBF.RESERVE', 'win', 'COUNT', '0.01', '100')).toBe('OK')
    expect(await writer.call('APBF.ADD', 'win', 'synced')).toEqual([1])
    await writer.select(8)
    await writer.call('BF.ADD', 'bloom', 'x')
    const reader = open(replica.port)
    await reader.call('REPLICAOF', '127.0.0.1', String(master.port))
    await linkUp(reader)
    await writer.select(7)
    expect(await writer.call('APBF.ADD', 'win', 'streamed')).toEqual([1])
    expect(await writer.call('WAIT', '1', '10000')).toBe(1)
    expect(await reader.call('INFO', 'keyspace')).toMatch(
      /^# Keyspace\r\ndb7:keys=1,expires=0,avg_ttl=0\r\ndb8:keys=1,expires=0,avg_ttl=0\r\n$/,
    )
    await reader.select(7)
    expect(await reader.call('TYPE', 'win')).toBe('APBFcTYPE')
    expect(await reader.call('APBF.EXISTS', 'win', 'synced', 'streamed', 'never')).toEqual([1, 1, 0])
    await reader.select(8)
    expect(await reader.call('BF.EXISTS', 'bloom', 'x')).toBe(1)
  })

  it('after a cut link, +CONTINUE goes on in the database the stream was in', async () => {
    const [master, replica] = [await node(), await node()]
    const writer = open(master.port)
    const reader = open(replica.port)
    await reader.call('REPLICAOF', '127.0.0.1', String(master.port))
    await linkUp(reader)
    await writer.select(3)
    await writer.call('BF.ADD', 'three', 'before-cut')
    expect(await writer.call('WAIT', '1', '10000')).toBe(1)
    expect(await reader.call('CLIENT', 'KILL', 'TYPE', 'master')).toBe(1)
    // The stream after the cut has no SELECT: the master's last record was of database 3 already.
    await writer.call('BF.ADD', 'three', 'after-cut')
    await until(
      async () => (await infoFields(open(master.port), 'stats')).get('sync_partial_ok') === '1',
      'sync_partial_ok:1',
    )
    expect(await writer.call('WAIT', '1', '10000')).toBe(1)
    await reader.select(3)
    expect(await reader.call('BF.MEXISTS', 'three', 'before-cut', 'after-cut')).toEqual([1, 1])
    expect(await reader.dbsize()).toBe(1)
    await reader.select(0)
    expect(await reader.dbsize()).toBe(0)
  })

  it('a replica restarted from its final snapshot continues in the database the stream was in', async () => {
    const master = await node()
    const dir = makeTempDir()
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const config = { dir, appendonly: true, replicaof: `127.0.0.1 ${master.port}` }
    let replica = await startServer(config)
    // Synced first: an add made before the full sync's point travels in the payload, not the
    // stream, and the stream would then be in no database yet (with I/O threads the sync is
    // slower, and the MANIFEST check below failed by chance once that way).
    await linkUp(open(replica.port))
    const writer = open(master.port)
    await writer.select(5)
    await writer.call('BF.ADD', 'five', 'before-restart')
    expect(await writer.call('WAIT', '1', '10000')).toBe(1)
    await replica.server.close()
    // The final save recorded the stream's database with the position (redis repl-stream-db).
    expect(readFileSync(path.join(dir, 'snapshot', 'MANIFEST'), 'latin1')).toMatch(/\nrepl-offset \d+\nrepl-db 5\n/)
    await writer.call('BF.ADD', 'five', 'while-down')
    replica = await startServer(config)
    cleanups.push(() => replica.stop())
    const reader = open(replica.port)
    await linkUp(reader)
    expect((await infoFields(open(master.port), 'stats')).get('sync_partial_ok')).toBe('1')
    await writer.call('BF.ADD', 'five', 'after-restart')
    expect(await writer.call('WAIT', '1', '10000')).toBe(1)
    await reader.select(5)
    expect(await reader.call('BF.MEXISTS', 'five', 'before-restart', 'while-down', 'after-restart')).toEqual([1, 1, 1])
    await reader.select(0)
    expect(await reader.dbsize()).toBe(0)
  })

  it('a replica with fewer databases than the payload needs refuses it and says why', async () => {
    const [master, replica] = [await node(), await node({ databases: 4 })]
    const writer = open(master.port)
    await writer.select(7)
    await writer.call('BF.ADD', 'seven', 'x')
    await open(replica.port).call('REPLICAOF', '127.0.0.1', String(master.port))
    await until(
      async () =>
        replica.logs.some((line) => line.includes('the payload holds database 7, and this server has 4 (databases)')),
      'the refusal in the log',
    )
  })
})
