/**
 * Cuckoo filters kept across restarts and copied to replicas and other servers: SAVE and a
 * restart, the append-only log replayed after kill -9 and after BGREWRITEAOF, a replica's full
 * sync and stream, DUMP/RESTORE and MIGRATE. Each compares every filter's CF.SCANDUMP (the raw
 * buckets and counters) and answers, before and after.
 */
import { rmSync } from 'node:fs'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { childClient, killChildServer, startChildServer } from '../helpers/child-server.js'
import { infoFields, until } from '../helpers/replication-info.js'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { makeTempDir } from '../helpers/temp-dir.js'
import { freePort, type InteractiveTool } from '../helpers/tools.js'
import { RawClient, encodeCommand } from '../helpers/resp.js'

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
const PROBES = [...items('g-', 400), ...items('a-', 200), ...items('never-', 200)]
const KEYS = ['grown', 'auto', 'loaded']

/** A filter grown to several sub-filters with deletes, an auto-created one, one made by CF.LOADCHUNK. */
async function fill(redis: Redis): Promise<void> {
  await redis.call('CF.RESERVE', 'grown', '64', 'BUCKETSIZE', '2', 'MAXITERATIONS', '5', 'EXPANSION', '2')
  for (let i = 0; i < 400; i += 100)
    await redis.call('CF.INSERT', 'grown', 'ITEMS', ...items('g-', 400).slice(i, i + 100))
  for (const item of items('g-', 30)) await redis.call('CF.DEL', 'grown', item)
  await redis.call('CF.ADD', 'grown', 'g-1') // added twice, deleted once: still there
  await redis.call('CF.COMPACT', 'grown')
  await redis.call('CF.INSERTNX', 'auto', 'ITEMS', ...items('a-', 200))
  await redis.call('CF.ADD', 'auto', 'a-1')
  await redis.call('CF.DEL', 'auto', 'a-1')
  const dump = await scandump(redis, 'grown')
  for (const [cursor, data] of dump) await redis.call('CF.LOADCHUNK', 'loaded', String(cursor), data)
  await redis.call('BF.ADD', 'bloom', 'x')
}

async function scandump(redis: Redis, key: string): Promise<[number, Buffer][]> {
  const chunks: [number, Buffer][] = []
  for (let cursor = 0; ;) {
    const [next, data] = (await redis.callBuffer('CF.SCANDUMP', key, String(cursor))) as [number, Buffer | null]
    if (next === 0 || data === null) return chunks
    chunks.push([next, data])
    cursor = next
  }
}

/** What must survive: each filter's dump, CF.INFO and answers, and its TYPE. */
async function state(redis: Redis): Promise<unknown[]> {
  const out: unknown[] = []
  for (const key of KEYS) {
    out.push(
      key,
      await scandump(redis, key),
      await redis.call('CF.INFO', key),
      await redis.call('CF.MEXISTS', key, ...PROBES),
      await redis.type(key),
    )
  }
  out.push(await redis.call('CF.COUNT', 'grown', 'g-1'), await redis.pttl('grown'))
  return out
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

describe('Cuckoo filters on disk', () => {
  it('come back the same after SAVE and a restart, expiry included', async () => {
    const dir = makeTempDir('bfs-cuckoo-save-')
    dirs.push(dir)
    const first = await inProcess(dir)
    await fill(first.redis)
    await first.redis.call('PEXPIREAT', 'grown', String(Date.now() + 3_600_000))
    const before = await state(first.redis)
    expect((before[3] as number[]).slice(30, 400).every((one) => one === 1)).toBe(true)
    expect((before[3] as number[])[1]).toBe(1) // g-1: added twice, deleted once
    expect(await first.redis.call('SAVE')).toBe('OK')
    first.redis.disconnect()
    await first.running.stop()
    const second = await inProcess(dir)
    const after = await state(second.redis)
    expect(after.slice(0, -1)).toEqual(before.slice(0, -1))
    expect(after.at(-1)).toBeGreaterThan(3_500_000)
  })

  it('are replayed from the append-only log after kill -9, and after BGREWRITEAOF', async () => {
    const dir = makeTempDir('bfs-cuckoo-aof-')
    dirs.push(dir)
    const port = await freePort()
    const args = ['--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always']
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
      await redis.call('CF.ADD', 'grown', 'after-rewrite')
      await redis.call('CF.DEL', 'auto', 'a-2')
      const rewritten = await state(redis)
      redis = await restart()
      expect(await state(redis)).toEqual(rewritten)
      expect(await redis.call('CF.EXISTS', 'grown', 'after-rewrite')).toBe(1)
    } finally {
      running?.redis.disconnect()
      if (running !== undefined) await killChildServer(running.bfs)
    }
  })
})

/** Command i of the kill -9 stream: adds, a delete of an item added two commands before every fifth. */
function streamCommand(i: number): string[] {
  return i % 5 === 4 ? ['CF.DEL', 'k', `s-${i - 2}`] : ['CF.ADD', 'k', `s-${i}`]
}

const RESERVE = ['CF.RESERVE', 'k', '256', 'MAXITERATIONS', '4', 'EXPANSION', '2']

/** Complete replies in `bytes` (the stream's are all integers: one line each). */
function replyCount(bytes: Buffer): number {
  let count = 0
  for (let at = bytes.indexOf('\r\n'); at !== -1; at = bytes.indexOf('\r\n', at + 2)) count++
  return count
}

describe('Cuckoo filters after kill -9', () => {
  it('under CF.ADD / CF.DEL load with appendfsync always equal a fresh replay of the acknowledged commands', async () => {
    const dir = makeTempDir('bfs-cuckoo-kill-')
    dirs.push(dir)
    const port = await freePort()
    const args = ['--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always']
    const { bfs } = await startChildServer(args)
    children.push(bfs)
    const raw = await RawClient.connect(port)
    cleanups.push(() => raw.close())
    raw.write(encodeCommand(RESERVE))
    expect((await raw.read(5)).toString()).toBe('+OK\r\n')
    let sent = 0
    let acked = 0
    // Batches of 16, each sent once the last is answered; the kill lands with one in flight.
    for (;;) {
      const batch = Array.from({ length: 16 }, (_, i) => streamCommand(sent + i))
      raw.write(Buffer.concat(batch.map((command) => encodeCommand(command))))
      sent += batch.length
      if (acked >= 1500) {
        await killChildServer(bfs)
        acked += replyCount(await raw.readUntil(() => false, 2000).catch(() => Buffer.alloc(0)))
        break
      }
      const replies = await raw.readUntil((bytes) => replyCount(bytes) >= batch.length)
      expect(replies.toString()).not.toMatch(/^-/m)
      acked += replyCount(replies)
    }
    const restarted = await startChildServer(args)
    children.push(restarted.bfs)
    const redis = childClient(port)
    cleanups.push(
      () => killChildServer(restarted.bfs),
      () => redis.disconnect(),
    )
    const recovered = await scandump(redis, 'k')
    // A fresh server given the acknowledged commands in order, then (written but unanswered) the next ones.
    const fresh = await inProcess(makeTempDir('bfs-cuckoo-fresh-'))
    dirs.push(fresh.running.dir)
    await fresh.redis.call(RESERVE[0]!, ...RESERVE.slice(1))
    for (let i = 0; i < acked; i++) await fresh.redis.call(streamCommand(i)[0]!, ...streamCommand(i).slice(1))
    let replayed = acked
    while (replayed < sent && JSON.stringify(await scandump(fresh.redis, 'k')) !== JSON.stringify(recovered)) {
      await fresh.redis.call(streamCommand(replayed)[0]!, ...streamCommand(replayed).slice(1))
      replayed++
    }
    expect(await scandump(fresh.redis, 'k')).toEqual(recovered)
    expect(await redis.call('CF.INFO', 'k')).toEqual(await fresh.redis.call('CF.INFO', 'k'))
    // The first 1500 commands, acknowledged in every run: the same items each time.
    const added = Array.from({ length: 1500 }, (_, i) => i).filter((i) => i % 5 !== 4 && (i + 2) % 5 !== 4)
    expect(await redis.call('CF.MEXISTS', 'k', ...added.map((i) => `s-${i}`))).toEqual(added.map(() => 1))
  })
})

describe('Cuckoo filters elsewhere', () => {
  it('arrive on a replica with the full sync and follow the stream', async () => {
    const master = await inProcess(makeTempDir('bfs-cuckoo-master-'))
    const replica = await inProcess(makeTempDir('bfs-cuckoo-replica-'))
    dirs.push(master.running.dir, replica.running.dir)
    await fill(master.redis)
    await replica.redis.call('REPLICAOF', '127.0.0.1', String(master.running.port))
    await until(
      async () => (await infoFields(replica.redis, 'replication')).get('master_link_status') === 'up',
      'link up',
    )
    await master.redis.call('CF.INSERT', 'grown', 'ITEMS', ...items('streamed-', 50))
    await master.redis.call('CF.DEL', 'grown', 'g-40')
    await master.redis.call('CF.COMPACT', 'grown')
    const dump = await scandump(master.redis, 'auto')
    for (const [cursor, data] of dump) await master.redis.call('CF.LOADCHUNK', 'streamed-copy', String(cursor), data)
    expect(await master.redis.call('WAIT', '1', '10000')).toBe(1)
    expect(await state(replica.redis)).toEqual(await state(master.redis))
    expect(await scandump(replica.redis, 'streamed-copy')).toEqual(dump)
    await expect(replica.redis.call('CF.ADD', 'grown', 'mine')).rejects.toThrow('READONLY')
  })

  it('move with DUMP/RESTORE, MIGRATE, MOVE and SWAPDB', async () => {
    const source = await inProcess(makeTempDir('bfs-cuckoo-source-'))
    const target = await inProcess(makeTempDir('bfs-cuckoo-target-'))
    dirs.push(source.running.dir, target.running.dir)
    await fill(source.redis)
    const before = await state(source.redis)
    for (const key of KEYS) {
      const payload = await source.redis.dumpBuffer(key)
      expect(await target.redis.call('RESTORE', key, '0', payload)).toBe('OK')
    }
    expect(await state(target.redis)).toEqual(before)
    await target.redis.call('FLUSHALL')
    for (const key of KEYS)
      expect(await source.redis.call('MIGRATE', '127.0.0.1', String(target.running.port), key, '0', '5000')).toBe('OK')
    expect(await state(target.redis)).toEqual(before)
    expect(await source.redis.call('EXISTS', ...KEYS)).toBe(0)
    for (const key of KEYS) expect(await target.redis.call('MOVE', key, '1')).toBe(1)
    expect(await target.redis.call('SWAPDB', '0', '1')).toBe('OK')
    expect(await state(target.redis)).toEqual(before)
  })
})
