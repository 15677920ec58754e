/**
 * bfs as a replica, against a master's side played by a real TCP peer in the test (fake-master.ts):
 * the handshake byte for byte, the full sync in both framings, the stream applied and counted,
 * ACKs, reconnection with PSYNC <replid> <offset+1>, +CONTINUE with a new id, REPLICAOF NO ONE,
 * -READONLY, -MASTERDOWN, INFO's role:slave block and ROLE.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { makeTempDir } from '../helpers/temp-dir.js'
import { encodeCommand, RawClient } from '../helpers/resp.js'
import { infoFields, until } from '../helpers/replication-info.js'
import {
  buildPayload,
  FakeMaster,
  fullSyncDiskless,
  fullSyncSized,
  REPLID_A,
  REPLID_B,
  type FakeLink,
} from '../helpers/fake-master.js'
import type { Config } from '../../src/runtime/config.js'

const cleanups: (() => Promise<unknown> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function setup(
  config: Partial<Config> | ((masterPort: number) => Partial<Config>) = {},
): Promise<{ master: FakeMaster; replica: RunningServer; client: Redis }> {
  const master = await FakeMaster.start()
  cleanups.push(() => master.close())
  const replica = await startServer(typeof config === 'function' ? config(master.port) : config)
  cleanups.push(() => replica.stop())
  const client = new Redis({ port: replica.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 })
  client.on('error', () => {})
  cleanups.push(() => client.disconnect())
  return { master, replica, client }
}

const replicationInfo = (client: Redis): Promise<Map<string, string>> => infoFields(client, 'replication')

const linkUp = (client: Redis) =>
  until(async () => (await replicationInfo(client)).get('master_link_status') === 'up', 'master_link_status:up')

/** REPLICAOF to the fake master, full sync of `payload` at `offset`; returns the link. */
async function syncedReplica(master: FakeMaster, client: Redis, payload: Buffer, offset = 100): Promise<FakeLink> {
  master.onPsync = (link) => fullSyncDiskless(link, REPLID_A, offset, payload)
  const index = master.links.length
  expect(await client.call('REPLICAOF', '127.0.0.1', String(master.port))).toBe('OK')
  const link = await master.link(index)
  await linkUp(client)
  return link
}

describe('bfs as a replica', () => {
  it('sends the handshake in redis order, byte for byte, and asks PSYNC ? -1 when started with replicaof', async () => {
    const { master, replica, client } = await setup((port) => ({
      replicaof: `127.0.0.1 ${port}`,
      masterauth: 'secret',
      'replica-announce-ip': '10.0.0.7',
    }))
    const link = await master.link(0)
    await link.waitFor(() => link.received.some((argv) => argv[0] === 'PSYNC'), 10_000, 'PSYNC')
    const expected = Buffer.concat([
      encodeCommand(['PING']),
      encodeCommand(['AUTH', 'secret']),
      encodeCommand(['REPLCONF', 'listening-port', String(replica.port)]),
      encodeCommand(['REPLCONF', 'ip-address', '10.0.0.7']),
      encodeCommand(['REPLCONF', 'capa', 'eof', 'capa', 'psync2']),
      encodeCommand(['PSYNC', '?', '-1']),
    ])
    expect(link.bytes.toString('latin1')).toBe(expected.toString('latin1'))
    const info = await replicationInfo(client)
    expect([...info.keys()].slice(0, 11)).toEqual([
      'role',
      'master_host',
      'master_port',
      'master_link_status',
      'master_last_io_seconds_ago',
      'master_sync_in_progress',
      'slave_read_repl_offset',
      'slave_repl_offset',
      'master_link_down_since_seconds',
      'slave_priority',
      'slave_read_only',
    ])
    expect(info.get('role')).toBe('slave')
    expect(info.get('master_port')).toBe(String(master.port))
    expect(info.get('master_link_status')).toBe('down')
    expect(await client.call('REPLICAOF', '127.0.0.1', String(master.port))).toBe(
      'OK Already connected to specified master',
    )
  })

  it('loads a diskless full sync, applies the stream, counts its bytes and ACKs on GETACK', async () => {
    const { master, client } = await setup()
    const payload = buildPayload([
      { name: 'seen', items: ['a', 'b'] },
      { name: 'other', items: ['x'] },
    ])
    const link = await syncedReplica(master, client, payload, 1000)
    await link.waitForAck(1000)
    expect(await client.call('BF.EXISTS', 'seen', 'a')).toBe(1)
    expect(await client.call('BF.EXISTS', 'other', 'x')).toBe(1)
    expect(await client.call('DBSIZE')).toBe(2)
    const sent = link.send(['SELECT', '0'], ['BF.ADD', 'seen', 'c'], ['ping'], ['BF.MADD', 'new', 'p', 'q'])
    const getack = link.send(['REPLCONF', 'GETACK', '*'])
    // The ACK covers what came before the GETACK; the GETACK's own bytes count after it.
    await link.waitForAck(1000 + sent)
    expect(await client.call('BF.EXISTS', 'seen', 'c')).toBe(1)
    expect(await client.call('BF.MEXISTS', 'new', 'p', 'q', 'z')).toEqual([1, 1, 0])
    const info = await replicationInfo(client)
    expect(info.get('slave_repl_offset')).toBe(String(1000 + sent + getack))
    expect(info.get('slave_read_repl_offset')).toBe(String(1000 + sent + getack))
    expect(info.get('master_sync_in_progress')).toBe('0')
    expect(info.has('master_link_down_since_seconds')).toBe(false)
    expect(await client.call('ROLE')).toEqual(['slave', '127.0.0.1', master.port, 'connected', 1000 + sent + getack])
  })

  it('loads a full sync in the disk form after keep-alives, and a stream command split across reads', async () => {
    const { master, client } = await setup()
    master.onPsync = (link) => fullSyncSized(link, REPLID_A, 7, buildPayload([{ name: 'f', items: ['one'] }]), 3)
    await client.call('REPLICAOF', '127.0.0.1', String(master.port))
    const link = await master.link(0)
    await linkUp(client)
    const bytes = encodeCommand(['BF.ADD', 'f', 'two'])
    link.write(bytes.subarray(0, 9))
    await new Promise((resolve) => setTimeout(resolve, 50))
    link.write(bytes.subarray(9))
    await link.waitForAck(7)
    await until(async () => (await client.call('BF.EXISTS', 'f', 'two')) === 1, 'the split command applied')
    expect(await client.call('BF.EXISTS', 'f', 'one')).toBe(1)
  })

  it("refuses writes from clients with -READONLY (queued ones abort EXEC) but applies the master's", async () => {
    const { master, client } = await setup()
    const link = await syncedReplica(master, client, buildPayload([{ name: 'f', items: [] }]))
    await expect(client.call('BF.ADD', 'f', 'mine')).rejects.toThrow(
      "READONLY You can't write against a read only replica.",
    )
    await expect(client.call('DEL', 'f')).rejects.toThrow('READONLY')
    expect(await client.call('BF.EXISTS', 'f', 'mine')).toBe(0)
    const multi = await client
      .multi()
      .call('BF.ADD', 'f', 'mine')
      .exec()
      .catch((error: Error) => error)
    expect(String(multi)).toContain('EXECABORT')
    link.send(['BF.ADD', 'f', 'theirs'])
    await until(async () => (await client.call('BF.EXISTS', 'f', 'theirs')) === 1, "the master's write")
    await client.call('CONFIG', 'SET', 'replica-read-only', 'no')
    expect(await client.call('BF.ADD', 'f', 'mine')).toBe(1)
  })

  it('reconnects after the link drops with PSYNC <replid> <offset+1>, and takes a new id from +CONTINUE', async () => {
    const { master, client } = await setup()
    const first = await syncedReplica(master, client, buildPayload([{ name: 'f', items: ['a'] }]), 500)
    const sent = first.send(['BF.ADD', 'f', 'b'])
    await first.waitForAck(500)
    await until(
      async () => (await replicationInfo(client)).get('slave_repl_offset') === String(500 + sent),
      'the offset',
    )
    master.onPsync = (link) => {
      link.write(`+CONTINUE ${REPLID_B}\r\n`)
      link.send(['BF.ADD', 'f', 'c'])
    }
    first.socket.destroy()
    const second = await master.link(1)
    await second.waitFor(() => second.received.some((argv) => argv[0] === 'PSYNC'), 10_000, 'PSYNC')
    expect(second.received.find((argv) => argv[0] === 'PSYNC')).toEqual(['PSYNC', REPLID_A, String(500 + sent + 1)])
    await until(async () => (await client.call('BF.EXISTS', 'f', 'c')) === 1, 'the continued stream')
    expect(await client.call('BF.EXISTS', 'f', 'b')).toBe(1)
    // The next reconnection continues the new id (CLIENT KILL TYPE master drops the link).
    master.onPsync = (link) => link.write(`+CONTINUE ${REPLID_B}\r\n`)
    expect(await client.call('CLIENT', 'KILL', 'TYPE', 'master')).toBe(1)
    const third = await master.link(2)
    await third.waitFor(() => third.received.some((argv) => argv[0] === 'PSYNC'), 10_000, 'PSYNC')
    const continued = 500 + sent + encodeCommand(['BF.ADD', 'f', 'c']).length
    expect(third.received.find((argv) => argv[0] === 'PSYNC')).toEqual(['PSYNC', REPLID_B, String(continued + 1)])
    await linkUp(client)
  })

  it('lists the master link in CLIENT LIST with flag M', async () => {
    const { master, client } = await setup()
    await syncedReplica(master, client, buildPayload([]))
    const list = (await client.call('CLIENT', 'LIST', 'TYPE', 'master')) as string
    expect(list.trim().split('\n')).toHaveLength(1)
    expect(list).toContain('flags=M')
  })

  it('REPLICAOF NO ONE keeps the data, makes a writable master at once and keeps the old id as replid2', async () => {
    const { master, client } = await setup()
    await syncedReplica(master, client, buildPayload([{ name: 'f', items: ['a'] }]), 42)
    expect(await client.call('REPLICAOF', 'NO', 'ONE')).toBe('OK')
    expect((await replicationInfo(client)).get('role')).toBe('master')
    expect(await client.call('ROLE')).toEqual(['master', 42, []])
    expect(await client.call('BF.ADD', 'f', 'z')).toBe(1)
    expect(await client.call('BF.EXISTS', 'f', 'a')).toBe(1)
    // Its own writes may now be in its stream (once it has a backlog): the offset it reports is where it is.
    const [, offset] = (await client.call('ROLE')) as [string, number]
    // Demoted again, it continues its own history: PSYNC <its new id> <offset+1>.
    master.onPsync = () => {}
    await client.call('SLAVEOF', '127.0.0.1', String(master.port))
    const link = await master.link(1)
    await link.waitFor(() => link.received.some((argv) => argv[0] === 'PSYNC'), 10_000, 'PSYNC')
    const psync = link.received.find((argv) => argv[0] === 'PSYNC')!
    expect(psync[1]).toMatch(/^[0-9a-f]{40}$/)
    expect(psync[1]).not.toBe(REPLID_A)
    expect(psync[2]).toBe(String(offset + 1))
  })

  it('answers -MASTERDOWN while the link is down with replica-serve-stale-data no, stale commands still run', async () => {
    const { master, client } = await setup({ 'replica-serve-stale-data': false })
    master.onPsync = () => {}
    await client.call('REPLICAOF', '127.0.0.1', String(master.port))
    await expect(client.call('BF.EXISTS', 'f', 'a')).rejects.toThrow(
      "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
    )
    expect(await client.call('PING')).toBe('PONG')
    expect((await client.call('INFO', 'replication')) as string).toContain('role:slave')
  })

  it('rejects a bad port as redis does', async () => {
    const { client } = await setup()
    await expect(client.call('REPLICAOF', '127.0.0.1', '99999')).rejects.toThrow('ERR Invalid master port')
    await expect(client.call('REPLICAOF', '127.0.0.1', 'abc')).rejects.toThrow('ERR Invalid master port')
    expect(await client.call('REPLICAOF', 'no', 'one')).toBe('OK')
  })

  it('drops a link whose payload is malformed and retries', async () => {
    const { master, client } = await setup()
    master.onPsync = (link) => fullSyncDiskless(link, REPLID_A, 0, Buffer.from('NOTAPAYLOAD\x00'))
    await client.call('REPLICAOF', '127.0.0.1', String(master.port))
    const first = await master.link(0)
    await first.waitFor(() => first.closed, 10_000, 'the link closed')
    master.onPsync = (link) => fullSyncDiskless(link, REPLID_A, 0, buildPayload([{ name: 'ok', items: ['1'] }]))
    await master.link(1)
    await linkUp(client)
    expect(await client.call('BF.EXISTS', 'ok', '1')).toBe(1)
  })

  it('sends REPLCONF ACK every second without being asked', async () => {
    const { master, client } = await setup()
    const link = await syncedReplica(master, client, buildPayload([]), 10)
    const sent = link.send(['BF.ADD', 'f', 'a'])
    await link.waitForAck(10 + sent, 10_000)
    expect(link.received.some((argv) => argv[1] === 'GETACK')).toBe(false)
  })

  it('answers HTTP /add= with 503 and the READONLY text, /contain= with the data', async () => {
    const { master, replica, client } = await setup({ 'http-port': -1 })
    await syncedReplica(master, client, buildPayload([{ name: 'bfs', items: ['there'] }]))
    const base = `http://127.0.0.1:${replica.server.httpPort}`
    const added = await fetch(`${base}/add=new`)
    expect(added.status).toBe(503)
    expect(await added.text()).toBe("READONLY You can't write against a read only replica.\n")
    const contained = await fetch(`${base}/contain=there`)
    expect(await contained.text()).toBe('true')
  })

  it("replaces its dataset at a full sync and restarts its own log on it: a restart has the master's data only", async () => {
    const dir = makeTempDir()
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const { master, replica, client } = await setup({ dir, appendonly: true })
    expect(await client.call('BF.ADD', 'local', 'x')).toBe(1)
    const link = await syncedReplica(master, client, buildPayload([{ name: 'f', items: ['a'] }]), 0)
    const sent = link.send(['BF.ADD', 'f', 'b'], ['MULTI'], ['BF.ADD', 'g', 'c'], ['BF.ADD', 'f', 'd'], ['EXEC'])
    await link.waitForAck(sent)
    await until(async () => (await client.call('BF.EXISTS', 'f', 'd')) === 1, 'the transaction applied')
    expect(await client.call('EXISTS', 'local')).toBe(0)
    client.disconnect()
    await replica.server.close()
    const again = await startServer({ dir, appendonly: true })
    cleanups.push(() => again.server.close())
    const check = new Redis({ port: again.port, host: '127.0.0.1' })
    cleanups.push(() => check.disconnect())
    expect(await check.call('BF.MEXISTS', 'f', 'a', 'b', 'd')).toEqual([1, 1, 1])
    expect(await check.call('BF.EXISTS', 'g', 'c')).toBe(1)
    expect(await check.call('EXISTS', 'local')).toBe(0)
  })

  it("feeds each applied command's bytes, verbatim, to its own replication stream (the backlog and sub-replicas)", async () => {
    const { master, replica, client } = await setup()
    const fed: Buffer[] = []
    cleanups.push(replica.server.replication.attach((bytes) => fed.push(Buffer.from(bytes))))
    const link = await syncedReplica(master, client, buildPayload([]), 0)
    const stream = Buffer.concat([
      encodeCommand(['SELECT', '0']),
      encodeCommand(['bf.add', 'Mixed', 'case']),
      encodeCommand(['ping']),
      encodeCommand(['REPLCONF', 'GETACK', '*']),
      encodeCommand(['PUBLISH', 'c', 'm']),
    ])
    link.write(stream)
    await until(
      async () => (await replicationInfo(client)).get('slave_repl_offset') === String(stream.length),
      'the whole stream applied',
    )
    expect(Buffer.concat(fed).toString('latin1')).toBe(stream.toString('latin1'))
    expect(await client.call('BF.EXISTS', 'Mixed', 'case')).toBe(1)
  })

  it('applies a burst of adds in one read as one by one: the data, an error logged, its own log in order, commandstats, the ACK', async () => {
    const dir = makeTempDir()
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const { master, replica, client } = await setup({ dir, appendonly: true })
    const link = await syncedReplica(master, client, buildPayload([]), 0)
    const first = Array.from({ length: 300 }, (_, i) => ['BF.ADD', 'k', `i${i}`])
    const second = Array.from({ length: 300 }, (_, i) => ['BF.ADD', 'k', `j${i}`])
    const commands = [
      ['BF.RESERVE', 'k', '0.01', '1000'],
      ...first,
      ['BF.ADD', 'k', 'i0'],
      ['BF.RESERVE', 'k', '0.01', '1000'],
      ['bf.add', 'k', 'x'],
      ['BF.ADD', 'other', 'y'],
      ...second,
    ]
    // One write: the replica reads the adds together, as a pipelined client's.
    const sent = link.send(...commands, ['REPLCONF', 'GETACK', '*'])
    await link.waitForAck(sent - encodeCommand(['REPLCONF', 'GETACK', '*']).length)
    const items = [...first, ...second].map((argv) => argv[2]!)
    expect(new Set((await client.call('BF.MEXISTS', 'k', ...items, 'x')) as number[])).toEqual(new Set([1]))
    expect(await client.call('BF.EXISTS', 'other', 'y')).toBe(1)
    expect(await client.call('BF.CARD', 'k')).toBe(601)
    const stats = await infoFields(client, 'commandstats')
    expect(stats.get('cmdstat_bf.add')).toMatch(/^calls=603,/)
    expect(
      replica.logs.some((line) =>
        line.includes('A command from the master answered an error here: BF.RESERVE: ERR item exists'),
      ),
    ).toBe(true)
    // Its own log (written by now: before the replies above): each add that added, as it was
    // spelled, in the stream's order (the duplicate not).
    const segments = readdirSync(dir)
      .filter((name) => name.endsWith('.incr.aof'))
      .sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]))
    const text = segments.map((name) => readFileSync(path.join(dir, name), 'latin1')).join('')
    const records = text
      .split(/\*\d+\r\n/)
      .filter((record) => record !== '')
      .map((record) =>
        record
          .split('\r\n')
          .filter((_, i) => i % 2 === 1)
          .join(' '),
      )
    const adds = records.filter((record) => /^bf\.add /i.test(record))
    expect(adds).toEqual(
      [...first, ['bf.add', 'k', 'x'], ['BF.ADD', 'other', 'y'], ...second].map((argv) => argv.join(' ')),
    )
    expect(records.filter((record) => record.startsWith('BF.RESERVE k ')).length).toBe(1)
  })

  it('shows master_sync_* while a full sync is under way', async () => {
    const { master, client } = await setup()
    const payload = buildPayload([{ name: 'f', items: ['a'] }])
    master.onPsync = (link) =>
      link.write(
        Buffer.concat([Buffer.from(`+FULLRESYNC ${REPLID_A} 0\r\n$${payload.length}\r\n`), payload.subarray(0, 10)]),
      )
    await client.call('REPLICAOF', '127.0.0.1', String(master.port))
    await until(async () => (await replicationInfo(client)).get('master_sync_in_progress') === '1', 'the transfer')
    await until(
      async () => (await replicationInfo(client)).get('master_sync_read_bytes') === '10',
      'the first bytes read',
    )
    const info = await replicationInfo(client)
    expect([...info.keys()].slice(6, 13)).toEqual([
      'slave_read_repl_offset',
      'slave_repl_offset',
      'master_sync_total_bytes',
      'master_sync_read_bytes',
      'master_sync_left_bytes',
      'master_sync_perc',
      'master_sync_last_io_seconds_ago',
    ])
    expect(info.get('master_sync_total_bytes')).toBe(String(payload.length))
    expect(info.get('master_sync_left_bytes')).toBe(String(payload.length - 10))
    expect(info.get('master_sync_perc')).toBe(((10 / payload.length) * 100).toFixed(2))
    expect(await client.call('ROLE')).toEqual(['slave', '127.0.0.1', master.port, 'sync', -1])
    master.links[0]!.write(payload.subarray(10))
    await linkUp(client)
    expect(await client.call('BF.EXISTS', 'f', 'a')).toBe(1)
  })

  it('drops a silent master after repl-timeout and reconnects', async () => {
    const { master, client } = await setup({ 'repl-timeout': 1 })
    await syncedReplica(master, client, buildPayload([]), 0)
    master.onPsync = (link) => link.write(`+CONTINUE ${REPLID_A}\r\n`)
    await master.link(1, 15_000)
    const info = await replicationInfo(client)
    expect(['up', 'down']).toContain(info.get('master_link_status'))
    expect(master.links[0]!.closed).toBe(true)
  })

  it("runs Sentinel's promotion block (MULTI, SLAVEOF NO ONE, CONFIG REWRITE, CLIENT KILL TYPE normal/pubsub, EXEC) as redis queues it", async () => {
    const { master, replica, client } = await setup()
    await syncedReplica(master, client, buildPayload([{ name: 'f', items: ['a'] }]))
    const sentinel = await RawClient.connect(replica.port)
    cleanups.push(() => {
      sentinel.socket.destroy()
    })
    // The bytes Sentinel writes in one go to promote a replica (sentinel.c sentinelSendSlaveOf).
    sentinel.write(
      '*1\r\n$5\r\nMULTI\r\n*3\r\n$7\r\nSLAVEOF\r\n$2\r\nNO\r\n$3\r\nONE\r\n*2\r\n$6\r\nCONFIG\r\n$7\r\nREWRITE\r\n' +
        '*4\r\n$6\r\nCLIENT\r\n$4\r\nKILL\r\n$4\r\nTYPE\r\n$6\r\nnormal\r\n*4\r\n$6\r\nCLIENT\r\n$4\r\nKILL\r\n$4\r\nTYPE\r\n$6\r\npubsub\r\n*1\r\n$4\r\nEXEC\r\n',
    )
    const replies = (await sentinel.readUntil((received) => received.includes('*4\r\n+OK\r\n'))).toString('latin1')
    expect(replies.startsWith('+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*4\r\n+OK\r\n')).toBe(true)
    await until(async () => {
      const check = new Redis({ port: replica.port, host: '127.0.0.1' })
      try {
        return (await replicationInfo(check)).get('role') === 'master'
      } finally {
        check.disconnect()
      }
    }, 'role:master')
  })
})
