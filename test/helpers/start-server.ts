/** Starts a real bfs on an ephemeral port with a fresh temporary data directory. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createServer, type BfsServer, type ServerOptions } from '../../src/server/server.js'
import type { Config } from '../../src/runtime/config.js'

export interface RunningServer {
  server: BfsServer
  port: number
  dir: string
  logs: string[]
  stop(): Promise<void>
}

export function makeTempDir(prefix = 'bfs-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix))
}

export async function startServer(config: Partial<Config> = {}, options: Omit<ServerOptions, 'config'> = {}): Promise<RunningServer> {
  const dir = config.dir ?? makeTempDir()
  const logs: string[] = []
  const server = createServer({
    ...options,
    config: { port: 0, save: '', appendonly: false, ...config, dir },
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
      if (config.dir === undefined) rmSync(dir, { recursive: true, force: true })
    },
  }
}
