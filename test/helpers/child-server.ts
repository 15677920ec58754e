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

/**
 * The vitest projects `threads` and `threads-serial` run the server tests with I/O threads:
 * BFS_TEST_IO_THREADS (vitest.config.ts). These give a child bfs that many: as flags, and as a
 * config file's lines. Elsewhere nothing (the server's default). Each goes before the test's own
 * settings, so that a test that sets io-threads itself wins.
 */
export function testIoThreadsArgs(): string[] {
  const threads = testIoThreadsCount()
  return threads === undefined ? [] : ['--io-threads', String(threads)]
}

/** testIoThreadsArgs as a config file's lines: `io-threads N`, or none. */
export function testIoThreadsLines(): string[] {
  const threads = testIoThreadsCount()
  return threads === undefined ? [] : [`io-threads ${threads}`]
}

/** BFS_TEST_IO_THREADS: the io-threads every bfs of the test run gets, or undefined (the default). */
export function testIoThreadsCount(): number | undefined {
  const threads = process.env.BFS_TEST_IO_THREADS
  return threads === undefined || threads === '' ? undefined : Number(threads)
}

/**
 * `args` of a bfs command line (`[config file] [--key value ...]`) with testIoThreadsArgs
 * between the config file and the flags: a flag of the test's own still comes later and wins.
 */
export function withTestIoThreads(args: readonly string[]): string[] {
  const file = args.length > 0 && !args[0]!.startsWith('--') ? [args[0]!] : []
  return [...file, ...testIoThreadsArgs(), ...args.slice(file.length)]
}

/** A started child bfs and the port it listens on. */
export interface ChildServer {
  bfs: InteractiveTool
  port: number
}

/**
 * Runs `node dist/main.js ...args` (withTestIoThreads) and resolves once it has logged "Ready to accept connections",
 * with the port from its "Listening on 127.0.0.1:<port>" line (so `--port 0` works). A child that
 * exits or does not get ready in time is killed and the promise rejects with its output.
 */
export async function startChildServer(
  args: readonly string[],
  options: { fileSizeLimitKiB?: number; readyTimeoutMs?: number } = {},
): Promise<ChildServer> {
  const limit = options.fileSizeLimitKiB
  const command = withTestIoThreads(args)
  // RLIMIT_FSIZE through bash's ulimit (KiB), SIGXFSZ ignored: a write past the limit is cut
  // short, then fails with EFBIG, as on a full disk but at a size chosen here.
  const bfs =
    limit === undefined
      ? InteractiveTool.start(process.execPath, [BFS_MAIN, ...command])
      : InteractiveTool.start('bash', [
          '-c',
          `trap '' XFSZ; ulimit -f ${limit}; exec "$0" "$@"`,
          process.execPath,
          BFS_MAIN,
          ...command,
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
