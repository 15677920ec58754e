#!/usr/bin/env node
// BF.ADD through an ioredis Cluster against bfs in cluster mode with 1, 2 and 3 masters (issue 20),
// on loopback, the client in this process:
//   helper   each BF.ADD sent with the package's bloomCluster (dist/index.js): the key's slot and
//            read-only flag preset, so it goes to the key's master first time.
//   call     the same BF.ADD as cluster.call('BF.ADD', ...): ioredis does not know BF.* keys, so it
//            sends each to a random master and follows the MOVED.
// Each run: REQUESTS BF.ADD over KEYS filters (keys spread over every slot range), WINDOW commands
// in flight at a time; the rate is requests over wall time; the redirects are the sum over the
// nodes of INFO errorstats errorstat_MOVED (reset before each mode's run). RUNS rounds, each on
// fresh nodes, the two modes in alternating order; medians.
//
// Usage: npm run bench:cluster [-- runs, default 3]     (builds first; a minute or two)
//   REQUESTS=100000 (per mode and round)  WINDOW=512  KEYS=64  MASTERS=1,2,3
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Cluster, Command, Redis } from 'ioredis'
import { bloomCluster } from '../dist/index.js'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const RUNS = Number(process.argv[2] ?? 3)
const REQUESTS = Number(process.env.REQUESTS ?? 100_000)
const WINDOW = Number(process.env.WINDOW ?? 512)
const KEYS = Number(process.env.KEYS ?? 64)
const MASTERS = (process.env.MASTERS ?? '1,2,3').split(',').map(Number)
const SLOTS = 16384
const dir = mkdtempSync(path.join(tmpdir(), 'bfs-bench-cluster-'))
const children = []

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1]

/** A loopback port free a moment ago, below 55536 (a cluster node's bus port is port + 10000). */
async function nodePort() {
  for (;;) {
    const port = await new Promise((resolve, reject) => {
      const probe = net.createServer().once('error', reject)
      probe.listen(0, '127.0.0.1', () => {
        const { port: picked } = probe.address()
        probe.close(() => resolve(picked))
      })
    })
    if (port <= 55535) return port
  }
}

async function ask(port, ...args) {
  const client = new Redis({ port, host: '127.0.0.1', retryStrategy: () => null, maxRetriesPerRequest: 0 })
  client.on('error', () => {})
  try {
    return await client.call(...args.map(String))
  } finally {
    client.disconnect()
  }
}

async function until(what, check, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await check().catch(() => false)) return
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`)
    await sleep(100)
  }
}

/**
 * `count` bfs nodes in cluster mode, each master of an equal share of the slots. They announce
 * 127.0.0.1: a node no peer has met (the one master of a 1-node cluster) knows no address of its
 * own and, as Redis, gives CLUSTER SLOTS an empty host, which ioredis skips.
 */
async function startMasters(count, round) {
  const ports = []
  for (let i = 0; i < count; i++) {
    const port = await nodePort()
    const nodeDir = path.join(dir, `m${count}-r${round}-${i}`)
    mkdirSync(nodeDir)
    const log = openSync(path.join(nodeDir, 'node.log'), 'a')
    const args = [
      '--port',
      port,
      '--dir',
      nodeDir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
      '--cluster-announce-ip',
      '127.0.0.1',
    ]
    children.push(
      spawn(process.execPath, [path.join(ROOT, 'dist/main.js'), ...args.map(String)], { stdio: ['ignore', log, log] }),
    )
    ports.push(port)
  }
  for (const port of ports) await until(`${port} answers`, async () => (await ask(port, 'PING')) === 'PONG')
  for (const [i, port] of ports.entries()) {
    await ask(
      port,
      'CLUSTER',
      'ADDSLOTSRANGE',
      Math.round((i * SLOTS) / count),
      Math.round(((i + 1) * SLOTS) / count) - 1,
    )
    await ask(port, 'CLUSTER', 'SET-CONFIG-EPOCH', i + 1)
  }
  for (const port of ports.slice(1)) await ask(port, 'CLUSTER', 'MEET', '127.0.0.1', ports[0])
  for (const port of ports) {
    await until(`${port} sees the cluster ok`, async () => {
      const info = String(await ask(port, 'CLUSTER', 'INFO'))
      const slots = await ask(port, 'CLUSTER', 'SLOTS')
      return info.includes('cluster_state:ok') && slots.length === count
    })
  }
  return ports
}

async function stopAll() {
  for (const child of children.splice(0)) {
    child.kill('SIGKILL')
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve))
  }
}

async function redirects(ports) {
  let total = 0
  for (const port of ports)
    total += Number(/errorstat_MOVED:count=(\d+)/.exec(String(await ask(port, 'INFO', 'errorstats')))?.[1] ?? 0)
  return total
}

/** `requests` BF.ADD, `WINDOW` at a time, through `send(key, item)`; the rate in requests per second. */
async function drive(requests, send) {
  let next = 0
  const started = process.hrtime.bigint()
  const lane = async () => {
    while (next < requests) {
      const n = next++
      await send(`f:${n % KEYS}`, `item-${n}`)
    }
  }
  await Promise.all(Array.from({ length: WINDOW }, lane))
  return requests / (Number(process.hrtime.bigint() - started) / 1e9)
}

/** One mode's run after a reset of the stats: its rate and the MOVED it caused. */
async function measure(ports, requests, send) {
  for (const port of ports) await ask(port, 'CONFIG', 'RESETSTAT')
  const rate = await drive(requests, send)
  return { rate, moved: await redirects(ports) }
}

async function round(count, r) {
  const ports = await startMasters(count, r)
  const cluster = new Cluster([{ host: '127.0.0.1', port: ports[0] }])
  cluster.on('error', () => {})
  try {
    const bf = bloomCluster(cluster, Command)
    await Promise.all(Array.from({ length: KEYS }, (_, i) => bf.reserve(`f:${i}`, 0.01, 1_000_000)))
    // Connections to every master opened and both paths warm (the first mode measured on a cold
    // process ran up to twice slower than the second in trial runs).
    await drive(20_000, (key, item) => bf.add(key, item))
    await drive(20_000, (key, item) => cluster.call('BF.ADD', key, item))
    const modes = {
      helper: () => measure(ports, REQUESTS, (key, item) => bf.add(key, item)),
      call: () => measure(ports, REQUESTS, (key, item) => cluster.call('BF.ADD', key, item)),
    }
    // Alternating which goes first, so that neither always runs on the warmer process.
    const order = r % 2 === 0 ? ['helper', 'call'] : ['call', 'helper']
    const result = {}
    for (const mode of order) result[mode] = await modes[mode]()
    return result
  } finally {
    cluster.disconnect()
    await stopAll()
  }
}

try {
  const rows = []
  for (const count of MASTERS) {
    const results = []
    for (let r = 0; r < RUNS; r++) results.push(await round(count, r))
    rows.push({ count, results })
    process.stderr.write(`${count} master(s): ${JSON.stringify(results)}\n`)
  }
  console.log(
    `BF.ADD through ioredis Cluster, ${REQUESTS} requests per mode and round, ${WINDOW} in flight, ${KEYS} filters; ${RUNS} rounds, medians`,
  )
  console.log('| masters | bloomCluster BF.ADD/s | MOVED | cluster.call BF.ADD/s | MOVED | MOVED per call |')
  console.log('|--------:|----------------------:|------:|----------------------:|------:|---------------:|')
  for (const { count, results } of rows) {
    const pick = (mode, field) => median(results.map((result) => result[mode][field]))
    const perCall = pick('call', 'moved') / REQUESTS
    console.log(
      `| ${count} | ${Math.round(pick('helper', 'rate'))} | ${pick('helper', 'moved')} | ${Math.round(pick('call', 'rate'))} | ${pick('call', 'moved')} | ${perCall.toFixed(2)} |`,
    )
  }
} finally {
  await stopAll()
  rmSync(dir, { recursive: true, force: true })
}
