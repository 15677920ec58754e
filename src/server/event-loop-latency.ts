/**
 * The `event-loop` latency event, bfs's own (a Node server's real latency source): how late the
 * event loop ran its timers, measured by node:perf_hooks' monitorEventLoopDelay (a libuv timer
 * every 10 ms notes how late it fired). The histogram runs only while `latency-monitor-threshold`
 * is set: at threshold 0 nothing samples and the cron pays one compare. At each cron tick the
 * highest delay since the last tick becomes a sample when it reaches the threshold.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks'
import type { LatencyMonitor } from '../runtime/latency-monitor.js'

/** The event's name in LATENCY LATEST / HISTORY (README, "The operator's tools"). */
export const EVENT_LOOP_EVENT = 'event-loop'
/** ms between the histogram's samples of the loop's delay. */
const RESOLUTION_MS = 10

export class EventLoopLatency {
  private histogram: IntervalHistogram | undefined

  constructor(private readonly monitor: LatencyMonitor) {}

  /** At every cron tick: starts or stops the sampler as the threshold says, and takes the tick's sample. */
  tick(): void {
    const on = this.monitor.threshold() > 0
    const histogram = this.histogram
    if (histogram === undefined) {
      if (on) {
        this.histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
        this.histogram.enable()
      }
      return
    }
    if (!on) return this.stop()
    // max is in ns and counts the resolution itself (the timer's whole interval).
    if (histogram.count > 0) this.monitor.note(EVENT_LOOP_EVENT, histogram.max / 1e6 - RESOLUTION_MS)
    histogram.reset()
  }

  stop(): void {
    this.histogram?.disable()
    this.histogram = undefined
  }
}
