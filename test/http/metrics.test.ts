/** GET /healthz and GET /metrics against a real bfs, and the pieces /metrics is built from. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { metricName, topFiltersByItems } from '../../src/http/metrics.js'
import { parseInfo } from '../helpers/cluster-nodes.js'
import { FilterRegistry } from '../../src/store/registry.js'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'
import { until } from '../helpers/replication-info.js'

let running: RunningServer
let redis: Redis
let base: string

beforeAll(async () => {
  running = await startServer({ 'http-port': -1, 'metrics-top-filters': 2 })
  base = `http://127.0.0.1:${running.server.httpPort}`
  redis = new Redis({ port: running.port, host: '127.0.0.1' })
})

afterAll(async () => {
  redis?.disconnect()
  await running?.stop()
})

/** One sample's value from Prometheus text: `name{labels} value`. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels === '' ? ' ' : `{${labels}} `}`))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
}

async function scrape(): Promise<string> {
  const response = await fetch(`${base}/metrics`)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
  return response.text()
}

describe('GET /healthz', () => {
  it('is 200 ok while the server accepts commands, 503 while loading', async () => {
    let response = await fetch(`${base}/healthz`)
    expect([response.status, await response.text()]).toEqual([200, 'ok'])
    running.server.loading = true
    try {
      response = await fetch(`${base}/healthz`)
      expect(response.status).toBe(503)
      await response.text()
      // The original API answers 503 too: LOADING from dispatch.
      response = await fetch(`${base}/add=while-loading`)
      expect(response.status).toBe(503)
      expect(await response.text()).toMatch(/^LOADING/)
    } finally {
      running.server.loading = false
    }
    expect((await fetch(`${base}/healthz`)).status).toBe(200)
  })
})

describe('GET /metrics', () => {
  it('lists the expected metric names', async () => {
    const text = await scrape()
    for (const name of [
      'bfs_uptime_seconds',
      'bfs_commands_total',
      'bfs_commands_processed_total',
      'bfs_error_replies_total',
      'bfs_connected_clients',
      'bfs_filters',
      'bfs_filter_bytes',
      'bfs_filter_items',
      'bfs_used_memory_bytes',
      'bfs_used_memory_rss_bytes',
      'bfs_http_requests_total',
      'bfs_loading',
      'bfs_rdb_changes_since_last_save',
    ]) {
      expect(text, name).toContain(`# TYPE ${name} `)
    }
    // bfs's own INFO persistence field bfs_snapshot_bytes is prefixed once, not bfs_bfs_.
    expect(text).toContain('# TYPE bfs_snapshot_bytes gauge')
    expect(text).not.toMatch(/^bfs_bfs_/m)
  })

  it('counts commands by name, errors, filters, items and clients after some commands', async () => {
    await redis.call('BF.RESERVE', 'big', '0.01', '1000')
    await redis.call('BF.MADD', 'big', 'a', 'b', 'c', 'd', 'e')
    await redis.call('BF.ADD', 'small', 'a')
    await redis.call('BF.MADD', 'middle', 'a', 'b')
    await fetch(`${base}/add=from-http`).then((r) => r.text())
    await expect(redis.call('BF.RESERVE', 'big', '0.01', '1000')).rejects.toThrow(/item exists/)
    await expect(redis.call('BF.ADD', 'only-one-arg')).rejects.toThrow(/wrong number/)
    const text = await scrape()
    expect(sample(text, 'bfs_commands_total', 'command="bf.reserve"')).toBe(2)
    expect(sample(text, 'bfs_command_failed_calls_total', 'command="bf.reserve"')).toBe(1)
    // Rejected BF.ADD: the wrong arity here, and GET /add= while loading in the test above.
    expect(sample(text, 'bfs_command_rejected_calls_total', 'command="bf.add"')).toBe(2)
    expect(sample(text, 'bfs_commands_total', 'command="bf.madd"')).toBe(2)
    // BF.ADD: one over RESP, one through GET /add=.
    expect(sample(text, 'bfs_commands_total', 'command="bf.add"')).toBe(2)
    expect(sample(text, 'bfs_error_replies_total')).toBeGreaterThanOrEqual(2)
    expect(sample(text, 'bfs_filters')).toBe(4)
    expect(sample(text, 'bfs_filter_bytes')).toBe(running.server.registry.bitmapBytes())
    // metrics-top-filters 2: the two largest by items, nothing else.
    expect(sample(text, 'bfs_filter_items', 'filter="big"')).toBe(5)
    expect(sample(text, 'bfs_filter_items', 'filter="middle"')).toBe(2)
    expect(text).not.toContain('bfs_filter_items{filter="small"}')
    expect(sample(text, 'bfs_connected_clients', 'protocol="resp"')).toBe(1)
    expect(sample(text, 'bfs_connected_clients', 'protocol="http"')).toBeGreaterThanOrEqual(1)
    expect(sample(text, 'bfs_http_requests_total')).toBeGreaterThanOrEqual(2)
    expect(sample(text, 'bfs_loading')).toBe(0)
    expect(sample(text, 'bfs_used_memory_rss_bytes')).toBeGreaterThan(0)
  })

  it('shows the same figures as INFO', async () => {
    const info = parseInfo(await redis.info('all'))
    const text = await scrape()
    expect(sample(text, 'bfs_filter_bytes')).toBe(Number(info.get('bfs_filter_bytes')))
    expect(sample(text, 'bfs_rdb_changes_since_last_save')).toBe(Number(info.get('rdb_changes_since_last_save')))
    expect(sample(text, 'bfs_connections_received_total')).toBe(Number(info.get('total_connections_received')))
  })

  it('keeps each server in its own registry', async () => {
    const other = await startServer({ 'http-port': -1 })
    try {
      const text = await (await fetch(`http://127.0.0.1:${other.server.httpPort}/metrics`)).text()
      expect(sample(text, 'bfs_filters')).toBe(0)
      expect(text).not.toContain('command="bf.reserve"')
      expect(sample(await scrape(), 'bfs_filters')).toBe(4)
    } finally {
      await other.stop()
    }
  })
})

describe('GET /metrics: latency and replication', () => {
  it("counts time per command and shows replication: the role, each replica's lag, a replica's link", async () => {
    const master = await startServer({ 'http-port': -1 })
    const client = new Redis({ port: master.port, host: '127.0.0.1' })
    const scrape = async (): Promise<string> =>
      (await fetch(`http://127.0.0.1:${master.server.httpPort}/metrics`)).text()
    await client.call('BF.ADD', 'timed', 'x')
    let text = await scrape()
    expect(sample(text, 'bfs_command_duration_seconds_total', 'command="bf.add"')).toBeGreaterThan(0)
    expect(sample(text, 'bfs_replication_master')).toBe(1)
    expect(sample(text, 'bfs_connected_replicas')).toBe(0)
    for (const name of [
      'bfs_replica_lag_seconds',
      'bfs_replica_offset_lag_bytes',
      'bfs_master_link_up',
      'bfs_master_last_io_seconds',
      'bfs_replica_repl_offset_bytes',
    ]) {
      expect(text, name).toContain(`# TYPE ${name} gauge`)
    }
    const replica = await startServer({ 'http-port': -1 })
    const replicaClient = new Redis({ port: replica.port, host: '127.0.0.1' })
    try {
      await replicaClient.call('REPLICAOF', '127.0.0.1', String(master.port))
      await until(
        async () =>
          sample(await scrape(), 'bfs_connected_replicas') === 1 && (await scrape()).includes('state="online"'),
        'the replica online',
      )
      text = await scrape()
      const line = text.split('\n').find((l) => l.startsWith('bfs_replica_lag_seconds{'))!
      expect(line).toMatch(/^bfs_replica_lag_seconds\{replica="[^"]+:\d+",state="online"\} \d+$/)
      expect(text).toMatch(/^bfs_replica_offset_lag_bytes\{replica="[^"]+:\d+",state="online"\} \d+$/m)
      const replicaText = await (await fetch(`http://127.0.0.1:${replica.server.httpPort}/metrics`)).text()
      expect(sample(replicaText, 'bfs_replication_master')).toBe(0)
      expect(sample(replicaText, 'bfs_master_link_up')).toBe(1)
      expect(sample(replicaText, 'bfs_master_last_io_seconds')).toBeGreaterThanOrEqual(0)
      expect(sample(replicaText, 'bfs_replica_repl_offset_bytes')).toBeGreaterThan(0)
    } finally {
      replicaClient.disconnect()
      client.disconnect()
      await replica.stop()
      await master.stop()
    }
  })
})

describe('metricName and topFiltersByItems', () => {
  it('metricName prefixes bfs_ once and replaces characters Prometheus refuses', () => {
    expect(metricName('rdb_saves')).toBe('bfs_rdb_saves')
    expect(metricName('bfs_snapshot_bytes')).toBe('bfs_snapshot_bytes')
    expect(metricName('a.b-c')).toBe('bfs_a_b_c')
  })

  it('topFiltersByItems keeps the largest, largest first, and none for 0', () => {
    const registry = new FilterRegistry()
    for (const [name, items] of [
      ['a', 3],
      ['b', 9],
      ['c', 1],
      ['d', 5],
    ] as const) {
      const filter = new ScalableBloomFilter({ capacity: 100, errorRate: 0.01, expansion: 2, nonScaling: false })
      for (let i = 0; i < items; i++) filter.add(Buffer.from(`${name}${i}`))
      registry.set(name, filter)
    }
    expect(topFiltersByItems(registry, 2)).toEqual([
      { name: 'b', items: 9 },
      { name: 'd', items: 5 },
    ])
    expect(topFiltersByItems(registry, 10).map((f) => f.name)).toEqual(['b', 'd', 'a', 'c'])
    expect(topFiltersByItems(registry, 0)).toEqual([])
  })
})
