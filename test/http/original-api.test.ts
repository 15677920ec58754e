/**
 * The original HTTP API against a real bfs: the original's exact bodies and codes (with Node's
 * fetch, curl and raw bytes), percent-encoded items, agreement with RESP, HEAD, other methods,
 * keep-alive, and limits that cut off hostile clients while RESP keeps answering.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { hasTool, runTool } from '../helpers/tools.js'
import { RawHttp, getRequest } from './http-helpers.js'

let running: RunningServer
let redis: Redis
let base: string

beforeAll(async () => {
  running = await startServer({ 'http-port': -1, 'http-headers-timeout-ms': 300 })
  base = `http://127.0.0.1:${running.server.httpPort}`
  redis = new Redis({ port: running.port, host: '127.0.0.1' })
})

afterAll(async () => {
  redis?.disconnect()
  await running?.stop()
})

async function get(target: string, init?: RequestInit): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await fetch(base + target, init)
  return { status: response.status, body: await response.text(), headers: response.headers }
}

describe('the listener', () => {
  it('binds a free port with http-port -1 and reports it', () => {
    expect(running.server.httpPort).toBeGreaterThan(0)
    expect(running.server.httpPort).not.toBe(running.port)
  })

  it('listens on http-bind when set, and on bind when it is empty', async () => {
    const apart = await startServer({ 'http-port': -1, bind: '127.0.0.1', 'http-bind': '127.0.0.2' })
    try {
      const port = apart.server.httpPort
      const answer = await fetch(`http://127.0.0.2:${port}/contain=x`)
      expect([answer.status, await answer.text()]).toEqual([200, 'false'])
      // Only there, not also on bind's address.
      expect(apart.logs.filter((line) => line.includes('HTTP listening on'))).toEqual([
        expect.stringContaining(`HTTP listening on 127.0.0.2:${port}`),
      ])
    } finally {
      await apart.stop()
    }
    // Reachable from elsewhere with no requirepass: the same warning as bind gets.
    const open = await startServer({ 'http-port': -1, 'http-bind': '0.0.0.0' })
    try {
      expect(open.logs.some((line) => line.includes('HTTP WARNING: listening on 0.0.0.0 with no requirepass'))).toBe(
        true,
      )
    } finally {
      await open.stop()
    }
    // The suite's own server: http-bind "" (the default) listens where bind does.
    expect(running.logs.some((line) => line.includes(`HTTP listening on 127.0.0.1:${running.server.httpPort}`))).toBe(
      true,
    )
  })

  it('is off with http-port 0 (the default)', async () => {
    const other = await startServer()
    try {
      expect(other.server.httpPort).toBe(0)
    } finally {
      await other.stop()
    }
  })
})

describe('GET /add= and /contain= (fetch)', () => {
  it('answers with the original bodies and codes', async () => {
    expect(await get('/contain=fetch-one')).toMatchObject({ status: 200, body: 'false' })
    expect(await get('/add=fetch-one')).toMatchObject({ status: 200, body: 'ok' })
    expect(await get('/add=fetch-one')).toMatchObject({ status: 200, body: 'ok' })
    expect(await get('/contain=fetch-one')).toMatchObject({ status: 200, body: 'true' })
  })

  it('acts on the filter "bfs", created with the configured defaults, the one RESP sees', async () => {
    await get('/add=resp-sees-it')
    expect(await redis.call('BF.EXISTS', 'bfs', 'resp-sees-it')).toBe(1)
    const info = (await redis.call('BF.INFO', 'bfs')) as unknown[]
    expect(info.slice(0, 1)).toEqual(['Capacity'])
    expect(info[1]).toBe(100)
    expect(info[9]).toBe(2)
    await redis.call('BF.ADD', 'bfs', 'added-over-resp')
    expect((await get('/contain=added-over-resp')).body).toBe('true')
  })

  it('percent-decodes items as query-string values', async () => {
    const url = 'http://example.com/a b?q=1&r=é'
    await get(`/add=${encodeURIComponent(url)}`)
    expect(await redis.call('BF.EXISTS', 'bfs', url)).toBe(1)
    expect((await get(`/contain=${encodeURIComponent(url)}`)).body).toBe('true')
    await get('/add=plus+means+space')
    expect(await redis.call('BF.EXISTS', 'bfs', 'plus means space')).toBe(1)
  })

  it('agrees with BF.EXISTS bfs <item> over RESP, item by item', async () => {
    const items = Array.from({ length: 200 }, (_, i) => `agree:${i}:${i % 7 === 0 ? 'ü/?&=' : ''}`)
    for (const item of items.filter((_, i) => i % 2 === 0)) await get(`/add=${encodeURIComponent(item)}`)
    for (const item of items) {
      const http = (await get(`/contain=${encodeURIComponent(item)}`)).body
      const resp = await redis.call('BF.EXISTS', 'bfs', item)
      expect(http, item).toBe(resp === 1 ? 'true' : 'false')
    }
  })

  it('answers 400 with a short text body to anything else', async () => {
    // The original also answered `/` so; bfs serves its status page there (test/http/status-page.test.ts).
    for (const target of ['/add=', '/contain=', '/add', '/remove=x', '//', '/filter', '/contain']) {
      const response = await get(target)
      expect(response.status, target).toBe(400)
      expect(response.body, target).toBe('bad request\n')
    }
  })

  it('follows CONFIG SET http-filter', async () => {
    await redis.call('CONFIG', 'SET', 'http-filter', 'other')
    try {
      await get('/add=in-other')
      expect(await redis.call('BF.EXISTS', 'other', 'in-other')).toBe(1)
      expect(await redis.call('BF.EXISTS', 'bfs', 'in-other')).toBe(0)
    } finally {
      await redis.call('CONFIG', 'SET', 'http-filter', 'bfs')
    }
  })

  it('counts its commands in INFO commandstats and its requests in INFO stats', async () => {
    const before = await redis.info('commandstats')
    const calls = (text: string): number => Number(/cmdstat_bf\.add:calls=(\d+)/.exec(text)?.[1] ?? 0)
    await get('/add=counted')
    expect(calls(await redis.info('commandstats'))).toBe(calls(before) + 1)
    expect(await redis.info('stats')).toMatch(/bfs_total_http_requests:[1-9]\d*/)
  })
})

describe('methods', () => {
  it('HEAD answers as GET without a body and without adding', async () => {
    const head = await get('/add=head-only', { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-length')).toBe('2')
    expect(head.body).toBe('')
    expect(await redis.call('BF.EXISTS', 'bfs', 'head-only')).toBe(0)
    await get('/add=head-known')
    const contain = await get('/contain=head-known', { method: 'HEAD' })
    expect(contain.headers.get('content-length')).toBe('4')
    expect((await get('/healthz', { method: 'HEAD' })).status).toBe(200)
  })

  it('other methods get 405 with Allow', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const response = await get('/add=posted', { method })
      expect(response.status, method).toBe(405)
      expect(response.headers.get('allow')).toBe('GET, HEAD')
    }
    expect(await redis.call('BF.EXISTS', 'bfs', 'posted')).toBe(0)
  })
})

describe('curl', () => {
  it.skipIf(!hasTool('curl'))('gets the original bodies and codes', async () => {
    const curl = async (target: string): Promise<string> => {
      const result = await runTool('curl', ['-s', '-w', ' %{http_code}', `${base}${target}`])
      expect(result.code).toBe(0)
      return result.stdout
    }
    expect(await curl('/contain=curl%20item')).toBe('false 200')
    expect(await curl('/add=curl%20item')).toBe('ok 200')
    expect(await curl('/contain=curl%20item')).toBe('true 200')
    expect(await curl('/add=')).toBe('bad request\n 400')
    expect(await redis.call('BF.EXISTS', 'bfs', 'curl item')).toBe(1)
  })

  it.skipIf(!hasTool('curl'))('reuses one connection for several URLs (keep-alive)', async () => {
    const result = await runTool('curl', ['-sv', `${base}/add=k1`, `${base}/contain=k1`, `${base}/contain=k2`])
    expect(result.stdout).toBe('oktruefalse')
    expect(result.stderr).toMatch(/Re-using existing connection/i)
  })
})

describe('keep-alive and limits', () => {
  it('answers several requests on one connection', async () => {
    const connection = await RawHttp.connect(running.server.httpPort)
    try {
      expect((await connection.request(getRequest('/add=ka'))).body).toBe('ok')
      expect((await connection.request(getRequest('/contain=ka'))).body).toBe('true')
      const third = await connection.request(getRequest('/contain=ka-not'))
      expect(third.body).toBe('false')
      expect(third.headers.get('connection')).toBe('keep-alive')
      // Pipelined: two requests in one write, two responses in order.
      connection.write(getRequest('/contain=ka') + getRequest('/contain=ka-not'))
      expect((await connection.request()).body).toBe('true')
      expect((await connection.request()).body).toBe('false')
      expect(connection.closed).toBe(false)
    } finally {
      connection.end()
    }
  })

  it('answers 414 to a URL over http-max-url-bytes', async () => {
    const response = await get(`/add=${'a'.repeat(9000)}`)
    expect(response.status).toBe(414)
    expect((await get('/healthz')).body).toBe('ok')
  })

  it('answers 414 to a huge URL (over the head limit) and stays healthy', async () => {
    const connection = await RawHttp.connect(running.server.httpPort)
    const response = await connection.request(getRequest(`/add=${'x'.repeat(200_000)}`))
    expect(response.status).toBe(414)
    await connection.closedPromise
    expect((await get('/healthz')).body).toBe('ok')
    expect(await redis.ping()).toBe('PONG')
  })

  it('answers 431 to huge headers', async () => {
    const connection = await RawHttp.connect(running.server.httpPort)
    const response = await connection.request(
      `GET /contain=x HTTP/1.1\r\nHost: bfs\r\nX-Big: ${'y'.repeat(100_000)}\r\n\r\n`,
    )
    expect(response.status).toBe(431)
    await connection.closedPromise
  })

  it('cuts off a client that never finishes its head, while RESP keeps answering', async () => {
    const connection = await RawHttp.connect(running.server.httpPort)
    connection.write('GET /contain=slow HTTP/1.1\r\nHost: bfs\r\nX-Slow: ')
    expect(await redis.call('BF.ADD', 'bfs', 'during-slowloris')).toBe(1)
    const response = await connection.request()
    expect(response.status).toBe(408)
    await connection.closedPromise
    expect(connection.closed).toBe(true)
  })

  it('serves many concurrent connections', async () => {
    const items = Array.from({ length: 200 }, (_, i) => `concurrent-${i}`)
    const bodies = await Promise.all(items.map((item) => get(`/contain=${item}`).then((r) => r.body)))
    // The filter holds hundreds of items by now, so a false positive or two is expected: compare with RESP.
    const resp = (await redis.call('BF.MEXISTS', 'bfs', ...items)) as number[]
    expect(bodies).toEqual(resp.map((found) => (found === 1 ? 'true' : 'false')))
  })

  it('counts open HTTP connections in INFO clients', async () => {
    const connection = await RawHttp.connect(running.server.httpPort)
    try {
      await connection.request(getRequest('/healthz'))
      const open = Number(/bfs_http_connected_clients:(\d+)/.exec(await redis.info('clients'))?.[1])
      expect(open).toBeGreaterThanOrEqual(1)
    } finally {
      connection.end()
    }
  })
})

describe('durability', () => {
  it('appendfsync always: /add= answers ok only once its record is fsynced, as a RESP reply would', async () => {
    const durable = await startServer({ 'http-port': -1, appendonly: true, appendfsync: 'always' })
    const log = durable.server.persistence.appendLog
    // Holds the fsync of the log until released, as a slow disk would.
    const realSync = log.sync.bind(log)
    let held = true
    log.sync = () => {
      if (!held) realSync()
    }
    try {
      let syncedWhenAnswered = -1
      const answered = fetch(`http://127.0.0.1:${durable.server.httpPort}/add=held-item`).then(async (response) => {
        syncedWhenAnswered = log.syncedBytes
        return { status: response.status, body: await response.text() }
      })
      while (log.writtenBytes === 0) await new Promise((resolve) => setTimeout(resolve, 5))
      const target = log.writtenBytes
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(syncedWhenAnswered).toBe(-1)
      held = false
      log.sync()
      expect(await answered).toEqual({ status: 200, body: 'ok' })
      expect(syncedWhenAnswered).toBeGreaterThanOrEqual(target)
    } finally {
      await durable.stop()
    }
  })
})
