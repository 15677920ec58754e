/**
 * Window filters kept across restarts and copied to replicas: SAVE and a restart, the append-only
 * log replayed after kill -9 (TIME adds are logged with their time, as APBF.ADDAT), BGREWRITEAOF,
 * a restart after a downtime longer than the window, and a replica's full sync and stream. Each
 * compares the answers and APBF.INFO of the filters, before and after.
 */
import { rmSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { childClient, killChildServer, startChildServer } from '../helpers/child-server.js'
import { infoFields, until } from '../helpers/replication-info.js'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { makeTempDir } from '../helpers/temp-dir.js'
import { freePort, type InteractiveTool } from '../helpers/tools.js'

const dirs: string[] = []
const children: InteractiveTool[] = []
const cleanups: (() => Promise<unknown> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
afterAll(() => {
  for (const child of children) child.kill()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const items = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}${i}`)
const PROBES = [...items('c-', 600), ...items('t-', 600), ...items('never-', 300)]

/** A COUNT window shifted many times, a TIME window with adds spread over its span, a Bloom filter. */
async function fill(redis: Redis): Promise<void> {
  await redis.call('APBF.RESERVE', 'c', 'COUNT', '0.01', '200')
  await redis.call('APBF.RESERVE', 't', 'TIME', '0.01', '100', '3600')
  for (let i = 0; i < 600; i += 100) await redis.call('APBF.ADD', 'c', ...items('c-', 600).slice(i, i + 100))
  const now = Date.now()
  for (let i = 0; i < 600; i += 50)
    await redis.call('APBF.ADDAT', 't', String(now - 3_000_000 + i * 5000), ...items('t-', 600).slice(i, i + 50))
  await redis.call('APBF.ADD', 't', 'now-1', 'now-2')
  await redis.call('BF.MADD', 'b', ...items('b-', 100))
}

/** What must survive: each window's answers for the probes and its APBF.INFO, and the Bloom filter's. */
async function state(redis: Redis): Promise<unknown[]> {
  return [
    await redis.call('APBF.INFO', 'c'),
    await redis.call('APBF.INFO', 't'),
    await redis.call('APBF.EXISTS', 'c', ...PROBES),
    await redis.call('APBF.EXISTS', 't', ...PROBES, 'now-1', 'now-2'),
    await redis.call('BF.MEXISTS', 'b', ...items('b-', 100)),
    await redis.type('c'),
    await redis.type('t'),
  ]
}

async function inProcess(dir: string): Promise<{ running: RunningServer; redis: Redis }> {
  const running = await startServer({ dir })
  const redis = new Redis({ port: running.port, host: '127.0.0.1' })
  cleanups.push(
    () => running.stop(),
    () => redis.disconnect(),
  )
  return { running, redis }
}

describe('window filters on disk', () => {
  it('come back the same after SAVE and a restart', async () => {
    const dir = makeTempDir('bfs-window-save-')
    dirs.push(dir)
    const first = await inProcess(dir)
    await fill(first.redis)
    const before = await state(first.redis)
    // The last 200 adds of the COUNT window, and every TIME add of the last hour, answer 1.
    expect((before[2] as number[]).slice(400, 600).every((one) => one === 1)).toBe(true)
    expect((before[3] as number[]).slice(600, 1200).every((one) => one === 1)).toBe(true)
    expect(await first.redis.call('SAVE')).toBe('OK')
    first.redis.disconnect()
    await first.running.stop()
    const second = await inProcess(dir)
    expect(await state(second.redis)).toEqual(before)
  })

  it('are replayed from the append-only log after kill -9, and after BGREWRITEAOF', async () => {
    const dir = makeTempDir('bfs-window-aof-')
    dirs.push(dir)
    const port = await freePort()
    const args = ['--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always']
    /** Kills the running child (if any) with -9 and starts the next on the same directory. */
    let running: { bfs: InteractiveTool; redis: Redis } | undefined
    const restart = async (): Promise<Redis> => {
      if (running !== undefined) {
        await killChildServer(running.bfs)
        running.redis.disconnect()
      }
      const { bfs } = await startChildServer(args)
      children.push(bfs)
      running = { bfs, redis: childClient(port) }
      return running.redis
    }
    try {
      let redis = await restart()
      await fill(redis)
      const before = await state(redis)
      redis = await restart()
      expect(await state(redis)).toEqual(before)
      expect(await redis.call('BGREWRITEAOF')).toMatch(/rewriting started/)
      await until(
        async () => (await infoFields(redis, 'persistence')).get('aof_rewrite_in_progress') === '0',
        'rewrite done',
      )
      await redis.call('APBF.ADD', 'c', 'after-rewrite')
      await redis.call('APBF.ADD', 't', 'after-rewrite')
      const rewritten = await state(redis)
      redis = await restart()
      expect(await state(redis)).toEqual(rewritten)
      expect(await redis.call('APBF.EXISTS', 'c', 'after-rewrite')).toEqual([1])
    } finally {
      running?.redis.disconnect()
      if (running !== undefined) await killChildServer(running.bfs)
    }
  })

  it('forget after a restart what aged out while the server was down', async () => {
    const dir = makeTempDir('bfs-window-down-')
    dirs.push(dir)
    const first = await inProcess(dir)
    await first.redis.call('APBF.RESERVE', 'w', 'TIME', '0.01', '100', '10')
    await first.redis.call('APBF.ADDAT', 'w', String(Date.now() - 8000), 'old')
    await first.redis.call('APBF.ADD', 'w', 'new')
    expect(await first.redis.call('APBF.EXISTS', 'w', 'old', 'new')).toEqual([1, 1])
    expect(await first.redis.call('SAVE')).toBe('OK')
    first.redis.disconnect()
    await first.running.stop()
    await sleep(3000) // 'old' is then 11 s old: past its 10 s window and the generation of slack
    const second = await inProcess(dir)
    expect(await second.redis.call('APBF.EXISTS', 'w', 'old', 'new')).toEqual([0, 1])
  })
})

describe('window filters on a replica', () => {
  it('arrive with the full sync and follow the stream', async () => {
    const master = await inProcess(makeTempDir('bfs-window-master-'))
    const replica = await inProcess(makeTempDir('bfs-window-replica-'))
    dirs.push(master.running.dir, replica.running.dir)
    await fill(master.redis)
    await replica.redis.call('REPLICAOF', '127.0.0.1', String(master.running.port))
    await until(
      async () => (await infoFields(replica.redis, 'replication')).get('master_link_status') === 'up',
      'link up',
    )
    await master.redis.call('APBF.ADD', 'c', ...items('streamed-', 50))
    await master.redis.call('APBF.ADD', 't', ...items('streamed-', 50))
    expect(await master.redis.call('WAIT', '1', '10000')).toBe(1)
    expect(await state(replica.redis)).toEqual(await state(master.redis))
    expect(await replica.redis.call('APBF.EXISTS', 't', ...items('streamed-', 50))).toEqual(Array(50).fill(1))
    await expect(replica.redis.call('APBF.ADD', 'c', 'mine')).rejects.toThrow('READONLY')
  })
})
