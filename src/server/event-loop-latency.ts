/**
 * The `event-loop` latency event, bfs's own (a Node server's real latency source): how late the
 * event loop ran a timer, i.e. how long something held the loop (a slow command, a large save
 * step, the garbage collector). A timer drift sampler: while `latency-monitor-threshold` is set, a
 * timer due every 10 ms notes how late it fired; at each cron tick the largest lateness since the
 * last tick becomes a sample when it reaches the threshold. At threshold 0 no timer runs and the
 * cron pays one compare. (node:perf_hooks' monitorEventLoopDelay misses a block of Atomics.wait,
 * which DEBUG SLEEP is; this sampler sees every kind.)
 */
import { performance } from 'node:perf_hooks'
import type { LatencyMonitor } from '../runtime/latency-monitor.js'

/** The event's name in LATENCY LATEST / HISTORY (docs/operations/monitoring.md, "The operator's tools"). */
export const EVENT_LOOP_EVENT = 'event-loop'
/** ms between the sampler's timers. */
const RESOLUTION_MS = 10

export class EventLoopLatency {
  private timer: NodeJS.Timeout | undefined
  /** When the running timer was due (performance.now()). */
  private dueMs = 0
  /** The largest lateness since the last cron tick, ms. */
  private worstMs = 0
  private readonly fire = (): void => {
    const now = performance.now()
    this.worstMs = Math.max(this.worstMs, now - this.dueMs)
    this.schedule(now)
  }

  constructor(private readonly monitor: LatencyMonitor) {}

  /** At every cron tick: starts or stops the sampler as the threshold says, and takes the tick's sample. */
  tick(): void {
    const on = this.monitor.threshold() > 0
    if (this.timer === undefined) {
      if (on) this.schedule(performance.now())
      return
    }
    if (!on) return this.stop()
    // The running timer's own lateness counts too (a block that is not over at its due time).
    const worst = Math.max(this.worstMs, performance.now() - this.dueMs)
    this.worstMs = 0
    this.monitor.note(EVENT_LOOP_EVENT, worst)
  }

  private schedule(now: number): void {
    this.dueMs = now + RESOLUTION_MS
    this.timer = setTimeout(this.fire, RESOLUTION_MS)
    this.timer.unref()
  }

  stop(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    this.worstMs = 0
  }
}
