#!/usr/bin/env node
// Replication costs (issue 16), on loopback, three parts:
//   throughput  BF.ADD -P 16 (redis-benchmark, 50 clients) on a master with one replica attached,
//               as a share of the same on a master without one, both in the same run, alternating,
//               RUNS rounds: medians and the ratio of the medians.
//   fullsync    a filter of BIG_BYTES (1 GiB) on a master, then REPLICAOF on a fresh replica: the time
//               until the replica's link is up, and the master's worst stall meanwhile, seen from
//               outside: one client sends PING after PING to the master and keeps the longest
//               round trip (the same probe on the idle master first, for reference); and from
//               inside, the master's log line on the full sync (its longest event-loop slice).
//   lag         BF.ADD -P 16 for LAG_SECONDS on the master with its replica: master_repl_offset minus
//               the replica's slave_repl_offset, sampled every 100 ms (median and max, in bytes), and
//               the time the replica takes to catch up once the load stops.
//
// Usage: npm run bench:replication [-- runs, default 5]     (builds first; a few minutes)
//   ONLY=throughput|fullsync|lag   one part only
//   BIG_BYTES=268435456            a smaller filter for the full sync (default 1073741824)
//   LAG_SECONDS=10  REQUESTS=1000000 (per throughput run)
//   BENCH_NODE=redis-server        runs redis-server 7.0 instead (SET for BF.ADD, SETRANGE for the
//                                  big filter): a development switch to check the script itself.
// Needs redis-benchmark (Debian redis-tools) and, for BENCH_NODE=redis-server, redis-server.
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const KIND = process.env.BENCH_NODE === 'redis-server' ? 'redis-server' : 'bfs'
const RUNS = Number(process.argv[2] ?? 5)
const ONLY = process.env.ONLY ?? ''
const BIG_BYTES = Number(process.env.BIG_BYTES ?? 2 ** 30)
const LAG_SECONDS = Number(process.env.LAG_SECONDS ?? 10)
const REQUESTS = Number(process.env.REQUESTS ?? 1_000_000)
const ADD = KIND === 'bfs' ? ['BF.ADD', 'bench', '__rand_int__'] : ['SET', '__rand_int__', 'x']
const dir = mkdtempSync(path.join(tmpdir(), 'bfs-bench-replication-'))
const children = []

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer().once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })
}

function client(port) {
  const redis = new Redis({ port, host: '127.0.0.1', retryStrategy: () => null, maxRetriesPerRequest: 0 })
  redis.on('error', () => {})
  return redis
}

async function waitUntil(what, check, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await check().catch(() => false)) return
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await sleep(50)
  }
}

async function info(redis, section = 'replication') {
  const fields = new Map()
  for (const line of (await redis.info(section)).split('\r\n')) {
    const colon = line.indexOf(':')
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1))
  }
  return fields
}

/** Starts a node from a config file (no snapshots, no log, no diskless delay); resolves with its port and a client. */
async function startNode(name, replicaOf) {
  const port = await freePort()
  const nodeDir = path.join(dir, name)
  mkdirSync(nodeDir, { recursive: true })
  const conf = path.join(nodeDir, 'node.conf')
  const lines = [
    `port ${port}`,
    'bind 127.0.0.1',
    `dir ${nodeDir}`,
    'save ""',
    'appendonly no',
    'repl-diskless-sync-delay 0',
  ]
  if (replicaOf !== undefined) lines.push(`replicaof 127.0.0.1 ${replicaOf}`)
  writeFileSync(conf, lines.join('\n') + '\n')
  const log = openSync(path.join(nodeDir, 'node.log'), 'a')
  const [command, args] =
    KIND === 'bfs'
      ? [process.execPath, ['--max-semi-space-size=1', '--optimize-for-size', path.join(ROOT, 'dist/main.js'), conf]]
      : ['redis-server', [conf]]
  const child = spawn(command, args, {
    stdio: ['ignore', log, log],
    env: { ...process.env, GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=16384' },
  })
  children.push(child)
  await waitUntil(
    `${name} answers PING`,
    async () => {
      const probe = client(port)
      try {
        return (await probe.ping()) === 'PONG'
      } finally {
        probe.disconnect()
      }
    },
    30_000,
  )
  return { name, port, redis: client(port), child }
}

async function waitLinkUp(replica, masterPort, timeoutMs) {
  await waitUntil(
    `${replica.name} link up`,
    async () => {
      const fields = await info(replica.redis)
      return fields.get('master_port') === String(masterPort) && fields.get('master_link_status') === 'up'
    },
    timeoutMs,
  )
}

/** redis-benchmark BF.ADD -P 16: requests per second. */
function benchmark(port, requests) {
  const args = [
    '-h',
    '127.0.0.1',
    '-p',
    String(port),
    '-c',
    '50',
    '-P',
    '16',
    '-n',
    String(requests),
    '-r',
    '1000000',
    '--csv',
    ...ADD,
  ]
  const result = spawnSync('redis-benchmark', args, { encoding: 'utf8' })
  const row = result.stdout.split('\n').find((line) => line.startsWith('"') && !line.startsWith('"test"'))
  if (row === undefined) throw new Error(`redis-benchmark: ${result.stderr}`)
  return Number(row.split(',')[1].replaceAll('"', ''))
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat (Linux). */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
}
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100

/** redis-benchmark on `node`, returning its req/s and the node's own CPU µs per request. */
function measured(node) {
  const before = cpuSeconds(node.child.pid)
  const rate = benchmark(node.port, REQUESTS)
  return { rate, cpuMicros: ((cpuSeconds(node.child.pid) - before) * 1e6) / REQUESTS }
}

async function throughput() {
  const alone = await startNode('alone')
  const master = await startNode('master')
  const replica = await startNode('replica', master.port)
  await waitLinkUp(replica, master.port, 60_000)
  if (KIND === 'bfs')
    for (const node of [alone, master]) await node.redis.call('BF.RESERVE', 'bench', '0.01', '10000000')
  benchmark(alone.port, REQUESTS / 4) // warm-up, not recorded
  benchmark(master.port, REQUESTS / 4)
  const without = []
  const withReplica = []
  for (let run = 1; run <= RUNS; run++) {
    without.push(measured(alone))
    withReplica.push(measured(master))
    const [x, y] = [without.at(-1), withReplica.at(-1)]
    console.error(
      `throughput run ${run}/${RUNS}: without ${x.rate} req/s ${x.cpuMicros.toFixed(3)} µs, with a replica ${y.rate} req/s ${y.cpuMicros.toFixed(3)} µs`,
    )
  }
  const [a, b] = [median(without.map((m) => m.rate)), median(withReplica.map((m) => m.rate))]
  const [ca, cb] = [median(without.map((m) => m.cpuMicros)), median(withReplica.map((m) => m.cpuMicros))]
  console.log(`| ${ADD[0]} -P 16, no replica | ${a.toFixed(0)} req/s |`)
  console.log(`| ${ADD[0]} -P 16, one replica | ${b.toFixed(0)} req/s |`)
  console.log(`| share with a replica (ratio of medians of ${RUNS}) | ${(b / a).toFixed(3)} |`)
  // The master's own work per write, which is what a replica on another machine costs it: on one
  // machine the replica also takes CPU from the master and from redis-benchmark.
  console.log(`| master CPU per ${ADD[0]}, no replica / one replica | ${ca.toFixed(3)} / ${cb.toFixed(3)} µs |`)
  console.log(
    `| share with a replica, by the master's CPU per request (no replica ÷ one replica) | ${(ca / cb).toFixed(3)} |`,
  )
  return { master, replica }
}

/** Longest PING round trip on `port` while `during` runs. */
async function worstPing(port, during) {
  const probe = client(port)
  await probe.ping()
  let worst = 0
  let done = false
  const loop = (async () => {
    while (!done) {
      const start = process.hrtime.bigint()
      await probe.ping()
      worst = Math.max(worst, Number(process.hrtime.bigint() - start) / 1e6)
    }
  })()
  try {
    await during()
  } finally {
    done = true
    await loop.catch(() => {})
    probe.disconnect()
  }
  return worst
}

async function fullSync() {
  const master = await startNode('big-master')
  if (KIND === 'bfs') {
    // bits = -n ln(p) / ln(2)^2: the capacity whose first layer takes BIG_BYTES.
    const capacity = Math.floor((BIG_BYTES * 8 * Math.LN2 ** 2) / -Math.log(0.01))
    await master.redis.call('BF.RESERVE', 'big', '0.01', String(capacity), 'NONSCALING')
    const items = Array.from({ length: 1000 }, (_, i) => `item:${i}`)
    for (let i = 0; i < 100; i++) await master.redis.call('BF.MADD', 'big', ...items.map((item) => `${item}:${i}`))
  } else {
    // Strings stop at proto-max-bulk-len (512 MiB): the same bytes in strings of 256 MiB.
    const piece = Math.min(BIG_BYTES, 2 ** 28)
    for (let i = 0; i * piece < BIG_BYTES; i++) await master.redis.setrange(`big:${i}`, piece - 1, 'x')
  }
  const replica = await startNode('big-replica')
  const idle = await worstPing(master.port, () => sleep(2000))
  let syncMs = 0
  const worst = await worstPing(master.port, async () => {
    const start = Date.now()
    await replica.redis.call('REPLICAOF', '127.0.0.1', String(master.port))
    await waitLinkUp(replica, master.port, 600_000)
    syncMs = Date.now() - start
  })
  const mib = (BIG_BYTES / 2 ** 20).toFixed(0)
  console.log(`| full sync of a ${mib} MiB filter (REPLICAOF to master_link_status:up) | ${syncMs} ms |`)
  console.log(`| master's longest PING round trip during it (idle: ${idle.toFixed(1)} ms) | ${worst.toFixed(1)} ms |`)
  // The master's own figure: its log line "Full sync of N bytes (diskless) done in T ms, longest
  // event-loop slice S ms" (src/replication/full-sync.ts).
  const logged = readFileSync(path.join(dir, master.name, 'node.log'), 'utf8').match(
    /Full sync of .*longest event-loop slice [\d.]+ ms/g,
  )
  if (logged !== null) console.log(`| master's log | ${logged.at(-1)} |`)
  for (const node of [master, replica]) node.child.kill('SIGKILL')
}

async function lag(pair) {
  const { master, replica } = pair ?? (await replicatedPair())
  const samples = []
  const load = spawn(
    'redis-benchmark',
    [
      '-h',
      '127.0.0.1',
      '-p',
      String(master.port),
      '-c',
      '50',
      '-P',
      '16',
      '-n',
      '100000000',
      '-r',
      '1000000',
      '-q',
      ...ADD,
    ],
    { stdio: 'ignore' },
  )
  children.push(load)
  const end = Date.now() + LAG_SECONDS * 1000
  while (Date.now() < end) {
    const [m, r] = await Promise.all([info(master.redis), info(replica.redis)])
    samples.push(Number(m.get('master_repl_offset')) - Number(r.get('slave_repl_offset')))
    await sleep(100)
  }
  load.kill('SIGKILL')
  const stopped = Date.now()
  await waitUntil('the replica catches up', async () => {
    const [m, r] = await Promise.all([info(master.redis), info(replica.redis)])
    return m.get('master_repl_offset') === r.get('slave_repl_offset')
  })
  const caughtUp = Date.now() - stopped
  console.log(
    `| lag under ${ADD[0]} -P 16 for ${LAG_SECONDS} s: median / max of ${samples.length} samples | ${median(samples)} / ${Math.max(...samples)} bytes |`,
  )
  console.log(`| replica caught up after the load stopped | ${caughtUp} ms |`)
}

async function replicatedPair() {
  const master = await startNode('lag-master')
  const replica = await startNode('lag-replica', master.port)
  await waitLinkUp(replica, master.port, 60_000)
  if (KIND === 'bfs') await master.redis.call('BF.RESERVE', 'bench', '0.01', '10000000')
  return { master, replica }
}

function cleanup() {
  for (const child of children) child.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
}
process.on('exit', cleanup)
process.on('SIGINT', () => process.exit(130))

console.log(
  `${KIND}, node ${process.version}, ${spawnSync('nproc', { encoding: 'utf8' }).stdout.trim()} CPUs, ${new Date().toISOString().slice(0, 10)}`,
)
console.log('| measure | value |\n|---|---:|')
let pair
if (ONLY === '' || ONLY === 'throughput') pair = await throughput()
if (ONLY === '' || ONLY === 'lag') await lag(pair)
if (ONLY === '' || ONLY === 'fullsync') await fullSync()
process.exit(0)
