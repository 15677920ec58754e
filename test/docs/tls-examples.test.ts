/**
 * docs/operations/tls.md's recipe runs as written, only on a free port: its first block makes the
 * certificates with openssl, its second starts bfs on a TLS port only (`bfs` is the built server,
 * started in the background until it is ready), its third adds an item with redis-cli over TLS with
 * the client certificate. Its ioredis example is what test/server/tls.test.ts runs (a rediss:// URL
 * with the tls files), type-checked by node-examples.test.ts.
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { BFS_MAIN, testIoThreadsArgs } from '../helpers/child-server.js'
import { docBlock, REPO_ROOT } from '../helpers/doc-blocks.js'
import { freePort, hasTool } from '../helpers/tools.js'
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.js'

const CERTS = docBlock('tls-certs').body
const START = docBlock('tls-start').body
const CLI = docBlock('tls-cli').body
const IOREDIS = docBlock('tls-ioredis').body

const work = makeTempDir('bfs-tls-examples-')

afterAll(() => removeTempDir(work))

/** Runs a bash script in `work`; resolves with its exit status and output (never blocks the event loop). */
function bash(script: string, timeoutMs = 120_000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd: work })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })
}

describe('the TLS recipe of docs/operations/tls.md', () => {
  it.skipIf(!hasTool('openssl') || !hasTool('redis-cli'))(
    'makes the certificates, starts bfs on a TLS port and adds an item over TLS',
    async () => {
      const certs = await bash(CERTS)
      expect(certs.code, certs.output).toBe(0)

      const port = String(await freePort())
      // `bfs` as the docs mean it: the built server; here in the background, the function returning
      // once the server logged that it accepts connections (or exited).
      const harness = `bfs() {
  "${process.execPath}" "${BFS_MAIN}" "$@" ${testIoThreadsArgs().join(' ')} --dir "${work}/data" > "${work}/bfs.log" 2>&1 &
  echo $! > "${work}/bfs.pid"
  until grep -q 'Ready to accept connections' "${work}/bfs.log"; do
    kill -0 "$(cat "${work}/bfs.pid")" 2> /dev/null || { cat "${work}/bfs.log"; exit 1; }
    sleep 0.1
  done
}
`
      try {
        const started = await bash(`${harness}${START.replaceAll('6390', port)}`, 60_000)
        expect(started.code, started.output + readFileSync(path.join(work, 'bfs.log'), 'utf8')).toBe(0)
        const added = await bash(CLI.replaceAll('6390', port), 60_000)
        expect(added.code, added.output).toBe(0)
        expect(added.output.trim()).toBe('1')
      } finally {
        // Gone before afterAll removes its directory: a bfs whose final save fails there keeps
        // running, as redis-server does ("Error trying to save the DB, can't exit").
        const stopped = await bash(
          `pid="$(cat "${work}/bfs.pid")"; kill "$pid" 2> /dev/null || true
for _ in $(seq 300); do kill -0 "$pid" 2> /dev/null || exit 0; sleep 0.1; done; kill -9 "$pid"; exit 1`,
        )
        expect(stopped.code, 'bfs did not exit within 30 s of SIGTERM').toBe(0)
      }
    },
  )

  it('its ioredis example is the one test/server/tls.test.ts runs: a rediss:// URL with the tls files', () => {
    expect(IOREDIS).toContain("new Redis('rediss://127.0.0.1:6390', { tls })")
    const tested = readFileSync(path.join(REPO_ROOT, 'test', 'server', 'tls.test.ts'), 'utf8')
    expect(tested).toContain('new Redis(`rediss://127.0.0.1:${tlsPort}`, { tls: options')
  })
})
