/**
 * The active expiry cycle, as redis 7.0 src/expire.c activeExpireCycle: keys nobody looks up are
 * deleted once past their expiry, a sample at a time, within a time budget so that a million keys
 * expiring together do not stall the event loop.
 *
 * - The slow cycle runs at every cron tick (hz 10) for at most `25 + 2 * (effort - 1)` percent of
 *   the tick (25 ms at effort 1).
 * - The fast cycle runs between event-loop turns (redis beforeSleep) for at most `1000 + 250 *
 *   (effort - 1)` µs, no more often than twice that, and only after a cycle that hit its time limit.
 * - Each loop samples `20 + 5 * (effort - 1)` keys with an expiry, walking them in order from where
 *   the last loop stopped (redis's expires_cursor), and deletes those past it; the cycle goes on
 *   while more than `10 - (effort - 1)` percent of a sample was expired, checking the clock every
 *   16 loops.
 */
import { performance } from 'node:perf_hooks'
import type { FilterRegistry } from './registry.js'
import type { Stats } from '../runtime/stats.js'

const KEYS_PER_LOOP = 20
const FAST_DURATION_US = 1000
const SLOW_TIME_PERC = 25
const ACCEPTABLE_STALE = 10

/** Which of redis's two cycles: 'slow' (serverCron) or 'fast' (beforeSleep). */
export type CycleKind = 'slow' | 'fast'

/** The active expiry cycle of one registry, with its cursor and the INFO stats it keeps. */
export class ActiveExpiry {
  /** Where the walk over the keys with an expiry stopped: an index (redis expires_cursor). */
  private cursor = 0
  /** The last cycle stopped at its time limit (redis timelimit_exit): a fast cycle may follow. */
  private timedOut = false
  private lastFastStartUs = 0

  constructor(
    private readonly registry: FilterRegistry,
    private readonly stats: Stats,
  ) {}

  /**
   * One cycle, when the registry deletes expired keys now (a master, not loading). `hz` is the
   * cron's frequency, `effort` the config's active-expire-effort (1-10).
   * @returns the keys it deleted
   */
  cycle(kind: CycleKind, effort: number, hz: number): number {
    const registry = this.registry
    if (registry.expiringCount === 0 || registry.expiry.mode() !== 'delete') return 0
    const e = Math.min(10, Math.max(1, effort)) - 1
    const keysPerLoop = KEYS_PER_LOOP + (KEYS_PER_LOOP / 4) * e
    const fastDurationUs = FAST_DURATION_US + (FAST_DURATION_US / 4) * e
    const acceptableStale = ACCEPTABLE_STALE - e
    const startUs = performance.now() * 1000
    if (kind === 'fast') {
      // Only after a cycle that could not keep up, and not again within twice its duration. redis
      // compares its stale estimate, a fraction, with the percentage: in effect, only after a
      // cycle that hit its time limit. Kept as it is.
      if (!this.timedOut && this.stats.expiredStalePerc < acceptableStale) return 0
      if (startUs < this.lastFastStartUs + fastDurationUs * 2) return 0
      this.lastFastStartUs = startUs
    }
    const timeLimitUs = kind === 'fast' ? fastDurationUs : ((SLOW_TIME_PERC + 2 * e) * 1_000_000) / hz / 100
    let totalExpired = 0
    let totalSampled = 0
    this.timedOut = false
    for (let iteration = 1; ; iteration++) {
      const { expired, sampled } = this.sample(Math.min(keysPerLoop, registry.expiringCount))
      totalExpired += expired
      totalSampled += sampled
      if (registry.expiringCount === 0) break
      if ((iteration & 0xf) === 0 && performance.now() * 1000 - startUs > timeLimitUs) {
        this.timedOut = true
        this.stats.expiredTimeCapReached++
        break
      }
      if (sampled > 0 && (expired * 100) / sampled <= acceptableStale) break
    }
    this.stats.expireCycleMicros += Math.round(performance.now() * 1000 - startUs)
    const currentPerc = totalSampled > 0 ? totalExpired / totalSampled : 0
    this.stats.expiredStalePerc = currentPerc * 0.05 + this.stats.expiredStalePerc * 0.95
    return totalExpired
  }

  /**
   * Looks at up to `count` keys with an expiry from the cursor on, deleting those past it (a
   * deletion moves the last key into the cursor's place: it is looked at next).
   */
  private sample(count: number): { expired: number; sampled: number } {
    const registry = this.registry
    const now = registry.expiry.now()
    let expired = 0
    let sampled = 0
    while (sampled < count && registry.expiringCount > 0) {
      if (this.cursor >= registry.expiringCount) this.cursor = 0
      const entry = registry.expiringAt(this.cursor)!
      sampled++
      if (registry.isExpired(entry, now)) {
        registry.deleteExpired(entry)
        expired++
      } else {
        this.cursor++
      }
    }
    return { expired, sampled }
  }
}
