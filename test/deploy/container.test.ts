/**
 * The container image (Dockerfile) built and run for real with podman, as CI can: no registry
 * image can be pulled, so deploy/container/make-base.sh makes the base (Debian bookworm by
 * mmdebstrap, Node 24 from npm; kept under its tag between runs) and the Dockerfile's own steps
 * run on it unchanged. runc, host networking and explicit ulimits are what podman needs on these
 * machines. Skips only when podman is absent (.ci/run installs podman, runc and mmdebstrap).
 */
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { freePort, hasTool, runTool, type ToolResult } from '../helpers/tools.js'
import { until } from '../helpers/replication-info.js'
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.js'
import { testIoThreadsArgs, testIoThreadsLines } from '../helpers/child-server.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const BASE = 'localhost/bfs-base:bookworm-node24'
const IMAGE = 'localhost/bfs:ci'
const RUN = ['--runtime', 'runc']
const LIMITS = ['--network', 'host', '--ulimit', 'nofile=20000:20000', '--ulimit', 'nproc=4096:4096']
const suffix = randomBytes(4).toString('hex')
const volume = `bfs-test-data-${suffix}`
const containers: string[] = []
const work = makeTempDir('bfs-container-')

async function podman(args: readonly string[], timeoutMs = 120_000): Promise<ToolResult> {
  const result = await runTool('podman', [...RUN, ...args], undefined, timeoutMs)
  if (result.code !== 0)
    throw new Error(`podman ${args.join(' ')} exited ${result.code}:\n${result.stdout}\n${result.stderr}`)
  return result
}

/**
 * Runs the image with the volume on /data, with `options` before the image name and `args` after
 * it (bfs flags); resolves once it answers PING on `port`.
 */
async function startContainer(
  port: number,
  options: string[],
  args: string[],
): Promise<{ name: string; client: Redis }> {
  const name = `bfs-test-${suffix}-${containers.length}`
  containers.push(name)
  await podman(['run', '-d', '--name', name, ...LIMITS, '-v', `${volume}:/data`, ...options, IMAGE, ...args])
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
  })
  client.on('error', () => {}) // refused while the container starts: the poll below retries
  await until(
    async () => {
      try {
        await client.connect()
        return (await client.ping()) === 'PONG'
      } catch {
        client.disconnect()
        return false
      }
    },
    `the container ${name} answering on ${port}`,
    60_000,
  )
  return { name, client }
}

afterAll(async () => {
  if (!hasTool('podman')) return
  for (const name of containers) await runTool('podman', [...RUN, 'rm', '-f', '-t', '0', name])
  await runTool('podman', ['volume', 'rm', '-f', volume])
  removeTempDir(work)
}, 120_000)

describe.skipIf(!hasTool('podman'))('the container image', () => {
  it('builds on a base made locally, runs as non-root, answers, and keeps its data across SIGTERM and a new container configured by file', async () => {
    const base = await runTool(path.join(root, 'deploy/container/make-base.sh'), [BASE], undefined, 900_000)
    expect(base.code, `${base.stdout}\n${base.stderr}`).toBe(0)
    await podman(['build', ...LIMITS, '--format', 'docker', '--build-arg', `BASE=${BASE}`, '-t', IMAGE, root], 900_000)
    await podman(['volume', 'create', volume])

    const port = await freePort()
    // Configured by flags after the image name.
    const first = await startContainer(port, [], [...testIoThreadsArgs(), '--port', String(port)])
    try {
      expect(await first.client.call('BF.ADD', 'seen', 'https://example.com/')).toBe(1)
      // The server process (PID 1 in the container) is not root.
      const status = (await podman(['exec', first.name, 'cat', '/proc/1/status'])).stdout
      const uid = /^Uid:\s+(\d+)/m.exec(status)?.[1]
      expect(uid).toBeDefined()
      expect(uid).not.toBe('0')
      expect((await podman(['exec', first.name, 'id', '-un'])).stdout.trim()).toBe('bfs')
      // The image's HEALTHCHECK passes.
      await podman(['healthcheck', 'run', first.name])
    } finally {
      first.client.disconnect()
    }
    // podman stop sends SIGTERM (the image's stop signal) and waits: the final save happens then.
    await podman(['stop', '-t', '10', first.name])
    expect((await podman(['inspect', '--format', '{{.State.ExitCode}}', first.name])).stdout.trim()).toBe('0')
    const logs = await podman(['logs', first.name])
    expect(logs.stdout + logs.stderr).toContain('Received SIGTERM')
    expect(logs.stdout + logs.stderr).toContain('DB saved on disk')

    // Configured by a file mounted over the image's /etc/bfs/bfs.conf (the health check reads its port).
    const conf = path.join(work, 'bfs.conf')
    writeFileSync(
      conf,
      [...testIoThreadsLines(), 'bind 0.0.0.0', `port ${port}`, 'dir /data', 'maxclients 500', ''].join('\n'),
    )
    const second = await startContainer(port, ['-v', `${conf}:/etc/bfs/bfs.conf:ro`], [])
    try {
      expect(await second.client.config('GET', 'maxclients')).toEqual(['maxclients', '500'])
      await podman(['healthcheck', 'run', second.name])
      expect(await second.client.call('BF.EXISTS', 'seen', 'https://example.com/')).toBe(1)
      expect(await second.client.call('BF.EXISTS', 'seen', 'https://example.org/')).toBe(0)
    } finally {
      second.client.disconnect()
    }
  }, 1_800_000)
})
