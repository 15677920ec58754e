/**
 * Sliding-window filters in process (issue 17, part 2): bfs's age-partitioned filters (COUNT and
 * TIME windows) beside an exact sliding window (a Map of item → last seen, pruned) and the naive
 * scheme of two rotating Bloom filters (each sized for the window at half the target rate, the
 * older dropped every window). Prints markdown tables:
 *
 * 1. memory per item in the window, at 1% and 0.1%;
 * 2. false-positive rate (mean and worst over checkpoints) and false negatives inside the window,
 *    for a steady stream and a bursty one (TIME windows: bursts at 6x the sized rate);
 * 3. false negatives over ≥ 10 million adds (every add checks the oldest item still in the window);
 * 4. adds and checks per second, medians of RUNS runs, and their ratios to the exact window's.
 *
 * Usage: npm run bench:window   (RUNS=5 FN_ADDS=10000000 by default; SCALE=0.1 for a quick look)
 */
import { BloomLayer } from '../src/core/bloom-layer.js'
import { createHashPair, hashRedisBloom } from '../src/core/hashing.js'
import { layerGeometry } from '../src/core/sizing.js'
import { WindowFilter } from '../src/core/window-filter.js'

const SCALE = Number(process.env.SCALE ?? 1)
const RUNS = Number(process.env.RUNS ?? 5)
const FN_ADDS = Math.round(Number(process.env.FN_ADDS ?? 10_000_000) * Math.min(1, SCALE))
const N = Math.round(100_000 * SCALE) // items per window
const T = 60_000 // ms: the TIME window

const item = (prefix: string, i: number): Buffer => Buffer.from(`${prefix}${i}`)

/** A sliding window in one interface: add at a time, check at a time, bytes held. */
interface Scheme {
  readonly name: string
  add(key: Buffer, now: number): void
  has(key: Buffer, now: number): boolean
  bytes(): number
}

function apbf(kind: 'count' | 'time', errorRate: number): Scheme {
  const filter = new WindowFilter({ kind, errorRate, capacity: N, windowMs: kind === 'time' ? T : undefined })
  return {
    name: `bfs APBF ${kind.toUpperCase()}`,
    add: (key, now) => void filter.add(key, 0, key.length, now),
    has: (key, now) => filter.has(key, 0, key.length, now),
    bytes: () => filter.bitmapBytes(),
  }
}

const pair = createHashPair()

/** A plain Bloom filter of RedisBloom's geometry, which takes items past its capacity (its rate then rises). */
function plainBloom(capacity: number, errorRate: number): BloomLayer {
  const g = layerGeometry(capacity, errorRate)
  return new BloomLayer({
    capacity,
    errorRate,
    bitsPerEntry: g.bitsPerEntry,
    hashCount: g.hashCount,
    bitCount: g.bitCount,
    items: 0,
    bitmap: new Uint8Array(g.byteCount),
    setBits: 0,
  })
}

/** Two Bloom filters of N items at errorRate / 2: adds go to the newer; every window (N adds or T ms) the older is dropped. */
function rotating(kind: 'count' | 'time', errorRate: number): Scheme {
  const make = (): BloomLayer => plainBloom(N, errorRate / 2)
  const hashed = (key: Buffer): Uint32Array => {
    hashRedisBloom(key, 0, key.length, pair)
    return pair
  }
  let current = make()
  let previous = make()
  let count = 0
  let started = -1
  return {
    name: 'two rotating Bloom filters',
    add(key, now) {
      if (started < 0) started = now
      if (kind === 'count' ? count === N : now - started >= T) {
        previous = current
        current = make()
        count = 0
        started = now
      }
      current.addHashed(hashed(key))
      count++
    },
    has: (key) => current.hasHashed(hashed(key)) || previous.hasHashed(pair),
    bytes: () => current.bitmap.length + previous.bitmap.length,
  }
}

/** The exact window: item → time (or index) of its last add, pruned from a queue of the adds. */
function exact(kind: 'count' | 'time'): Scheme {
  const last = new Map<string, number>()
  const queue: { key: string; at: number }[] = []
  let head = 0
  let adds = 0
  const prune = (now: number): void => {
    while (head < queue.length) {
      const oldest = queue[head]!
      if (kind === 'count' ? oldest.at > adds - N : oldest.at > now - T) break
      if (last.get(oldest.key) === oldest.at) last.delete(oldest.key)
      head++
    }
    if (head > 1_000_000) {
      queue.splice(0, head)
      head = 0
    }
  }
  return {
    name: 'exact (Map, pruned)',
    add(key, now) {
      adds++
      const at = kind === 'count' ? adds : now
      const text = key.toString('latin1')
      last.set(text, at)
      queue.push({ key: text, at })
      prune(now)
    },
    has(key, now) {
      const at = last.get(key.toString('latin1'))
      return at !== undefined && (kind === 'count' ? at > adds - N : at > now - T)
    },
    bytes: () => NaN,
  }
}

/** Heap bytes of the exact window holding N distinct items (measured with --expose-gc). */
function exactBytesPerItem(): number {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) return NaN
  gc()
  const before = process.memoryUsage().heapUsed
  const scheme = exact('count')
  for (let i = 0; i < N; i++) scheme.add(item('m-', i), i)
  gc()
  const bytes = process.memoryUsage().heapUsed - before
  scheme.has(item('m-', 0), 0) // keep it alive until measured
  return bytes / N
}

function table(header: string[], rows: (string | number)[][]): void {
  console.log(`| ${header.join(' | ')} |`)
  console.log(`|${header.map(() => '---').join('|')}|`)
  for (const row of rows) console.log(`| ${row.join(' | ')} |`)
  console.log()
}

const pct = (x: number): string => `${(x * 100).toFixed(3)}%`

function memoryTable(): void {
  console.log(`### Memory per item in the window (window of ${N} items)\n`)
  const exactBytes = exactBytesPerItem()
  const rows: (string | number)[][] = []
  for (const rate of [0.01, 0.001]) {
    for (const scheme of [apbf('count', rate), apbf('time', rate), rotating('count', rate)]) {
      // A TIME filter holds k slices until its window fills: measure it after two windows at the sized rate.
      if (scheme.name.includes('TIME')) for (let i = 0; i < 2 * N; i++) scheme.add(item('w-', i), (i * T) / N)
      rows.push([pct(rate), scheme.name, ((scheme.bytes() * 8) / N).toFixed(1)])
    }
    rows.push([
      pct(rate),
      'exact (Map, pruned)',
      Number.isNaN(exactBytes) ? 'n/a (run with --expose-gc)' : (exactBytes * 8).toFixed(0),
    ])
  }
  table(['target', 'scheme', 'bits per item'], rows)
}

/** Times of a stream of `count` adds: steady at N per window, or bursts of 3N in half a window then 0.5N over 2.5 windows. */
function streamTime(kind: 'steady' | 'bursty', i: number): number {
  if (kind === 'steady') return (i * T) / N
  const cycle = Math.floor(i / (3.5 * N))
  const j = i - cycle * 3.5 * N
  const base = cycle * 3 * T
  return j < 3 * N ? base + (j * 0.5 * T) / (3 * N) : base + 0.5 * T + ((j - 3 * N) * 2.5 * T) / (0.5 * N)
}

interface Accuracy {
  fpMean: number
  fpWorst: number
  falseNegatives: number
  checked: number
  peakBytes: number
}

/** Runs a stream through a scheme; at checkpoints probes never-added items and checks every item in the window. */
function accuracy(make: () => Scheme, kind: 'count' | 'time', stream: 'steady' | 'bursty', adds: number): Accuracy {
  const scheme = make()
  const times: number[] = []
  const rates: number[] = []
  let falseNegatives = 0
  let checked = 0
  let peakBytes = 0
  let probe = 0
  const every = Math.round(N / 2)
  for (let i = 0; i < adds; i++) {
    const now = kind === 'count' ? i : streamTime(stream, i)
    times.push(now)
    scheme.add(item('a-', i), now)
    if (i % every !== 0 || i < 3 * N) continue
    peakBytes = Math.max(peakBytes, scheme.bytes())
    let positives = 0
    const probes = 20_000
    for (let p = 0; p < probes; p++) if (scheme.has(item('never-', probe++), now)) positives++
    rates.push(positives / probes)
    for (let j = i; j >= 0 && (kind === 'count' ? j > i - N : times[j]! > now - T); j--) {
      checked++
      if (!scheme.has(item('a-', j), now)) falseNegatives++
    }
  }
  const fpMean = rates.reduce((a, b) => a + b, 0) / rates.length
  return { fpMean, fpWorst: Math.max(...rates), falseNegatives, checked, peakBytes }
}

function accuracyTable(): void {
  console.log(`### False positives and false negatives (window ${N} items / ${T / 1000} s sized for ${N} items)\n`)
  const rows: (string | number)[][] = []
  const adds = Math.round(7 * N)
  for (const rate of [0.01, 0.001]) {
    for (const [kind, stream] of [
      ['count', 'steady'],
      ['time', 'steady'],
      ['time', 'bursty'],
    ] as const) {
      for (const make of [() => apbf(kind, rate), () => rotating(kind, rate), () => exact(kind)]) {
        const result = accuracy(make, kind, stream, adds)
        const name = make().name
        const memory = Number.isNaN(result.peakBytes) ? '' : ((result.peakBytes * 8) / N).toFixed(1)
        rows.push([
          pct(rate),
          `${kind.toUpperCase()} ${stream}`,
          name,
          pct(result.fpMean),
          pct(result.fpWorst),
          `${result.falseNegatives} / ${result.checked}`,
          memory,
        ])
      }
    }
  }
  table(
    [
      'target',
      'window, stream',
      'scheme',
      'FP mean',
      'FP worst',
      'false negatives / checked',
      'peak bits per sized item',
    ],
    rows,
  )
}

/** ≥ 10M adds, each followed by a check of the oldest item still in the window: must answer 1 every time. */
function falseNegativeRun(): void {
  console.log(
    `### False negatives over ${FN_ADDS.toLocaleString('en')} adds (each add checks the oldest item in the window)\n`,
  )
  const rows: (string | number)[][] = []
  for (const [kind, stream] of [
    ['count', 'steady'],
    ['time', 'bursty'],
  ] as const) {
    const filter = new WindowFilter({ kind, errorRate: 0.01, capacity: N, windowMs: kind === 'time' ? T : undefined })
    const times = new Float64Array(FN_ADDS)
    let oldest = 0
    let misses = 0
    const started = performance.now()
    for (let i = 0; i < FN_ADDS; i++) {
      const now = kind === 'count' ? 0 : streamTime(stream, i)
      times[i] = now
      const key = item('f-', i)
      filter.add(key, 0, key.length, now)
      if (kind === 'count') oldest = Math.max(0, i - N + 1)
      else while (times[oldest]! <= now - T) oldest++
      const old = item('f-', oldest)
      if (!filter.has(old, 0, old.length, now)) misses++
    }
    rows.push([
      `${kind.toUpperCase()} ${stream}, 1%`,
      FN_ADDS.toLocaleString('en'),
      misses,
      ((performance.now() - started) / 1000).toFixed(0),
    ])
  }
  table(['window', 'adds', 'false negatives', 'seconds'], rows)
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

function throughputTable(): void {
  const count = Math.round(1_000_000 * Math.min(1, SCALE * 2))
  console.log(
    `### Adds and checks per second in process (${count.toLocaleString('en')} of each, median of ${RUNS} runs; ratios within each run)\n`,
  )
  const keys = Array.from({ length: count }, (_, i) => item('s-', i))
  const probes = Array.from({ length: count }, (_, i) => item('p-', i))
  const makers = [
    () => apbf('count', 0.01),
    () => apbf('time', 0.01),
    () => rotating('count', 0.01),
    () => exact('count'),
  ]
  const results = makers.map(() => ({
    adds: [] as number[],
    checks: [] as number[],
    addRatio: [] as number[],
    checkRatio: [] as number[],
  }))
  for (let run = 0; run < RUNS; run++) {
    const round = makers.map((make) => {
      const scheme = make()
      let started = performance.now()
      for (let i = 0; i < count; i++) scheme.add(keys[i]!, i)
      const adds = count / ((performance.now() - started) / 1000)
      started = performance.now()
      let found = 0
      for (let i = 0; i < count; i++)
        if (scheme.has(i % 2 === 0 ? keys[count - 1 - (i % N)]! : probes[i]!, count)) found++
      const checks = count / ((performance.now() - started) / 1000)
      return { adds, checks, found }
    })
    round.forEach((r, i) => {
      results[i]!.adds.push(r.adds)
      results[i]!.checks.push(r.checks)
      results[i]!.addRatio.push(r.adds / round[3]!.adds)
      results[i]!.checkRatio.push(r.checks / round[3]!.checks)
    })
  }
  const rows = makers.map((make, i) => {
    const r = results[i]!
    return [
      make().name,
      Math.round(median(r.adds)).toLocaleString('en'),
      median(r.addRatio).toFixed(2),
      Math.round(median(r.checks)).toLocaleString('en'),
      median(r.checkRatio).toFixed(2),
    ]
  })
  table(['scheme (1%)', 'adds/s', 'adds vs exact', 'checks/s', 'checks vs exact'], rows)
}

console.log(`## bench/window.ts (node ${process.version}, SCALE=${SCALE})\n`)
memoryTable()
accuracyTable()
throughputTable()
falseNegativeRun()
