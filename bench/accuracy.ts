/**
 * Accuracy report: bfs's measured false-positive rates against theory, (1 − e^(−kn/m))^k.
 *
 *   npm run bench:accuracy          (compiles bench/ with tsconfig.bench.json, then runs this)
 *
 * Three experiments, all on the real core (RedisBloom 2.4's hashing and sizing):
 *  A. fill ratio: one layer sized for N items at error rate p, filled from 10 % to 150 % of N;
 *  B. hash count: k from 1 to 20 in a layer of fixed m bits holding n items (m/n = 10);
 *  C. growth: scalable filters filled far past their first layer's capacity.
 * The rate is measured by querying Q items that were never added. Items come from a seeded
 * generator and the hashes have fixed seeds, so every run writes the same files:
 * bench/results/accuracy.md (tables) and bench/results/accuracy.svg (the chart).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { allocateBitmap } from '../src/core/bitmap.js'
import { BloomLayer } from '../src/core/bloom-layer.js'
import { createHashPair, hashRedisBloom } from '../src/core/hashing.js'
import { ScalableBloomFilter } from '../src/core/scalable-filter.js'
import { layerGeometry } from '../src/core/sizing.js'

const OUT_DIR = path.join('bench', 'results')
/** Seed of the item generator. */
const SEED = 0x5eed_b10f
/** Items queried per measured point: a rate of 1e-3 is measured to about ±5 % (1σ). */
const QUERIES = 400_000

const FILL_CAPACITY = 100_000
const FILL_ERROR_RATES = [0.1, 0.01, 0.001]
const FILL_PERCENTS = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150]

const K_BITS = 1_000_000
const K_ITEMS = 100_000
const K_MAX = 20

const GROW_CAPACITY = 10_000
const GROW_ERROR_RATES = [0.01, 0.001]
const GROW_EXPANSION = 2
/** Items added, in multiples of the first layer's capacity. */
const GROW_MULTIPLES = [0.5, 1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]

// ---------------------------------------------------------------------------------------------
// Items: 16 bytes, [tag, counter (7 bytes LE), 8 seeded random bytes]. The counter keeps every
// item distinct; the tag keeps added items (1) and queried ones (2) apart.

const ADDED = 1
const QUERIED = 2

/** xorshift32: small, fast, and the same sequence on every platform. */
class Random {
  private state: number
  constructor(seed: number) {
    this.state = seed >>> 0 || 1
  }
  next(): number {
    let x = this.state
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    this.state = x >>> 0
    return this.state
  }
}

class ItemSource {
  private readonly random: Random
  private counter = 0
  readonly bytes = new Uint8Array(16)
  constructor(
    private readonly tag: number,
    seed: number,
  ) {
    this.random = new Random(seed)
  }
  /** Writes the next item into `bytes` and returns it (the same array each time). */
  next(): Uint8Array {
    const b = this.bytes
    let n = this.counter++
    b[0] = this.tag
    for (let i = 1; i < 8; i++) {
      b[i] = n % 256
      n = Math.floor(n / 256)
    }
    const r1 = this.random.next()
    const r2 = this.random.next()
    for (let i = 0; i < 4; i++) {
      b[8 + i] = (r1 >>> (8 * i)) & 0xff
      b[12 + i] = (r2 >>> (8 * i)) & 0xff
    }
    return b
  }
}

// ---------------------------------------------------------------------------------------------
// Theory and statistics

/** (1 − e^(−kn/m))^k: the false-positive rate of a Bloom filter with m bits, k hashes, n items. */
function theoreticalRate(bits: number, hashes: number, items: number): number {
  return Math.pow(1 - Math.exp((-hashes * items) / bits), hashes)
}

/** How many binomial standard deviations `hits` of `trials` lies from the expected rate. */
function zScore(hits: number, trials: number, expected: number): number {
  const sd = Math.sqrt(trials * expected * (1 - expected))
  return sd === 0 ? (hits === 0 ? 0 : Infinity) : (hits - trials * expected) / sd
}

interface Point {
  /** x value (fill %, k, or multiple of capacity). */
  x: number
  measured: number
  hits: number
  theory: number
}

function measure(has: (item: Uint8Array) => boolean, queries: ItemSource): number {
  let hits = 0
  for (let i = 0; i < QUERIES; i++) if (has(queries.next())) hits++
  return hits
}

// ---------------------------------------------------------------------------------------------
// A. fill ratio

interface FillSeries {
  errorRate: number
  bits: number
  hashes: number
  points: Point[]
}

function fillExperiment(errorRate: number, seed: number): FillSeries {
  // A non-scaling RedisBloom filter's one layer: bloom_init(capacity, errorRate).
  const geometry = layerGeometry(FILL_CAPACITY, errorRate)
  const layer = BloomLayer.create(FILL_CAPACITY, errorRate, geometry)
  const pair = createHashPair()
  const added = new ItemSource(ADDED, seed)
  const queries = new ItemSource(QUERIED, seed ^ 0xffff)
  const has = (item: Uint8Array): boolean => {
    hashRedisBloom(item, 0, item.length, pair)
    return layer.hasHashed(pair)
  }
  const points: Point[] = []
  let inserted = 0
  for (const percent of FILL_PERCENTS) {
    // Past 100 % the layer is overfilled on purpose (a scalable filter would have grown).
    const target = Math.round((FILL_CAPACITY * percent) / 100)
    for (; inserted < target; inserted++) {
      const item = added.next()
      hashRedisBloom(item, 0, item.length, pair)
      layer.addHashed(pair)
    }
    const hits = measure(has, queries)
    points.push({
      x: percent,
      hits,
      measured: hits / QUERIES,
      theory: theoreticalRate(geometry.bitCount, geometry.hashCount, inserted),
    })
  }
  return { errorRate, bits: geometry.bitCount, hashes: geometry.hashCount, points }
}

// ---------------------------------------------------------------------------------------------
// B. hash count at fixed m

function hashCountExperiment(seed: number): Point[] {
  const pair = createHashPair()
  const points: Point[] = []
  for (let k = 1; k <= K_MAX; k++) {
    const layer = new BloomLayer({
      capacity: K_ITEMS,
      errorRate: 0.5, // informational only: k is forced below
      bitsPerEntry: K_BITS / K_ITEMS,
      hashCount: k,
      bitCount: K_BITS,
      items: 0,
      bitmap: allocateBitmap(K_BITS / 8),
    })
    // The same items for every k, so the curve shows k's effect and not the items'.
    const added = new ItemSource(ADDED, seed)
    const queries = new ItemSource(QUERIED, seed ^ 0xffff)
    for (let i = 0; i < K_ITEMS; i++) {
      const item = added.next()
      hashRedisBloom(item, 0, item.length, pair)
      layer.addHashed(pair)
    }
    const hits = measure((item) => {
      hashRedisBloom(item, 0, item.length, pair)
      return layer.hasHashed(pair)
    }, queries)
    points.push({ x: k, hits, measured: hits / QUERIES, theory: theoreticalRate(K_BITS, k, K_ITEMS) })
  }
  return points
}

// ---------------------------------------------------------------------------------------------
// C. scalable filters as they grow

interface GrowPoint extends Point {
  layers: number
}

interface GrowSeries {
  errorRate: number
  points: GrowPoint[]
}

/** A scalable filter answers yes when any layer does: 1 − Π (1 − rate of layer i). */
function scalableTheory(filter: ScalableBloomFilter): number {
  let miss = 1
  for (const layer of filter.layers) miss *= 1 - theoreticalRate(layer.bitCount, layer.hashCount, layer.items)
  return 1 - miss
}

function growExperiment(errorRate: number, seed: number): GrowSeries {
  const filter = new ScalableBloomFilter({
    capacity: GROW_CAPACITY,
    errorRate,
    expansion: GROW_EXPANSION,
    nonScaling: false,
  })
  const added = new ItemSource(ADDED, seed)
  const queries = new ItemSource(QUERIED, seed ^ 0xffff)
  const points: GrowPoint[] = []
  let inserted = 0
  for (const multiple of GROW_MULTIPLES) {
    const target = Math.round(GROW_CAPACITY * multiple)
    for (; inserted < target; inserted++) {
      const outcome = filter.add(added.next())
      if (typeof outcome === 'object') throw new Error(`add failed: ${outcome.code}`)
    }
    const hits = measure((item) => filter.has(item), queries)
    points.push({
      x: multiple,
      hits,
      measured: hits / QUERIES,
      theory: scalableTheory(filter),
      layers: filter.layers.length,
    })
  }
  return { errorRate, points }
}

// ---------------------------------------------------------------------------------------------
// Markdown

function rate(value: number): string {
  if (value === 0) return '0'
  if (value >= 0.01) return value.toFixed(4)
  return value.toExponential(2)
}

/** Expected hits below this make the normal approximation of z meaningless: shown as '–'. */
const MIN_EXPECTED_HITS = 10

function z(point: Point): string {
  if (point.theory * QUERIES < MIN_EXPECTED_HITS) return '–'
  const score = zScore(point.hits, QUERIES, point.theory)
  return Number.isFinite(score) ? (score >= 0 ? '+' : '') + score.toFixed(1) : '∞'
}

function markdown(fill: FillSeries[], hashCounts: Point[], grow: GrowSeries[]): string {
  const lines: string[] = []
  lines.push('# False-positive rate: measured vs theory')
  lines.push('')
  lines.push('Generated by `npm run bench:accuracy` (bench/accuracy.ts); deterministic, seeded. Theory is')
  lines.push('(1 − e^(−kn/m))^k for a layer of m bits with k hashes holding n items; a scalable filter answers')
  lines.push('yes when any layer does, 1 − Π(1 − rateᵢ). Each measured rate is the share of')
  lines.push(`${QUERIES.toLocaleString('en-US')} never-added items reported present. z is (hits − expected) / σ of the`)
  lines.push(
    `binomial (shown when at least ${MIN_EXPECTED_HITS} hits are expected): |z| below about 3 means measurement and theory agree.`,
  )
  lines.push('')
  lines.push('![measured vs theoretical false-positive rates](accuracy.svg)')
  lines.push('')
  lines.push(`## A. Fill ratio: one layer sized for ${FILL_CAPACITY.toLocaleString('en-US')} items`)
  lines.push('')
  lines.push('Sized as RedisBloom sizes a non-scaling filter (bloom.c `bloom_init`), then filled past its capacity.')
  lines.push('')
  lines.push('| fill | ' + fill.map((s) => `p=${s.errorRate} measured | theory | z`).join(' | ') + ' |')
  lines.push('|---:|' + fill.map(() => '---:|---:|---:').join('|') + '|')
  for (let i = 0; i < FILL_PERCENTS.length; i++) {
    const cells = fill.map((s) => `${rate(s.points[i]!.measured)} | ${rate(s.points[i]!.theory)} | ${z(s.points[i]!)}`)
    lines.push(`| ${FILL_PERCENTS[i]} % | ${cells.join(' | ')} |`)
  }
  lines.push('')
  lines.push('| target p | bits (m) | hashes (k) | bits per item |')
  lines.push('|---:|---:|---:|---:|')
  for (const s of fill)
    lines.push(
      `| ${s.errorRate} | ${s.bits.toLocaleString('en-US')} | ${s.hashes} | ${(s.bits / FILL_CAPACITY).toFixed(2)} |`,
    )
  lines.push('')
  lines.push(
    `## B. Hash count: k = 1…${K_MAX}, m = ${K_BITS.toLocaleString('en-US')} bits, n = ${K_ITEMS.toLocaleString('en-US')} items`,
  )
  lines.push('')
  const best = hashCounts.reduce((a, b) => (b.measured < a.measured ? b : a))
  lines.push(
    `Theory's optimum is k = ln 2 · m/n = ${((Math.LN2 * K_BITS) / K_ITEMS).toFixed(2)}; the lowest measured rate is at k = ${best.x}.`,
  )
  lines.push('')
  lines.push('| k | measured | theory | z |')
  lines.push('|---:|---:|---:|---:|')
  for (const p of hashCounts) lines.push(`| ${p.x} | ${rate(p.measured)} | ${rate(p.theory)} | ${z(p)} |`)
  lines.push('')
  lines.push(
    `## C. Scalable filters growing: capacity ${GROW_CAPACITY.toLocaleString('en-US')}, expansion ${GROW_EXPANSION}`,
  )
  lines.push('')
  lines.push('Each new layer has twice the capacity and half the error rate of the one before (sb.c), so the')
  lines.push('compound rate stays below the target however far the filter grows.')
  lines.push('')
  lines.push('| items added | ' + grow.map((s) => `p=${s.errorRate} layers | measured | theory | z`).join(' | ') + ' |')
  lines.push('|---:|' + grow.map(() => '---:|---:|---:|---:').join('|') + '|')
  for (let i = 0; i < GROW_MULTIPLES.length; i++) {
    const cells = grow.map((s) => {
      const p = s.points[i]!
      return `${p.layers} | ${rate(p.measured)} | ${rate(p.theory)} | ${z(p)}`
    })
    lines.push(`| ${(GROW_CAPACITY * GROW_MULTIPLES[i]!).toLocaleString('en-US')} | ${cells.join(' | ')} |`)
  }
  lines.push('')
  return lines.join('\n')
}

// ---------------------------------------------------------------------------------------------
// SVG: three panels, log-scale rates; theory as lines, measurements as dots.

interface Series {
  label: string
  color: string
  points: { x: number; y: number }[]
  style: 'line' | 'dots' | 'dashed'
}

interface PanelSpec {
  title: string
  xLabel: string
  xTicks: number[]
  xLog: boolean
  xMin: number
  xMax: number
  series: Series[]
}

const Y_MIN = 1e-6
const Y_MAX = 1
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd']

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

function num(value: number): string {
  return (Math.round(value * 10) / 10).toString()
}

function panel(spec: PanelSpec, left: number, top: number, width: number, height: number): string {
  const plotLeft = left + 52
  const plotTop = top + 28
  const plotWidth = width - 64
  const plotHeight = height - 72
  const sx = (x: number): number => {
    const t = spec.xLog
      ? Math.log(x / spec.xMin) / Math.log(spec.xMax / spec.xMin)
      : (x - spec.xMin) / (spec.xMax - spec.xMin)
    return plotLeft + t * plotWidth
  }
  const sy = (y: number): number => {
    const t = Math.log10(Math.max(y, Y_MIN) / Y_MIN) / Math.log10(Y_MAX / Y_MIN)
    return plotTop + plotHeight - t * plotHeight
  }
  const out: string[] = []
  out.push(
    `<text x="${num(left + width / 2)}" y="${num(top + 16)}" text-anchor="middle" font-weight="bold">${escapeXml(spec.title)}</text>`,
  )
  out.push(
    `<rect x="${num(plotLeft)}" y="${num(plotTop)}" width="${num(plotWidth)}" height="${num(plotHeight)}" fill="none" stroke="#888"/>`,
  )
  for (let e = 0; e >= -6; e--) {
    const y = sy(10 ** e)
    out.push(
      `<line x1="${num(plotLeft)}" y1="${num(y)}" x2="${num(plotLeft + plotWidth)}" y2="${num(y)}" stroke="#eee"/>`,
    )
    out.push(
      `<text x="${num(plotLeft - 6)}" y="${num(y + 4)}" text-anchor="end" font-size="11">${e === 0 ? '1' : `1e${e}`}</text>`,
    )
  }
  for (const x of spec.xTicks) {
    const px = sx(x)
    out.push(
      `<line x1="${num(px)}" y1="${num(plotTop + plotHeight)}" x2="${num(px)}" y2="${num(plotTop + plotHeight + 4)}" stroke="#888"/>`,
    )
    out.push(
      `<text x="${num(px)}" y="${num(plotTop + plotHeight + 16)}" text-anchor="middle" font-size="11">${x}</text>`,
    )
  }
  out.push(
    `<text x="${num(plotLeft + plotWidth / 2)}" y="${num(top + height - 12)}" text-anchor="middle" font-size="12">${escapeXml(spec.xLabel)}</text>`,
  )
  out.push(
    `<text transform="translate(${num(left + 12)},${num(plotTop + plotHeight / 2)}) rotate(-90)" text-anchor="middle" font-size="12">false-positive rate</text>`,
  )
  for (const series of spec.series) {
    // Points below the chart's floor (including measured zeros) are left out rather than drawn at it.
    const visible = series.points.filter((p) => p.y >= Y_MIN)
    if (series.style === 'dots') {
      for (const p of visible)
        out.push(`<circle cx="${num(sx(p.x))}" cy="${num(sy(p.y))}" r="3" fill="${series.color}"/>`)
    } else if (visible.length > 1) {
      const d = visible.map((p, i) => `${i === 0 ? 'M' : 'L'}${num(sx(p.x))},${num(sy(p.y))}`).join(' ')
      const dash = series.style === 'dashed' ? ' stroke-dasharray="5,4"' : ''
      out.push(`<path d="${d}" fill="none" stroke="${series.color}" stroke-width="1.5"${dash}/>`)
    }
  }
  // Legend: one row per colour, in the panel's lower right corner.
  const labels = [...new Map(spec.series.map((s) => [s.color, s.label])).entries()]
  // About 6.5 px per character at 11 px: wide enough for the longest label, inside the frame.
  const legendWidth = 24 + 6.5 * Math.max(...labels.map(([, label]) => label.length))
  labels.forEach(([color, label], i) => {
    const y = plotTop + plotHeight - 12 - (labels.length - 1 - i) * 16
    const x = plotLeft + plotWidth - 8 - legendWidth
    out.push(`<circle cx="${num(x)}" cy="${num(y - 4)}" r="3" fill="${color}"/>`)
    out.push(
      `<line x1="${num(x + 6)}" y1="${num(y - 4)}" x2="${num(x + 20)}" y2="${num(y - 4)}" stroke="${color}" stroke-width="1.5"/>`,
    )
    out.push(`<text x="${num(x + 24)}" y="${num(y)}" font-size="11">${escapeXml(label)}</text>`)
  })
  return out.join('\n')
}

function svg(fill: FillSeries[], hashCounts: Point[], grow: GrowSeries[]): string {
  const measuredAndTheory = (label: string, color: string, points: Point[]): Series[] => [
    { label, color, style: 'line', points: points.map((p) => ({ x: p.x, y: p.theory })) },
    { label, color, style: 'dots', points: points.map((p) => ({ x: p.x, y: p.measured })) },
  ]
  const panels: PanelSpec[] = [
    {
      title: `A. Fill ratio (capacity ${FILL_CAPACITY / 1000}k)`,
      xLabel: 'items added, % of capacity',
      xTicks: [10, 50, 100, 150],
      xLog: false,
      xMin: 0,
      xMax: 160,
      series: fill.flatMap((s, i) => measuredAndTheory(`p = ${s.errorRate}`, COLORS[i]!, s.points)),
    },
    {
      title: `B. Hash count (m/n = ${K_BITS / K_ITEMS})`,
      xLabel: 'k, hash functions',
      xTicks: [1, 5, 10, 15, 20],
      xLog: false,
      xMin: 0,
      xMax: K_MAX + 1,
      series: measuredAndTheory('m = 1M, n = 100k', COLORS[3]!, hashCounts),
    },
    {
      title: `C. Scalable growth (capacity ${GROW_CAPACITY / 1000}k, x${GROW_EXPANSION})`,
      xLabel: 'items added ÷ first capacity (log scale)',
      xTicks: [0.5, 1, 2, 4, 8, 16, 32, 64],
      xLog: true,
      xMin: 0.4,
      xMax: 80,
      series: grow.flatMap((s, i) => [
        ...measuredAndTheory(`p = ${s.errorRate}`, COLORS[i + 1]!, s.points),
        // The target: the compound rate must stay below it.
        {
          label: `p = ${s.errorRate}`,
          color: COLORS[i + 1]!,
          style: 'dashed' as const,
          points: [
            { x: 0.4, y: s.errorRate },
            { x: 80, y: s.errorRate },
          ],
        },
      ]),
    },
  ]
  const width = 360
  const height = 340
  const body = panels.map((spec, i) => panel(spec, i * width, 0, width, height)).join('\n')
  const note = 'lines: theory (1 − e^(−kn/m))^k · dots: measured · dashed: target error rate · measured zeros not drawn'
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width * panels.length}" height="${height + 24}" viewBox="0 0 ${width * panels.length} ${height + 24}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    body,
    `<text x="${(width * panels.length) / 2}" y="${height + 14}" text-anchor="middle" font-size="11" fill="#444">${escapeXml(note)}</text>`,
    '</svg>',
    '',
  ].join('\n')
}

// ---------------------------------------------------------------------------------------------

function main(): void {
  const startedMs = Date.now()
  const fill = FILL_ERROR_RATES.map((p, i) => fillExperiment(p, SEED + i))
  console.log(`A. fill ratio: done in ${((Date.now() - startedMs) / 1000).toFixed(1)} s`)
  const hashCounts = hashCountExperiment(SEED + 100)
  console.log(`B. hash count: done in ${((Date.now() - startedMs) / 1000).toFixed(1)} s`)
  const grow = GROW_ERROR_RATES.map((p, i) => growExperiment(p, SEED + 200 + i))
  console.log(`C. growth: done in ${((Date.now() - startedMs) / 1000).toFixed(1)} s`)
  mkdirSync(OUT_DIR, { recursive: true })
  writeFileSync(path.join(OUT_DIR, 'accuracy.md'), markdown(fill, hashCounts, grow))
  writeFileSync(path.join(OUT_DIR, 'accuracy.svg'), svg(fill, hashCounts, grow))
  console.log(`wrote ${path.join(OUT_DIR, 'accuracy.md')} and ${path.join(OUT_DIR, 'accuracy.svg')}`)
}

main()
