/**
 * What the HTTP views show a restricted ACL user: /filters, the status page and /metrics' series
 * per filter list only the keys the user may read (its key patterns, or any selector's, as a RESP
 * BF.INFO of that key is checked); and the permission a view needs (SCAN for the listings, INFO for
 * /metrics) is found by the command itself, so renaming or disabling SCAN or INFO with
 * rename-command refuses a user without it instead of letting every user through.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { basicAuth, fetchText } from './http-helpers.js'

let running: RunningServer
let renamed: RunningServer
let redis: Redis
let renamedRedis: Redis

beforeAll(async () => {
  ;[running, renamed] = await Promise.all([
    startServer({ 'http-port': -1 }),
    startServer({
      'http-port': -1,
      'rename-command': [
        { from: 'SCAN', to: '' },
        { from: 'INFO', to: 'SECRETINFO' },
      ],
    }),
  ])
  redis = new Redis({ port: running.port, host: '127.0.0.1' })
  // INFO is renamed there: no ready check (ioredis's is an INFO).
  renamedRedis = new Redis({ port: renamed.port, host: '127.0.0.1', enableReadyCheck: false })
  for (const key of ['team:a', 'team:b', 'other:x', 'other:y']) await redis.call('BF.ADD', key, 'item')
  await redis.call('EXPIRE', 'other:x', '1000')
  await redis.call('ACL', 'SETUSER', 'team', 'on', '>t', '~team:*', '+scan', '+info', '+bf.info')
  await redis.call('ACL', 'SETUSER', 'writeonly', 'on', '>w', '%W~team:*', '%R~other:y', '+scan', '+info')
  await redis.call('ACL', 'SETUSER', 'chooser', 'on', '>c', '~nothing', '+scan', '+info', '(~other:* +bf.info)')
  await renamedRedis.call('ACL', 'SETUSER', 'checker', 'on', '>c', '~*', '+bf.exists')
  await renamedRedis.call('ACL', 'SETUSER', 'looker', 'on', '>l', '~*', '+scan', '+info')
})

afterAll(async () => {
  redis?.disconnect()
  renamedRedis?.disconnect()
  await Promise.all([running?.stop(), renamed?.stop()])
})

const base = (server: RunningServer): string => `http://127.0.0.1:${server.server.httpPort}`

/** The names /filters lists for a user (no credentials: the default user), and its X-Total-Count. */
async function listed(user?: [string, string]): Promise<{ names: string[]; total: string | null }> {
  const response = await fetchText(base(running), '/filters', user === undefined ? undefined : basicAuth(...user))
  expect(response.status).toBe(200)
  return {
    names: (JSON.parse(response.body) as { name: string }[]).map((row) => row.name),
    total: response.headers.get('x-total-count'),
  }
}

describe('HTTP views show only the keys the user may read', () => {
  it("/filters: the user's readable keys (any selector's), counted so; the default user all", async () => {
    expect(await listed()).toEqual({ names: ['other:x', 'other:y', 'team:a', 'team:b'], total: '4' })
    expect(await listed(['team', 't'])).toEqual({ names: ['team:a', 'team:b'], total: '2' })
    // %W~ patterns give no read access.
    expect(await listed(['writeonly', 'w'])).toEqual({ names: ['other:y'], total: '1' })
    expect(await listed(['chooser', 'c'])).toEqual({ names: ['other:x', 'other:y'], total: '2' })
    for (const sort of ['bytes', 'estimatedErrorRate']) {
      const response = await fetchText(base(running), `/filters?sort=${sort}`, basicAuth('team', 't'))
      expect((JSON.parse(response.body) as { name: string }[]).map((row) => row.name).sort()).toEqual([
        'team:a',
        'team:b',
      ])
    }
  })

  it('the status page lists the same keys', async () => {
    const page = await fetchText(base(running), '/', basicAuth('team', 't'))
    expect(page.status).toBe(200)
    expect(page.body).toContain('team:a')
    expect(page.body).not.toContain('other:')
    expect((await fetchText(base(running), '/')).body).toContain('other:x')
  })

  it('/metrics: per-filter series for readable keys only', async () => {
    const text = (await fetchText(base(running), '/metrics', basicAuth('team', 't'))).body
    expect(text).toContain('bfs_filter_items{filter="team:a"}')
    expect(text).toContain('bfs_filter_fill_ratio{filter="team:b"}')
    expect(text).not.toContain('filter="other:')
    const all = (await fetchText(base(running), '/metrics')).body
    expect(all).toContain('bfs_filter_items{filter="other:x"}')
  })
})

describe('HTTP permissions with SCAN disabled and INFO renamed', () => {
  it("a user without SCAN or INFO is refused (403, the command's own name); one with them is served", async () => {
    const url = base(renamed)
    expect(await fetchText(url, '/filters', basicAuth('checker', 'c'))).toMatchObject({
      status: 403,
      body: "NOPERM this user has no permissions to run the 'scan' command\n",
    })
    expect((await fetchText(url, '/', basicAuth('checker', 'c'))).status).toBe(403)
    expect(await fetchText(url, '/metrics', basicAuth('checker', 'c'))).toMatchObject({
      status: 403,
      body: "NOPERM this user has no permissions to run the 'info' command\n",
    })
    for (const target of ['/filters', '/', '/metrics'])
      expect((await fetchText(url, target, basicAuth('looker', 'l'))).status, target).toBe(200)
  })
})
