/**
 * A real bfs process (dist/main.js, built by `npm test`'s pretest) for the tests that signal or
 * kill it: start it, wait until it accepts connections, learn its port, and kill it.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { InteractiveTool } from './tools.js'

/** The built server's entry point. */
export const BFS_MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/main.js')

/** A started child bfs and the port it listens on. */
export interface ChildServer {
  bfs: InteractiveTool
  port: number
}

/**
 * Runs `node dist/main.js ...args` and resolves once it has logged "Ready to accept connections",
 * with the port from its "Listening on 127.0.0.1:<port>" line (so `--port 0` works). A child that
 * exits or does not get ready in time is killed and the promise rejects with its output.
 */
export async function startChildServer(
  args: readonly string[],
  options: { fileSizeLimitKiB?: number; readyTimeoutMs?: number } = {},
): Promise<ChildServer> {
  const limit = options.fileSizeLimitKiB
  // RLIMIT_FSIZE through bash's ulimit (KiB), SIGXFSZ ignored: a write past the limit is cut
  // short, then fails with EFBIG, as on a full disk but at a size chosen here.
  const bfs =
    limit === undefined
      ? InteractiveTool.start(process.execPath, [BFS_MAIN, ...args])
      : InteractiveTool.start('bash', [
          '-c',
          `trap '' XFSZ; ulimit -f ${limit}; exec "$0" "$@"`,
          process.execPath,
          BFS_MAIN,
          ...args,
        ])
  try {
    await bfs.waitFor((output) => output.includes('Ready to accept connections'), options.readyTimeoutMs)
  } catch (error) {
    bfs.kill()
    throw error
  }
  const port = Number(/Listening on 127\.0\.0\.1:(\d+)/.exec(bfs.stdout + bfs.stderr)?.[1])
  return { bfs, port }
}

/** SIGKILLs the child and resolves once it has exited. */
export async function killChildServer(bfs: InteractiveTool): Promise<void> {
  bfs.child.kill('SIGKILL')
  await bfs.waitExit()
}

/**
 * An ioredis client for a server that may be killed under it: no reconnection, no retried
 * commands, and connection errors ignored (a command in flight still rejects).
 */
export function childClient(port: number): Redis {
  const redis = new Redis({ port, host: '127.0.0.1', retryStrategy: () => null, maxRetriesPerRequest: 0 })
  redis.on('error', () => {})
  return redis
}
