/**
 * rename-command and the append-only log (issue 15): bfs names every record by the command's
 * original name, and replays them so, whatever rename-command renamed or disabled. A child bfs
 * (dist/main.js) with a config file of rename-command lines is killed with SIGKILL and restarted
 * with the same file.
 */
import { describe, expect, it } from 'vitest'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Redis } from 'ioredis'
import { tempDirsRemovedAfterEach } from '../helpers/temp-dir.js'
import { childClient, killChildServer, startChildServer } from '../helpers/child-server.js'

/**
 * BF.RESERVE disabled (auto-created filters log one), BF.LOAD, MULTI and EXEC renamed, and
 * BF.ADD and BF.EXISTS swapped: a record named as the client spelled it would replay as the other.
 */
const RENAMES = [
  'rename-command BF.RESERVE ""',
  'rename-command BF.LOAD SECRETLOAD',
  'rename-command MULTI MYMULTI',
  'rename-command EXEC MYEXEC',
  'rename-command BF.ADD TMPADD',
  'rename-command BF.EXISTS BF.ADD',
  'rename-command TMPADD BF.EXISTS',
]

const tempDir = tempDirsRemovedAfterEach('bfs-rename-')

function configFile(renames: readonly string[]): string[] {
  const dir = tempDir()
  const file = path.join(dir, 'bfs.conf')
  writeFileSync(file, [`dir ${dir}`, 'appendonly yes', 'appendfsync always', 'save ""', ...renames, ''].join('\n'))
  return [file, '--port', '0']
}

/** Runs `body` against a child started with `args`, then SIGKILLs it. */
async function runThenKill(args: readonly string[], body: (redis: Redis) => Promise<void>): Promise<void> {
  const { bfs, port } = await startChildServer(args)
  const redis = childClient(port)
  try {
    await body(redis)
  } finally {
    redis.disconnect()
    await killChildServer(bfs)
  }
}

/** Under RENAMES, `BF.ADD` answers whether an item is there. */
async function expectPresent(redis: Redis, key: string, items: readonly string[]): Promise<void> {
  for (const item of items) expect([key, item, await redis.call('BF.ADD', key, item)]).toEqual([key, item, 1])
}

describe('rename-command: a restart after a crash replays what was logged', () => {
  it('auto-created filters (BF.RESERVE disabled), BF.LOAD and MULTI/EXEC renamed, two commands swapped; then after a log rewrite', async () => {
    const args = configFile(RENAMES)
    await runThenKill(args, async (redis) => {
      expect(await redis.call('BF.EXISTS', 'auto', 'a')).toBe(1) // adds: logs BF.RESERVE, then the add
      expect(await redis.call('BF.MADD', 'saved', 'x', 'y')).toEqual([1, 1])
      expect(await redis.call('BF.SAVE', 'saved', 'saved.bf')).toBe('OK')
      expect(await redis.call('SECRETLOAD', 'loaded', 'saved.bf')).toBe('OK') // logs BF.LOAD ... CONTENTS
      expect(await redis.call('MYMULTI')).toBe('OK')
      expect(await redis.call('BF.MADD', 'tx', 'p')).toBe('QUEUED')
      expect(await redis.call('BF.EXISTS', 'tx', 'q')).toBe('QUEUED')
      expect(await redis.call('MYEXEC')).toEqual([[1], 1]) // logs MULTI ... EXEC
    })
    await runThenKill(args, async (redis) => {
      await expectPresent(redis, 'auto', ['a'])
      await expectPresent(redis, 'loaded', ['x', 'y'])
      await expectPresent(redis, 'tx', ['p', 'q'])
      expect(await redis.call('BF.EXISTS', 'auto', 'b')).toBe(1) // an add after the restart
      expect(await redis.call('BGREWRITEAOF')).toBe('Background append only file rewriting started')
      while (/aof_rewrite_in_progress:1|aof_rewrite_scheduled:1/.test(await redis.info('persistence'))) {
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(await redis.call('BF.EXISTS', 'late', 'c')).toBe(1)
    })
    await runThenKill(args, async (redis) => {
      await expectPresent(redis, 'auto', ['a', 'b'])
      await expectPresent(redis, 'loaded', ['x', 'y'])
      await expectPresent(redis, 'tx', ['p', 'q'])
      await expectPresent(redis, 'late', ['c'])
    })
  }, 60_000)

  it('a log written without renames replays with BF.RESERVE, BF.LOAD, MULTI and EXEC disabled', async () => {
    const plain = configFile([])
    await runThenKill(plain, async (redis) => {
      expect(await redis.call('BF.ADD', 'auto', 'a')).toBe(1)
      expect(await redis.call('BF.ADD', 'saved', 'x')).toBe(1)
      expect(await redis.call('BF.SAVE', 'saved', 'saved.bf')).toBe('OK')
      expect(await redis.call('BF.LOAD', 'loaded', 'saved.bf')).toBe('OK')
      expect(await redis.call('MULTI')).toBe('OK')
      expect(await redis.call('BF.ADD', 'tx', 'p')).toBe('QUEUED')
      expect(await redis.call('BF.ADD', 'tx', 'q')).toBe('QUEUED')
      expect(await redis.call('EXEC')).toEqual([1, 1])
    })
    const disabled = [plain[0]!.replace(/bfs\.conf$/, 'disabled.conf'), '--port', '0']
    writeFileSync(
      disabled[0]!,
      `dir ${path.dirname(plain[0]!)}\nappendonly yes\nsave ""\n${['BF.RESERVE', 'BF.LOAD', 'MULTI', 'EXEC'].map((name) => `rename-command ${name} ""`).join('\n')}\n`,
    )
    await runThenKill(disabled, async (redis) => {
      for (const [key, item] of [
        ['auto', 'a'],
        ['loaded', 'x'],
        ['tx', 'p'],
        ['tx', 'q'],
      ]) {
        expect([key, item, await redis.call('BF.EXISTS', key!, item!)]).toEqual([key, item, 1])
      }
    })
  }, 60_000)
})
