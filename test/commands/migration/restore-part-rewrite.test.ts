/**
 * A background save, a log rewrite or a full sync never fails a transfer in BFS.RESTORE-PART
 * parts (MIGRATE of a large filter, docs/MIGRATE.md): started between two parts (by hand, or the
 * automatic rewrite once the parts pushed the log past auto-aof-rewrite-min-size: it waits for
 * the commit while parts come), the commit is answered +OK, and the key survives kill -9 and a
 * restart from the log whether the rewrite had finished at the commit or not; a replica that synced in full between two parts gets the key,
 * and so does a replica of a replica whose full sync was asked for during the transfer.
 * The parts are sent by the test itself, so each interruption falls exactly between two of them.
 * The source side too: MIGRATE of such a filter while the source saves or rewrites succeeds, and
 * BF.LOADCHUNK sequences across a rewrite survive a kill -9. The target is a child bfs
 * (dist/main.js, built by `npm test`'s pretest) killed with SIGKILL.
 */
import { rmSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../../helpers/start-server.js'
import { makeTempDir } from '../../helpers/temp-dir.js'
import { RawClient, askLine, encodeCommand } from '../../helpers/resp.js'
import { freePort, type InteractiveTool } from '../../helpers/tools.js'
import { childClient, killChildServer, startChildServer } from '../../helpers/child-server.js'
import { infoFields, until } from '../../helpers/replication-info.js'
import { ScalableBloomFilter } from '../../../src/core/scalable-filter.js'
import { captureRegistry, MAX_PIECE_BYTES } from '../../../src/store/registry-capture.js'
import { FilterRegistry } from '../../../src/store/registry.js'

const dirs: string[] = []
const children: InteractiveTool[] = []
const clients: (Redis | RawClient)[] = []
const servers: RunningServer[] = []
afterEach(async () => {
  for (const client of clients.splice(0)) {
    if (client instanceof Redis) client.disconnect()
    else client.close()
  }
  for (const server of servers.splice(0)) await server.stop()
  for (const child of children.splice(0)) child.kill()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const PART_BYTES = 256 * 1024
const ITEMS = 20_000

/** A filter of about 2.4 MiB (more than one RESTORE carries) as BFS.RESTORE-PART data: about ten parts. */
function transferParts(): Buffer[] {
  const filter = new ScalableBloomFilter({ capacity: 2_000_000, errorRate: 0.01, expansion: 2, nonScaling: false })
  for (let i = 0; i < ITEMS; i++) filter.add(Buffer.from(`item-${i}`))
  const registry = new FilterRegistry()
  registry.set('big', filter)
  const capture = captureRegistry(registry)
  const pieces: Buffer[] = []
  for (let piece = capture.next(MAX_PIECE_BYTES); piece !== null; piece = capture.next(MAX_PIECE_BYTES))
    pieces.push(piece)
  const payload = Buffer.concat(pieces)
  const parts: Buffer[] = []
  for (let at = 0; at < payload.length; at += PART_BYTES) parts.push(payload.subarray(at, at + PART_BYTES))
  expect(parts.length).toBeGreaterThan(8)
  return parts
}

const PARTS = transferParts()

function partCommand(seq: number, id = 'transfer-1'): Buffer {
  return encodeCommand(['BFS.RESTORE-PART', 'big', '0', id, String(seq), PARTS[seq]!, 'ABSTTL'])
}

/** Sends parts [from, to) (with `extra` commands first, in the same write) and returns every reply line. */
async function sendParts(client: RawClient, from: number, to: number, extra: string[][] = []): Promise<string[]> {
  client.write(
    Buffer.concat([
      ...extra.map((command) => encodeCommand(command)),
      ...Array.from({ length: to - from }, (_, i) => partCommand(from + i)),
    ]),
  )
  const replies = extra.length + to - from
  const bytes = await client.readUntil(
    (received) => received.toString('latin1').split('\r\n').length - 1 >= replies,
    30_000,
  )
  return bytes.toString('latin1').split('\r\n').slice(0, replies)
}

async function startChild(
  dir: string,
  port: number,
  extra: string[] = [],
): Promise<{ bfs: InteractiveTool; redis: Redis; raw: RawClient }> {
  // appendfsync always: every reply read below is on disk before it was sent.
  const { bfs } = await startChildServer([
    '--port',
    String(port),
    '--dir',
    dir,
    '--appendonly',
    'yes',
    '--appendfsync',
    'always',
    '--save',
    '',
    ...extra,
  ])
  children.push(bfs)
  const redis = childClient(port)
  const raw = await RawClient.connect(port)
  clients.push(redis, raw)
  return { bfs, redis, raw }
}

async function backgroundIdle(redis: Redis): Promise<void> {
  await until(async () => {
    const fields = await infoFields(redis, 'persistence')
    return fields.get('rdb_bgsave_in_progress') === '0' && fields.get('aof_rewrite_in_progress') === '0'
  }, 'no background save or rewrite runs')
}

/** What the key holds: its DUMP, BF.CARD and a sample of its items. */
async function state(redis: Redis): Promise<unknown[]> {
  const items = Array.from({ length: 100 }, (_, i) => `item-${i * 199}`)
  return [
    ((await redis.callBuffer('DUMP', 'big')) as Buffer | null)?.toString('base64'),
    await redis.call('BF.CARD', 'big'),
    await redis.call('BF.MEXISTS', 'big', ...items),
  ]
}

async function restartAndCompare(
  dir: string,
  port: number,
  expected: unknown[],
  child: InteractiveTool,
): Promise<void> {
  await killChildServer(child)
  const again = await startChild(dir, port)
  expect(await state(again.redis)).toEqual(expected)
  // Parts of a staging begun before a rewrite's start point are skipped, not errors.
  expect(again.bfs.stdout + again.bfs.stderr).not.toMatch(/answered an error/)
  await again.redis.call('SHUTDOWN').catch(() => {}) // closes without a reply
  expect(await again.bfs.waitExit()).toBe(0)
  const clean = await startChild(dir, port)
  expect(await state(clean.redis)).toEqual(expected)
  await killChildServer(clean.bfs)
}

describe('BFS.RESTORE-PART across a save, a log rewrite and a full sync', () => {
  for (const interruption of ['BGREWRITEAOF', 'BGSAVE']) {
    it(`${interruption} between two parts, finished before the commit: +OK, and the key survives kill -9 and a restart`, async () => {
      const dir = makeTempDir('bfs-part-')
      dirs.push(dir)
      const port = await freePort()
      const target = await startChild(dir, port)
      expect(await sendParts(target.raw, 0, 3)).toEqual(['+OK', '+OK', '+OK'])
      await target.redis.call(interruption)
      await backgroundIdle(target.redis)
      expect(await sendParts(target.raw, 3, PARTS.length)).toEqual(PARTS.slice(3).map(() => '+OK'))
      expect(target.bfs.stdout + target.bfs.stderr).toMatch(/propagated again/)
      const expected = await state(target.redis)
      expect(expected[1]).toBe(ITEMS)
      await restartAndCompare(dir, port, expected, target.bfs)
    }, 120_000)

    it(`${interruption} in the same write as the last parts (running at the commit): +OK, and the key survives kill -9 at once`, async () => {
      const dir = makeTempDir('bfs-part-')
      dirs.push(dir)
      const port = await freePort()
      const target = await startChild(dir, port)
      // A filter of its own, so that the save has something to write while the commit runs.
      await target.redis.call('BF.RESERVE', 'other', '0.001', '5000000')
      expect(await sendParts(target.raw, 0, 3)).toEqual(['+OK', '+OK', '+OK'])
      const replies = await sendParts(target.raw, 3, PARTS.length, [[interruption]])
      expect(replies.slice(1)).toEqual(PARTS.slice(3).map(() => '+OK'))
      const expected = await state(target.redis)
      expect(expected[1]).toBe(ITEMS)
      await restartAndCompare(dir, port, expected, target.bfs)
    }, 120_000)
  }

  it('the automatic rewrite waits while the parts push the log past auto-aof-rewrite-min-size, and runs after the commit', async () => {
    const dir = makeTempDir('bfs-part-')
    dirs.push(dir)
    const port = await freePort()
    const target = await startChild(dir, port, [
      '--auto-aof-rewrite-min-size',
      '1mb',
      '--auto-aof-rewrite-percentage',
      '100',
    ])
    for (let seq = 0; seq < PARTS.length; seq++) expect(await sendParts(target.raw, seq, seq + 1)).toEqual(['+OK'])
    await until(
      async () => (await infoFields(target.redis, 'persistence')).get('aof_rewrites') === '1',
      'the automatic rewrite ran',
    )
    await backgroundIdle(target.redis)
    // The commit logged its last part only: no snapshot took its start point during the transfer.
    expect(target.bfs.stdout + target.bfs.stderr).not.toMatch(/propagated again/)
    const expected = await state(target.redis)
    expect(expected[1]).toBe(ITEMS)
    await restartAndCompare(dir, port, expected, target.bfs)
  }, 120_000)

  it('the automatic rewrite during a transfer paused past 10 s: +OK, the whole filter logged again, and the key survives kill -9', async () => {
    const dir = makeTempDir('bfs-part-')
    dirs.push(dir)
    const port = await freePort()
    const target = await startChild(dir, port, [
      '--auto-aof-rewrite-min-size',
      '1mb',
      '--auto-aof-rewrite-percentage',
      '100',
    ])
    expect(await sendParts(target.raw, 0, 5)).toEqual(PARTS.slice(0, 5).map(() => '+OK'))
    // The once-a-second check finds the log over 1 MiB: a rewrite starts once no part came for 10 s.
    await until(
      async () => (await infoFields(target.redis, 'persistence')).get('aof_rewrites') === '1',
      'the automatic rewrite ran',
      60_000,
    )
    await backgroundIdle(target.redis)
    expect(await sendParts(target.raw, 5, PARTS.length)).toEqual(PARTS.slice(5).map(() => '+OK'))
    expect(target.bfs.stdout + target.bfs.stderr).toMatch(/propagated again/)
    const expected = await state(target.redis)
    expect(expected[1]).toBe(ITEMS)
    await restartAndCompare(dir, port, expected, target.bfs)
  }, 120_000)

  it('a replica that synced in full between two parts (the transfer paused past the 10 s a sync waits for it) gets the key; so does one attached all along', async () => {
    const target = await startServer({ 'repl-diskless-sync-delay': 0 })
    servers.push(target)
    const [late, early] = [await startServer({}), await startServer({})]
    servers.push(late, early)
    const raw = await RawClient.connect(target.port)
    const redis = new Redis({ port: target.port, host: '127.0.0.1' })
    const [lateClient, earlyClient] = [
      new Redis({ port: late.port, host: '127.0.0.1' }),
      new Redis({ port: early.port, host: '127.0.0.1' }),
    ]
    clients.push(raw, redis, lateClient, earlyClient)
    const linkUp = async (client: Redis): Promise<void> =>
      until(async () => (await infoFields(client, 'replication')).get('master_link_status') === 'up', 'link up', 60_000)
    await earlyClient.call('REPLICAOF', '127.0.0.1', String(target.port))
    await linkUp(earlyClient)
    expect(await sendParts(raw, 0, 3)).toEqual(['+OK', '+OK', '+OK'])
    await lateClient.call('REPLICAOF', '127.0.0.1', String(target.port))
    // Its sync waits for the staging while parts come; 10 s without one, it goes ahead.
    await linkUp(lateClient)
    expect(await sendParts(raw, 3, PARTS.length)).toEqual(PARTS.slice(3).map(() => '+OK'))
    // WAIT on the connection that sent the parts: it waits for that client's writes (a client
    // that wrote nothing is answered at once, before the replicas had the commit).
    expect(await askLine(raw, 'WAIT', '2', '10000')).toBe(':2\r\n')
    const expected = await state(redis)
    expect(expected[1]).toBe(ITEMS)
    expect(await state(lateClient)).toEqual(expected)
    expect(await state(earlyClient)).toEqual(expected)
  }, 120_000)

  it('a replica of a replica that asks for a full sync during a transfer gets the key: its sync waits for the commit', async () => {
    const target = await startServer({})
    const middle = await startServer({ 'repl-diskless-sync-delay': 0 })
    const leaf = await startServer({})
    servers.push(target, middle, leaf)
    const raw = await RawClient.connect(target.port)
    const [redis, middleClient, leafClient] = [target, middle, leaf].map(
      (server) => new Redis({ port: server.port, host: '127.0.0.1' }),
    ) as [Redis, Redis, Redis]
    clients.push(raw, redis, middleClient, leafClient)
    await middleClient.call('REPLICAOF', '127.0.0.1', String(target.port))
    await until(
      async () => (await infoFields(middleClient, 'replication')).get('master_link_status') === 'up',
      'middle link up',
    )
    expect(await sendParts(raw, 0, 3)).toEqual(['+OK', '+OK', '+OK'])
    expect(await askLine(raw, 'WAIT', '1', '10000')).toBe(':1\r\n') // the middle one stages them too
    await leafClient.call('REPLICAOF', '127.0.0.1', String(middle.port))
    // Its stream will be the target's, verbatim: the parts before its sync point are in neither.
    await until(
      async () => (await infoFields(middleClient, 'stats')).get('sync_full') === '1',
      'the leaf asked for a full sync',
    )
    expect(await sendParts(raw, 3, PARTS.length)).toEqual(PARTS.slice(3).map(() => '+OK'))
    const expected = await state(redis)
    expect(expected[1]).toBe(ITEMS)
    await until(async () => (await leafClient.exists('big')) === 1, 'the leaf has the key')
    expect(await state(leafClient)).toEqual(expected)
    expect(await state(middleClient)).toEqual(expected)
  }, 120_000)

  it('MIGRATE of the filter from a server that starts a rewrite or a save with it: +OK, the target has it', async () => {
    const dir = makeTempDir('bfs-part-')
    dirs.push(dir)
    const port = await freePort()
    const source = await startChild(dir, port)
    const target = await startServer({})
    servers.push(target)
    const targetClient = new Redis({ port: target.port, host: '127.0.0.1' })
    clients.push(targetClient)
    expect(await sendParts(source.raw, 0, PARTS.length)).toEqual(PARTS.map(() => '+OK'))
    const expected = await state(source.redis)
    for (const interruption of ['BGREWRITEAOF', 'BGSAVE']) {
      await backgroundIdle(source.redis)
      const migrate = ['MIGRATE', '127.0.0.1', String(target.port), 'big', '0', '60000', 'REPLACE']
      const replies = await sendParts(source.raw, 0, 0, [[interruption], migrate])
      expect(replies[1]).toBe('+OK')
      expect(await source.redis.exists('big')).toBe(0)
      expect(await state(targetClient)).toEqual(expected)
      // Back again, for the next round.
      expect(await targetClient.call('MIGRATE', '127.0.0.1', String(port), 'big', '0', '60000')).toBe('OK')
    }
    expect(await state(source.redis)).toEqual(expected)
    await backgroundIdle(source.redis)
    await restartAndCompare(dir, port, expected, source.bfs)
  }, 120_000)

  it('BF.LOADCHUNK across a rewrite: the filter survives kill -9 and a restart', async () => {
    const dir = makeTempDir('bfs-part-')
    dirs.push(dir)
    const port = await freePort()
    const target = await startChild(dir, port)
    // Layers of 1,000, 2,000, ... items: a chunk each.
    await target.redis.call('BF.RESERVE', 'layered', '0.01', '1000', 'EXPANSION', '2')
    await target.redis.call('BF.MADD', 'layered', ...Array.from({ length: ITEMS }, (_, i) => `item-${i}`))
    const chunks: [number, Buffer][] = []
    for (let iterator = 0; ;) {
      const [next, data] = (await target.redis.callBuffer('BF.SCANDUMP', 'layered', String(iterator))) as [
        number,
        Buffer,
      ]
      if (next === 0) break
      chunks.push([next, data])
      iterator = next
    }
    expect(chunks.length).toBeGreaterThan(2)
    const load = (chunk: [number, Buffer]): Promise<unknown> =>
      target.redis.callBuffer('BF.LOADCHUNK', 'copy', String(chunk[0]), chunk[1])
    await load(chunks[0]!)
    await load(chunks[1]!)
    await target.redis.call('BGREWRITEAOF')
    await backgroundIdle(target.redis)
    for (const chunk of chunks.slice(2)) await load(chunk)
    expect(await target.redis.callBuffer('DUMP', 'copy')).toEqual(await target.redis.callBuffer('DUMP', 'layered'))
    await target.redis.call('RENAME', 'copy', 'big')
    const expected = await state(target.redis)
    await restartAndCompare(dir, port, expected, target.bfs)
  }, 120_000)
})
