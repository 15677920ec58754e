/**
 * bfs-copy with Cuckoo filters: the built tool (dist/tools/bfs-copy.js) run as its own process
 * between two bfs servers copies CF keys with CF.SCANDUMP / CF.LOADCHUNK beside Bloom filters,
 * byte for byte, with their expiry times; an empty one (no dump) is reserved with the same
 * settings; an existing target key fails without --replace.
 */
import { createHash } from 'node:crypto'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { runTool, type ToolResult } from '../helpers/tools.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const TOOL = path.join(ROOT, 'dist', 'tools', 'bfs-copy.js')
const BINARY = Buffer.from([0x63, 0x00, 0xff, 0x0a])

function copyTool(args: readonly string[]): Promise<ToolResult> {
  return runTool(process.execPath, [TOOL, ...args], undefined, 60_000)
}

const items = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}${i}`)

/** Every CF.SCANDUMP reply of a filter, hashed: equal digests mean byte-identical filters. */
async function cfDigest(redis: Redis, key: string | Buffer): Promise<string> {
  const hash = createHash('sha256')
  for (let cursor = 0; ;) {
    const [next, data] = (await redis.callBuffer('CF.SCANDUMP', key, cursor)) as [number, Buffer | null]
    hash.update(`${next}:`).update(data ?? 'nil')
    if (next === 0) return hash.digest('hex')
    cursor = next
  }
}

async function expectSameCuckoo(from: Redis, to: Redis, key: string | Buffer): Promise<void> {
  expect(await to.call('CF.INFO', key)).toEqual(await from.call('CF.INFO', key))
  expect(await cfDigest(to, key)).toBe(await cfDigest(from, key))
  const queries = [...items('a', 500), ...items('g', 500)]
  expect(await to.call('CF.MEXISTS', key, ...queries)).toEqual(await from.call('CF.MEXISTS', key, ...queries))
}

describe('bfs-copy: Cuckoo filters', () => {
  let source: RunningServer
  let target: RunningServer
  let from: Redis
  let to: Redis
  let endpoints: string[]

  beforeAll(async () => {
    source = await startServer()
    target = await startServer()
    from = new Redis(source.port, '127.0.0.1')
    to = new Redis(target.port, '127.0.0.1')
    await from.call('CF.RESERVE', 'cf:grown', '100', 'BUCKETSIZE', '4', 'MAXITERATIONS', '30', 'EXPANSION', '2')
    await from.call('CF.INSERT', 'cf:grown', 'ITEMS', ...items('g', 2_000))
    for (let i = 0; i < 2_000; i += 7) await from.call('CF.DEL', 'cf:grown', `g${i}`)
    await from.call('CF.ADD', 'cf:grown', 'g1') // twice: counts 2
    await from.call('CF.RESERVE', 'cf:big', '4000000') // 4 MiB of buckets
    await from.call('CF.INSERT', 'cf:big', 'ITEMS', ...items('a', 3_000))
    await from.call('PEXPIRE', 'cf:big', '500000')
    await from.call('CF.RESERVE', 'cf:empty', '5000', 'BUCKETSIZE', '3', 'MAXITERATIONS', '7', 'EXPANSION', '0')
    await from.call('CF.ADD', BINARY, 'x')
    await from.call('BF.ADD', 'bloom', 'x')
    expect(Number(((await from.call('CF.INFO', 'cf:grown')) as number[])[5])).toBeGreaterThan(1)
    endpoints = ['--from', `127.0.0.1:${source.port}`, '--to', `127.0.0.1:${target.port}`]
  }, 120_000)

  beforeEach(async () => {
    await to.flushall()
  })

  afterAll(async () => {
    from?.disconnect()
    to?.disconnect()
    await source?.stop()
    await target?.stop()
  })

  it('copies every Cuckoo filter beside the Bloom filter, byte for byte, with its expiry time', async () => {
    const result = await copyTool(endpoints)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('copied 5 of 5 filters')
    expect(result.stdout).toMatch(/^copied cf:big \(4\.0 MiB\)/m)
    for (const key of ['cf:grown', 'cf:big', 'cf:empty', BINARY]) await expectSameCuckoo(from, to, key)
    expect(await to.type('cf:grown')).toBe('MBbloomCF')
    expect(await to.call('CF.COUNT', 'cf:grown', 'g1')).toBe(2)
    expect(await to.call('BF.EXISTS', 'bloom', 'x')).toBe(1)
    const ttl = await to.pttl('cf:big')
    expect(ttl).toBeGreaterThan(400_000)
    expect(ttl).toBeLessThanOrEqual(500_000)
    expect(await to.pttl('cf:grown')).toBe(-1)
    // The empty copy is the same filter: it takes the same items into the same buckets.
    await from.call('CF.INSERT', 'cf:empty', 'ITEMS', ...items('e', 100))
    await to.call('CF.INSERT', 'cf:empty', 'ITEMS', ...items('e', 100))
    await expectSameCuckoo(from, to, 'cf:empty')
    await from.call('DEL', 'cf:empty')
    await from.call('CF.RESERVE', 'cf:empty', '5000', 'BUCKETSIZE', '3', 'MAXITERATIONS', '7', 'EXPANSION', '0')
  })

  it('an existing target key fails that filter without --replace, and is overwritten with it; a named one by TYPE', async () => {
    await to.call('CF.ADD', 'cf:grown', 'mine')
    const refused = await copyTool([...endpoints, 'cf:*'])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('cf:grown: exists on the target (use --replace to overwrite)')
    expect(await to.call('CF.EXISTS', 'cf:grown', 'mine')).toBe(1)
    const replaced = await copyTool([...endpoints, '--replace', 'cf:grown'])
    expect(replaced.code).toBe(0)
    expect(replaced.stdout).toContain('copied 1 of 1 filters')
    await expectSameCuckoo(from, to, 'cf:grown')
  })
})
