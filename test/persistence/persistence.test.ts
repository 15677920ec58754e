/**
 * Persistence through a real bfs: SAVE, BGSAVE, LASTSAVE, INFO persistence, the save rules,
 * SHUTDOWN SAVE/NOSAVE, BF.SAVE / BF.LOAD (path escapes, original-library files built here from
 * the format description alone), corrupt files at start, and 100,000 items through a restart.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { makeTempDir } from '../helpers/temp-dir.js'
import type { Config } from '../../src/runtime/config.js'
import { OriginalFilter } from '../helpers/original-filter.js'

const cleanup: string[] = []
afterAll(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true })
})

function freshDir(): string {
  const dir = makeTempDir('bfs-persist-')
  cleanup.push(dir)
  return dir
}

async function withServer<T>(
  config: Partial<Config>,
  body: (redis: Redis, running: RunningServer) => Promise<T>,
): Promise<T> {
  const running = await startServer({ appendonly: false, ...config })
  const redis = new Redis({ port: running.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 })
  await redis.connect()
  try {
    return await body(redis, running)
  } finally {
    redis.disconnect()
    await running.stop()
  }
}

function infoField(info: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)\\r?$`, 'm').exec(info)?.[1]
}

// ------------------------------------------------------------------ tests

describe('SAVE, BGSAVE, LASTSAVE, INFO persistence', () => {
  it('answers as redis does and writes a loadable snapshot', async () => {
    const dir = freshDir()
    await withServer({ dir, save: '' }, async (redis) => {
      const before = await redis.info('persistence')
      expect(infoField(before, 'rdb_bgsave_in_progress')).toBe('0')
      expect(infoField(before, 'rdb_last_bgsave_status')).toBe('ok')
      expect(infoField(before, 'rdb_saves')).toBe('0')
      expect(infoField(before, 'loading')).toBe('0')
      await redis.call('BF.MADD', 'a', 'x', 'y', 'z')
      expect(infoField(await redis.info('persistence'), 'rdb_changes_since_last_save')).toBe('4')
      expect(await redis.call('SAVE')).toBe('OK')
      expect(infoField(await redis.info('persistence'), 'rdb_changes_since_last_save')).toBe('0')
      const lastsave = (await redis.call('LASTSAVE')) as number
      expect(Math.abs(lastsave - Date.now() / 1000)).toBeLessThan(5)
      await redis.call('BF.ADD', 'b', 'w')
      expect(await redis.call('BGSAVE')).toBe('Background saving started')
      // A BGSAVE right after the first finds it still running (or already done, on a fast disk).
      const second = await redis.call('BGSAVE').catch((e: Error) => e.message)
      expect(['Background saving started', 'ERR Background save already in progress']).toContain(second)
      await expect(redis.call('BGSAVE', 'NOW')).rejects.toThrow('ERR syntax error')
      for (let i = 0; i < 200 && infoField(await redis.info('persistence'), 'rdb_bgsave_in_progress') === '1'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      const info = await redis.info('persistence')
      expect(infoField(info, 'rdb_last_bgsave_status')).toBe('ok')
      expect(Number(infoField(info, 'rdb_saves'))).toBeGreaterThanOrEqual(2)
      expect(infoField(info, 'rdb_changes_since_last_save')).toBe('0')
    })
    await withServer({ dir, save: '' }, async (redis, running) => {
      expect(await redis.call('BF.MEXISTS', 'a', 'x', 'y', 'z', 'nope')).toEqual([1, 1, 1, 0])
      expect(await redis.call('BF.EXISTS', 'b', 'w')).toBe(1)
      expect(running.logs.some((line) => /DB loaded from disk: 2 filters, \d+ bytes, \d+ ms/.test(line))).toBe(true)
    })
  })

  it('saves by itself when a save rule fires (CONFIG SET save)', async () => {
    const dir = freshDir()
    await withServer({ dir, save: '' }, async (redis) => {
      await redis.call('BF.ADD', 'auto', 'item')
      // One second is the shortest rule redis 7.0 takes (save "0 1" is "Invalid save parameters").
      await redis.call('CONFIG', 'SET', 'save', '1 1')
      expect(await redis.call('CONFIG', 'GET', 'save')).toEqual(['save', '1 1'])
      for (
        let i = 0;
        i < 1000 && infoField(await redis.info('persistence'), 'rdb_changes_since_last_save') !== '0';
        i++
      ) {
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      expect(infoField(await redis.info('persistence'), 'rdb_saves')).toBe('1')
      await redis.call('CONFIG', 'SET', 'save', '')
    })
    await withServer({ dir, save: '' }, async (redis) => {
      expect(await redis.call('BF.EXISTS', 'auto', 'item')).toBe(1)
    })
  })

  it('SHUTDOWN NOSAVE skips the save rules; a close with rules saves; SHUTDOWN SAVE saves without rules', async () => {
    const dir = freshDir()
    let running = await startServer({ dir, save: '3600 1', appendonly: false })
    let redis = new Redis({ port: running.port, host: '127.0.0.1' })
    await redis.call('BF.ADD', 'kept', 'one')
    redis.disconnect()
    await running.stop() // rules set: saved
    running = await startServer({ dir, save: '3600 1', appendonly: false })
    expect(running.server.registry.has('kept')).toBe(true)
    redis = new Redis({ port: running.port, host: '127.0.0.1', retryStrategy: () => null })
    await redis.call('BF.ADD', 'lost', 'one')
    const done = new Promise((resolve) => running.server.once('shutdown', resolve))
    await redis.call('SHUTDOWN', 'NOSAVE').catch(() => {})
    await done
    redis.disconnect()
    running = await startServer({ dir, save: '', appendonly: false })
    expect(running.server.registry.has('lost')).toBe(false)
    expect(running.server.registry.has('kept')).toBe(true)
    running.server.registry.delete('kept')
    expect(running.server.shutdown({ save: true })).toBeUndefined()
    await new Promise((resolve) => running.server.once('shutdown', resolve))
    running = await startServer({ dir, save: '', appendonly: false })
    expect(running.server.registry.size).toBe(0)
    await running.stop()
  })
})

describe('BF.SAVE and BF.LOAD', () => {
  it('write and read one filter under dir; REPLACE; errors', async () => {
    const dir = freshDir()
    await withServer({ dir }, async (redis) => {
      await redis.call('BF.RESERVE', 'src', '0.001', '50', 'EXPANSION', '3')
      await redis.call('BF.MADD', 'src', ...Array.from({ length: 300 }, (_, i) => `i${i}`))
      mkdirSync(path.join(dir, 'exports'))
      expect(await redis.call('BF.SAVE', 'src', 'exports/src.bf')).toBe('OK')
      expect(readdirSync(path.join(dir, 'exports'))).toEqual(['src.bf'])
      expect(await redis.call('BF.LOAD', 'copy', 'exports/src.bf')).toBe('OK')
      expect(await redis.call('BF.INFO', 'copy')).toEqual(await redis.call('BF.INFO', 'src'))
      const probe = Array.from({ length: 2000 }, (_, i) => `i${i}`)
      expect(await redis.call('BF.MEXISTS', 'copy', ...probe)).toEqual(await redis.call('BF.MEXISTS', 'src', ...probe))
      await expect(redis.call('BF.LOAD', 'copy', 'exports/src.bf')).rejects.toThrow('ERR item exists')
      await redis.call('BF.ADD', 'other', 'x')
      expect(await redis.call('BF.LOAD', 'other', 'exports/src.bf', 'REPLACE')).toBe('OK')
      expect(await redis.call('BF.CARD', 'other')).toBe(await redis.call('BF.CARD', 'src'))
      await expect(redis.call('BF.LOAD', 'x', 'exports/src.bf', 'NOW')).rejects.toThrow('ERR syntax error')
      await expect(redis.call('BF.SAVE', 'missing', 'm.bf')).rejects.toThrow('ERR not found')
      await expect(redis.call('BF.LOAD', 'x', 'exports/none.bf')).rejects.toThrow(/ERR no such file/)
      writeFileSync(
        path.join(dir, 'junk.bf'),
        Buffer.from('not a filter at all, not at all, not at all, not at all, not at all'),
      )
      await expect(redis.call('BF.LOAD', 'x', 'junk.bf')).rejects.toThrow(/ERR bad filter file junk\.bf: bad magic/)
      expect(await redis.call('EXISTS', 'x')).toBe(0)
    })
  })

  it('refuses paths that leave dir or touch the snapshot', async () => {
    const dir = freshDir()
    const outside = freshDir()
    writeFileSync(path.join(outside, 'f.bf'), 'x')
    symlinkSync(outside, path.join(dir, 'link'))
    await withServer({ dir }, async (redis) => {
      await redis.call('BF.ADD', 'k', 'v')
      const cases: [string[], RegExp][] = [
        [['BF.SAVE', 'k', path.join(outside, 'g.bf')], /relative/],
        [['BF.SAVE', 'k', '../g.bf'], /'\.\.'/],
        [['BF.SAVE', 'k', 'link/g.bf'], /symlink/],
        [['BF.LOAD', 'n', 'link/f.bf'], /symlink/],
        [['BF.LOAD', 'n', '../' + path.basename(outside) + '/f.bf'], /'\.\.'/],
        [['BF.SAVE', 'k', 'snapshot/MANIFEST'], /own/],
      ]
      for (const [argv, message] of cases) {
        await expect(redis.call(argv[0]!, ...argv.slice(1))).rejects.toThrow(message)
      }
      expect(readdirSync(outside)).toEqual(['f.bf'])
    })
  })

  it('loads an original-library file that answers as the original would, and keeps it across a restart', async () => {
    const dir = freshDir()
    const original = new OriginalFilter(3000, 0.02, 0x5eed1234)
    const items = Array.from({ length: 2500 }, (_, i) => Buffer.from(`orig:${i}`))
    for (const item of items) original.add(item)
    writeFileSync(path.join(dir, 'legacy.blf'), original.file())
    const queries = Array.from({ length: 20_000 }, (_, i) => `q:${i}`)
    const expected = queries.map((q) => (original.has(Buffer.from(q)) ? 1 : 0))
    // A false positive or two shows "exactly as the original" includes its mistakes.
    expect(expected.some((answer) => answer === 1)).toBe(true)
    await withServer({ dir, save: '3600 1' }, async (redis) => {
      expect(await redis.call('BF.LOAD', 'legacy', 'legacy.blf')).toBe('OK')
      expect(await redis.call('BF.MEXISTS', 'legacy', ...queries)).toEqual(expected)
      expect(await redis.call('BF.MEXISTS', 'legacy', ...items)).toEqual(items.map(() => 1))
      expect(await redis.call('BF.CARD', 'legacy')).toBe(2500)
    })
    await withServer({ dir, save: '' }, async (redis) => {
      expect(await redis.call('BF.MEXISTS', 'legacy', ...queries)).toEqual(expected)
    })
  })
})

describe('start with a corrupt snapshot', () => {
  it('refuses to start, naming the file, or moves it aside with snapshot-on-corrupt move-aside', async () => {
    const dir = freshDir()
    await withServer({ dir, save: '3600 1' }, async (redis) => {
      await redis.call('BF.MADD', 'victim', 'a', 'b')
      await redis.call('BF.MADD', 'fine', 'a', 'b')
    })
    const snapshotDir = path.join(dir, 'snapshot')
    const victim = readdirSync(snapshotDir)
      .filter((f) => f.endsWith('.bf'))
      .find((f) => readFileSync(path.join(snapshotDir, f)).includes('victim'))!
    const file = path.join(snapshotDir, victim)
    const bytes = readFileSync(file)
    bytes[64]! ^= 1
    writeFileSync(file, bytes)
    await expect(startServer({ dir, save: '3600 1', appendonly: false })).rejects.toThrow(
      `Bad snapshot file ${file}: checksum`,
    )
    // The refused start did not save over the snapshot.
    expect(readFileSync(file)).toEqual(bytes)
    await withServer({ dir, save: '', 'snapshot-on-corrupt': 'move-aside' }, async (redis, running) => {
      expect(await redis.call('EXISTS', 'victim', 'fine')).toBe(1)
      expect(running.logs.some((line) => line.includes(file) && line.includes('moved aside'))).toBe(true)
    })
  })
})

describe('100,000 items through a restart', () => {
  it('gives identical BF.EXISTS, BF.INFO and BF.CARD answers', async () => {
    const dir = freshDir()
    const seeded = new OriginalFilter(40_000, 0.01, 42)
    for (let i = 0; i < 20_000; i++) seeded.add(Buffer.from(`s${i}`))
    writeFileSync(path.join(dir, 'seed.blf'), seeded.file())
    const filters: [string, string][] = [
      ['multi', 'm'],
      ['fixed', 'f'],
      ['seed', 's'],
      ['bin\n \u00ff/name', 'b'],
    ]
    const counts: Record<string, number> = { multi: 40_000, fixed: 30_000, seed: 20_000, 'bin\n \u00ff/name': 10_000 }
    const snapshot = async (redis: Redis) => {
      const answers: unknown[] = []
      for (const [name, prefix] of filters) {
        answers.push(await redis.call('BF.INFO', name), await redis.call('BF.CARD', name))
        const pipe = redis.pipeline()
        const total = 50_000 // inserted ones and never-inserted ones: 200,000 queries over 4 filters
        for (let i = 0; i < total; i += 1000) {
          pipe.call('BF.MEXISTS', name, ...Array.from({ length: 1000 }, (_, j) => `${prefix}${i + j}`))
        }
        answers.push(((await pipe.exec()) ?? []).map(([, reply]) => reply))
      }
      return answers
    }
    const before = await withServer({ dir, save: '3600 1' }, async (redis) => {
      await redis.call('BF.RESERVE', 'multi', '0.01', '1000', 'EXPANSION', '2')
      await redis.call('BF.RESERVE', 'fixed', '0.001', '30000', 'NONSCALING')
      await redis.call('BF.RESERVE', 'bin\n \u00ff/name', '0.05', '500')
      expect(await redis.call('BF.LOAD', 'seed', 'seed.blf')).toBe('OK')
      for (const [name, prefix] of filters) {
        if (name === 'seed') continue
        const pipe = redis.pipeline()
        for (let i = 0; i < counts[name]!; i += 1000) {
          pipe.call('BF.MADD', name, ...Array.from({ length: 1000 }, (_, j) => `${prefix}${i + j}`))
        }
        await pipe.exec()
      }
      expect(Number(await redis.call('BF.INFO', 'multi', 'FILTERS'))).toBeGreaterThanOrEqual(5)
      return snapshot(redis)
    })
    const after = await withServer({ dir, save: '' }, async (redis) => snapshot(redis))
    expect(after).toEqual(before)
  })
})
