/**
 * A start never drops acknowledged data (issue 15): loading applies no limit (maxmemory,
 * max-filter-bytes) to what it loads, never deletes filter files that no MANIFEST proves stray,
 * and refuses to start without a log segment the snapshot says follows it. Each case writes to a
 * real bfs (dist/main.js), kills it with SIGKILL, changes the setting or the files, and restarts.
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { makeTempDir } from '../helpers/temp-dir.js'
import { encodeCommand } from '../helpers/resp.js'
import type { InteractiveTool } from '../helpers/tools.js'
import { childClient, killChildServer, startChildServer, type ChildServer } from '../helpers/child-server.js'
import { lostItems } from '../helpers/crash-load.js'
import { segmentName } from '../../src/store/append-log.js'
import { MANIFEST_FILE, SNAPSHOT_DIR } from '../../src/store/snapshot.js'

const BASE = 'appendonly.aof'
const dirs: string[] = []
const children: InteractiveTool[] = []
afterEach(() => {
  for (const child of children.splice(0)) child.kill()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function tempDir(): string {
  const dir = makeTempDir('bfs-load-')
  dirs.push(dir)
  return dir
}

/** A child bfs on `dir` with the log on (fsync always) and no save rules, plus `extra` flags. */
async function child(dir: string, extra: string[] = []): Promise<ChildServer> {
  const started = await startChildServer([
    '--port',
    '0',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'yes',
    '--appendfsync',
    'always',
    ...extra,
  ])
  children.push(started.bfs)
  return started
}

/** The start's failure output, asserting that it did fail. */
async function failedStart(dir: string, extra: string[] = []): Promise<string> {
  try {
    const started = await child(dir, extra)
    started.bfs.kill()
  } catch (error) {
    return (error as Error).message
  }
  throw new Error('the server started')
}

const items = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}${i}`)

/** Adds `all` to `key` in BF.MADD batches of 500. */
async function addAll(port: number, key: string, all: readonly string[]): Promise<void> {
  const redis = childClient(port)
  try {
    for (let at = 0; at < all.length; at += 500) await redis.call('BF.MADD', key, ...all.slice(at, at + 500))
  } finally {
    redis.disconnect()
  }
}

const output = (bfs: InteractiveTool): string => bfs.stdout + bfs.stderr

describe('loading applies no limit to acknowledged data', () => {
  it('a restart with a lower maxmemory loads every logged item, warns, then refuses writes with -OOM while reads and DEL work', async () => {
    const dir = tempDir()
    const first = await child(dir)
    const all = items('item-', 5000)
    await addAll(first.port, 'f', all)
    const before = childClient(first.port)
    const card = await before.call('BF.CARD', 'f')
    before.disconnect()
    await killChildServer(first.bfs)

    const second = await child(dir, ['--maxmemory', '5kb'])
    expect(await lostItems(second.port, 'f', all)).toEqual([])
    expect(output(second.bfs)).toMatch(/exceeds maxmemory/)
    const redis = childClient(second.port)
    try {
      await expect(redis.call('BF.ADD', 'f', 'new')).rejects.toThrow(
        /^OOM command not allowed when used memory > 'maxmemory'/,
      )
      await expect(redis.call('BF.RESERVE', 'g', '0.01', '100')).rejects.toThrow(/^OOM/)
      expect(await redis.call('BF.CARD', 'f')).toBe(card)
      // The snapshot written now holds everything: a later start loses nothing either.
      expect(await redis.call('SAVE')).toBe('OK')
      await killChildServer(second.bfs)
      const third = await child(dir, ['--maxmemory', '5kb'])
      expect(await lostItems(third.port, 'f', all)).toEqual([])
      const again = childClient(third.port)
      try {
        expect(await again.call('DEL', 'f')).toBe(1)
        expect(await again.call('BF.ADD', 'g', 'x')).toBe(1)
      } finally {
        again.disconnect()
      }
    } finally {
      redis.disconnect()
    }
  })

  it('a restart with a lower max-filter-bytes loads the filter from snapshot and log; adds that fit go on, growth is refused', async () => {
    const dir = tempDir()
    const first = await child(dir)
    const redis = childClient(first.port)
    await redis.call('BF.RESERVE', 'f', '0.01', '1000')
    const saved = items('saved-', 3000)
    await addAll(first.port, 'f', saved)
    expect(await redis.call('SAVE')).toBe('OK')
    const logged = items('logged-', 4000)
    await addAll(first.port, 'f', logged)
    // A filter over the limit created after the snapshot: only the log has it.
    await redis.call('BF.RESERVE', 'big', '0.001', '10000')
    await redis.call('BF.ADD', 'big', 'x')
    redis.disconnect()
    await killChildServer(first.bfs)

    const second = await child(dir, ['--max-filter-bytes', '1000'])
    expect(await lostItems(second.port, 'f', [...saved, ...logged])).toEqual([])
    expect(await lostItems(second.port, 'big', ['x'])).toEqual([])
    expect(output(second.bfs)).toMatch(/"f" .*exceeds? max-filter-bytes/)
    const after = childClient(second.port)
    try {
      // The newest layer of 'big' has room: an add allocates nothing and goes on.
      expect(await after.call('BF.ADD', 'big', 'y')).toBe(1)
      // 'f' needs a new layer sooner or later: that is refused with BF.RESERVE's text.
      const more = (await after.call('BF.MADD', 'f', ...items('more-', 20000))) as unknown[]
      expect(more.length).toBeLessThan(20000)
      expect(String(more[more.length - 1])).toMatch(/filter would exceed the maximum filter size/)
      expect(await after.call('DEL', 'f')).toBe(1)
    } finally {
      after.disconnect()
    }
  })
})

describe('a start never deletes what no MANIFEST proves stray', () => {
  /** A snapshot of 100 items, one more write in the log after it, SIGKILL. */
  async function snapshotThenCrash(dir: string): Promise<string[]> {
    const first = await child(dir)
    const all = items('snap-', 100)
    await addAll(first.port, 'f', all)
    const redis = childClient(first.port)
    expect(await redis.call('SAVE')).toBe('OK')
    expect(await redis.call('BF.ADD', 'f', 'after')).toBe(1)
    redis.disconnect()
    await killChildServer(first.bfs)
    return all
  }

  const filterFiles = (dir: string): string[] =>
    readdirSync(path.join(dir, SNAPSHOT_DIR)).filter((name) => name.endsWith('.bf'))

  it('refuses to start without the MANIFEST, naming it, and keeps the filter files', async () => {
    const dir = tempDir()
    const all = await snapshotThenCrash(dir)
    const files = filterFiles(dir)
    expect(files).toHaveLength(1)
    const manifestPath = path.join(dir, SNAPSHOT_DIR, MANIFEST_FILE)
    const manifest = readFileSync(manifestPath)
    rmSync(manifestPath)
    expect(await failedStart(dir)).toMatch(/MANIFEST.*missing/)
    expect(filterFiles(dir)).toEqual(files)
    // The MANIFEST back (as a backup would restore it): everything is there.
    writeFileSync(manifestPath, manifest)
    const started = await child(dir)
    expect(await lostItems(started.port, 'f', [...all, 'after'])).toEqual([])
  })

  it('with snapshot-on-corrupt move-aside, moves the orphaned filter files aside instead', async () => {
    const dir = tempDir()
    await snapshotThenCrash(dir)
    const files = filterFiles(dir)
    rmSync(path.join(dir, SNAPSHOT_DIR, MANIFEST_FILE))
    const started = await child(dir, ['--snapshot-on-corrupt', 'move-aside', '--aof-load-corrupt', 'yes'])
    expect(output(started.bfs)).toMatch(/moved aside/)
    const kept = readdirSync(path.join(dir, SNAPSHOT_DIR))
    expect(kept.some((name) => name.startsWith(files[0]!) && name.endsWith('.corrupt'))).toBe(true)
  })

  it('refuses to start on a log that follows a snapshot whose MANIFEST and files are gone', async () => {
    const dir = tempDir()
    await snapshotThenCrash(dir)
    rmSync(path.join(dir, SNAPSHOT_DIR), { recursive: true })
    expect(await failedStart(dir)).toMatch(new RegExp(`${segmentName(BASE, 1).replace(/\./g, '\\.')}.*doesn't exist`))
  })

  it("starts after a crash between a first snapshot's files and its MANIFEST: the log holds every write", async () => {
    // The state a kill -9 leaves in a first BGSAVE after its filter files, before its MANIFEST:
    // a filter file, no MANIFEST, and the log from segment 1 on (nothing was ever dropped).
    const dir = tempDir()
    const first = await child(dir)
    const all = items('log-', 100)
    await addAll(first.port, 'f', all)
    const redis = childClient(first.port)
    expect(await redis.call('BF.SAVE', 'f', 'copy.bf')).toBe('OK') // a filter file as a snapshot writes it
    redis.disconnect()
    await killChildServer(first.bfs)
    const snapshotDir = path.join(dir, SNAPSHOT_DIR)
    expect(existsSync(path.join(snapshotDir, MANIFEST_FILE))).toBe(false)
    expect(existsSync(path.join(dir, segmentName(BASE, 1)))).toBe(true)
    renameSync(path.join(dir, 'copy.bf'), path.join(snapshotDir, '000000000001.bf'))
    const started = await child(dir)
    expect(await lostItems(started.port, 'f', all)).toEqual([])
    expect(output(started.bfs)).toMatch(/a first snapshot that never committed/)
    // Moved aside, never deleted.
    expect(
      readdirSync(snapshotDir).filter((name) => name.startsWith('000000000001.bf') && name.endsWith('.corrupt')),
    ).toHaveLength(1)
  })

  it('a fresh directory still starts', async () => {
    const dir = tempDir()
    const started = await child(dir)
    const redis = childClient(started.port)
    try {
      expect(await redis.dbsize()).toBe(0)
      expect(await redis.call('BF.ADD', 'f', 'a')).toBe(1)
    } finally {
      redis.disconnect()
    }
  })
})

describe('a missing log segment stops the start', () => {
  /** A snapshot (log-from 2) and 50 items in segment 2 after it, SIGKILL. */
  async function logAfterSnapshot(dir: string): Promise<string[]> {
    const first = await child(dir)
    const redis = childClient(first.port)
    await redis.call('BF.ADD', 'f', 'before')
    expect(await redis.call('SAVE')).toBe('OK')
    redis.disconnect()
    const all = items('later-', 50)
    for (const item of all) await addAll(first.port, 'f', [item])
    await killChildServer(first.bfs)
    expect(existsSync(path.join(dir, segmentName(BASE, 2)))).toBe(true)
    return all
  }

  it('refuses to start without the segment the MANIFEST says the log starts at, unless aof-load-corrupt yes', async () => {
    const dir = tempDir()
    await logAfterSnapshot(dir)
    rmSync(path.join(dir, segmentName(BASE, 2)))
    expect(await failedStart(dir)).toMatch(/appendonly\.aof\.2\.incr\.aof doesn't exist/)
    const started = await child(dir, ['--aof-load-corrupt', 'yes'])
    expect(output(started.bfs)).toMatch(/appendonly\.aof\.2\.incr\.aof doesn't exist/)
    expect(await lostItems(started.port, 'f', ['before'])).toEqual([])
  })

  it('refuses to start on a gap in the middle (segments 2 and 4, not 3), naming segment 3', async () => {
    const dir = tempDir()
    const all = await logAfterSnapshot(dir)
    writeFileSync(path.join(dir, segmentName(BASE, 4)), encodeCommand(['BF.ADD', 'f', 'in-four']))
    expect(await failedStart(dir)).toMatch(/appendonly\.aof\.3\.incr\.aof doesn't exist/)
    const started = await child(dir, ['--aof-load-corrupt', 'yes'])
    expect(output(started.bfs)).toMatch(/appendonly\.aof\.3\.incr\.aof doesn't exist/)
    expect(await lostItems(started.port, 'f', [...all, 'in-four'])).toEqual([])
  })
})
