/**
 * bfs-copy end to end: the built tool (dist/tools/bfs-copy.js, which `npm test` builds first) run
 * as its own process between two bfs servers, checked by its exit status, its output and the
 * filters it leaves on the target.
 */
import { createHash } from 'node:crypto'
import { readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { makeTempDir } from '../helpers/temp-dir.js'
import { InteractiveTool, runTool, type ToolResult } from '../helpers/tools.js'
import { startChildServer } from '../helpers/child-server.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const TOOL = path.join(ROOT, 'dist', 'tools', 'bfs-copy.js')
function copyTool(args: readonly string[]): Promise<ToolResult> {
  return runTool(process.execPath, [TOOL, ...args], undefined, 60_000)
}

/** Every SCANDUMP reply of a filter, hashed: equal digests mean byte-identical filters. */
async function dumpDigest(redis: Redis, key: string): Promise<string> {
  const hash = createHash('sha256')
  let iterator = 0
  for (;;) {
    const [next, data] = (await redis.callBuffer('BF.SCANDUMP', key, iterator)) as [number, Buffer]
    hash.update(`${next}:${data.length}:`).update(data)
    if (next === 0) return hash.digest('hex')
    iterator = next
  }
}

async function addItems(redis: Redis, key: string, count: number): Promise<void> {
  for (let start = 0; start < count; start += 5_000) {
    const items: string[] = []
    for (let i = start; i < Math.min(count, start + 5_000); i++) items.push(`${key}-${i}`)
    await redis.call('BF.MADD', key, ...items)
  }
}

/** Expects `key` on the target to dump, report and answer exactly as on the source. */
async function expectSameFilter(from: Redis, to: Redis, key: string): Promise<void> {
  expect(await to.call('BF.INFO', key)).toEqual(await from.call('BF.INFO', key))
  expect(await dumpDigest(to, key)).toBe(await dumpDigest(from, key))
  const queries = Array.from({ length: 2_000 }, (_, i) => `${key}-${i * 7}`)
  const answers = await to.call('BF.MEXISTS', key, ...queries)
  expect(answers).toEqual(await from.call('BF.MEXISTS', key, ...queries))
  expect(answers).toContain(1)
}

describe('bfs-copy between two servers', () => {
  let source: RunningServer
  let target: RunningServer
  let from: Redis
  let to: Redis
  let endpoints: string[]

  beforeAll(async () => {
    source = await startServer({ requirepass: 'sekret' })
    target = await startServer()
    from = new Redis(source.port, '127.0.0.1', { password: 'sekret' })
    to = new Redis(target.port, '127.0.0.1')
    await from.call('BF.RESERVE', 'users:scalable', '0.01', '500', 'EXPANSION', '2')
    await addItems(from, 'users:scalable', 6_000)
    await from.call('BF.RESERVE', 'users:fixed', '0.001', '2000', 'NONSCALING')
    await addItems(from, 'users:fixed', 1_500)
    await from.call('BF.RESERVE', 'large', '0.01', '20000000')
    await addItems(from, 'large', 10_000)
    expect(await from.call('BF.INFO', 'users:scalable', 'FILTERS')).toEqual([4])
    endpoints = ['--from', `127.0.0.1:${source.port}`, '--from-password', 'sekret', '--to', `127.0.0.1:${target.port}`]
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

  it('copies every filter, several chunks for one over 16 MiB, and prints a summary', async () => {
    const result = await copyTool(endpoints)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(
      /bfs-copy: copied 3 of 3 filters \(\d+\.\d MiB\) from 127\.0\.0\.1:\d+ to 127\.0\.0\.1:\d+ in [\d.]+ s; 0 failed/,
    )
    // Not a terminal: one plain line per filter, no bar.
    expect(result.stdout).toMatch(/^copied users:scalable \(/m)
    expect(result.stdout).toMatch(/^copied large \(2[67]\.\d MiB\)/m)
    expect(result.stdout).not.toContain('\r')
    expect(await to.dbsize()).toBe(3)
    for (const key of ['users:scalable', 'users:fixed', 'large']) await expectSameFilter(from, to, key)
  })

  it('copies only what the patterns name: a glob and an exact name', async () => {
    const result = await copyTool([...endpoints, 'users:*', 'large', 'users:fixed'])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('copied 3 of 3 filters')
    const only = await copyTool([...endpoints, '--replace', 'users:s*'])
    expect(only.code).toBe(0)
    expect(only.stdout).toContain('copied 1 of 1 filters')
    await to.flushall()
    const globbed = await copyTool([...endpoints, 'users:*'])
    expect(globbed.code).toBe(0)
    expect((await to.keys('*')).sort()).toEqual(['users:fixed', 'users:scalable'])
  })

  it('an existing target filter fails that filter without --replace, and is overwritten with it', async () => {
    await to.call('BF.RESERVE', 'users:fixed', '0.1', '10')
    await to.call('BF.ADD', 'users:fixed', 'mine')
    const before = await dumpDigest(to, 'users:fixed')
    const refused = await copyTool([...endpoints, 'users:*'])
    expect(refused.code).toBe(1)
    expect(refused.stdout).toContain('copied 1 of 2 filters')
    expect(refused.stdout).toContain('1 failed')
    expect(refused.stderr).toContain('users:fixed: exists on the target (use --replace to overwrite)')
    expect(await dumpDigest(to, 'users:fixed')).toBe(before)
    await expectSameFilter(from, to, 'users:scalable')

    const replaced = await copyTool([...endpoints, '--replace', 'users:*'])
    expect(replaced.code).toBe(0)
    expect(replaced.stdout).toContain('copied 2 of 2 filters')
    await expectSameFilter(from, to, 'users:fixed')
  })

  it('a named filter missing on the source is a failure; the others are still copied', async () => {
    const result = await copyTool([...endpoints, 'nope', 'users:fixed'])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('nope: not found on the source')
    expect(result.stdout).toContain('copied 1 of 2 filters')
    expect(await to.exists('users:fixed')).toBe(1)
    expect(await to.exists('nope')).toBe(0)
  })

  it('a target that refuses a filter (over its max-filter-bytes) fails it and leaves nothing', async () => {
    const small = await startServer({ 'max-filter-bytes': 1024 * 1024 })
    try {
      const result = await copyTool([
        '--from',
        `127.0.0.1:${source.port}`,
        '--from-password',
        'sekret',
        '--to',
        `127.0.0.1:${small.port}`,
        'large',
        'users:fixed',
      ])
      expect(result.code).toBe(1)
      expect(result.stderr).toContain('large: ERR filter would exceed the maximum filter size')
      expect(result.stdout).toContain('copied 1 of 2 filters')
      const check = new Redis(small.port, '127.0.0.1')
      try {
        expect(await check.keys('*')).toEqual(['users:fixed'])
      } finally {
        check.disconnect()
      }
    } finally {
      await small.stop()
    }
  })

  it('a wrong or missing password, an unreachable endpoint and bad usage exit non-zero', async () => {
    const wrong = await copyTool([
      '--from',
      `127.0.0.1:${source.port}`,
      '--from-password',
      'nope',
      '--to',
      `127.0.0.1:${target.port}`,
    ])
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toMatch(/cannot connect to the source 127\.0\.0\.1:\d+: WRONGPASS/)
    const missing = await copyTool(['--from', `127.0.0.1:${source.port}`, '--to', `127.0.0.1:${target.port}`])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/cannot use the source 127\.0\.0\.1:\d+: NOAUTH/)
    // The same for a target that wants a password: unusable (2), not every filter failed (1).
    const locked = await startServer({ requirepass: 'other' })
    try {
      const noTargetPassword = await copyTool([...endpoints.slice(0, 4), '--to', `127.0.0.1:${locked.port}`])
      expect(noTargetPassword.code).toBe(2)
      expect(noTargetPassword.stderr).toMatch(/cannot use the target 127\.0\.0\.1:\d+: NOAUTH/)
      expect(noTargetPassword.stdout).not.toContain('failed')
    } finally {
      await locked.stop()
    }
    const closed = await startServer()
    const port = closed.port
    await closed.stop()
    const unreachable = await copyTool([...endpoints.slice(0, 4), '--to', `127.0.0.1:${port}`])
    expect(unreachable.code).toBe(2)
    expect(unreachable.stderr).toContain(`cannot connect to the target 127.0.0.1:${port}`)
    const usage = await copyTool(['--to', `127.0.0.1:${target.port}`])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain('--from is required')
    expect(usage.stderr).toContain('usage: bfs-copy')
    const help = await copyTool(['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('--replace')
    expect(await to.dbsize()).toBe(0)
  })
})

describe('bfs-copy: sliding-window filters, expiry times, ACL users, the default port', () => {
  let source: RunningServer
  let target: RunningServer
  let from: Redis
  let to: Redis
  let endpoints: string[]

  beforeAll(async () => {
    source = await startServer()
    target = await startServer()
    const admin = new Redis(source.port, '127.0.0.1')
    // Only the ACL user copier can use the source: the tool must send AUTH copier <password>.
    await admin.call('ACL', 'SETUSER', 'copier', 'on', '>copier-pass', '~*', '+@all')
    await admin.call('ACL', 'SETUSER', 'default', 'off')
    admin.disconnect()
    from = new Redis(source.port, '127.0.0.1', { username: 'copier', password: 'copier-pass' })
    to = new Redis(target.port, '127.0.0.1')
    await from.call('BF.RESERVE', 'bloom:ttl', '0.01', '1000')
    await addItems(from, 'bloom:ttl', 500)
    await from.call('PEXPIRE', 'bloom:ttl', 600_000)
    await from.call('BF.ADD', 'bloom:plain', 'x')
    await from.call('APBF.RESERVE', 'window:count', 'COUNT', '0.01', '1000')
    await from.call('APBF.ADD', 'window:count', ...Array.from({ length: 1500 }, (_, i) => `c-${i}`))
    await from.call('APBF.RESERVE', 'window:time', 'TIME', '0.01', '1000', '3600')
    await from.call('APBF.ADD', 'window:time', 't-1', 't-2', 't-3')
    await from.call('PEXPIRE', 'window:time', 900_000)
    endpoints = [
      '--from',
      `127.0.0.1:${source.port}`,
      '--from-user',
      'copier',
      '--from-pass',
      'copier-pass',
      '--to',
      `127.0.0.1:${target.port}`,
    ]
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

  it('copies sliding-window filters (DUMP / RESTORE) beside Bloom filters, with every expiry time', async () => {
    const result = await copyTool(endpoints)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('copied 4 of 4 filters')
    expect(await to.type('window:count')).toBe('APBFcTYPE')
    expect(await to.type('window:time')).toBe('APBFtTYPE')
    expect(await to.dumpBuffer('window:count')).toEqual(await from.dumpBuffer('window:count'))
    const probes = ['c-0', 'c-700', 'c-1499', 'nope']
    expect(await to.call('APBF.EXISTS', 'window:count', ...probes)).toEqual(
      await from.call('APBF.EXISTS', 'window:count', ...probes),
    )
    expect(await to.call('APBF.EXISTS', 'window:time', 't-1', 't-3', 'nope')).toEqual([1, 1, 0])
    await expectSameFilter(from, to, 'bloom:ttl')
    for (const [key, most] of [
      ['bloom:ttl', 600_000],
      ['window:time', 900_000],
    ] as const) {
      const ttl = await to.pttl(key)
      expect(ttl, key).toBeGreaterThan(most - 60_000)
      expect(ttl, key).toBeLessThanOrEqual(most)
    }
    expect(await to.pttl('bloom:plain')).toBe(-1)
    expect(await to.pttl('window:count')).toBe(-1)
  })

  it('copies one window filter by name; an existing one fails without --replace and is overwritten with it', async () => {
    await to.call('APBF.RESERVE', 'window:count', 'COUNT', '0.1', '10')
    const refused = await copyTool([...endpoints, 'window:count'])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('window:count: exists on the target (use --replace to overwrite)')
    const replaced = await copyTool([...endpoints, '--replace', 'window:count'])
    expect(replaced.code).toBe(0)
    expect(replaced.stdout).toContain('copied 1 of 1 filters')
    expect(await to.dumpBuffer('window:count')).toEqual(await from.dumpBuffer('window:count'))
  })

  it('refuses the source without the ACL user, and --help names the default port 6381 and the user options', async () => {
    const anonymous = await copyTool(['--from', `127.0.0.1:${source.port}`, '--to', `127.0.0.1:${target.port}`])
    expect(anonymous.code).toBe(2)
    const help = await copyTool(['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('default port 6381')
    for (const option of ['--from-user', '--to-user', '--from-pass', '--to-pass']) expect(help.stdout).toContain(option)
  })
})

describe('bfs-copy between two bfs processes', () => {
  const running: InteractiveTool[] = []
  let dir: string

  beforeAll(() => {
    dir = makeTempDir('bfs-copy-')
  }, 120_000)

  afterAll(() => {
    for (const bfs of running) bfs.kill()
    rmSync(dir, { recursive: true, force: true })
  })

  async function launch(name: string): Promise<number> {
    const { bfs, port } = await startChildServer([
      '--port',
      '0',
      '--dir',
      path.join(dir, name),
      '--appendonly',
      'no',
      '--save',
      '',
    ])
    running.push(bfs)
    return port
  }

  it('copies filters from one bfs process to another', async () => {
    const [fromPort, toPort] = await Promise.all([launch('a'), launch('b')])
    const from = new Redis(fromPort, '127.0.0.1')
    const to = new Redis(toPort, '127.0.0.1')
    try {
      await from.call('BF.RESERVE', 'p:one', '0.01', '100')
      await addItems(from, 'p:one', 1_000)
      await from.call('BF.ADD', Buffer.from([0x62, 0x00, 0xff]), 'binary name')
      const result = await copyTool(['--from', `127.0.0.1:${fromPort}`, '--to', `127.0.0.1:${toPort}`])
      expect(result.code).toBe(0)
      expect(result.stdout).toContain('copied 2 of 2 filters')
      expect(result.stdout).toContain('copied b\\x00\\xff')
      await expectSameFilter(from, to, 'p:one')
      expect(await to.call('BF.EXISTS', Buffer.from([0x62, 0x00, 0xff]), 'binary name')).toBe(1)
    } finally {
      from.disconnect()
      to.disconnect()
    }
  })

  it('the built tool is an executable script', () => {
    expect(readFileSync(TOOL, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true)
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> }
    expect(pkg.bin['bfs-copy']).toBe('dist/tools/bfs-copy.js')
  })
})
