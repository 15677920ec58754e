/**
 * kill -9 of a real bfs process (dist/main.js) in the middle of a large BGSAVE: the restart loads
 * the previous snapshot whole, and the unfinished save's files are cleaned away.
 */
import { readdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { Redis } from 'ioredis'
import { makeTempDir } from '../helpers/temp-dir.js'
import { freePort, type InteractiveTool } from '../helpers/tools.js'
import { childClient, killChildServer, startChildServer } from '../helpers/child-server.js'

const dir = makeTempDir('bfs-crash-')
const children: InteractiveTool[] = []

afterAll(() => {
  for (const child of children) child.kill()
  rmSync(dir, { recursive: true, force: true })
})

async function startChild(port: number, save = ''): Promise<{ child: InteractiveTool; redis: Redis }> {
  const { bfs: child } = await startChildServer([
    '--port',
    String(port),
    '--dir',
    dir,
    '--save',
    save,
    '--appendonly',
    'no',
  ])
  children.push(child)
  return { child, redis: childClient(port) }
}

describe('kill -9 during BGSAVE', () => {
  it('leaves the previous snapshot loadable', async () => {
    const port = await freePort()
    const first = await startChild(port)
    await first.redis.call('BF.MADD', 'kept', 'a', 'b', 'c')
    expect(await first.redis.call('SAVE')).toBe('OK')
    // About 256 MiB of bitmap: written in 2 MiB slices, the save takes a while.
    await first.redis.call('BF.RESERVE', 'big', '0.001', '140000000')
    await first.redis.call('BF.ADD', 'big', 'x')
    await first.redis.call('BF.ADD', 'kept', 'after-save')
    expect(await first.redis.call('BGSAVE')).toBe('Background saving started')
    const snapshotDir = path.join(dir, 'snapshot')
    // Kill it once the new filter file is partly written.
    for (let i = 0; i < 500 && !readdirSync(snapshotDir).some((f) => f.endsWith('.tmp')); i++) {
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
    expect(readdirSync(snapshotDir).some((f) => f.endsWith('.tmp'))).toBe(true)
    expect(await first.redis.info('persistence')).toMatch(/rdb_bgsave_in_progress:1/)
    await killChildServer(first.child)
    first.redis.disconnect()

    const second = await startChild(port)
    try {
      expect(second.child.stdout + second.child.stderr).toMatch(/DB loaded from disk: 1 filters/)
      expect(await second.redis.call('BF.MEXISTS', 'kept', 'a', 'b', 'c')).toEqual([1, 1, 1])
      // Not in the previous snapshot: neither the later add nor the big filter.
      expect(await second.redis.call('BF.EXISTS', 'kept', 'after-save')).toBe(0)
      expect(await second.redis.call('EXISTS', 'big')).toBe(0)
      expect(readdirSync(snapshotDir).filter((f) => f.endsWith('.tmp'))).toEqual([])
      expect(readdirSync(snapshotDir).filter((f) => f.endsWith('.bf'))).toHaveLength(1)
      // SIGTERM with no save rules: exits 0 without saving.
      second.child.child.kill('SIGTERM')
      expect(await second.child.waitExit()).toBe(0)
    } finally {
      second.redis.disconnect()
    }
  })

  it('SIGTERM saves when save rules are set and exits 0', async () => {
    const port = await freePort()
    const { child, redis } = await startChild(port, '3600 1')
    await redis.call('BF.ADD', 'on-term', 'item')
    redis.disconnect()
    child.child.kill('SIGTERM')
    expect(await child.waitExit()).toBe(0)
    const again = await startChild(port)
    try {
      expect(await again.redis.call('BF.EXISTS', 'on-term', 'item')).toBe(1)
    } finally {
      again.redis.disconnect()
      again.child.child.kill('SIGTERM')
      await again.child.waitExit()
    }
  })
})
