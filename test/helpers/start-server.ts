/** Starts a real bfs on an ephemeral port with a fresh temporary data directory. */
import { createServer, type BfsServer, type ServerOptions } from '../../src/server/server.js'
import type { Config } from '../../src/runtime/config.js'
import { makeTempDir, removeTempDir } from './temp-dir.js'
import { testIoThreadsCount } from './child-server.js'

/**
 * The vitest project `threads` runs every server test with I/O threads: BFS_TEST_IO_THREADS (see
 * vitest.config.ts). Elsewhere the server's default.
 */
export function testIoThreads(): Partial<Config> {
  const threads = testIoThreadsCount()
  return threads === undefined ? {} : { 'io-threads': threads }
}

export interface RunningServer {
  server: BfsServer
  port: number
  dir: string
  logs: string[]
  stop(): Promise<void>
}

export async function startServer(
  config: Partial<Config> = {},
  options: Omit<ServerOptions, 'config'> = {},
): Promise<RunningServer> {
  const dir = config.dir ?? makeTempDir()
  const logs: string[] = []
  const server = createServer({
    ...options,
    config: { port: 0, save: '', appendonly: false, ...testIoThreads(), ...config, dir },
    logSink: (line) => logs.push(line),
  })
  await server.start()
  return {
    server,
    port: server.port,
    dir,
    logs,
    async stop() {
      await server.close()
      if (config.dir === undefined) removeTempDir(dir)
    },
  }
}
