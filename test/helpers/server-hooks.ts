/**
 * Servers whose lifetime is tied to vitest's hooks, for the files that would otherwise repeat the
 * same start / connect / close / stop boilerplate.
 */
import { afterAll, afterEach, beforeAll } from 'vitest'
import { RawClient } from './resp.js'
import { startServer, type RunningServer } from './start-server.js'

/** What a test may open through {@link serverPerTest}; all of it is closed after the test. */
export interface PerTestServers {
  /** Starts a server as {@link startServer} does. */
  start(...args: Parameters<typeof startServer>): Promise<RunningServer>
  /** A raw client on `port`. */
  connect(port: number): Promise<RawClient>
}

/**
 * For files whose tests each start their own servers: registers an afterEach that closes every
 * client `connect` opened during the test, then stops every server `start` started (those the test
 * already stopped are not stopped twice).
 */
export function serverPerTest(): PerTestServers {
  const clients: RawClient[] = []
  const servers: RunningServer[] = []
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close()
    for (const running of servers.splice(0)) await running.stop()
  })
  return {
    async start(...args) {
      const running = await startServer(...args)
      let stopped: Promise<void> | undefined
      const tracked: RunningServer = { ...running, stop: () => (stopped ??= running.stop()) }
      servers.push(tracked)
      return tracked
    },
    async connect(port) {
      const client = await RawClient.connect(port)
      clients.push(client)
      return client
    },
  }
}

/** A server and one raw client on it, shared by the tests of a file or describe block. */
export interface SuiteServer {
  readonly running: RunningServer
  readonly client: RawClient
}

/**
 * Starts a server (as {@link startServer} with `config`) and connects one raw client in beforeAll;
 * closes the client and stops the server in afterAll. Read the fields inside tests and hooks only.
 */
export function serverPerSuite(config: Parameters<typeof startServer>[0] = {}): SuiteServer {
  let running: RunningServer | undefined
  let client: RawClient | undefined
  beforeAll(async () => {
    running = await startServer(config)
    client = await RawClient.connect(running.port)
  })
  afterAll(async () => {
    client?.close()
    await running?.stop()
  })
  return {
    get running() {
      if (running === undefined) throw new Error('the server starts in beforeAll')
      return running
    },
    get client() {
      if (client === undefined) throw new Error('the client connects in beforeAll')
      return client
    },
  }
}
