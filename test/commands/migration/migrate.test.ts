/**
 * MIGRATE between two bfs servers over real sockets (redis 7.0.15 cluster.c migrateCommand's
 * replies): one key, KEYS, COPY, REPLACE, AUTH and AUTH2, NOKEY, BUSYKEY passed through, a dead
 * port and a silent target (IOERR), a real redis-server refusing the bfs payload (its error
 * passed through); a write racing a migration is held, not lost; a filter above a lowered
 * proto-max-bulk-len moves in BFS.RESTORE-PART parts and arrives byte for byte, on the target's
 * replica and across its restart too, while the source's replica loses the key.
 */
import net from 'node:net'
import { rmSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../../helpers/start-server.js'
import { makeTempDir } from '../../helpers/temp-dir.js'
import { startRedisServer } from '../../helpers/redis-server.js'
import { infoFields, until } from '../../helpers/replication-info.js'
import { freePort } from '../../helpers/tools.js'
import { replyOrError } from '../../helpers/reply-or-error.js'

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function node(config: Parameters<typeof startServer>[0] = {}): Promise<RunningServer> {
  const running = await startServer(config)
  cleanups.push(() => running.stop())
  return running
}

function open(port: number, password?: string): Redis {
  const client = new Redis({ port, host: '127.0.0.1', password })
  cleanups.push(() => client.disconnect())
  return client
}

function answer(client: Redis, ...args: (string | Buffer)[]): Promise<unknown> {
  return replyOrError(client, args)
}

async function pair(): Promise<{ source: Redis; target: Redis; port: string }> {
  const [a, b] = [await node(), await node()]
  return { source: open(a.port), target: open(b.port), port: String(b.port) }
}

describe('MIGRATE between bfs servers', () => {
  it('moves one key, then KEYS, with COPY and REPLACE; NOKEY for keys that are not there', async () => {
    const { source, target, port } = await pair()
    await source.call('BF.ADD', 'one', 'a')
    await source.call('PEXPIRE', 'one', '3600000')
    expect(await source.call('MIGRATE', '127.0.0.1', port, 'one', '0', '5000')).toBe('OK')
    expect(await source.exists('one')).toBe(0)
    expect(await target.call('BF.EXISTS', 'one', 'a')).toBe(1)
    expect(await target.pttl('one')).toBeGreaterThan(3_000_000)
    expect(await source.call('MIGRATE', '127.0.0.1', port, 'one', '0', '5000')).toBe('NOKEY')
    expect(await source.call('MIGRATE', '127.0.0.1', port, '', '0', '5000', 'KEYS', 'x', 'y')).toBe('NOKEY')

    for (const key of ['k1', 'k2', 'k3']) await source.call('BF.ADD', key, key)
    expect(
      await source.call('MIGRATE', '127.0.0.1', port, '', '0', '5000', 'COPY', 'KEYS', 'k1', 'k2', 'missing'),
    ).toBe('OK')
    expect(await source.exists('k1', 'k2')).toBe(2)
    expect(await target.call('BF.MEXISTS', 'k1', 'k1', 'k2')).toEqual([1, 0])
    // Without REPLACE the target refuses: BUSYKEY passed through, and the key stays here.
    expect(await answer(source, 'MIGRATE', '127.0.0.1', port, '', '0', '5000', 'KEYS', 'k1', 'k3')).toBe(
      'ERR Target instance replied with error: BUSYKEY Target key name already exists.',
    )
    expect(await source.exists('k1')).toBe(1)
    expect(await source.exists('k3')).toBe(0) // k3 went: redis deletes every key the target took
    await source.call('BF.ADD', 'k1', 'newer')
    expect(await source.call('MIGRATE', '127.0.0.1', port, '', '0', '5000', 'REPLACE', 'KEYS', 'k1', 'k2')).toBe('OK')
    expect(await source.exists('k1', 'k2')).toBe(0)
    expect(await target.call('BF.MEXISTS', 'k1', 'k1', 'newer')).toEqual([1, 1])
    // Into another database of the target.
    await source.call('BF.ADD', 'db5', 'x')
    expect(await source.call('MIGRATE', '127.0.0.1', port, 'db5', '5', '5000')).toBe('OK')
    await target.select(5)
    expect(await target.call('BF.EXISTS', 'db5', 'x')).toBe(1)
  })

  it('to the node itself: the target (itself) answers BUSYKEY at once, the key stays', async () => {
    const running = await node()
    const source = open(running.port)
    await source.call('BF.ADD', 'self', 'x')
    expect(await answer(source, 'MIGRATE', '127.0.0.1', String(running.port), 'self', '0', '60000')).toBe(
      'ERR Target instance replied with error: BUSYKEY Target key name already exists.',
    )
    expect(await source.call('BF.EXISTS', 'self', 'x')).toBe(1)
  })

  it("answers redis's syntax errors", async () => {
    const { source } = await pair()
    await source.call('BF.ADD', 'a', 'x')
    expect(await answer(source, 'MIGRATE', '127.0.0.1', '1', 'a', '0', '100', 'KEYS', 'a')).toBe(
      'ERR When using MIGRATE KEYS option, the key argument must be set to the empty string',
    )
    expect(await answer(source, 'MIGRATE', '127.0.0.1', '1', 'a', '0', '100', 'AUTH')).toBe('ERR syntax error')
    expect(await answer(source, 'MIGRATE', '127.0.0.1', '1', 'a', '0', '100', 'AUTH2', 'u')).toBe('ERR syntax error')
    expect(await answer(source, 'MIGRATE', '127.0.0.1', '1', 'a', '0', '100', 'FOO')).toBe('ERR syntax error')
    expect(await answer(source, 'MIGRATE', '127.0.0.1', '1', 'a', 'x', '100')).toBe(
      'ERR value is not an integer or out of range',
    )
    expect(await answer(source, 'MIGRATE', '127.0.0.1', '1', 'a', '0', 'x')).toBe(
      'ERR value is not an integer or out of range',
    )
    expect(await answer(source, 'MIGRATE', '127.0.0.1', '1', 'a', '0')).toBe(
      "ERR wrong number of arguments for 'migrate' command",
    )
  })

  it("authenticates with AUTH and AUTH2, and passes the target's refusal through", async () => {
    const source = open((await node()).port)
    const target = await node({ requirepass: 's3cret' })
    const admin = open(target.port, 's3cret')
    await admin.call('ACL', 'SETUSER', 'mover', 'on', '>m-pass', '~*', '+@all')
    const port = String(target.port)
    await source.call('BF.ADD', 'a', 'x')
    await source.call('BF.ADD', 'b', 'y')
    expect(await answer(source, 'MIGRATE', '127.0.0.1', port, 'a', '0', '5000')).toMatch(
      /^ERR Target instance replied with error: NOAUTH/,
    )
    expect(await source.exists('a')).toBe(1)
    expect(await answer(source, 'MIGRATE', '127.0.0.1', port, 'a', '0', '5000', 'AUTH', 'wrong')).toMatch(
      /^ERR Target instance replied with error: WRONGPASS/,
    )
    expect(await source.call('MIGRATE', '127.0.0.1', port, 'a', '0', '5000', 'AUTH', 's3cret')).toBe('OK')
    expect(await source.call('MIGRATE', '127.0.0.1', port, 'b', '0', '5000', 'AUTH2', 'mover', 'm-pass')).toBe('OK')
    expect(await admin.call('BF.MEXISTS', 'a', 'x')).toEqual([1])
    expect(await admin.call('BF.EXISTS', 'b', 'y')).toBe(1)
  })

  it("answers IOERR for a dead port and for a target that never answers; a redis-server's refusal passes through", async () => {
    const source = open((await node()).port)
    await source.call('BF.ADD', 'a', 'x')
    const dead = await freePort()
    expect(await answer(source, 'MIGRATE', '127.0.0.1', String(dead), 'a', '0', '1000')).toBe(
      'IOERR error or timeout writing to target instance',
    )
    const silent = net.createServer((socket) => socket.on('data', () => {}))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise<void>((resolve) => silent.close(() => resolve())))
    const silentPort = String((silent.address() as net.AddressInfo).port)
    expect(await answer(source, 'MIGRATE', '127.0.0.1', silentPort, 'a', '0', '300')).toBe(
      'IOERR error or timeout reading to target instance',
    )
    expect(await source.exists('a')).toBe(1)
    const redis = await startRedisServer()
    cleanups.push(() => redis.stop())
    expect(await answer(source, 'MIGRATE', '127.0.0.1', String(redis.port), 'a', '0', '5000')).toBe(
      'ERR Target instance replied with error: ERR DUMP payload version or checksum are wrong',
    )
    expect(await source.exists('a')).toBe(1)
  })

  it('holds a write racing the migration of its key until the key left: the write is not lost, reads go on', async () => {
    const { source, target, port } = await pair()
    // A proxy in front of the target that holds the target's replies until the test lets them go:
    // the key has reached the target, and the source has not heard so yet.
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const sockets: net.Socket[] = []
    const proxy = net.createServer((inbound) => {
      const outbound = net.connect(Number(port), '127.0.0.1')
      sockets.push(inbound, outbound)
      inbound.pipe(outbound)
      outbound.on('data', (chunk) => void gate.then(() => inbound.write(chunk)))
      inbound.on('error', () => outbound.destroy())
      outbound.on('error', () => inbound.destroy())
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          proxy.close(() => resolve())
          for (const socket of sockets) socket.destroy() // the source caches its connection for 10 s
        }),
    )
    await source.call('BF.ADD', 'race', 'before')
    const writer = open(Number(source.options.port))
    const reader = open(Number(source.options.port))
    const migrating = source.call(
      'MIGRATE',
      '127.0.0.1',
      String((proxy.address() as net.AddressInfo).port),
      'race',
      '0',
      '60000',
    )
    await until(async () => (await target.exists('race')) === 1, 'the target has the key')
    let written = false
    const racing = writer.call('BF.ADD', 'race', 'during').then((reply) => {
      written = true
      return reply
    })
    // Reads go on, and see the key until the target's OK comes.
    expect(await reader.call('BF.EXISTS', 'race', 'before')).toBe(1)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(written).toBe(false)
    release()
    expect(await Promise.all([migrating, racing])).toEqual(['OK', 1])
    // The moved filter is the one before the write; the write ran once the key had left (outside
    // cluster mode it made a new filter here; cluster routing redirects it to the target instead).
    expect(await target.call('BF.MEXISTS', 'race', 'before', 'during')).toEqual([1, 0])
    expect(await source.call('BF.MEXISTS', 'race', 'before', 'during')).toEqual([0, 1])
  })

  it('streams a filter above proto-max-bulk-len in parts, byte for byte, to the target, its replica and its log', async () => {
    const config = { 'proto-max-bulk-len': 1024 * 1024 }
    const dir = makeTempDir()
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const sourceNode = await node(config)
    let targetNode: RunningServer | undefined = await startServer({ ...config, dir, appendonly: true })
    cleanups.push(() => targetNode?.stop())
    const [sourceReplica, targetReplica] = [await node(), await node()]
    const source = open(sourceNode.port)
    let target = open(targetNode.port)
    for (const [replica, master] of [
      [sourceReplica, sourceNode],
      [targetReplica, targetNode],
    ] as const) {
      const client = open(replica.port)
      await client.call('REPLICAOF', '127.0.0.1', String(master.port))
      await until(async () => (await infoFields(client, 'replication')).get('master_link_status') === 'up', 'link up')
    }
    // Layers of 1,000, 16,000, 256,000 and 4,096,000 items: the last one about 5 MiB.
    await source.call('BF.RESERVE', 'big', '0.01', '1000', 'EXPANSION', '16')
    for (let i = 0; i < 280_000; i += 10_000)
      await source.call('BF.MADD', 'big', ...Array.from({ length: 10_000 }, (_, k) => `i${i + k}`))
    expect(await source.call('BF.INFO', 'big', 'FILTERS')).toEqual([4])
    await source.call('PEXPIRE', 'big', '7200000')
    const payload = (await source.callBuffer('DUMP', 'big')) as Buffer
    const expiresAt = await source.call('PEXPIRETIME', 'big')
    expect(payload.length).toBeGreaterThan(5 * 1024 * 1024)
    // One RESTORE cannot carry it: the target's parser refuses the bulk.
    const direct = open(targetNode.port)
    await expect(direct.call('RESTORE', 'direct', '0', payload)).rejects.toThrow(/Protocol error: invalid bulk length/)
    await until(async () => (await open(sourceReplica.port).exists('big')) === 1, 'the source replica has the filter')
    expect(await source.call('MIGRATE', '127.0.0.1', String(targetNode.port), 'big', '0', '60000')).toBe('OK')
    expect(await source.exists('big')).toBe(0)
    expect(((await target.callBuffer('DUMP', 'big')) as Buffer).equals(payload)).toBe(true)
    expect(await target.call('PEXPIRETIME', 'big')).toBe(expiresAt)
    const targetReplicaClient = open(targetReplica.port)
    await until(async () => (await targetReplicaClient.exists('big')) === 1, 'the target replica has the filter')
    expect(((await targetReplicaClient.callBuffer('DUMP', 'big')) as Buffer).equals(payload)).toBe(true)
    await until(
      async () => (await open(sourceReplica.port).exists('big')) === 0,
      'the source replica dropped the filter',
    )
    target.disconnect()
    direct.disconnect()
    await targetNode.stop()
    targetNode = await startServer({ ...config, dir, appendonly: true })
    target = open(targetNode.port)
    expect(((await target.callBuffer('DUMP', 'big')) as Buffer).equals(payload)).toBe(true)
  })
})

describe("MIGRATE's keys (redis db.c migrateGetKeys)", () => {
  it('COMMAND GETKEYS answers as redis: the key, or the keys after KEYS (the empty key argument is none)', async () => {
    const redis = await startRedisServer()
    cleanups.push(() => redis.stop())
    const [ours, theirs] = [open((await node()).port), open(redis.port)]
    for (const line of [
      ['MIGRATE', 'h', '1', '', '0', '5', 'KEYS', 'a', 'b'],
      ['MIGRATE', 'h', '1', 'k', '0', '5'],
      ['MIGRATE', 'h', '1', 'k', '0', '5', 'COPY', 'AUTH', 'keys'],
      ['MIGRATE', 'h', '1', '', '0', '5', 'AUTH2', 'u', 'p', 'KEYS', 'c'],
    ]) {
      expect(await answer(ours, 'COMMAND', 'GETKEYS', ...line), line.join(' ')).toEqual(
        await answer(theirs, 'COMMAND', 'GETKEYS', ...line),
      )
    }
  })
})
