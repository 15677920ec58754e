/** The Grafana dashboard of deploy/grafana queries only metrics a running bfs serves on /metrics. */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../helpers/start-server.js'

interface Panel {
  title?: string
  targets?: { expr?: string }[]
  panels?: Panel[]
}

const dashboard = JSON.parse(
  readFileSync(new URL('../../deploy/grafana/bfs-dashboard.json', import.meta.url), 'utf8'),
) as {
  panels: Panel[]
  templating: { list: { query?: string | { query?: string } }[] }
}

/** Every PromQL expression of the dashboard: its panels' targets and its variables' queries. */
function expressions(): string[] {
  const found: string[] = []
  const walk = (panels: Panel[]): void => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) if (target.expr !== undefined) found.push(target.expr)
      walk(panel.panels ?? [])
    }
  }
  walk(dashboard.panels)
  for (const variable of dashboard.templating.list) {
    const query = typeof variable.query === 'string' ? variable.query : variable.query?.query
    if (query !== undefined && query.includes('bfs_')) found.push(query)
  }
  return found
}

let running: RunningServer

beforeAll(async () => {
  running = await startServer({ 'http-port': -1 })
})

afterAll(async () => {
  await running?.stop()
})

describe('the Grafana dashboard', () => {
  it('queries throughput, latency, memory, filter health and replication, all of them metrics /metrics has', async () => {
    const names = new Set(expressions().flatMap((expr) => expr.match(/\bbfs_[a-zA-Z0-9_]+/g) ?? []))
    for (const name of [
      'bfs_commands_total',
      'bfs_command_duration_seconds_total',
      'bfs_used_memory_rss_bytes',
      'bfs_filter_fill_ratio',
      'bfs_filter_estimated_error_rate',
      'bfs_replica_lag_seconds',
    ]) {
      expect(names, name).toContain(name)
    }
    const text = await (await fetch(`http://127.0.0.1:${running.server.httpPort}/metrics`)).text()
    const served = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]!))
    expect([...names].filter((name) => !served.has(name))).toEqual([])
  })
})
