/**
 * CLIENT PAUSE / UNPAUSE over real sockets: a paused command waits (is not refused) with what its
 * client sent after it, and runs once the pause ends; WRITE holds writes and PUBLISH, not reads;
 * nothing expires for real meanwhile; INFO blocked_clients and CLIENT LIST's b flag show the
 * waiting clients; CLIENT UNBLOCK answers a WAIT at once. Order is checked, not durations (but
 * for the one lower bound a timed pause guarantees).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../../helpers/start-server.js'
import { RawClient, ask, encodeCommand } from '../../helpers/resp.js'

let bfs: RunningServer
const open: RawClient[] = []
const connect = async (): Promise<RawClient> => {
  const client = await RawClient.connect(bfs.port)
  open.push(client)
  return client
}
beforeAll(async () => {
  bfs = await startServer()
})

afterAll(async () => {
  for (const client of open) client.close()
  await bfs.stop()
})

/** Waits until INFO says `count` clients are blocked. */
async function blockedClients(admin: RawClient, count: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if ((await ask(admin, 'INFO', 'clients')).includes(`blocked_clients:${count}\r\n`)) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`blocked_clients never reached ${count}`)
}

describe('CLIENT PAUSE', () => {
  it('WRITE holds a writer (and what it sent after) until UNPAUSE, while reads go on', async () => {
    const admin = await connect()
    const writer = await connect()
    // Its own id: with I/O threads, ids follow the order the main thread learnt of the
    // connections, not the order they were opened in.
    const writerId = (await ask(writer, 'CLIENT', 'ID')).slice(1, -2)
    expect(await ask(admin, 'CLIENT', 'PAUSE', '100000', 'WRITE')).toBe('+OK\r\n')
    writer.write(
      Buffer.concat([
        encodeCommand(['BF.ADD', 'paused', 'a']),
        encodeCommand(['PUBLISH', 'c', 'm']),
        encodeCommand(['PING']),
      ]),
    )
    await blockedClients(admin, 1)
    expect(await ask(admin, 'BF.EXISTS', 'paused', 'a')).toBe(':0\r\n')
    expect(await ask(admin, 'CLIENT', 'LIST', 'ID', writerId)).toMatch(/ flags=b /)
    expect(await ask(admin, 'CLIENT', 'UNPAUSE')).toBe('+OK\r\n')
    expect((await writer.read(':1\r\n:0\r\n+PONG\r\n'.length)).toString()).toBe(':1\r\n:0\r\n+PONG\r\n')
    expect(await ask(admin, 'BF.EXISTS', 'paused', 'a')).toBe(':1\r\n')
    await blockedClients(admin, 0)
  })

  it('ALL holds every command until the pause times out, then runs it', async () => {
    const admin = await connect()
    const other = await connect()
    const started = Date.now()
    expect(await ask(admin, 'CLIENT', 'PAUSE', '300', 'ALL')).toBe('+OK\r\n')
    expect(await ask(other, 'PING')).toBe('+PONG\r\n')
    expect(Date.now() - started).toBeGreaterThanOrEqual(250)
  })

  it('keeps the dataset as it is: an expired key reads as missing but is not deleted until the pause ends', async () => {
    const admin = await connect()
    await ask(admin, 'BF.ADD', 'expiring', 'a')
    const expiredBefore = Number(/expired_keys:(\d+)/.exec(await ask(admin, 'INFO', 'stats'))![1])
    await ask(admin, 'PEXPIRE', 'expiring', '1500')
    expect(await ask(admin, 'CLIENT', 'PAUSE', '100000', 'WRITE')).toBe('+OK\r\n')
    while ((await ask(admin, 'EXISTS', 'expiring')) !== ':0\r\n')
      await new Promise((resolve) => setTimeout(resolve, 50))
    // Past its expiry, looked up and swept by the cron meanwhile: still not deleted.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(Number(/expired_keys:(\d+)/.exec(await ask(admin, 'INFO', 'stats'))![1])).toBe(expiredBefore)
    expect(bfs.server.registry.peek('expiring')).toBeDefined()
    await ask(admin, 'CLIENT', 'UNPAUSE')
    expect(await ask(admin, 'EXISTS', 'expiring')).toBe(':0\r\n')
    expect(Number(/expired_keys:(\d+)/.exec(await ask(admin, 'INFO', 'stats'))![1])).toBe(expiredBefore + 1)
  })

  it('ioredis: a write sent during a pause resolves after UNPAUSE, nothing refused', async () => {
    const admin = new Redis({ port: bfs.port, lazyConnect: true })
    const writer = new Redis({ port: bfs.port, lazyConnect: true })
    await Promise.all([admin.connect(), writer.connect()])
    try {
      await admin.call('CLIENT', 'PAUSE', '100000', 'WRITE')
      const order: string[] = []
      const write = writer.call('BF.MADD', 'io', 'a', 'b').then((reply) => order.push(`write ${JSON.stringify(reply)}`))
      // The writer's later commands wait behind it; another client reads on.
      while (!String(await admin.call('INFO', 'clients')).includes('blocked_clients:1'))
        await new Promise((resolve) => setTimeout(resolve, 25))
      expect(await admin.call('BF.EXISTS', 'io', 'a')).toBe(0)
      order.push('read')
      await admin.call('CLIENT', 'UNPAUSE')
      await write
      expect(order).toEqual(['read', 'write [1,1]'])
    } finally {
      admin.disconnect()
      writer.disconnect()
    }
  })
})

describe('CLIENT PAUSE and the HTTP front end', () => {
  it('turns /add= away (503) during a WRITE pause, answers /contain=, and adds again after UNPAUSE', async () => {
    const web = await startServer({ 'http-port': -1 })
    const admin = await RawClient.connect(web.port)
    try {
      const base = `http://127.0.0.1:${web.server.httpPort}`
      await ask(admin, 'CLIENT', 'PAUSE', '100000', 'WRITE')
      const refused = await fetch(`${base}/add=x`)
      expect(refused.status).toBe(503)
      expect(await refused.text()).toMatch(/^PAUSED /)
      expect(await (await fetch(`${base}/contain=x`)).text()).toBe('false')
      await ask(admin, 'CLIENT', 'UNPAUSE')
      expect((await fetch(`${base}/add=x`)).status).toBe(200)
      expect(await (await fetch(`${base}/contain=x`)).text()).toBe('true')
    } finally {
      admin.close()
      await web.stop()
    }
  })
})

describe('CLIENT UNBLOCK', () => {
  it('answers a WAIT at once with the count so far (TIMEOUT) or the UNBLOCKED error (ERROR)', async () => {
    const admin = await connect()
    const waiter = await connect()
    const id = await ask(waiter, 'CLIENT', 'ID')
    waiter.write(encodeCommand(['WAIT', '1', '0']))
    await blockedClients(admin, 1)
    expect(await ask(admin, 'CLIENT', 'UNBLOCK', id.slice(1, -2))).toBe(':1\r\n')
    expect((await waiter.read(4)).toString()).toBe(':0\r\n')
    waiter.write(encodeCommand(['WAIT', '1', '0']))
    await blockedClients(admin, 1)
    expect(await ask(admin, 'CLIENT', 'UNBLOCK', id.slice(1, -2), 'ERROR')).toBe(':1\r\n')
    expect((await waiter.read('-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n'.length)).toString()).toBe(
      '-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n',
    )
    expect(await ask(admin, 'CLIENT', 'UNBLOCK', id.slice(1, -2))).toBe(':0\r\n')
  })
})
