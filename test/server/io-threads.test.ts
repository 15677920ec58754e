/**
 * io-threads on the real command line (dist/main.js): on a Node.js with `net` listen's `reusePort`
 * (22.12 and 23.1 on) that many threads serve the port; on an older one bfs warns and serves from
 * one thread. Each branch runs on the Node.js it is about (CI runs both Node 20 and Node 24).
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { nodeHasReusePort } from '../../src/runtime/io-threads-setting.js'
import { BFS_MAIN, startChildServer, type ChildServer } from '../helpers/child-server.js'
import { RawClient, ask, askOnce } from '../helpers/resp.js'
import { tempDirsRemovedAfterAll } from '../helpers/temp-dir.js'
import { runTool } from '../helpers/tools.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const REUSE_PORT = nodeHasReusePort(process.version)
const tempDir = tempDirsRemovedAfterAll('bfs-io-threads-')

const started: ChildServer[] = []
const clients: RawClient[] = []

beforeAll(() => {
  // `npm test` builds first (pretest); when vitest runs alone, build once here.
  if (!existsSync(BFS_MAIN)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'pipe' })
}, 120_000)

afterEach(async () => {
  for (const client of clients.splice(0)) client.close()
  for (const { bfs } of started.splice(0)) {
    bfs.kill()
    await bfs.waitExit()
  }
})

/** The flags of a bfs without persistence in a fresh directory, on `port`, with `--io-threads threads`. */
function flags(threads: string, port = 0): string[] {
  return ['--port', String(port), '--dir', tempDir(), '--save', '', '--appendonly', 'no', '--io-threads', threads]
}

async function start(threads: string, port = 0): Promise<ChildServer> {
  const child = await startChildServer(flags(threads, port))
  started.push(child)
  return child
}

/** CONFIG GET io-threads's value. */
async function ioThreads(port: number): Promise<string> {
  const reply = await askOnce(port, 'CONFIG', 'GET', 'io-threads')
  const match = /^\*2\r\n\$10\r\nio-threads\r\n\$\d+\r\n(.*)\r\n$/.exec(reply)
  expect(match, reply).not.toBeNull()
  return match![1]!
}

describe('io-threads auto', () => {
  it('resolves at start to a number of threads, which CONFIG GET shows', async () => {
    const { port } = await start('auto')
    expect(await ioThreads(port)).toMatch(/^[1-9]\d*$/)
    expect(await askOnce(port, 'PING')).toBe('+PONG\r\n')
  })
})

describe.runIf(!REUSE_PORT)('io-threads on a Node.js without reusePort', () => {
  it('--io-threads 4: one warning line, serves from one thread, CONFIG GET io-threads answers 1', async () => {
    const { bfs, port } = await start('4')
    const output = bfs.stdout + bfs.stderr
    const warning = `io-threads 4 needs Node.js 22.12 or later (this is ${process.versions.node}): serving from one thread`
    expect(output.split('\n').filter((line) => line.includes(warning))).toHaveLength(1)
    expect(output).not.toContain('I/O threads serve port')
    expect(await askOnce(port, 'PING')).toBe('+PONG\r\n')
    expect(await askOnce(port, 'BF.ADD', 'f', 'a')).toBe(':1\r\n')
    expect(await askOnce(port, 'BF.EXISTS', 'f', 'a')).toBe(':1\r\n')
    expect(await ioThreads(port)).toBe('1')
  })
})

describe.runIf(REUSE_PORT)('io-threads on a Node.js with reusePort', () => {
  it('--io-threads 4: three I/O threads serve the port beside the main thread, CONFIG GET io-threads answers 4', async () => {
    const { bfs, port } = await start('4')
    expect(bfs.stdout + bfs.stderr).toContain(
      `3 I/O threads serve port ${port} and answer BF.EXISTS, BF.MEXISTS, BF.CARD, BF.ADD, BF.MADD and BF.INSERT; the main thread runs the other commands\n`,
    )
    expect(bfs.stdout + bfs.stderr).not.toContain('needs Node.js')
    expect(await ioThreads(port)).toBe('4')
  })

  it('8 connections opened at once are all served, and CLIENT LIST lists each of them', async () => {
    const { port } = await start('4')
    const opened = await Promise.all(Array.from({ length: 8 }, () => RawClient.connect(port)))
    clients.push(...opened)
    const answers = await Promise.all(
      opened.map(async (client, i) => ({
        pong: await ask(client, 'PING'),
        added: await ask(client, 'BF.ADD', 'f', `item-${i}`),
        id: await ask(client, 'CLIENT', 'ID'),
      })),
    )
    const ids = answers.map(({ pong, added, id }) => {
      expect([pong, added]).toEqual(['+PONG\r\n', ':1\r\n'])
      expect(id).toMatch(/^:\d+\r\n$/)
      return id.slice(1, -2)
    })
    expect(new Set(ids).size).toBe(8)
    const list = await ask(opened[0]!, 'CLIENT', 'LIST')
    const lines = list.slice(list.indexOf('\r\n') + 2, -2).split('\n')
    const listed = lines.filter((line) => line !== '').map((line) => /^id=(\d+) /.exec(line)?.[1])
    expect(listed.sort()).toEqual([...ids].sort())
    const exists = await ask(opened[7]!, 'BF.MEXISTS', 'f', ...ids.map((_, i) => `item-${i}`))
    expect(exists).toBe(`*8\r\n${':1\r\n'.repeat(8)}`)
  })

  it('a second bfs with io-threads 2 on the port a first one (io-threads 2) listens on fails to start: address in use', async () => {
    const first = await start('2')
    const result = await runTool(process.execPath, [BFS_MAIN, ...flags('2', first.port)], undefined, 30_000)
    expect(result.code, result.stdout + result.stderr).toBe(1)
    expect(result.stdout + result.stderr).toMatch(/EADDRINUSE|address already in use/i)
    expect(result.stdout + result.stderr).not.toContain('Ready to accept connections')
    expect(await askOnce(first.port, 'PING')).toBe('+PONG\r\n')
  })
})
