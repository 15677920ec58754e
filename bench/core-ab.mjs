#!/usr/bin/env node
/**
 * ScalableBloomFilter.add of two builds side by side in ONE process: CPU time per add
 * (process.cpuUsage, which processes sharing the cores do not inflate the way they do wall time),
 * rounds alternating between the builds, medians. Finer than bench/cpu-ab.sh (no server, no
 * network) for a change to the core's hot path; run it with the same build twice to see the noise.
 *
 *   npm run build && node bench/core-ab.mjs /path/to/checkout-a /path/to/checkout-b [rounds=15]
 *
 * Each checkout must have dist/ built. Two one-layer filters per build: ~1e5 bits (in cache) and
 * ~1e8 bits (memory-bound), never full (their item count is reset after each add).
 */
import path from 'node:path'

const [dirA, dirB] = process.argv.slice(2, 4)
const rounds = Number(process.argv[4] ?? 15)
if (dirB === undefined) {
  console.error('usage: node bench/core-ab.mjs CHECKOUT_A CHECKOUT_B [rounds]')
  process.exit(2)
}
const load = async (dir) => (await import(path.resolve(dir, 'dist/core/scalable-filter.js'))).ScalableBloomFilter
const builds = [await load(dirA), await load(dirB)]
const items = Array.from({ length: 1 << 16 }, (_, i) => Buffer.from(`item:${String(i * 7919).padStart(11, '0')}`))
const median = (values) => [...values].sort((p, q) => p - q)[Math.floor(values.length / 2)]

/** ns of CPU per add over 20 passes of the items. */
function run(filter) {
  const layer = filter.layers[0]
  const started = process.cpuUsage()
  for (let pass = 0; pass < 20; pass++) {
    for (let i = 0; i < items.length; i++) {
      filter.add(items[i])
      layer.items = 0
    }
  }
  const used = process.cpuUsage(started)
  return ((used.user + used.system) * 1000) / (20 * items.length)
}

for (const capacity of [10_000, 10_000_000]) {
  const filters = builds.map((Filter) => new Filter({ capacity, errorRate: 0.01, expansion: 2, nonScaling: false }))
  for (let warm = 0; warm < 3; warm++) filters.forEach(run)
  const times = [[], []]
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0]
    for (const k of order) times[k].push(run(filters[k]))
  }
  const [a, b] = times.map(median)
  console.log(
    `${filters[0].layers[0].bitCount} bits: ns CPU per add, median of ${rounds}: A ${a.toFixed(1)}, B ${b.toFixed(1)} (B/A ${(b / a).toFixed(3)})`,
  )
}
