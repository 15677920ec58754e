/**
 * LATENCY LATEST / HISTORY / RESET / GRAPH / DOCTOR / HISTOGRAM / HELP, as redis 7.0 latency.c
 * answers them, over the server's {@link LatencyMonitor} (runtime/latency-monitor.ts). Events bfs
 * feeds: `event-loop` (the event loop's delay, bfs's own: server/event-loop-latency.ts),
 * `command` / `fast-command` (a read of commands that took at least the threshold: command-timer.ts),
 * `aof-write`, `aof-fsync-always` (store/append-log.ts), `expire-cycle` (server/key-expiry.ts).
 */
import type { CommandContext } from '../kernel/context.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { ReplyError, noLatencySamplesText } from '../kernel/reply-error.js'
import { latencySamples, latestSample, type LatencyMonitor, type LatencySeries } from '../../runtime/latency-monitor.js'
import { latencyReport } from './latency-doctor.js'

/** LATENCY LATEST → [event, unix time, latest ms, all-time high ms] per event */
export function latencyLatest(ctx: CommandContext): void {
  const reply = ctx.client.reply
  const monitor = ctx.server.latency
  reply.array(monitor.size)
  for (const [event, series] of monitor.entries()) {
    const [time, latency] = latestSample(series)
    reply.array(4)
    reply.bulk(event)
    reply.integer(time)
    reply.integer(latency)
    reply.integer(series.max)
  }
}

/** LATENCY HISTORY event → [unix time, ms] per sample, oldest first (none: an empty array) */
export function latencyHistory(ctx: CommandContext, argv: CommandArgs): void {
  const reply = ctx.client.reply
  const series = ctx.server.latency.get(argv.get(2).toString('latin1'))
  const samples = series === undefined ? [] : latencySamples(series)
  reply.array(samples.length)
  for (const [time, latency] of samples) {
    reply.array(2)
    reply.integer(time)
    reply.integer(latency)
  }
}

/** LATENCY RESET [event ...] → how many events were reset */
export function latencyReset(ctx: CommandContext, argv: CommandArgs): void {
  const monitor = ctx.server.latency
  let resets = 0
  if (argv.length === 2) resets = monitor.reset()
  for (let j = 2; j < argv.length; j++) resets += monitor.reset(argv.get(j).toString('latin1'))
  ctx.client.reply.integer(resets)
}

/** LATENCY DOCTOR → redis's report, word for word */
export function latencyDoctor(ctx: CommandContext): void {
  const { latency, config } = ctx.server
  ctx.client.reply.verbatim(
    latencyReport(latency, { slowlogSlowerThan: config['slowlog-log-slower-than'], appendfsync: config.appendfsync }),
  )
}

/** LATENCY GRAPH event → redis's ASCII sparkline of the event's samples */
export function latencyGraph(ctx: CommandContext, argv: CommandArgs): void {
  const event = argv.get(2).toString('latin1')
  const series = ctx.server.latency.get(event)
  // redis latency.c nodataerr.
  if (series === undefined) throw new ReplyError(noLatencySamplesText(event), 'latin1')
  ctx.client.reply.verbatim(latencyGraphText(event, series))
}

/**
 * LATENCY HISTOGRAM [command ...] → an empty map: bfs times commands per read of the socket, not
 * one by one (command-timer.ts), so it keeps no per-command histogram; redis answers the same
 * with `latency-tracking no`, which is what CONFIG GET latency-tracking says here.
 */
export function latencyHistogram(ctx: CommandContext): void {
  ctx.client.reply.map(0)
}

/** redis latency.c LATENCY_GRAPH_COLS. */
const GRAPH_COLS = 80
const GRAPH_ROWS = 4

/** redis latencyCommandGenSparkeline: the header, a rule, then the sparkline with "ago" labels. */
export function latencyGraphText(
  event: string,
  series: LatencySeries,
  nowSeconds = Math.floor(Date.now() / 1000),
): string {
  const samples = latencySamples(series)
  const values = samples.map(([, latency]) => latency)
  const labels = samples.map(([time]) => agoLabel(nowSeconds - time))
  const low = values.length === 0 ? 0 : Math.min(...values)
  const high = values.length === 0 ? 0 : Math.max(...values)
  const header = `${event} - high ${high} ms, low ${low} ms (all time high ${series.max} ms)\n${'-'.repeat(GRAPH_COLS)}\n`
  return header + sparkline(values, labels, GRAPH_COLS, GRAPH_ROWS)
}

function agoLabel(elapsed: number): string {
  if (elapsed < 60) return `${elapsed}s`
  if (elapsed < 3600) return `${Math.floor(elapsed / 60)}m`
  if (elapsed < 3600 * 24) return `${Math.floor(elapsed / 3600)}h`
  return `${Math.floor(elapsed / (3600 * 24))}d`
}

/** redis sparkline.c charset_fill (SPARKLINE_FILL, as LATENCY GRAPH draws). */
const FILL = '_o#'

/** redis sparklineRender: the sequence in chunks of `columns`, a blank line between chunks. */
export function sparkline(values: readonly number[], labels: readonly string[], columns: number, rows: number): string {
  // redis sparklineSequenceAddSample: min and max as it tracks them (`else if`: a first sample
  // below min is never also the max).
  let min = 0
  let max = 0
  values.forEach((value, i) => {
    if (i === 0) min = max = value
    else if (value < min) min = value
    else if (value > max) max = value
  })
  let output = ''
  for (let j = 0; j < values.length; j += columns) {
    if (j !== 0) output += '\n'
    output += renderRange(values, labels, min, max, rows, j, Math.min(columns, values.length - j))
  }
  return output
}

/** redis sparklineRenderRange with SPARKLINE_FILL and every sample labelled. */
function renderRange(
  values: readonly number[],
  labels: readonly string[],
  min: number,
  max: number,
  rows: number,
  offset: number,
  len: number,
): string {
  const relmax = max - min === 0 ? 1 : max - min
  const steps = FILL.length * rows
  let output = ''
  for (let row = 0; ; row++) {
    let more = false
    const chars: string[] = new Array<string>(len).fill(' ')
    for (let j = 0; j < len; j++) {
      if (row < rows) {
        // (int)(relval*steps)/relmax, as C computes it, then truncated into an int.
        let step = Math.trunc(Math.trunc((values[j + offset]! - min) * steps) / relmax)
        step = Math.min(Math.max(step, 0), steps - 1)
        const charidx = step - (rows - row - 1) * FILL.length
        more = true
        if (charidx >= 0 && charidx < FILL.length) chars[j] = FILL[charidx]!
        else if (charidx >= FILL.length) chars[j] = '|'
      } else {
        // One blank row of margin above the labels.
        if (row - rows < 1) {
          more = true
          break
        }
        const label = labels[j + offset]!
        const labelChar = row - rows - 1
        if (label.length > labelChar) {
          more = true
          chars[j] = label[labelChar]!
        }
      }
    }
    if (!more) return output
    output += chars.join('') + '\n'
  }
}

/** The latency monitor's type, for ServerContext. */
export type { LatencyMonitor }
