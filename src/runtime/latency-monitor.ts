/**
 * The latency monitor, as redis 7.0 src/latency.c keeps it: per event (a name such as `command`
 * or `event-loop`), the latest 160 samples, one per second at most (a later one in the same second
 * keeps the larger), each its unix time and latency in milliseconds, and the all-time high. A
 * sample is taken only when `latency-monitor-threshold` is set (ms, 0 = off) and the latency
 * reaches it (redis latencyAddSampleIfNeeded): with the threshold at 0 a source pays one compare.
 */

/** redis latency.h LATENCY_TS_LEN: samples kept per event. */
export const LATENCY_TS_LEN = 160

/** One event's ring of samples (redis struct latencyTimeSeries). */
export interface LatencySeries {
  /** Where the next sample goes. */
  idx: number
  /** The highest latency seen since the event's last reset, ms. */
  max: number
  /** Unix seconds of each sample (0: an empty slot). */
  readonly times: Int32Array
  readonly latencies: Uint32Array
}

/** redis struct latencyStats: what LATENCY DOCTOR says of an event. */
export interface LatencyStats {
  readonly allTimeHigh: number
  readonly avg: number
  readonly min: number
  readonly max: number
  /** Mean absolute deviation from avg. */
  readonly mad: number
  readonly samples: number
  /** Seconds from the oldest sample to now (at least 1 when there are samples). */
  readonly period: number
}

export class LatencyMonitor {
  private readonly events = new Map<string, LatencySeries>()

  /** `threshold` reads `latency-monitor-threshold` (ms, 0 = off) at each use. */
  constructor(readonly threshold: () => number) {}

  /** redis latencyAddSampleIfNeeded: a sample of `ms` milliseconds if the monitor is on and it reaches the threshold. */
  note(event: string, ms: number): void {
    const threshold = this.threshold()
    if (threshold > 0 && ms >= threshold) this.add(event, Math.floor(ms))
  }

  /** redis latencyAddSample. */
  add(event: string, ms: number, nowSeconds = Math.floor(Date.now() / 1000)): void {
    let series = this.events.get(event)
    if (series === undefined) {
      series = { idx: 0, max: 0, times: new Int32Array(LATENCY_TS_LEN), latencies: new Uint32Array(LATENCY_TS_LEN) }
      this.events.set(event, series)
    }
    if (ms > series.max) series.max = ms
    const prev = (series.idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN
    if (series.times[prev] === nowSeconds) {
      if (ms > series.latencies[prev]!) series.latencies[prev] = ms
      return
    }
    series.times[series.idx] = nowSeconds
    series.latencies[series.idx] = ms
    series.idx = (series.idx + 1) % LATENCY_TS_LEN
  }

  /** redis latencyResetEvent: one event (its name in any case), or every event; how many were reset. */
  reset(event?: string): number {
    let resets = 0
    for (const name of [...this.events.keys()]) {
      if (event === undefined || name.toLowerCase() === event.toLowerCase()) {
        this.events.delete(name)
        resets++
      }
    }
    return resets
  }

  /** An event's series, by its exact name (redis dictFetchValue). */
  get(event: string): LatencySeries | undefined {
    return this.events.get(event)
  }

  /** Every event with a series, in the order they first had a sample. */
  entries(): IterableIterator<[string, LatencySeries]> {
    return this.events.entries()
  }

  get size(): number {
    return this.events.size
  }

  /** redis analyzeLatencyForEvent. */
  analyze(event: string, nowSeconds = Math.floor(Date.now() / 1000)): LatencyStats {
    const series = this.events.get(event)
    if (series === undefined) return { allTimeHigh: 0, avg: 0, min: 0, max: 0, mad: 0, samples: 0, period: 0 }
    let samples = 0
    let sum = 0
    let min = 0
    let max = 0
    let oldest = 0
    for (let j = 0; j < LATENCY_TS_LEN; j++) {
      const time = series.times[j]!
      if (time === 0) continue
      const latency = series.latencies[j]!
      samples++
      min = samples === 1 ? latency : Math.min(min, latency)
      max = samples === 1 ? latency : Math.max(max, latency)
      sum += latency
      if (oldest === 0 || time < oldest) oldest = time
    }
    const avg = samples === 0 ? 0 : Math.floor(sum / samples)
    const period = samples === 0 ? 0 : Math.max(1, nowSeconds - oldest)
    let deviation = 0
    for (let j = 0; j < LATENCY_TS_LEN; j++)
      if (series.times[j] !== 0) deviation += Math.abs(avg - series.latencies[j]!)
    return {
      allTimeHigh: series.max,
      avg,
      min,
      max,
      mad: samples === 0 ? 0 : Math.floor(deviation / samples),
      samples,
      period,
    }
  }
}

/** An event's samples, oldest first: [unix seconds, ms] (LATENCY HISTORY, GRAPH). */
export function latencySamples(series: LatencySeries): [number, number][] {
  const samples: [number, number][] = []
  for (let j = 0; j < LATENCY_TS_LEN; j++) {
    const i = (series.idx + j) % LATENCY_TS_LEN
    if (series.times[i] !== 0) samples.push([series.times[i]!, series.latencies[i]!])
  }
  return samples
}

/** The latest sample of an event: [unix seconds, ms] (LATENCY LATEST). */
export function latestSample(series: LatencySeries): [number, number] {
  const last = (series.idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN
  return [series.times[last]!, series.latencies[last]!]
}
