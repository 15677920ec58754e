/** A real redis-server (the reference) on a free loopback port, without persistence, for comparisons. */
import { spawn } from 'node:child_process'
import { RawClient } from './resp.js'
import { freePort } from './tools.js'

export interface ReferenceServer {
  readonly port: number
  stop(): Promise<void>
}

/** Starts `redis-server` (with `extraArgs`, say `--loadmodule` and a path) and resolves once it answers PING. */
export async function startRedisServer(extraArgs: readonly string[] = []): Promise<ReferenceServer> {
  const port = await freePort()
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--daemonize',
    'no',
    ...extraArgs,
  ]
  const child = spawn('redis-server', args, {
    stdio: 'ignore',
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  for (let attempt = 0; ; attempt++) {
    try {
      const client = await RawClient.connect(port)
      client.close()
      break
    } catch (error) {
      if (attempt > 200 || child.exitCode !== null) throw error
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  return {
    port,
    async stop() {
      child.kill('SIGTERM')
      await exited
    },
  }
}
