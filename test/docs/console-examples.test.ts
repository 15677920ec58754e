/**
 * Every ```console session of the docs runs as written against a fresh bfs (real sockets, the real
 * redis-cli and curl), with only its ports changed: 6381 becomes the server's port and 8080 its
 * HTTP port. `127.0.0.1:6381> ...` lines go through `redis-cli --no-raw` (the interactive
 * formatting, redis-cli's own splitting of the line), `$ ...` lines through bash with the package's
 * commands (`bfs-import`, `bfs-copy`) on PATH, in a temporary directory; each must print exactly
 * the lines under it, standard error included (`...`: any lines). The elapsed time redis-cli prints
 * after a command that took 500 ms or more is not compared: it tells the machine's load, not the reply.
 */
import { spawn } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  allDocBlocks,
  consoleSteps,
  outputMatches,
  redisCliLines,
  REPO_ROOT,
  type ConsoleStep,
} from '../helpers/doc-blocks.js'
import { startServer } from '../helpers/start-server.js'
import { hasTool } from '../helpers/tools.js'
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.js'

const SESSIONS = allDocBlocks().filter((block) => block.lang === 'console')

let work: string
let bin: string

beforeAll(() => {
  work = makeTempDir('bfs-console-examples-')
  bin = path.join(work, 'bin')
  mkdirSync(bin)
  for (const [name, entry] of [
    ['bfs', 'main.js'],
    ['bfs-import', 'tools/bfs-import.js'],
    ['bfs-copy', 'tools/bfs-copy.js'],
  ]) {
    const file = path.join(bin, name!)
    writeFileSync(file, `#!/bin/sh\nexec "${process.execPath}" "${path.join(REPO_ROOT, 'dist', entry!)}" "$@"\n`)
    chmodSync(file, 0o755)
  }
})

afterAll(() => {
  if (work !== undefined) removeTempDir(work)
})

/** Runs `command args` in `cwd` with `input` on stdin; resolves with its stdout (the server runs in this process: never block). */
function run(
  command: string,
  args: string[],
  cwd: string,
  input: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    // A step that does not read its input (a shell command, bfs-import given files) may exit before
    // the input is written: EPIPE on stdin is then no failure, its exit code and output tell.
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error)
    })
    child.stdin.end(input)
  })
}

describe('console sessions of the docs', () => {
  it('there are some', () => {
    expect(SESSIONS.length).toBeGreaterThan(3)
  })

  const tools = hasTool('redis-cli') && hasTool('curl')
  it.skipIf(!tools).each(SESSIONS.map((block) => [`${block.file}:${block.line}`, block] as const))(
    '%s runs as written',
    async (_, block) => {
      const http = block.words.includes('http')
      const running = await startServer(http ? { 'http-port': -1 } : {})
      const cwd = mkdtempSync(path.join(work, 'session-'))
      try {
        const ports = (text: string): string =>
          text
            .replaceAll('6381', String(running.port))
            .replaceAll('8080', http ? String(running.server.httpPort) : '8080')
        for (const step of consoleSteps(block)) {
          const result = await runStep(step, ports, cwd, running.port)
          expect(
            outputMatches(step.expected, linesOf(step, result.stdout)),
            `${block.file}:${block.line}: ${step.command}\n${result.stdout}${result.stderr}`,
          ).toBe(true)
        }
      } finally {
        await running.stop()
      }
    },
  )
})

describe('a redis-cli step slower than 500 ms', () => {
  it('matches its reply: the elapsed time redis-cli adds after it is not output', async () => {
    const running = await startServer({ 'enable-debug-command': 'yes' })
    try {
      const step: ConsoleStep = { kind: 'redis-cli', command: 'DEBUG SLEEP 0.6', expected: ['OK'] }
      const result = await runStep(step, (text) => text, work, running.port)
      // redis-cli did print the time (0.6 s or more, however loaded the machine) ...
      expect(result.stdout).toMatch(/^OK\n\(\d+\.\d\ds\)\n$/)
      // ... and the comparison leaves it out.
      expect(outputMatches(step.expected, linesOf(step, result.stdout))).toBe(true)
    } finally {
      await running.stop()
    }
  })

  it('only a last line of exactly that shape is left out', () => {
    expect(redisCliLines('OK\n(0.56s)\n')).toEqual(['OK'])
    expect(redisCliLines('(error) ERR no such key\n\n(12.05s)\n')).toEqual(['(error) ERR no such key'])
    expect(redisCliLines('1) (integer) 1\n2) (integer) 0\n(1.00s)\n')).toEqual(['1) (integer) 1', '2) (integer) 0'])
    expect(redisCliLines('"(0.56s)"\n')).toEqual(['"(0.56s)"'])
    expect(redisCliLines('(0.5s)\n')).toEqual(['(0.5s)'])
    expect(redisCliLines('(0.56s)\nOK\n')).toEqual(['(0.56s)', 'OK'])
    expect(redisCliLines('(empty array)\n')).toEqual(['(empty array)'])
    expect(redisCliLines('')).toEqual([])
  })
})

/** The lines a step printed, as compared: trailing empty lines are not (redis-cli ends an error reply with one). */
function linesOf(step: ConsoleStep, stdout: string): string[] {
  if (step.kind === 'redis-cli') return redisCliLines(stdout)
  const text = stdout.replace(/\n+$/, '')
  return text === '' ? [] : text.split('\n')
}

function runStep(step: ConsoleStep, ports: (text: string) => string, cwd: string, port: number) {
  if (step.kind === 'redis-cli') return run('redis-cli', ['--no-raw', '-p', String(port)], cwd, `${step.command}\n`)
  // Standard error joins standard output, as on a terminal.
  return run('bash', ['-o', 'pipefail', '-c', `exec 2>&1\n${ports(step.command)}`], cwd, '')
}
