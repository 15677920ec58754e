/**
 * The once-per-filter warning when a filter's estimated false-positive rate passes the rate it was
 * reserved with. An add does not compute the estimate: the watch keeps, per filter, the count of
 * set bits in the newest layer (the only one adds change) above which the estimate is over
 * (core/filter-health.ts `overTargetSetBits`), recomputed only when a new layer appears, and an
 * add compares the layer's live count with it. Past it, the exact estimate confirms before the
 * warning is logged, once per filter object per process.
 */
import type { BloomLayer } from '../core/bloom-layer.js'
import type { ScalableBloomFilter } from '../core/scalable-filter.js'
import { filterHealth, overTargetSetBits, targetErrorRate } from '../core/filter-health.js'
import type { FilterEntry } from '../store/registry.js'
import type { Logger } from '../runtime/logger.js'

interface Watch {
  /** The newest layer when the threshold was computed. */
  layer: BloomLayer
  /** Set bits of that layer above which the estimate is to be checked. */
  alertBits: number
  /** Whether the warning has been logged. */
  warned: boolean
}

const watches = new WeakMap<ScalableBloomFilter, Watch>()

/** A watch for the filter's newest layer. */
function arm(filter: ScalableBloomFilter, newest: BloomLayer, warned: boolean): Watch {
  const watch: Watch = { layer: newest, alertBits: overTargetSetBits(filter, targetErrorRate(filter)), warned }
  watches.set(filter, watch)
  return watch
}

/**
 * Called after items were added to the filter, or with `bitsLoaded` after bits were copied into any
 * of its layers (BF.LOADCHUNK): logs a warning the first time its estimated false-positive rate is
 * over its target. One WeakMap lookup and a comparison unless the newest layer changed or crossed
 * its threshold.
 */
export function watchHealth(log: Logger, entry: FilterEntry, bitsLoaded = false): void {
  const filter = entry.filter
  const layers = filter.layers
  const newest = layers[layers.length - 1]!
  let watch = watches.get(filter)
  if (watch === undefined || watch.layer !== newest || bitsLoaded) watch = arm(filter, newest, watch?.warned ?? false)
  if (newest.setBits <= watch.alertBits || watch.warned) return
  const health = filterHealth(filter)
  if (health.verdict !== 'over target') {
    // Rounding at the threshold: look again after the next bit.
    watch.alertBits = newest.setBits
    return
  }
  watch.warned = true
  log.warning(
    `Filter ${JSON.stringify(entry.name)} is over its target false-positive rate: estimated ${health.estimatedErrorRate.toPrecision(3)} ` +
      `for ${health.errorRate} (${health.items} items, capacity ${health.capacity}, fill ${(health.fillRatio * 100).toFixed(1)}%)`,
  )
}

/** Whether the warning was logged for this filter (for tests and /metrics). */
export function warnedOverTarget(filter: ScalableBloomFilter): boolean {
  return watches.get(filter)?.warned === true
}
