/**
 * The once-per-filter warning when a filter's estimated false-positive rate passes the rate it was
 * reserved with. An add does not compute the estimate: the watch keeps, on the filter's registry
 * entry, the count of set bits in the newest layer (the only one adds change) above which the
 * estimate is over (core/filter-health.ts `overTargetSetBits`), recomputed only when a new layer
 * appears or bits are loaded, and an add compares the layer's live count with it. Past it, the
 * exact estimate confirms before the warning is logged, once per filter per process.
 */
import type { BloomLayer } from '../../core/bloom-layer.js'
import { filterHealth, overTargetSetBits, targetErrorRate, type HealthWatch } from '../../core/filter-health.js'
import type { BloomEntry } from '../../store/registry.js'
import type { Logger } from '../../runtime/logger.js'

/** A watch for the filter's newest layer. */
function arm(entry: BloomEntry, newest: BloomLayer): HealthWatch {
  const filter = entry.filter
  const watch: HealthWatch = {
    layer: newest,
    alertBits: overTargetSetBits(filter, targetErrorRate(filter)),
    warned: false,
  }
  entry.healthWatch = watch
  return watch
}

/**
 * Called after items were added to the filter, or with `bitsLoaded` after bits were copied into any
 * of its layers (BF.LOADCHUNK): logs a warning the first time its estimated false-positive rate is
 * over its target. A few field reads and a comparison unless the newest layer changed or crossed
 * its threshold.
 */
export function watchHealth(log: Logger, entry: BloomEntry, bitsLoaded = false): void {
  let watch = entry.healthWatch
  if (watch?.warned === true) return // once per filter per process
  const layers = entry.filter.layers
  const newest = layers[layers.length - 1]!
  if (watch === undefined || watch.layer !== newest || bitsLoaded) watch = arm(entry, newest)
  if (newest.setBits <= watch.alertBits) return
  const health = filterHealth(entry.filter)
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
