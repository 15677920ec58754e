/**
 * INFO used_memory counts a bitmap in a WebAssembly arena at its size, not the arena's: a small
 * filter makes a shared arena four times its bitmap (core/arena.ts), and the engine counts a
 * memory's whole size as external memory from its creation. A process of its own (dist/main.js),
 * so that no other test's arena is there first.
 */
import { rmSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Redis } from 'ioredis'
import { childClient, killChildServer, startChildServer, type ChildServer } from '../../helpers/child-server.js'
import { makeTempDir } from '../../helpers/temp-dir.js'

const MiB = 1024 * 1024

let child: ChildServer
let client: Redis
let dir: string

beforeAll(async () => {
  dir = makeTempDir('bfs-used-memory-')
  child = await startChildServer(['--port', '0', '--dir', dir, '--save', '', '--appendonly', 'no'])
  client = childClient(child.port)
})

afterAll(async () => {
  client?.disconnect()
  if (child !== undefined) await killChildServer(child.bfs)
  rmSync(dir, { recursive: true, force: true })
})

async function memoryField(name: string): Promise<number> {
  const text = await client.info('memory')
  const value = new RegExp(`^${name}:(\\d+)\\r?$`, 'm').exec(text)?.[1]
  expect(value).toBeDefined()
  return Number(value)
}

describe('INFO used_memory and the arenas', () => {
  it("grows by about a small filter's bitmap, not by the shared arena made for it (four times as large)", async () => {
    const before = await memoryField('used_memory')
    // 30M items at 1 %: a 34.5 MiB bitmap, below the own-arena size (64 MiB): a shared arena of
    // 128 MiB. Bounds of 8 MiB either side: the heap's garbage may be collected meanwhile.
    await client.call('BF.RESERVE', 'small', '0.01', '30000000')
    const bitmap = Number(await client.call('BF.INFO', 'small', 'SIZE'))
    const after = await memoryField('used_memory')
    expect(bitmap).toBeGreaterThan(32 * MiB)
    expect(after - before).toBeGreaterThan(bitmap - 8 * MiB)
    expect(after - before).toBeLessThan(bitmap + 8 * MiB)
    // used_memory_dataset is the bitmaps alone, as before (BF.INFO Size adds RedisBloom's headers).
    expect(await memoryField('used_memory_dataset')).toBeGreaterThan(bitmap - 1024)
  })

  it('a second small filter in the same arena adds its bitmap', async () => {
    const before = await memoryField('used_memory')
    await client.call('BF.RESERVE', 'second', '0.01', '15000000') // 17 MiB, in the same arena
    const bitmap = Number(await client.call('BF.INFO', 'second', 'SIZE'))
    const after = await memoryField('used_memory')
    expect(after - before).toBeGreaterThan(bitmap - 8 * MiB)
    expect(after - before).toBeLessThan(bitmap + 8 * MiB)
  })
})
