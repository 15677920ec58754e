/**
 * Does the live estimate track the real false-positive rate? For filters filled to 10 %–200 % of
 * their capacity, BFS.HEALTH's estimate (core/filter-health.ts: per layer X^k from the live count
 * of set bits, 1 − Π(1 − X_i^k_i) for the filter) beside the rate measured by querying items
 * never added.
 *
 *   npm run bench:health        (compiles bench/ with tsconfig.bench.json, then runs this)
 *
 * Filters: scalable (RedisBloom's defaults, expansion 2) and non-scaling, at error rates 0.01 and
 * 0.001, capacity 10 000. A non-scaling filter refuses items past its capacity; to see the estimate
 * past it (a filter loaded overfull, or an original-library file), those items go straight into
 * its one layer. Three seeds per point; items and queries are seeded, so every run writes the same
 * bench/results/health.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { filterHealth } from '../src/core/filter-health.js'
import { createHashPair, hashRedisBloom } from '../src/core/hashing.js'
import { ScalableBloomFilter } from '../src/core/scalable-filter.js'

const OUT = path.join('bench', 'results', 'health.md')
const CAPACITY = 10_000
const ERROR_RATES = [0.01, 0.001]
const PERCENTS = [10, 25, 50, 75, 90, 100, 125, 150, 200]
const SEEDS = [1, 2, 3]
/** Never-added items queried per point. */
const QUERIES = 300_000
/** Points whose measured false positives are fewer than this are shown but left out of the summary. */
const MIN_HITS = 100

/** A distinct 16-byte item per (kind, seed, index): kind 1 is added, 2 is queried, never both. */
function item(out: Uint8Array, kind: number, seed: number, index: number): Uint8Array {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength)
  view.setUint32(0, kind)
  view.setUint32(4, seed)
  view.setFloat64(8, index)
  return out
}

interface Point {
  readonly label: string
  readonly percent: number
  readonly layers: number
  readonly fill: number
  readonly estimate: number
  readonly measured: number
  readonly hits: number
}

/** Adds items number `from` to `to` (exclusive); a non-scaling filter's layer takes them past capacity. */
function fill(filter: ScalableBloomFilter, seed: number, from: number, to: number): void {
  const bytes = new Uint8Array(16)
  const pair = createHashPair()
  for (let i = from; i < to; i++) {
    item(bytes, 1, seed, i)
    if (filter.canScale) {
      filter.add(bytes)
    } else {
      hashRedisBloom(bytes, 0, bytes.length, pair)
      filter.layers[0]!.addHashed(pair)
    }
  }
}

function measure(filter: ScalableBloomFilter, seed: number): number {
  const bytes = new Uint8Array(16)
  let hits = 0
  for (let i = 0; i < QUERIES; i++) if (filter.has(item(bytes, 2, seed, i))) hits++
  return hits
}

function series(errorRate: number, nonScaling: boolean, seed: number): Point[] {
  const label = `${nonScaling ? 'non-scaling' : 'scalable'} ${errorRate}`
  const filter = new ScalableBloomFilter({ capacity: CAPACITY, errorRate, expansion: 2, nonScaling })
  const points: Point[] = []
  let added = 0
  for (const percent of PERCENTS) {
    const target = Math.round((CAPACITY * percent) / 100)
    fill(filter, seed, added, target)
    added = target
    const health = filterHealth(filter)
    const hits = measure(filter, seed)
    points.push({
      label,
      percent,
      layers: filter.layers.length,
      fill: health.fillRatio,
      estimate: health.estimatedErrorRate,
      measured: hits / QUERIES,
      hits,
    })
  }
  return points
}

/** Binomial z-score of the measured hits against the estimate. */
function zScore(point: Point): number {
  const expected = point.estimate * QUERIES
  const sd = Math.sqrt(QUERIES * point.estimate * (1 - point.estimate))
  return sd === 0 ? 0 : (point.hits - expected) / sd
}

const relative = (point: Point): number => (point.measured - point.estimate) / point.estimate

function table(points: Point[]): string[] {
  const rows = [
    '| filter | fill of capacity | layers | seed | set bits | estimate | measured | measured / estimate − 1 | z |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|',
  ]
  points.forEach((p, i) => {
    const counted = p.hits >= MIN_HITS
    rows.push(
      `| ${p.label} | ${p.percent} % | ${p.layers} | ${SEEDS[i % SEEDS.length]} | ${(p.fill * 100).toFixed(1)} % | ${p.estimate.toExponential(3)} | ` +
        `${p.measured.toExponential(3)} | ${counted ? `${(relative(p) * 100).toFixed(1)} %` : `(${p.hits} hits)`} | ${zScore(p).toFixed(2)} |`,
    )
  })
  return rows
}

function summary(points: Point[]): string[] {
  const counted = points.filter((p) => p.hits >= MIN_HITS)
  const errors = counted.map((p) => Math.abs(relative(p))).sort((a, b) => a - b)
  const zs = counted.map((p) => Math.abs(zScore(p)))
  const mean = counted.reduce((sum, p) => sum + relative(p), 0) / counted.length
  const percent = (x: number): string => `${(x * 100).toFixed(1)} %`
  return [
    `Points with at least ${MIN_HITS} false positives measured: ${counted.length} of ${points.length}.`,
    `|measured / estimate − 1|: median ${percent(errors[Math.floor(errors.length / 2)]!)}, 90th percentile ${percent(errors[Math.floor(errors.length * 0.9)]!)}, ` +
      `max ${percent(errors[errors.length - 1]!)}; mean signed ${percent(mean)}. |z| (binomial noise of ${QUERIES} queries): ` +
      `max ${Math.max(...zs).toFixed(2)}, ${zs.filter((z) => z > 3).length} above 3.`,
  ]
}

function main(): void {
  const points: Point[] = []
  for (const nonScaling of [false, true]) {
    for (const errorRate of ERROR_RATES) {
      const bySeed = SEEDS.map((seed) => series(errorRate, nonScaling, seed))
      for (let i = 0; i < PERCENTS.length; i++) for (const run of bySeed) points.push(run[i]!)
    }
  }
  const text = [
    '# The live false-positive estimate against the measured rate',
    '',
    `\`npm run bench:health\`: capacity ${CAPACITY}, ${QUERIES} never-added items queried per point, seeds ${SEEDS.join(', ')}.`,
    "Estimate: BFS.HEALTH's, from the live count of set bits. Past 100 % a non-scaling filter's",
    'items go straight into its layer (as in a filter loaded overfull).',
    '',
    ...summary(points),
    '',
    ...table(points),
    '',
  ].join('\n')
  mkdirSync(path.dirname(OUT), { recursive: true })
  writeFileSync(OUT, text)
  console.log(summary(points).join('\n'))
  console.log(`written: ${OUT}`)
}

main()
