/**
 * The status page's small chart per filter: the estimated false-positive rate as a function of the
 * items held, from the layers' geometry, as inline SVG (no external asset).
 *
 * With n items the layers fill in order, each up to its capacity, and the newest takes the rest
 * (a seeded or non-scaling filter filled past its capacity). A layer of m bits and k hash functions
 * holding n_i items answers a false positive with (1 − e^(−k·n_i/m))^k; the filter with
 * 1 − Π(1 − that). The curve runs from 0 to max(items, capacity); the target rate is a dashed
 * line and the filter now (its items, its rate measured from the set bits) a dot.
 */
import type { BloomLayer } from '../core/bloom-layer.js'

const WIDTH = 160
const HEIGHT = 48
const PAD = 3
/** Points on the curve. */
const SAMPLES = 40

/** The layer sizes the chart needs. */
type LayerShape = Pick<BloomLayer, 'capacity' | 'bitCount' | 'hashCount'>

/** The expected false-positive rate of a filter with these layers holding `items` items. */
export function expectedErrorRate(layers: readonly LayerShape[], items: number): number {
  let left = items
  let miss = 1
  for (let i = 0; i < layers.length; i++) {
    const layer = layers[i]!
    const held = i === layers.length - 1 ? left : Math.min(left, layer.capacity)
    left -= held
    const k = layer.hashCount
    const rate = (1 - Math.exp((-k * held) / layer.bitCount)) ** k
    miss *= 1 - rate
  }
  return 1 - miss
}

/** What one chart shows. */
export interface ChartInput {
  readonly layers: readonly LayerShape[]
  readonly items: number
  readonly capacity: number
  readonly estimatedErrorRate: number
  readonly errorRate: number
  /** Drawn in the warning colour. */
  readonly over: boolean
}

/** A number for an SVG attribute: two decimals at most. */
function coordinate(value: number): string {
  return String(Math.round(value * 100) / 100)
}

/** The chart as an `<svg>` element (inline in HTML: no namespace declaration needed). */
export function rateChart(input: ChartInput): string {
  const xMax = Math.max(input.items, input.capacity, 1)
  const curve: number[] = []
  for (let i = 0; i <= SAMPLES; i++) curve.push(expectedErrorRate(input.layers, (xMax * i) / SAMPLES))
  const yMax = Math.max(input.errorRate * 2, curve[SAMPLES]!, input.estimatedErrorRate) * 1.1 || 1
  const x = (items: number): number => PAD + ((WIDTH - 2 * PAD) * items) / xMax
  const y = (rate: number): number => HEIGHT - PAD - ((HEIGHT - 2 * PAD) * Math.min(rate, yMax)) / yMax
  const points = curve.map((rate, i) => `${coordinate(x((xMax * i) / SAMPLES))},${coordinate(y(rate))}`).join(' ')
  const targetY = coordinate(y(input.errorRate))
  const label =
    `estimated false-positive rate from 0 to ${xMax} items; target ${input.errorRate}, ` +
    `now ${input.estimatedErrorRate.toPrecision(3)} at ${input.items} items`
  return (
    `<svg class="chart${input.over ? ' over' : ''}" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" aria-label="${label}">` +
    `<title>${label}</title>` +
    `<line class="target" x1="${PAD}" y1="${targetY}" x2="${WIDTH - PAD}" y2="${targetY}"/>` +
    `<polyline class="curve" points="${points}"/>` +
    `<circle class="now" cx="${coordinate(x(input.items))}" cy="${coordinate(y(input.estimatedErrorRate))}" r="2.5"/>` +
    `</svg>`
  )
}
