/**
 * A million keys expiring at the same moment: the active expiry cycle (src/store/active-expiry.ts)
 * deletes them within its time budget, so the event loop keeps serving. Measured in one bfs
 * process (createServer, nothing else running in it):
 *
 *   npm run bench:expiry     (compiles bench/ with tsconfig.bench.json, then runs this)
 *   KEYS=200000 EFFORTS=1 npm run bench:expiry     to narrow
 *
 * For each active-expire-effort: KEYS small filters are made (straight into the registry, as a
 * load would), all given the same expiry 1.5 s ahead; a client on a real socket sends PING after
 * PING meanwhile. Reported: the worst and the 99th percentile event-loop delay (perf_hooks
 * monitorEventLoopDelay, 1 ms resolution) and the worst PING round trip, first for 1.5 s with
 * nothing expiring (the baseline: the cron, the client), then from the moment the keys expire until
 * the last is deleted, with how long that took and the INFO figures of the cycle. The append-only
 * log is on (`appendfsync no`), so every deletion also encodes and writes its `DEL`, as in
 * production. The table is written to bench/results/expiry.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os, { tmpdir } from 'node:os'
import path from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { Redis } from 'ioredis'
import { createServer, type BfsServer } from '../src/server/server.js'
import { ScalableBloomFilter } from '../src/core/scalable-filter.js'
import { ActiveExpiry } from '../src/store/active-expiry.js'

/**
 * The longest single active cycle (slow or fast) since the last reset, in wall-clock ms and in CPU
 * ms of the process (on a shared machine the wall clock also counts time the process was not running).
 */
let longestCycleMs = 0
let longestCycleCpuMs = 0
const cycle = ActiveExpiry.prototype.cycle
ActiveExpiry.prototype.cycle = function (this: ActiveExpiry, ...args: Parameters<typeof cycle>): number {
  const started = performance.now()
  const cpu = process.cpuUsage()
  const deleted = cycle.apply(this, args)
  const used = process.cpuUsage(cpu)
  longestCycleMs = Math.max(longestCycleMs, performance.now() - started)
  longestCycleCpuMs = Math.max(longestCycleCpuMs, (used.user + used.system) / 1000)
  return deleted
}

const KEYS = Number(process.env.KEYS ?? 1_000_000)
const EFFORTS = (process.env.EFFORTS ?? '1,10').split(',').map(Number)
const AHEAD_MS = 1500

interface Window {
  maxDelayMs: number
  p99DelayMs: number
  maxPingMs: number
  pings: number
  longestCycleMs: number
  longestCycleCpuMs: number
}

/** Pings without pause until `done()`; event-loop delay measured meanwhile. */
async function measure(redis: Redis, done: () => boolean): Promise<Window> {
  const histogram = monitorEventLoopDelay({ resolution: 1 })
  histogram.enable()
  longestCycleMs = 0
  longestCycleCpuMs = 0
  let maxPingMs = 0
  let pings = 0
  while (!done()) {
    const started = performance.now()
    await redis.ping()
    maxPingMs = Math.max(maxPingMs, performance.now() - started)
    pings++
  }
  histogram.disable()
  return {
    maxDelayMs: histogram.max / 1e6,
    p99DelayMs: histogram.percentile(99) / 1e6,
    maxPingMs,
    pings,
    longestCycleMs,
    longestCycleCpuMs,
  }
}

/** Makes the keys with an expiry far ahead, then moves every one to `at()` in one quick pass. */
function fill(server: BfsServer, at: () => number): number {
  const registry = server.registry
  const entries = []
  for (let i = 0; i < KEYS; i++) {
    const entry = registry.set(
      `key:${i}`,
      new ScalableBloomFilter({ capacity: 1, errorRate: 0.1, expansion: 2, nonScaling: false }),
    )
    registry.setExpiry(entry, Date.now() + 3_600_000)
    entries.push(entry)
  }
  const expiresAt = at()
  for (const entry of entries) entry.expiresAt = expiresAt
  return expiresAt
}

function infoField(text: string, field: string): string {
  return new RegExp(`\\r\\n${field}:([^\\r]*)\\r\\n`).exec(text)?.[1] ?? '?'
}

async function run(effort: number): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bfs-bench-expiry-'))
  const server = createServer({
    config: { port: 0, dir, save: '', appendonly: true, appendfsync: 'no', 'active-expire-effort': effort },
    logSink: () => {},
  })
  await server.start()
  const redis = new Redis({ port: server.port, host: '127.0.0.1', lazyConnect: true })
  await redis.connect()
  const fillStarted = performance.now()
  const expiresAt = fill(server, () => Date.now() + 2 * AHEAD_MS)
  const fillMs = performance.now() - fillStarted
  // Wait out what is left of the head start, then the baseline window just before the expiry.
  const baselineFrom = expiresAt - AHEAD_MS
  while (Date.now() < baselineFrom) await new Promise((resolve) => setTimeout(resolve, 10))
  const baseline = await measure(redis, () => Date.now() > expiresAt)
  const started = performance.now()
  const expiring = await measure(redis, () => server.registry.size === 0)
  const reapMs = performance.now() - started
  const stats = (await redis.info('stats')) as string
  await redis.quit()
  await server.close()
  rmSync(dir, { recursive: true, force: true })
  const cells = (label: string, window: Window, extra: string): string =>
    `| ${effort} | ${label} | ${window.maxDelayMs.toFixed(1)} | ${window.p99DelayMs.toFixed(1)} | ${window.maxPingMs.toFixed(1)} | ${window.pings} | ${window.longestCycleMs.toFixed(1)} | ${window.longestCycleCpuMs.toFixed(1)} | ${extra} |`
  console.error(`effort ${effort}: filled ${KEYS} in ${fillMs.toFixed(0)} ms; reaped in ${reapMs.toFixed(0)} ms`)
  return [
    cells('nothing expiring (1.5 s)', baseline, ''),
    cells(
      `${KEYS} keys expiring`,
      expiring,
      `all deleted in ${(reapMs / 1000).toFixed(2)} s; expired_keys ${infoField(stats, 'expired_keys')}, ` +
        `expired_time_cap_reached_count ${infoField(stats, 'expired_time_cap_reached_count')}, ` +
        `expire_cycle_cpu_milliseconds ${infoField(stats, 'expire_cycle_cpu_milliseconds')}`,
    ),
  ]
}

/**
 * The floor under any deletion of that many keys: the worst single `Map.delete` while a plain
 * Map of KEYS string keys is emptied (V8 rehashes the whole table, synchronously, each time it
 * shrinks by half: at a quarter of its capacity).
 */
function mapFloor(): string {
  const map = new Map<string, object>()
  for (let i = 0; i < KEYS; i++) map.set(`key:${i}`, {})
  let worstMs = 0
  let worstAt = 0
  for (let i = 0; i < KEYS; i++) {
    const started = performance.now()
    map.delete(`key:${i}`)
    const ms = performance.now() - started
    if (ms > worstMs) [worstMs, worstAt] = [ms, map.size]
  }
  return `V8 alone: the worst single Map.delete while ${KEYS} keys are deleted from a Map took ${worstMs.toFixed(1)} ms (at ${worstAt} keys left)`
}

const rows: string[] = []
for (const effort of EFFORTS) rows.push(...(await run(effort)))
const floor = mapFloor()
const table = [
  `${KEYS} keys expiring at the same moment, Node ${process.versions.node}, ${new Date().toISOString().slice(0, 10)}, ` +
    `${os.cpus().length} CPUs, load average ${os.loadavg()[0]!.toFixed(1)} at the end`,
  '',
  '| effort | window | worst event-loop delay ms | p99 delay ms | worst PING ms | PINGs | longest cycle ms | its CPU ms | |',
  '|---:|---|---:|---:|---:|---:|---:|---:|---|',
  ...rows,
  '',
  floor,
].join('\n')
console.log(table)
mkdirSync('bench/results', { recursive: true })
writeFileSync('bench/results/expiry.md', `${table}\n`)
