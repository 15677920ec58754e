/**
 * How close BF.MERGE's item count is to the truth: the union's count is estimated from its set
 * bits, n ≈ −(m/k)·ln(1 − X/m), capped at the layer's capacity and never below a source's count
 * (src/core/merge.ts). Measured on the real core, first layer only:
 *
 *   npm run bench:merge-estimate    (compiles bench/ with tsconfig.bench.json, then runs this)
 *
 * For each capacity and fill (distinct items in the union as a share of the layer's capacity),
 * TRIALS unions of two sources of fresh items are merged; the table gives the signed mean and the worst relative error
 * of BF.CARD of the union against the true number of distinct items, and, for comparison, that of
 * one filter fed the whole union with BF.ADD (RedisBloom's own counter, which misses the items
 * that were false positives when added). Items are deterministic: every run prints the same table,
 * also written to bench/results/merge-estimate.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { mergeFilters } from '../src/core/merge.js'
import { ScalableBloomFilter } from '../src/core/scalable-filter.js'

const CAPACITIES = [1_000, 10_000, 100_000]
const ERROR_RATE = 0.01
const TRIALS = 20
const FILLS = [10, 25, 50, 75, 90, 100, 150]

const range = (from: number, count: number): string[] => Array.from({ length: count }, (_, i) => `item-${from + i}`)

/**
 * Two sources sharing a third of the union (half of each one's items). How the union is split
 * does not matter: its bits are the OR, exactly the bits of one filter fed every item (same hashes).
 */
function sourcesOf(total: number, base: number): string[][] {
  const third = Math.round(total / 3)
  return [range(base, 2 * third), range(base + third, total - third)]
}

const encoder = new TextEncoder()

function filterOf(capacity: number, items: readonly string[]): ScalableBloomFilter {
  // Non-scaling: the union's one layer is the thing measured, even past its capacity.
  const filter = new ScalableBloomFilter({ capacity, errorRate: ERROR_RATE, expansion: 2, nonScaling: true })
  for (const item of items) filter.add(encoder.encode(item))
  return filter
}

interface Errors {
  mean: number
  worst: number
}

function summarize(errors: number[]): Errors {
  const mean = errors.reduce((sum, e) => sum + e, 0) / errors.length
  const worst = errors.reduce((w, e) => (Math.abs(e) > Math.abs(w) ? e : w), 0)
  return { mean, worst }
}

const percent = (value: number): string => `${value >= 0 ? '+' : ''}${(value * 100).toFixed(2)} %`

function measure(capacity: number, fill: number): { merged: Errors; added: Errors } {
  const total = Math.round((capacity * fill) / 100)
  const merged: number[] = []
  const added: number[] = []
  for (let trial = 0; trial < TRIALS; trial++) {
    const base = (fill * 1000 + trial) * 1_000_000
    const sources = sourcesOf(total, base)
    const union = mergeFilters(sources.map((items) => filterOf(capacity, items)))
    if (!(union instanceof ScalableBloomFilter)) throw new Error('sources reserved alike differ')
    merged.push(union.info().items / total - 1)
    added.push(filterOf(capacity, [...new Set(sources.flat())]).info().items / total - 1)
  }
  return { merged: summarize(merged), added: summarize(added) }
}

const lines = [
  `Error rate ${ERROR_RATE} (first layer: k = ${filterOf(1000, []).layers[0]!.hashCount}), ${TRIALS} unions of two sources per row.`,
  '',
  '| capacity | fill | BF.CARD of the union: mean | worst | one filter fed the union: mean | worst |',
  '|---:|---:|---:|---:|---:|---:|',
]
for (const capacity of CAPACITIES) {
  for (const fill of FILLS) {
    const { merged, added } = measure(capacity, fill)
    lines.push(
      `| ${capacity} | ${fill} % | ${percent(merged.mean)} | ${percent(merged.worst)} | ${percent(added.mean)} | ${percent(added.worst)} |`,
    )
  }
}
const report = lines.join('\n') + '\n'
process.stdout.write(report)
const out = path.join('bench', 'results')
mkdirSync(out, { recursive: true })
writeFileSync(path.join(out, 'merge-estimate.md'), report)
