/**
 * The HTTP listener with ACL users (fetch with HTTP Basic): any user authenticates, and that user's
 * permissions apply: /add= as BF.ADD and /contain= as BF.EXISTS on http-filter, /metrics as INFO,
 * the status page and /filters as SCAN; /healthz needs none. A denial is 403 with the NOPERM text
 * and is in ACL LOG; no credentials run as the default user while it needs no password.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { basicAuth, fetchText } from './http-helpers.js'

let running: RunningServer
let redis: Redis
let base: string

beforeAll(async () => {
  running = await startServer({ 'http-port': -1, 'http-filter': 'seen' })
  base = `http://127.0.0.1:${running.server.httpPort}`
  redis = new Redis({ port: running.port, host: '127.0.0.1' })
  // The read-only user of docs/operations/security.md for the HTTP front end, a writer, and a user without INFO or SCAN.
  await redis.call('ACL', 'SETUSER', 'web', 'on', '>web-pass', '%R~seen', '+bf.exists', '+info', '+scan')
  await redis.call('ACL', 'SETUSER', 'writer', 'on', '>w-pass', '~seen', '+@bloom')
  await redis.call('ACL', 'SETUSER', 'other-key', 'on', '>o-pass', '~elsewhere', '+@bloom')
})

afterAll(async () => {
  redis?.disconnect()
  await running?.stop()
})

const basic = basicAuth
const get = (target: string, authorization?: string) => fetchText(base, target, authorization)

describe('HTTP as ACL users', () => {
  it("a writer adds, the read-only user checks; the read-only user's /add= is 403 with the NOPERM text, in ACL LOG", async () => {
    expect(await get('/add=https://a', basic('writer', 'w-pass'))).toMatchObject({ status: 200, body: 'ok' })
    expect(await get('/contain=https://a', basic('web', 'web-pass'))).toMatchObject({ status: 200, body: 'true' })
    await redis.call('ACL', 'LOG', 'RESET')
    expect(await get('/add=https://b', basic('web', 'web-pass'))).toMatchObject({
      status: 403,
      body: "NOPERM this user has no permissions to run the 'bf.add' command\n",
    })
    expect(await redis.call('BF.EXISTS', 'seen', 'https://b')).toBe(0)
    const log = (await redis.call('ACL', 'LOG', '1')) as unknown[][]
    expect(log[0]!.slice(0, 10)).toEqual([
      'count',
      1,
      'reason',
      'command',
      'context',
      'toplevel',
      'object',
      'bf.add',
      'username',
      'web',
    ])
  })

  it("a key outside the user's patterns is 403 with the key text", async () => {
    expect(await get('/contain=x', basic('other-key', 'o-pass'))).toMatchObject({
      status: 403,
      body: 'NOPERM this user has no permissions to access one of the keys used as arguments\n',
    })
  })

  it('/metrics needs INFO, the status page and /filters need SCAN; /healthz needs nothing', async () => {
    expect((await get('/metrics', basic('web', 'web-pass'))).status).toBe(200)
    expect((await get('/filters', basic('web', 'web-pass'))).status).toBe(200)
    expect((await get('/', basic('web', 'web-pass'))).status).toBe(200)
    expect(await get('/metrics', basic('writer', 'w-pass'))).toMatchObject({
      status: 403,
      body: "NOPERM this user has no permissions to run the 'info' command\n",
    })
    expect(await get('/filters', basic('writer', 'w-pass'))).toMatchObject({
      status: 403,
      body: "NOPERM this user has no permissions to run the 'scan' command\n",
    })
    expect((await get('/', basic('writer', 'w-pass'))).status).toBe(403)
    expect(await get('/healthz', basic('writer', 'wrong'))).toMatchObject({ status: 200, body: 'ok' })
  })

  it('a wrong password is 401 and an auth entry in ACL LOG; no credentials run as the default user', async () => {
    await redis.call('ACL', 'LOG', 'RESET')
    const denied = await get('/contain=x', basic('web', 'nope'))
    expect(denied.status).toBe(401)
    expect(denied.headers.get('www-authenticate')).toBe('Basic realm="bfs", charset="UTF-8"')
    const log = (await redis.call('ACL', 'LOG', '1')) as unknown[][]
    expect(log[0]!.slice(2, 10)).toEqual(['reason', 'auth', 'context', 'toplevel', 'object', 'AUTH', 'username', 'web'])
    expect(await get('/contain=https://a')).toMatchObject({ status: 200, body: 'true' })
    // Once the default user needs a password, a request without credentials must authenticate.
    await redis.call('ACL', 'SETUSER', 'default', 'resetpass', '>def')
    try {
      expect((await get('/contain=https://a')).status).toBe(401)
      expect(await get('/contain=https://a', basic('default', 'def'))).toMatchObject({ status: 200, body: 'true' })
    } finally {
      await redis.call('ACL', 'SETUSER', 'default', 'nopass')
    }
  })
})
