/**
 * The HTTP API's database (config http-db): /add= and /contain= run in it, /filters and the status
 * page list it, and /metrics says which it is (bfs_http_db) beside a series per database holding
 * keys, as redis_exporter's redis_db_keys{db="db0"}.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'

let running: RunningServer
let base: string
const clients: Redis[] = []

beforeAll(async () => {
  running = await startServer({ 'http-port': -1, 'http-db': 3 })
  base = `http://127.0.0.1:${running.server.httpPort}`
})

afterAll(async () => {
  for (const client of clients) client.disconnect()
  await running?.stop()
})

function client(db: number): Redis {
  const opened = new Redis({ port: running.port, host: '127.0.0.1', db })
  clients.push(opened)
  return opened
}

async function get(target: string): Promise<{ status: number; body: string }> {
  const response = await fetch(base + target)
  return { status: response.status, body: await response.text() }
}

describe('http-db 3', () => {
  it('/add= and /contain= use database 3, the one RESP clients see with SELECT 3', async () => {
    expect(await get('/add=from-http')).toEqual({ status: 200, body: 'ok' })
    expect(await get('/contain=from-http')).toEqual({ status: 200, body: 'true' })
    expect(await client(3).call('BF.EXISTS', 'bfs', 'from-http')).toBe(1)
    expect(await client(0).exists('bfs')).toBe(0)
    // A filter of the same name in database 0 is not the HTTP API's.
    await client(0).call('BF.ADD', 'bfs', 'only-in-0')
    expect(await get('/contain=only-in-0')).toEqual({ status: 200, body: 'false' })
  })

  it('/filters lists database 3 only', async () => {
    await client(0).call('BF.ADD', 'zero-only', 'x')
    await client(3).call('BF.ADD', 'three-only', 'x')
    const listing = JSON.parse((await get('/filters?sort=name')).body) as { name: string }[]
    expect(listing.map((filter) => filter.name)).toEqual(['bfs', 'three-only'])
    expect((await get('/')).body).toMatch(/filters in db3/)
  })

  it('/metrics says which database it lists filters of, and the keys of every database', async () => {
    await client(9).call('BF.ADD', 'nine', 'x')
    const text = (await get('/metrics')).body
    expect(text).toMatch(/^bfs_http_db 3$/m)
    expect(text).toMatch(/^bfs_db_keys\{db="db0"\} 2$/m)
    expect(text).toMatch(/^bfs_db_keys\{db="db3"\} 2$/m)
    expect(text).toMatch(/^bfs_db_keys\{db="db9"\} 1$/m)
    expect(text).toMatch(/^bfs_db_keys_expiring\{db="db9"\} 0$/m)
    expect(text).toMatch(/^bfs_filters 5$/m)
    // The per-filter series are database 3's.
    expect(text).toMatch(/^bfs_filter_items\{filter="three-only"\} 1$/m)
    expect(text).not.toMatch(/filter="zero-only"/)
  })
})
