/**
 * A restart gives back the counts it had: BF.CARD and BF.INFO's "Number of items inserted" of a
 * filter that took adds while a background save or a log rewrite was writing it equal those
 * before a kill -9 (and a clean restart). The snapshot holds the filter exactly as it was at its
 * start point, the log's `log-from`, and the adds after it replay over it and count again. The
 * adds are pipelined in the same write as the BGSAVE / BGREWRITEAOF, so they all land while the
 * save has copied nothing of the filter yet (no timing luck involved). A child bfs (dist/main.js,
 * built by `npm test`'s pretest) is killed with SIGKILL. The replica's counts after a full sync
 * taken during adds, and a window filter's, are checked as well.
 */
import { rmSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { makeTempDir } from '../helpers/temp-dir.js'
import { RawClient, encodeCommand } from '../helpers/resp.js'
import { freePort, type InteractiveTool } from '../helpers/tools.js'
import { childClient, killChildServer, startChildServer } from '../helpers/child-server.js'
import { infoFields, until } from '../helpers/replication-info.js'

const dirs: string[] = []
const children: InteractiveTool[] = []
const clients: Redis[] = []
const servers: RunningServer[] = []
afterEach(async () => {
  for (const client of clients.splice(0)) client.disconnect()
  for (const server of servers.splice(0)) await server.stop()
  for (const child of children.splice(0)) child.kill()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

async function startChild(dir: string, port: number): Promise<{ bfs: InteractiveTool; redis: Redis }> {
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
  ])
  children.push(bfs)
  const redis = childClient(port)
  clients.push(redis)
  return { bfs, redis }
}

/** BF.CARD and BF.INFO ITEMS of each Bloom filter, APBF.INFO of the window filter. */
async function counts(redis: Redis): Promise<unknown[]> {
  const out: unknown[] = []
  for (const key of ['grown', 'plain'])
    out.push(
      await redis.call('BF.CARD', key),
      await redis.call('BF.INFO', key, 'ITEMS'),
      await redis.call('BF.INFO', key, 'FILTERS'),
    )
  out.push(await redis.call('APBF.INFO', 'window'))
  return out
}

/**
 * Filters larger than what a background save copies when it starts (8 MiB): `grown` has
 * scaled to a second layer of about 12 MiB, `plain` is one layer of about 11 MiB.
 */
async function fill(redis: Redis): Promise<void> {
  await redis.call('BF.RESERVE', 'grown', '0.01', '100000', 'EXPANSION', '64')
  for (let i = 0; i < 110_000; i += 10_000)
    await redis.call('BF.MADD', 'grown', ...Array.from({ length: 10_000 }, (_, k) => `g${i + k}`))
  expect(await redis.call('BF.INFO', 'grown', 'FILTERS')).toEqual([2])
  await redis.call('BF.RESERVE', 'plain', '0.001', '6000000')
  await redis.call('BF.MADD', 'plain', ...Array.from({ length: 1000 }, (_, k) => `p${k}`))
  await redis.call('APBF.RESERVE', 'window', 'COUNT', '0.01', '5000')
  await redis.call('APBF.ADD', 'window', ...Array.from({ length: 1000 }, (_, k) => `w${k}`))
}

/** `start` (BGSAVE or BGREWRITEAOF) with adds of every kind after it in the same write; resolves once all are answered. */
async function startWithAdds(port: number, start: string): Promise<void> {
  const writer = await RawClient.connect(port)
  const commands: string[][] = [[start]]
  for (let i = 0; i < 300; i++) {
    commands.push(['BF.ADD', 'grown', `during-a${i}`], ['BF.ADD', 'plain', `during-a${i}`])
    commands.push(
      ['BF.MADD', 'grown', `during-m${i}-0`, `during-m${i}-1`],
      ['BF.INSERT', 'plain', 'ITEMS', `during-i${i}-0`, `during-i${i}-1`],
    )
    commands.push(['BF.INSERT', 'grown', 'ITEMS', `during-i${i}`], ['APBF.ADD', 'window', `during-w${i}`])
  }
  writer.write(Buffer.concat(commands.map((command) => encodeCommand(command))))
  // Twelve reply lines a round: two BF.ADD; BF.MADD and BF.INSERT plain, a header and two items;
  // BF.INSERT grown and APBF.ADD, a header and one item.
  await writer.readUntil((bytes) => bytes.toString('latin1').split('\r\n').length - 1 >= 1 + 300 * 12)
  writer.close()
}

async function waitIdle(redis: Redis): Promise<void> {
  await until(async () => {
    const fields = await infoFields(redis, 'persistence')
    return fields.get('rdb_bgsave_in_progress') === '0' && fields.get('aof_rewrite_in_progress') === '0'
  }, 'the background save is over')
  const fields = await infoFields(redis, 'persistence')
  expect([fields.get('rdb_last_bgsave_status'), fields.get('aof_last_bgrewrite_status')]).toEqual(['ok', 'ok'])
}

describe('counts after a restart equal those before it', () => {
  for (const start of ['BGSAVE', 'BGREWRITEAOF']) {
    it(`adds made while ${start} writes a filter: the same BF.CARD and items after kill -9, and after a clean restart`, async () => {
      const dir = makeTempDir('bfs-counts-')
      dirs.push(dir)
      const port = await freePort()
      const first = await startChild(dir, port)
      await fill(first.redis)
      await startWithAdds(port, start)
      await waitIdle(first.redis)
      const before = await counts(first.redis)
      // Some adds of the same write after the save finished: replayed over the snapshot too.
      await first.redis.call('BF.ADD', 'grown', 'after')
      const after = await counts(first.redis)
      await killChildServer(first.bfs)

      const second = await startChild(dir, port)
      expect(await counts(second.redis)).toEqual(after)
      expect(
        await second.redis.call('BF.MEXISTS', 'grown', 'during-a0', 'during-m299-1', 'during-i150', 'after'),
      ).toEqual([1, 1, 1, 1])
      expect(before).not.toEqual(after)
      // The connection closes without a reply.
      await second.redis.call('SHUTDOWN').catch(() => {})
      expect(await second.bfs.waitExit()).toBe(0)

      const third = await startChild(dir, port)
      expect(await counts(third.redis)).toEqual(after)
      await killChildServer(third.bfs)
    }, 120_000)
  }

  it('a replica that synced in full while its master took adds counts what its master counts', async () => {
    const master = await startServer({})
    servers.push(master)
    const replica = await startServer({})
    servers.push(replica)
    const redis = new Redis({ port: master.port, host: '127.0.0.1' })
    clients.push(redis)
    await fill(redis)
    const replicaClient = new Redis({ port: replica.port, host: '127.0.0.1' })
    clients.push(replicaClient)
    // The full sync's capture and the adds: the adds wait in the same write as the REPLICAOF's effect.
    const adding = (async () => {
      for (let round = 0; round < 20; round++) await startWithAdds(master.port, 'PING')
    })()
    await replicaClient.call('REPLICAOF', '127.0.0.1', String(master.port))
    await adding
    await until(
      async () => (await infoFields(replicaClient, 'replication')).get('master_link_status') === 'up',
      'link up',
    )
    expect(await redis.call('WAIT', '1', '10000')).toBe(1)
    expect(await counts(replicaClient)).toEqual(await counts(redis))
  }, 120_000)
})
