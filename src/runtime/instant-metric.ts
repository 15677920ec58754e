/**
 * redis 7.0 server.c trackInstantaneousMetric / getInstantaneousMetric: a counter sampled by the
 * cron every 100 ms into a ring of 16 per-second rates; the figure is their mean (integer
 * arithmetic as redis's long long). INFO's instantaneous_ops_per_sec and _kbps read it.
 */
const SAMPLES = 16

export class InstantMetric {
  private readonly samples = new Array<number>(SAMPLES).fill(0)
  private index = 0
  private lastMs: number
  private lastReading = 0

  constructor(nowMs: number) {
    this.lastMs = nowMs
  }

  /** One sample: the rate per second since the previous one. */
  track(nowMs: number, reading: number): void {
    const elapsed = nowMs - this.lastMs
    this.samples[this.index] = elapsed > 0 ? Math.trunc(((reading - this.lastReading) * 1000) / elapsed) : 0
    this.index = (this.index + 1) % SAMPLES
    this.lastMs = nowMs
    this.lastReading = reading
  }

  /** The mean of the ring, per second. */
  value(): number {
    let sum = 0
    for (const sample of this.samples) sum += sample
    return Math.trunc(sum / SAMPLES)
  }

  /** CONFIG RESETSTAT (redis resetServerStats): empty ring, counting from 0 now. */
  reset(nowMs: number): void {
    this.samples.fill(0)
    this.index = 0
    this.lastMs = nowMs
    this.lastReading = 0
  }
}
