/**
 * The server figures at the top of the status page, read from INFO's own fields (as /metrics is),
 * so the page, INFO and /metrics cannot disagree: ops/s, clients, memory, filters, the last save,
 * the append-only log and replication.
 */
import type { CommandContext } from '../commands/kernel/context.js'
import { human, type InfoValue } from '../commands/admin/info.js'
import { httpRegistry, readInfo } from './metrics.js'

/** One figure: a label, its value as text, and whether it is a failure to show in colour. */
export interface Figure {
  readonly label: string
  readonly value: string
  readonly bad?: boolean
}

/** How far back the ops/s window reaches: the oldest page view kept. */
const WINDOW_MS = 60_000

/**
 * Commands per second, between page views: each view records (time, commands processed); the rate
 * is over the views of the last minute, or since the start when there is no earlier view.
 */
export class OpsMeter {
  private readonly samples: { atMs: number; commands: number }[] = []

  rate(
    nowMs: number,
    commands: number,
    startedAtMs: number,
  ): { perSecond: number; overSeconds: number; sinceStart: boolean } {
    while (this.samples.length > 0 && nowMs - this.samples[0]!.atMs > WINDOW_MS) this.samples.shift()
    const oldest = this.samples[0]
    this.samples.push({ atMs: nowMs, commands })
    if (oldest !== undefined && nowMs - oldest.atMs >= 1000) {
      const seconds = (nowMs - oldest.atMs) / 1000
      return { perSecond: (commands - oldest.commands) / seconds, overSeconds: seconds, sinceStart: false }
    }
    const seconds = Math.max((nowMs - startedAtMs) / 1000, 0.001)
    return { perSecond: commands / seconds, overSeconds: seconds, sinceStart: true }
  }
}

/** Seconds as "3d 4h", "5h 6m", "7m 8s" or "9s". */
function humanSeconds(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds))
  if (s >= 86400) return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`
  if (s >= 3600) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`
  if (s >= 60) return `${Math.floor(s / 60)}m ${s % 60}s`
  return `${s}s`
}

/** The last save: when, and how the last one went. */
function lastSave(info: Map<string, InfoValue>, nowMs: number): Figure {
  const savedAt = Number(info.get('rdb_last_save_time') ?? 0)
  const status = info.get('rdb_last_bgsave_status') ?? 'ok'
  const saves = Number(info.get('rdb_saves') ?? 0)
  const when = saves === 0 ? 'none since start' : `${humanSeconds(nowMs / 1000 - savedAt)} ago`
  const changes = info.get('rdb_changes_since_last_save') ?? '0'
  return { label: 'last save', value: `${when} (${status}), ${changes} changes since`, bad: status !== 'ok' }
}

/** The append-only log: off, or on with its size and the state of its last write. */
function appendLog(info: Map<string, InfoValue>): Figure {
  if (info.get('aof_enabled') !== 1) return { label: 'append log', value: 'off' }
  const status = info.get('aof_last_write_status') ?? 'ok'
  const size = human(Number(info.get('aof_current_size') ?? 0))
  const rewriting = info.get('aof_rewrite_in_progress') === 1 ? ', rewriting' : ''
  return { label: 'append log', value: `on, ${size}, last write ${status}${rewriting}`, bad: status !== 'ok' }
}

/** The figures, in the order the page shows them. */
export function serverFigures(ctx: CommandContext, meter: OpsMeter, nowMs = Date.now()): Figure[] {
  const info = readInfo(ctx, ['server', 'clients', 'memory', 'persistence', 'stats', 'replication'])
  const ops = meter.rate(nowMs, Number(info.get('total_commands_processed') ?? 0), ctx.server.startedAtMs)
  const window = ops.sinceStart ? 'since start' : `last ${Math.round(ops.overSeconds)}s`
  const replicas = info.get('connected_slaves') ?? '0'
  return [
    { label: 'version', value: `bfs ${info.get('bfs_version')} (redis ${info.get('redis_version')})` },
    { label: 'uptime', value: humanSeconds(Number(info.get('uptime_in_seconds') ?? 0)) },
    { label: 'ops/s', value: `${ops.perSecond.toFixed(1)} (${window})` },
    {
      label: 'clients',
      value: `${info.get('connected_clients')} RESP, ${info.get('bfs_http_connected_clients')} HTTP`,
    },
    { label: 'memory', value: `${info.get('used_memory_human')} used, ${info.get('used_memory_rss_human')} RSS` },
    {
      label: `filters in db${ctx.server.config['http-db']}`,
      value: `${httpRegistry(ctx.server).liveSize()}, ${human(Number(info.get('bfs_filter_bytes') ?? 0))} of bits`,
    },
    lastSave(info, nowMs),
    appendLog(info),
    { label: 'replication', value: `${info.get('role')}, ${replicas} replicas` },
  ]
}
