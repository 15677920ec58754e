/**
 * bfs-import end to end: the built command (`npm test` builds first) run as a child process
 * against an in-process bfs, fed from files and from standard input.
 */
import { existsSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'
import { FilterRegistry } from '../../src/store/registry.js'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { InteractiveTool, freePort, runTool } from '../helpers/tools.js'
import { bloomOf } from '../helpers/bloom-of.js'
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.js'

const IMPORT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/tools/bfs-import.js')

let running: RunningServer
let work: string

beforeAll(async () => {
  expect(existsSync(IMPORT), 'dist/tools/bfs-import.js is missing: run npm run build').toBe(true)
  running = await startServer()
  work = makeTempDir('bfs-import-test-')
})

afterAll(async () => {
  await running?.stop()
  if (work !== undefined) removeTempDir(work)
})

function bfsImport(args: readonly string[], input?: string) {
  return runTool(process.execPath, [IMPORT, '--port', String(running.port), ...args], input)
}

/** The summary's counts: "N items read ... : A new, P already present, E errors". */
function summary(stdout: string): { read: number; added: number; present: number; errors: number } {
  const match = /bfs-import: ([\d,]+) items read .*: ([\d,]+) new, ([\d,]+) already present, ([\d,]+) errors/.exec(
    stdout,
  )
  expect(match, `no summary in ${JSON.stringify(stdout)}`).not.toBeNull()
  const n = (i: number): number => Number(match![i]!.replace(/,/g, ''))
  return { read: n(1), added: n(2), present: n(3), errors: n(4) }
}

/** What the same adds do to a filter in process: how many are new. */
function expectedNew(items: readonly string[], capacity: number, errorRate: number, nonScaling = false): number {
  const filter = new ScalableBloomFilter({ capacity, errorRate, expansion: 2, nonScaling })
  let added = 0
  for (const item of items) if (filter.add(Buffer.from(item)) === 1) added++
  return added
}

function filterOf(name: string): ScalableBloomFilter {
  const entry = running.server.registry.get(FilterRegistry.nameOf(Buffer.from(name)))
  expect(entry, `filter ${name} missing`).toBeDefined()
  return bloomOf(entry)
}

describe('bfs-import', () => {
  it('imports files in batches, creating the filter first, and reports new and present items', async () => {
    const first = Array.from({ length: 3000 }, (_, i) => `https://example.com/a/${i}`)
    const second = [...first.slice(0, 500), ...Array.from({ length: 700 }, (_, i) => `https://example.org/b/${i}`)]
    // CRLF endings, blank lines and a last line without a newline are all handled.
    writeFileSync(path.join(work, 'one.txt'), first.join('\r\n') + '\r\n\r\n')
    writeFileSync(path.join(work, 'two.txt'), '\n' + second.join('\n'))
    const result = await bfsImport([
      '--filter',
      'crawl',
      '--batch',
      '128',
      '--capacity',
      '5000',
      '--error-rate',
      '0.001',
      path.join(work, 'one.txt'),
      path.join(work, 'two.txt'),
    ])
    expect(result.code).toBe(0)
    const all = [...first, ...second]
    const added = expectedNew(all, 5000, 0.001)
    expect(summary(result.stdout)).toEqual({ read: 4200, added, present: 4200 - added, errors: 0 })
    expect(added).toBeLessThanOrEqual(3700)
    const filter = filterOf('crawl')
    expect(filter.info()).toMatchObject({ capacity: 5000, items: added })
    expect(all.every((item) => filter.has(Buffer.from(item)))).toBe(true)
    expect(filter.has(Buffer.from(''))).toBe(false) // blank lines were skipped, not added
  })

  it('reads standard input and prints plain progress lines when not on a terminal', async () => {
    const items = Array.from({ length: 2500 }, (_, i) => `stdin-item-${i}`)
    const result = await bfsImport(
      ['-f', 'piped', '--batch', '100', '--window', '2', '--progress-interval', '0'],
      items.join('\n') + '\n',
    )
    expect(result.code).toBe(0)
    expect(summary(result.stdout).read).toBe(2500)
    const lines = result.stderr.split('\n').filter((line) => /items\/s/.test(line))
    expect(lines.length).toBeGreaterThan(1)
    expect(result.stderr).not.toContain('\r')
    // Auto-created with the server's defaults, as BF.MADD does.
    expect(filterOf('piped').info().items).toBe(summary(result.stdout).added)
  })

  it('draws a bar with the rate and an ETA when the size is known', async () => {
    writeFileSync(path.join(work, 'bar.txt'), Array.from({ length: 1000 }, (_, i) => `bar-${i}`).join('\n'))
    const result = await bfsImport(['-f', 'bar', '--batch', '50', '--progress', 'bar', path.join(work, 'bar.txt')])
    expect(result.code).toBe(0)
    expect(result.stderr).toMatch(/\r\[#{30}\] 100% {2}1,000 items {2}[\d,]+ items\/s {2}ETA 0s/)
  })

  it('exits 1 and counts the items a full non-scaling filter refuses', async () => {
    const items = Array.from({ length: 100 }, (_, i) => `full-${i}`)
    const result = await bfsImport(
      ['-f', 'small', '--capacity', '10', '--error-rate', '0.01', '--nonscaling', '--batch', '7'],
      items.join('\n'),
    )
    expect(result.code).toBe(1)
    const counts = summary(result.stdout)
    expect(counts.read).toBe(100)
    expect(counts.added).toBe(10)
    expect(counts.added + counts.present + counts.errors).toBe(100)
    expect(counts.errors).toBeGreaterThanOrEqual(90 - counts.present)
    expect(result.stderr).toContain('non scaling filter is full')
    expect(filterOf('small').info().items).toBe(10)
  })

  it('adds to an existing filter with a warning when asked to create it', async () => {
    await bfsImport(['-f', 'again', '--capacity', '100', '--error-rate', '0.01'], 'x\n')
    const result = await bfsImport(['-f', 'again', '--capacity', '999', '--error-rate', '0.2'], 'x\ny\n')
    expect(result.code).toBe(0)
    expect(result.stderr).toContain("filter 'again' exists")
    expect(summary(result.stdout)).toEqual({ read: 2, added: 1, present: 1, errors: 0 })
    expect(filterOf('again').info().capacity).toBe(100)
  })

  it('exits 2 on bad usage, naming the problem', async () => {
    const missing = await bfsImport([], 'x\n')
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('--filter is required')
    const half = await bfsImport(['-f', 'k', '--capacity', '10'], 'x\n')
    expect(half.code).toBe(2)
    expect(half.stderr).toContain('--capacity and --error-rate go together')
    const unreadable = await bfsImport(['-f', 'k', path.join(work, 'no-such-file.txt')])
    expect(unreadable.code).toBe(2)
    expect(unreadable.stderr).toContain('no-such-file.txt')
  })

  it('exits 2 when the server cannot be reached', async () => {
    const port = await freePort()
    const result = await runTool(process.execPath, [IMPORT, '--port', String(port), '-f', 'k'], 'x\n')
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/cannot connect to 127\.0\.0\.1:\d+/)
  })
})

describe('bfs-import when the server disappears mid-run', () => {
  it('exits 1, says why, and counts every item read (read = new + present + errors)', async () => {
    // A server that answers PING, then drops the connection at the first BF.MADD.
    const sockets = new Set<net.Socket>()
    const server = net.createServer((socket) => {
      sockets.add(socket)
      socket.on('error', () => {})
      let seen = ''
      socket.on('data', (chunk: Buffer) => {
        seen += chunk.toString('latin1')
        if (seen.includes('BF.MADD')) socket.destroy()
        else if (seen.includes('PING')) socket.write('+PONG\r\n')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as net.AddressInfo).port
    const tool = InteractiveTool.start(process.execPath, [
      IMPORT,
      '--port',
      String(port),
      '-f',
      'gone',
      '--batch',
      '3',
      '--progress',
      'lines',
      '--progress-interval',
      '0',
    ])
    try {
      // Four lines: a batch of three goes out (and is dropped), the fourth waits in the next batch.
      tool.child.stdin.write('a\nb\nc\nd\n')
      await tool.waitFor((output) => output.includes('3 errors'))
      // Read after the connection was lost: read, never sent.
      tool.child.stdin.end('e\nf\n')
      expect(await tool.waitExit()).toBe(1)
      const counts = summary(tool.stdout)
      expect(counts.added + counts.present + counts.errors).toBe(counts.read)
      expect(counts.read).toBeGreaterThanOrEqual(4)
      expect(counts.errors).toBe(counts.read)
      expect(tool.stderr).toContain('bfs-import: stopped:')
    } finally {
      tool.kill()
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe('bfs-import with a password', () => {
  let secured: RunningServer

  beforeAll(async () => {
    secured = await startServer({ requirepass: 's3cret' })
  })

  afterAll(async () => {
    await secured?.stop()
  })

  it('authenticates with --password and exits 2 without it', async () => {
    const args = ['--port', String(secured.port), '-f', 'locked']
    const refused = await runTool(process.execPath, [IMPORT, ...args], 'a\nb\n')
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('NOAUTH')
    const accepted = await runTool(process.execPath, [IMPORT, ...args, '--password', 's3cret'], 'a\nb\n')
    expect(accepted.code).toBe(0)
    expect(summary(accepted.stdout)).toMatchObject({ read: 2, added: 2 })
  })
})

describe('bfs-import with an ACL user, and its default port', () => {
  let secured: RunningServer

  beforeAll(async () => {
    secured = await startServer()
    const admin = new Redis(secured.port, '127.0.0.1')
    await admin.call('ACL', 'SETUSER', 'importer', 'on', '>imp-pass', '~*', '+@all')
    await admin.call('ACL', 'SETUSER', 'default', 'off')
    admin.disconnect()
  })

  afterAll(async () => {
    await secured?.stop()
  })

  it('authenticates with --user and --pass (AUTH user pass)', async () => {
    const args = ['--port', String(secured.port), '-f', 'acl']
    const refused = await runTool(process.execPath, [IMPORT, ...args, '--pass', 'imp-pass'], 'a\n')
    expect(refused.code).toBe(2)
    const accepted = await runTool(
      process.execPath,
      [IMPORT, ...args, '--user', 'importer', '--pass', 'imp-pass'],
      'a\nb\n',
    )
    expect(accepted.code).toBe(0)
    expect(summary(accepted.stdout)).toMatchObject({ read: 2, added: 2 })
  })

  it('--help names the default port 6381 and --user', async () => {
    const help = await runTool(process.execPath, [IMPORT, '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('server port (default 6381')
    expect(help.stdout).toContain('--user name')
  })
})
