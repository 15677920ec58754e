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
 * - Every database is visited in turn (redis's dbs_per_call, all of them here: a database without
 *   keys with an expiry costs one check), from the one after where the last cycle stopped, within
 *   the one time budget; each database keeps its cursor.
 */
import { performance } from 'node:perf_hooks'
import type { FilterRegistry } from './registry.js'
import { Databases, type Dataset } from './databases.js'
import type { Stats } from '../runtime/stats.js'

const KEYS_PER_LOOP = 20
const FAST_DURATION_US = 1000
const SLOW_TIME_PERC = 25
const ACCEPTABLE_STALE = 10

/** Which of redis's two cycles: 'slow' (serverCron) or 'fast' (beforeSleep). */
export type CycleKind = 'slow' | 'fast'

/** The active expiry cycle of a server's databases, with the INFO stats it keeps. */
export class ActiveExpiry {
  /** The database the next cycle starts with (redis's static current_db). */
  private nextDb = 0
  /** The last cycle stopped at its time limit (redis timelimit_exit): a fast cycle may follow. */
  private timedOut = false
  private lastFastStartUs = 0
  private readonly databases: Databases

  constructor(
    dataset: Dataset,
    private readonly stats: Stats,
  ) {
    this.databases = Databases.of(dataset)
  }

  /**
   * One cycle, when the registry deletes expired keys now (a master, not loading). `hz` is the
   * cron's frequency, `effort` the config's active-expire-effort (1-10).
   * @returns the keys it deleted
   */
  cycle(kind: CycleKind, effort: number, hz: number): number {
    if (this.databases.shared.expiring === 0 || this.databases.expiry.mode() !== 'delete') return 0
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
    const dbs = this.databases.made().filter((registry) => registry.expiringCount > 0)
    const totals = { expired: 0, sampled: 0 }
    this.timedOut = false
    const first = dbs.findIndex((registry) => registry.index >= this.nextDb)
    for (let k = 0; k < dbs.length && !this.timedOut; k++) {
      const registry = dbs[(Math.max(0, first) + k) % dbs.length]!
      this.nextDb = registry.index + 1
      this.cycleDb(
        registry,
        keysPerLoop,
        acceptableStale,
        () => performance.now() * 1000 - startUs > timeLimitUs,
        totals,
      )
    }
    const { expired: totalExpired, sampled: totalSampled } = totals
    this.stats.expireCycleMicros += Math.round(performance.now() * 1000 - startUs)
    const currentPerc = totalSampled > 0 ? totalExpired / totalSampled : 0
    this.stats.expiredStalePerc = currentPerc * 0.05 + this.stats.expiredStalePerc * 0.95
    return totalExpired
  }

  /** One database's share of a cycle: samples until few were expired, or the time is up. */
  private cycleDb(
    registry: FilterRegistry,
    keysPerLoop: number,
    acceptableStale: number,
    overTime: () => boolean,
    totals: { expired: number; sampled: number },
  ): void {
    for (let iteration = 1; ; iteration++) {
      const { expired, sampled } = sample(registry, Math.min(keysPerLoop, registry.expiringCount))
      totals.expired += expired
      totals.sampled += sampled
      if (registry.expiringCount === 0) break
      if ((iteration & 0xf) === 0 && overTime()) {
        this.timedOut = true
        this.stats.expiredTimeCapReached++
        break
      }
      if (sampled > 0 && (expired * 100) / sampled <= acceptableStale) break
    }
  }
}

/**
 * Looks at up to `count` keys with an expiry from the database's cursor on, deleting those past
 * it (a deletion moves the last key into the cursor's place: it is looked at next).
 */
function sample(registry: FilterRegistry, count: number): { expired: number; sampled: number } {
  const now = registry.expiry.now()
  let expired = 0
  let sampled = 0
  while (sampled < count && registry.expiringCount > 0) {
    if (registry.expiryCursor >= registry.expiringCount) registry.expiryCursor = 0
    const entry = registry.expiringAt(registry.expiryCursor)!
    sampled++
    if (registry.isExpired(entry, now)) {
      registry.deleteExpired(entry)
      expired++
    } else {
      registry.expiryCursor++
    }
  }
  return { expired, sampled }
}
