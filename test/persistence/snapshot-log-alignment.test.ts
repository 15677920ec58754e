/**
 * Every snapshot is an alignment point of the append-only log: BGSAVE, SAVE, a save rule, the
 * shutdown save and BGREWRITEAOF start a new segment at the moment they capture their data,
 * record it in the MANIFEST as `log-from`, and delete the older segments once the MANIFEST is
 * durable; a restart replays only the writes made after the snapshot's start point. The crash
 * cases run a child bfs (dist/main.js, built by `npm test`'s pretest) and kill it with SIGKILL.
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { makeTempDir } from '../helpers/temp-dir.js'
import { RawClient, encodeCommand } from '../helpers/resp.js'
import { freePort, type InteractiveTool } from '../helpers/tools.js'
import { childClient, killChildServer, startChildServer } from '../helpers/child-server.js'
import { loadUntilDeath, lostItems } from '../helpers/crash-load.js'
import { testIoThreads } from '../helpers/start-server.js'
import { createServer, type BfsServer } from '../../src/server/server.js'
import type { Config } from '../../src/runtime/config.js'
import { listSegments, segmentName } from '../../src/store/append-log.js'
import { MANIFEST_FILE, SNAPSHOT_DIR } from '../../src/store/snapshot.js'

const BASE = 'appendonly.aof'

const dirs: string[] = []
const running: { server: BfsServer; redis: Redis }[] = []
const children: InteractiveTool[] = []
afterEach(async () => {
  for (const { server, redis } of running.splice(0)) {
    redis.disconnect()
    await server.close()
  }
  for (const child of children.splice(0)) child.kill()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function tempDir(): string {
  const dir = makeTempDir('bfs-align-')
  dirs.push(dir)
  return dir
}

interface Started {
  server: BfsServer
  redis: Redis
  logs: string[]
}

async function boot(dir: string, config: Partial<Config> = {}): Promise<Started> {
  const logs: string[] = []
  const server = createServer({
    config: { port: 0, save: '', appendonly: true, appendfsync: 'everysec', ...testIoThreads(), ...config, dir },
    logSink: (line) => logs.push(line),
  })
  await server.start()
  const redis = new Redis({ port: server.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 })
  await redis.connect()
  running.push({ server, redis })
  return { server, redis, logs }
}

async function stop(started: Started): Promise<void> {
  running.splice(
    running.findIndex((entry) => entry.server === started.server),
    1,
  )
  started.redis.disconnect()
  await started.server.close()
}

const segments = (dir: string): number[] => listSegments(dir, BASE).map((segment) => segment.seq)
const manifest = (dir: string): string => readFileSync(path.join(dir, SNAPSHOT_DIR, MANIFEST_FILE), 'latin1')

/** Commands the start replayed from the log, or undefined when there was no segment. */
function replayedCommands(output: string): number | undefined {
  const match = /DB loaded from append only file: (\d+) commands/.exec(output)
  return match ? Number(match[1]) : undefined
}

function infoField(info: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*?)\\r?$`, 'm').exec(info)?.[1]
}

describe('snapshots align the append-only log', () => {
  it('a snapshot taken with appendonly no retires the segments an earlier run left', async () => {
    const dir = tempDir()
    // Run 1, log on: g is only in the log (no snapshot after it).
    const first = await boot(dir)
    await first.redis.call('BF.ADD', 'f', 'a')
    await first.redis.call('SAVE')
    await first.redis.call('BF.ADD', 'g', 'b')
    await stop(first)
    expect(segments(dir).length).toBeGreaterThan(0)
    // Run 2, log off: g is not loaded (as redis ignores its AOF then); this run's snapshot is the truth.
    const second = await boot(dir, { appendonly: false })
    expect(await second.redis.exists('g')).toBe(0)
    await second.redis.call('BF.ADD', 'h', 'c')
    await second.redis.call('SAVE')
    await stop(second)
    expect(segments(dir)).toEqual([])
    // Run 3, log on again: the old segment must not bring g back over the newer snapshot.
    const third = await boot(dir)
    expect(await third.redis.exists('g')).toBe(0)
    expect(await third.redis.call('BF.EXISTS', 'h', 'c')).toBe(1)
    expect(await third.redis.call('BF.EXISTS', 'f', 'a')).toBe(1)
  })

  it('BGSAVE, SAVE and a save rule each start a new segment and drop the older ones; a restart replays only what came after', async () => {
    const dir = tempDir()
    const first = await boot(dir)
    const { server, redis } = first
    await redis.call('BF.MADD', 'f', 'a', 'b')
    expect(segments(dir)).toEqual([1])

    expect(await redis.call('BGSAVE')).toBe('Background saving started')
    await server.persistence.snapshots.idle()
    expect(segments(dir)).toEqual([2])
    expect(manifest(dir)).toContain('\nlog-from 2\n')

    await redis.call('BF.ADD', 'f', 'c')
    expect(await redis.call('SAVE')).toBe('OK')
    expect(segments(dir)).toEqual([3])
    expect(manifest(dir)).toContain('\nlog-from 3\n')

    await redis.call('BF.ADD', 'f', 'd')
    // A save rule firing, as the periodic check does once the rule's seconds have passed (after
    // counting in the I/O threads' adds, as the server's cron does first).
    server.threadPlane?.fold()
    const job = server.persistence.snapshots.tick(server.registry, '1 1', Date.now() + 5_000)
    expect(job).toBeDefined()
    await job
    expect(segments(dir)).toEqual([4])
    expect(manifest(dir)).toContain('\nlog-from 4\n')
    const info = String(await redis.call('INFO', 'persistence'))
    expect(infoField(info, 'rdb_saves')).toBe('3')
    expect(infoField(info, 'rdb_last_bgsave_status')).toBe('ok')
    expect(infoField(info, 'aof_current_size')).toBe('0') // the older segments are gone, the new one is empty
    expect(infoField(info, 'aof_rewrites')).toBe('0')

    // Three records after the last snapshot: BF.ADD f e, then BF.RESERVE g and BF.ADD g x.
    await redis.call('BF.ADD', 'f', 'e')
    await redis.call('BF.ADD', 'g', 'x')
    const probe = async (client: Redis): Promise<unknown[]> => [
      await client.call('BF.MEXISTS', 'f', 'a', 'b', 'c', 'd', 'e'),
      await client.call('BF.CARD', 'f'),
      await client.call('BF.CARD', 'g'),
      await client.call('DBSIZE'),
    ]
    const before = await probe(redis)
    expect(before).toEqual([[1, 1, 1, 1, 1], 5, 1, 2])
    await stop(first)

    const second = await boot(dir)
    expect(replayedCommands(second.logs.join('\n'))).toBe(3)
    expect(await probe(second.redis)).toEqual(before)
  })

  it('what a snapshot holds is not replayed again: a DEL stays, a BF.LOAD is not read again from a changed file', async () => {
    const dir = tempDir()
    const first = await boot(dir)
    const { server, redis } = first
    await redis.call('BF.ADD', 'k', 'a')
    await redis.call('BF.ADD', 'src', 'one')
    await redis.call('BF.SAVE', 'src', 'src.bf')
    await redis.call('BF.LOAD', 'copy', 'src.bf')
    await redis.call('BGSAVE')
    await server.persistence.snapshots.idle()
    await redis.call('DEL', 'k')
    // The file BF.LOAD read changes after the snapshot, which holds what was loaded.
    await redis.call('BF.ADD', 'src', 'two')
    await redis.call('BF.SAVE', 'src', 'src.bf')
    await stop(first)

    const second = await boot(dir)
    expect(await second.redis.call('EXISTS', 'k')).toBe(0)
    expect(await second.redis.call('BF.CARD', 'copy')).toBe(1)
    expect(await second.redis.call('BF.EXISTS', 'copy', 'one')).toBe(1)
    expect(await second.redis.call('BF.MEXISTS', 'src', 'one', 'two')).toEqual([1, 1])
  })

  it('a logged BF.LOAD replays what was loaded, even after its file was overwritten or deleted', async () => {
    const dir = tempDir()
    const first = await boot(dir)
    const { redis } = first
    await redis.call('BF.ADD', 'a', 'from-a')
    await redis.call('BF.SAVE', 'a', 'f.bf')
    await redis.call('BF.LOAD', 'b', 'f.bf')
    await redis.call('BF.SAVE', 'a', 'g.bf')
    await redis.call('BF.LOAD', 'c', 'g.bf')
    // After the loads, and with no snapshot since: f.bf now holds another filter, g.bf is gone.
    await redis.call('BF.ADD', 'other', 'from-other')
    await redis.call('BF.SAVE', 'other', 'f.bf')
    rmSync(path.join(dir, 'g.bf'))
    await stop(first)

    const second = await boot(dir)
    expect(await second.redis.call('BF.MEXISTS', 'b', 'from-a', 'from-other')).toEqual([1, 0])
    expect(await second.redis.call('BF.MEXISTS', 'c', 'from-a', 'from-other')).toEqual([1, 0])
    expect(await second.redis.call('BF.CARD', 'b')).toBe(1)
  })

  it('adds made while a BGSAVE runs are replayed over it: the same BF.CARD after a restart', async () => {
    const dir = tempDir()
    const first = await boot(dir)
    const { server, redis } = first
    await redis.call('BF.RESERVE', 'f', '0.001', '100000')
    await redis.call('BF.MADD', 'f', ...Array.from({ length: 500 }, (_, i) => `before-${i}`))
    const writer = await RawClient.connect(server.port)
    const batch = (round: number): Buffer =>
      Buffer.concat(Array.from({ length: 50 }, (_, i) => encodeCommand(['BF.ADD', 'f', `during-${round}-${i}`])))
    // The BGSAVE arrives in the middle of a pipeline: adds before it in the same read, adds after.
    writer.write(Buffer.concat([batch(0), encodeCommand(['BGSAVE']), batch(1)]))
    let round = 2
    while (server.persistence.snapshots.inProgress || round < 6) {
      writer.write(batch(round++))
      await new Promise((resolve) => setImmediate(resolve))
    }
    await server.persistence.snapshots.idle()
    await writer.readUntil((bytes) => bytes.toString('latin1').split(':').length - 1 >= round * 50)
    writer.close()
    const card = await redis.call('BF.CARD', 'f')
    expect(card).toBeGreaterThan(500)
    await stop(first)

    const second = await boot(dir)
    expect(await second.redis.call('BF.CARD', 'f')).toBe(card)
    const items = Array.from({ length: round }, (_, r) =>
      Array.from({ length: 50 }, (_, i) => `during-${r}-${i}`),
    ).flat()
    expect(await second.redis.call('BF.MEXISTS', 'f', ...items)).toEqual(items.map(() => 1))
  })

  it('a restart after many snapshots replays nothing the snapshot holds', async () => {
    const dir = tempDir()
    const first = await boot(dir)
    const { server, redis } = first
    for (let round = 0; round < 6; round++) {
      await redis.call('BF.MADD', `r${round}`, ...Array.from({ length: 50 }, (_, i) => `${round}-${i}`))
      await redis.call('BF.ADD', 'shared', `s${round}`)
      if (round === 1) await redis.call('RENAME', 'r0', 'renamed')
      if (round === 2) await redis.call('DEL', 'r1')
      if (round === 3) {
        await redis.call('FLUSHALL')
        await redis.call('BF.RESERVE', 'shared', '0.001', '20', 'EXPANSION', '2')
        await redis.call('BF.ADD', 'shared', 'after-flush')
      }
      if (round % 2 === 0) expect(await redis.call('SAVE')).toBe('OK')
      else {
        await redis.call('BGSAVE')
        await server.persistence.snapshots.idle()
      }
      expect(segments(dir)).toEqual([round + 2])
    }
    const probe = async (client: Redis): Promise<unknown[]> => [
      await client.call('DBSIZE'),
      await client.call('EXISTS', 'r0', 'r1', 'r2', 'r3', 'renamed'),
      await client.call('BF.CARD', 'shared'),
      await client.call('BF.INFO', 'shared'),
      await client.call('BF.CARD', 'r5'),
      await client.call('BF.MEXISTS', 'shared', 'after-flush', 's4', 's5'),
    ]
    const before = await probe(redis)
    expect(before.slice(0, 3)).toEqual([3, 0, 3])
    await stop(first)

    const second = await boot(dir)
    expect(replayedCommands(second.logs.join('\n'))).toBe(0)
    expect(await probe(second.redis)).toEqual(before)
    expect(segments(dir)).toEqual([7])
  })

  it('the shutdown save and BGREWRITEAOF are alignment points too', async () => {
    const dir = tempDir()
    const first = await boot(dir, { save: '3600 1' })
    await first.redis.call('BF.ADD', 'f', 'a')
    expect(await first.redis.call('BGREWRITEAOF')).toBe('Background append only file rewriting started')
    await first.server.persistence.logRewriter.idle()
    expect(segments(dir)).toEqual([2])
    expect(infoField(String(await first.redis.call('INFO', 'persistence')), 'aof_rewrites')).toBe('1')
    await first.redis.call('BF.ADD', 'f', 'b')
    await stop(first) // save rules set: the final save rotates to segment 3 and drops segment 2
    expect(segments(dir)).toEqual([3])
    expect(manifest(dir)).toContain('\nlog-from 3\n')

    const second = await boot(dir, { save: '3600 1' })
    expect(replayedCommands(second.logs.join('\n'))).toBe(0)
    expect(await second.redis.call('BF.MEXISTS', 'f', 'a', 'b')).toEqual([1, 1])
  })

  it('with appendonly no a snapshot still aligns: segments of an earlier run, never loaded, are retired', async () => {
    const dir = tempDir()
    const first = await boot(dir)
    await first.redis.call('BF.ADD', 'f', 'a')
    expect(await first.redis.call('SAVE')).toBe('OK')
    await first.redis.call('BF.ADD', 'f', 'b')
    await stop(first)
    expect(segments(dir)).toEqual([2])

    const off = await boot(dir, { appendonly: false })
    expect(off.logs.join('\n')).toContain('not loaded')
    expect(await off.redis.call('BF.MEXISTS', 'f', 'a', 'b')).toEqual([1, 0])
    await off.redis.call('BF.ADD', 'g', 'c')
    expect(await off.redis.call('SAVE')).toBe('OK')
    // This run served (and saved) a dataset without segment 2: the snapshot is the truth from here.
    expect(manifest(dir)).toContain('\nlog-from 3\n')
    expect(segments(dir)).toEqual([])
    await stop(off)

    const on = await boot(dir)
    expect(replayedCommands(on.logs.join('\n'))).toBeUndefined()
    expect(await on.redis.call('BF.MEXISTS', 'f', 'a', 'b')).toEqual([1, 0])
    expect(await on.redis.call('BF.EXISTS', 'g', 'c')).toBe(1)
  })
})

// ------------------------------------------------------------------ a real process, killed

async function startChild(dir: string, port: number, fsync: string): Promise<InteractiveTool> {
  const { bfs } = await startChildServer([
    '--port',
    String(port),
    '--dir',
    dir,
    '--appendonly',
    'yes',
    '--appendfsync',
    fsync,
    '--save',
    '',
  ])
  children.push(bfs)
  return bfs
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe('kill -9 and the alignment', () => {
  it('between the MANIFEST commit and the segment deletion: the leftover segment is skipped and removed', async () => {
    const dir = tempDir()
    const port = await freePort()
    const first = await startChild(dir, port, 'always')
    const redis = childClient(port)
    await redis.call('BF.ADD', 'k', 'a')
    await redis.call('DEL', 'k')
    await redis.call('BF.ADD', 'kept', 'x')
    const segment1 = path.join(dir, segmentName(BASE, 1))
    const leftover = readFileSync(segment1) // appendfsync always: on disk before the replies
    expect(await redis.call('SAVE')).toBe('OK')
    expect(existsSync(segment1)).toBe(false)
    await redis.call('BF.ADD', 'kept', 'y')
    redis.disconnect()
    await killChildServer(first)

    // What a crash right after the commit leaves: segment 1 as it was. The extra record, never
    // applied, shows that the restart does not read it.
    writeFileSync(segment1, Buffer.concat([leftover, encodeCommand(['BF.ADD', 'ghost', 'boo'])]))
    expect(manifest(dir)).toContain('\nlog-from 2\n')
    const second = await startChild(dir, port, 'always')
    const output = second.stdout + second.stderr
    expect(output).toMatch(/Removed 1 append only file segment\(s\) below 2/)
    expect(replayedCommands(output)).toBe(1)
    expect(existsSync(segment1)).toBe(false)
    const again = childClient(port)
    try {
      expect(await again.call('EXISTS', 'ghost', 'k')).toBe(0)
      expect(await again.call('BF.MEXISTS', 'kept', 'x', 'y')).toEqual([1, 1])
      expect(await again.call('BF.CARD', 'kept')).toBe(2)
    } finally {
      again.disconnect()
      await killChildServer(second)
    }
  })

  it('under load during and after a BGSAVE with appendfsync always: every acknowledged add answers 1', async () => {
    for (const phase of ['during', 'after'] as const) {
      const dir = tempDir()
      const port = await freePort()
      const first = await startChild(dir, port, 'always')
      const setup = childClient(port)
      await setup.call('BF.RESERVE', 'crash', '0.0001', '2000000')
      // About 128 MiB of bitmap, so the background save takes a while.
      await setup.call('BF.RESERVE', 'big', '0.001', '70000000')
      await setup.call('BF.ADD', 'big', 'x')
      const acked: string[] = []
      const loaders = Array.from({ length: 4 }, (_, index) =>
        loadUntilDeath(port, 'crash', index, (item) => acked.push(item)),
      )
      await sleep(100 + Math.floor(Math.random() * 200))
      expect(await setup.call('BGSAVE')).toBe('Background saving started')
      const snapshotDir = path.join(dir, SNAPSHOT_DIR)
      if (phase === 'during') {
        for (let i = 0; i < 2000 && !readdirSync(snapshotDir).some((file) => file.endsWith('.tmp')); i++) await sleep(2)
        expect(readdirSync(snapshotDir).some((file) => file.endsWith('.tmp'))).toBe(true)
        await sleep(Math.floor(Math.random() * 20))
      } else {
        for (
          let i = 0;
          i < 600 && infoField(String(await setup.call('INFO', 'persistence')), 'rdb_bgsave_in_progress') !== '0';
          i++
        ) {
          await sleep(25)
        }
        expect(infoField(String(await setup.call('INFO', 'persistence')), 'rdb_last_bgsave_status')).toBe('ok')
        await sleep(50 + Math.floor(Math.random() * 200))
      }
      setup.disconnect()
      await killChildServer(first)
      await Promise.all(loaders)
      expect(acked.length).toBeGreaterThan(0)

      const committed = existsSync(path.join(snapshotDir, MANIFEST_FILE))
      if (phase === 'after') expect(committed).toBe(true)
      const second = await startChild(dir, port, 'always')
      if (committed) {
        // The snapshot holds everything before its start point; only the newer segment replays.
        expect(manifest(dir)).toContain('\nlog-from 2\n')
        expect(segments(dir)).toEqual([2])
        expect(replayedCommands(second.stdout + second.stderr)).toBeLessThan(acked.length)
      } else {
        // Killed before the snapshot committed: nothing was dropped, both segments replay.
        expect(segments(dir)).toEqual([1, 2])
      }
      expect(await lostItems(port, 'crash', acked)).toEqual([])
      await killChildServer(second)
    }
  }, 120_000)
})
