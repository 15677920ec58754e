/**
 * Cuckoo filters over HTTP on a live server: GET /filters lists them beside Bloom filters with
 * CF.INFO's figures and BFS.HEALTH's, the status page shows their rows, and /metrics has their
 * per-filter series; window filters stay out of all three.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'

let running: RunningServer
let redis: Redis
let base: string

const items = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}${i}`)

beforeAll(async () => {
  running = await startServer({ 'http-port': -1, 'metrics-top-filters': 5 })
  base = `http://127.0.0.1:${running.server.httpPort}`
  redis = new Redis({ port: running.port, host: '127.0.0.1' })
  await redis.call('BF.RESERVE', 'bloom', '0.01', '100')
  await redis.call('BF.MADD', 'bloom', ...items('b', 10))
  await redis.call('CF.RESERVE', 'fixed', '1000', 'BUCKETSIZE', '4', 'EXPANSION', '0')
  await redis.call('CF.INSERT', 'fixed', 'ITEMS', ...items('f', 600))
  await redis.call('CF.RESERVE', 'grown', '64')
  await redis.call('CF.INSERT', 'grown', 'ITEMS', ...items('g', 150))
  await redis.call('EXPIRE', 'grown', '1000')
  await redis.call('APBF.RESERVE', 'window', 'COUNT', '0.01', '100')
})

afterAll(async () => {
  redis?.disconnect()
  await running?.stop()
})

/** CF.INFO as a field → value map. */
async function cfInfo(key: string): Promise<Map<string, number>> {
  const reply = (await redis.call('CF.INFO', key)) as (string | number)[]
  const info = new Map<string, number>()
  for (let i = 0; i < reply.length; i += 2) info.set(String(reply[i]), Number(reply[i + 1]))
  return info
}

/** BFS.HEALTH as a field → value map. */
async function health(key: string): Promise<Map<string, string | number>> {
  const reply = (await redis.call('BFS.HEALTH', key)) as (string | number)[]
  const fields = new Map<string, string | number>()
  for (let i = 0; i < reply.length; i += 2) fields.set(String(reply[i]), reply[i + 1]!)
  return fields
}

describe('GET /filters', () => {
  it('lists Cuckoo filters with CF.INFO and BFS.HEALTH figures, beside Bloom filters, without window filters', async () => {
    const response = await fetch(`${base}/filters`)
    expect(response.status).toBe(200)
    const rows = (await response.json()) as Record<string, unknown>[]
    expect(rows.map((row) => row.name)).toEqual(['bloom', 'fixed', 'grown'])
    expect(rows[0]!.type).toBe('bloom')
    for (const row of rows.slice(1)) {
      const key = String(row.name)
      const info = await cfInfo(key)
      const fields = await health(key)
      expect(row).toMatchObject({
        type: 'cuckoo',
        layers: info.get('Number of filters'),
        bytes: info.get('Size'),
        items: info.get('Number of items inserted'),
        capacity: fields.get('Capacity'),
        fillRatio: Number(fields.get('Fill ratio')),
        estimatedErrorRate: Number(fields.get('Estimated error rate')),
        errorRate: Number(fields.get('Error rate')),
        itemsLeft: fields.get('Items left'),
        verdict: fields.get('Verdict'),
      })
    }
    expect(rows[1]).toMatchObject({ capacity: 1024, items: 600, itemsLeft: 424, scaling: false, ttl: -1 })
    expect(rows[2]).toMatchObject({ items: 150, itemsLeft: -1, scaling: true, verdict: 'over target' })
    expect(rows[2]!.ttl).toBeGreaterThan(900)
    expect(rows[2]!.layers).toBeGreaterThan(1)
  })

  it('sorts Cuckoo filters by bytes and by estimated rate with the rest', async () => {
    const names = async (sort: string): Promise<unknown[]> =>
      ((await (await fetch(`${base}/filters?sort=${sort}`)).json()) as { name: string }[]).map((row) => row.name)
    expect(await names('bytes')).toEqual(['fixed', 'grown', 'bloom'])
    expect(await names('estimatedErrorRate')).toEqual(['grown', 'fixed', 'bloom'])
  })
})

describe('the status page', () => {
  it('shows a row per Cuckoo filter, its kind, items and verdict', async () => {
    const response = await fetch(`${base}/`)
    expect(response.status).toBe(200)
    const page = await response.text()
    const row = (name: string): string =>
      page.match(new RegExp(`<tr class="filter [^"]*" data-verdict="[^"]*" data-name="${name}">.*?</tr>`))![0]
    expect(row('fixed')).toContain('cuckoo')
    expect(row('fixed')).toContain('600 / 1,024')
    expect(row('grown')).toContain('data-verdict="over target"')
    expect(page).not.toContain('data-name="window"')
  })
})

describe('GET /metrics', () => {
  it('has the per-filter series of Cuckoo filters', async () => {
    const text = await (await fetch(`${base}/metrics`)).text()
    const sample = (name: string, filter: string): number | undefined => {
      const line = text.split('\n').find((l) => l.startsWith(`${name}{filter="${filter}"} `))
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
    }
    const fixed = await health('fixed')
    expect(sample('bfs_filter_items', 'fixed')).toBe(600)
    expect(sample('bfs_filter_items', 'grown')).toBe(150)
    expect(sample('bfs_filter_fill_ratio', 'fixed')).toBeCloseTo(600 / 1024, 12)
    expect(sample('bfs_filter_estimated_error_rate', 'fixed')).toBeCloseTo(
      Number(fixed.get('Estimated error rate')),
      12,
    )
    expect(sample('bfs_filter_target_error_rate', 'fixed')).toBeCloseTo(1 - (254 / 255) ** 8, 12)
    expect(sample('bfs_filter_over_target', 'fixed')).toBe(0)
    expect(sample('bfs_filter_over_target', 'grown')).toBe(1)
    expect(sample('bfs_filter_items', 'window')).toBeUndefined()
    expect(text).toMatch(/^bfs_filters_over_target 1$/m)
  })
})
