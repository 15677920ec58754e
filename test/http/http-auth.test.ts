/**
 * The HTTP listener with `requirepass`: every target but /healthz needs HTTP Basic credentials for
 * the user `default` and that password (fetch, raw bytes, curl -u), checked against the live
 * config, so CONFIG SET requirepass applies at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { hasTool, runTool } from '../helpers/tools.js'
import { basicAuth, fetchText, RawHttp } from './http-helpers.js'

const PASSWORD = 'p@ss:wörd'

let running: RunningServer
let redis: Redis
let base: string

beforeAll(async () => {
  running = await startServer({ 'http-port': -1, requirepass: PASSWORD })
  base = `http://127.0.0.1:${running.server.httpPort}`
  redis = new Redis({ port: running.port, host: '127.0.0.1', password: PASSWORD })
})

afterAll(async () => {
  redis?.disconnect()
  await running?.stop()
})

const basic = basicAuth
const get = (target: string, authorization?: string) => fetchText(base, target, authorization)

describe('HTTP with requirepass', () => {
  it('answers 401 with a Basic challenge to requests without the right credentials, and adds nothing', async () => {
    for (const authorization of [
      undefined,
      basic('default', 'wrong'),
      basic('someone', PASSWORD),
      basic('default', PASSWORD + 'x'),
      'Bearer ' + PASSWORD,
      'Basic !!!',
      'Basic ' + Buffer.from('no colon').toString('base64'),
    ]) {
      for (const target of ['/add=locked', '/contain=locked', '/metrics', '/nope']) {
        const response = await get(target, authorization)
        expect([target, authorization, response.status]).toEqual([target, authorization, 401])
        expect(response.body).toBe('unauthorized\n')
        expect(response.headers.get('www-authenticate')).toBe('Basic realm="bfs", charset="UTF-8"')
      }
    }
    expect(await redis.call('EXISTS', 'bfs')).toBe(0)
  })

  it('serves requests with Basic credentials for default (any letter case of the scheme)', async () => {
    expect(await get('/add=open', basic('default', PASSWORD))).toMatchObject({ status: 200, body: 'ok' })
    expect(await get('/contain=open', 'bAsIc ' + basic('default', PASSWORD).slice(6))).toMatchObject({
      status: 200,
      body: 'true',
    })
    expect(await redis.call('BF.EXISTS', 'bfs', 'open')).toBe(1)
    const metrics = await get('/metrics', basic('default', PASSWORD))
    expect(metrics.status).toBe(200)
    expect(metrics.body).toContain('bfs_')
    expect((await get('/nope', basic('default', PASSWORD))).status).toBe(400)
  })

  it('keeps /healthz open for health checks', async () => {
    expect(await get('/healthz')).toMatchObject({ status: 200, body: 'ok' })
  })

  it('follows CONFIG SET requirepass at once', async () => {
    expect(await redis.call('CONFIG', 'SET', 'requirepass', 'other')).toBe('OK')
    try {
      expect((await get('/contain=open', basic('default', PASSWORD))).status).toBe(401)
      expect(await get('/contain=open', basic('default', 'other'))).toMatchObject({ status: 200, body: 'true' })
    } finally {
      expect(await redis.call('CONFIG', 'SET', 'requirepass', PASSWORD)).toBe('OK')
    }
  })

  it('keeps the connection usable after a 401 (raw bytes)', async () => {
    const raw = await RawHttp.connect(running.server.httpPort!)
    try {
      const denied = await raw.request('GET /contain=open HTTP/1.1\r\nHost: bfs\r\n\r\n')
      expect(denied.status).toBe(401)
      expect(denied.headers.get('www-authenticate')).toBe('Basic realm="bfs", charset="UTF-8"')
      const allowed = await raw.request(
        `GET /contain=open HTTP/1.1\r\nHost: bfs\r\nAuthorization: ${basic('default', PASSWORD)}\r\n\r\n`,
      )
      expect(allowed).toMatchObject({ status: 200, body: 'true' })
    } finally {
      raw.socket.destroy()
    }
  })

  it.skipIf(!hasTool('curl'))('works with curl -u default:<password>', async () => {
    const denied = await runTool('curl', ['-s', '-w', ' %{http_code}', `${base}/contain=open`])
    expect(denied.stdout).toBe('unauthorized\n 401')
    const allowed = await runTool('curl', [
      '-s',
      '-w',
      ' %{http_code}',
      '-u',
      `default:${PASSWORD}`,
      `${base}/contain=open`,
    ])
    expect(allowed.stdout).toBe('true 200')
  })
})
