/** A bfs and a real redis-server 7.0.15 side by side for a test file, started before its tests and stopped after. */
import { afterAll, beforeAll } from 'vitest'
import type { Config } from '../../src/runtime/config.js'
import { startServer, type RunningServer } from './start-server.js'
import { startRedisServer, type ReferenceServer } from './redis-server.js'
import { RawClient } from './resp.js'

export interface SideBySide {
  readonly bfs: RunningServer
  readonly redis: ReferenceServer
  /** A raw connection, closed after the file's tests. */
  connect(port: number): Promise<RawClient>
}

/** `config`: bfs's settings beyond startServer's. */
export function besideRedis(config: Partial<Config> = {}): SideBySide {
  const open: RawClient[] = []
  const servers = {
    connect: async (port: number): Promise<RawClient> => {
      const client = await RawClient.connect(port)
      open.push(client)
      return client
    },
  } as { bfs: RunningServer; redis: ReferenceServer; connect(port: number): Promise<RawClient> }
  beforeAll(async () => {
    ;[servers.bfs, servers.redis] = await Promise.all([startServer(config), startRedisServer()])
  })
  afterAll(async () => {
    for (const client of open) client.close()
    await Promise.all([servers.bfs?.stop(), servers.redis?.stop()])
  })
  return servers
}
