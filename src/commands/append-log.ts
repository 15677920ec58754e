/** BGREWRITEAOF: fold the append-only log into a fresh snapshot and start an empty one. */
import type { CommandContext, ServerContext } from './context.js'
import { ReplyError } from './reply-error.js'
import type { AppendLog } from '../store/append-log.js'
import type { LogRewriter } from '../store/log-rewrite.js'

/** The parts of the server the log commands and INFO read (server/server.ts provides them). */
export interface AppendLogHost {
  readonly appendLog: AppendLog
  readonly logRewriter: LogRewriter
}

/** The server's log, when it has one (a server built without the log, e.g. in a unit test, has none). */
export function appendLogHost(server: ServerContext): AppendLogHost | undefined {
  const host = server as Partial<AppendLogHost>
  return host.appendLog !== undefined && host.logRewriter !== undefined ? (host as AppendLogHost) : undefined
}

/** BGREWRITEAOF → +Background append only file rewriting started (redis aof.c bgrewriteaofCommand) */
export function bgrewriteaof(ctx: CommandContext): void {
  const host = appendLogHost(ctx.server)
  const outcome = host?.logRewriter.start() ?? 'unavailable'
  if (outcome === 'in-progress') throw new ReplyError('ERR Background append only file rewriting already in progress')
  if (outcome === 'unavailable') throw new ReplyError('ERR Background append only file rewriting needs the snapshot layer, which this server has not got')
  ctx.client.reply.simple('Background append only file rewriting started')
}

/** INFO persistence's aof_* fields, named and ordered as redis 7.0's genRedisInfoString. */
export function aofInfoFields(server: ServerContext): (readonly [string, string | number])[] {
  const host = appendLogHost(server)
  if (host === undefined) return [['aof_enabled', 0]]
  const { appendLog: log, logRewriter: rewriter } = host
  const enabled = server.config.appendonly && log.isOpen
  const fields: (readonly [string, string | number])[] = [
    ['aof_enabled', enabled ? 1 : 0],
    ['aof_rewrite_in_progress', rewriter.inProgress ? 1 : 0],
    ['aof_rewrite_scheduled', 0],
    ['aof_last_rewrite_time_sec', rewriter.lastTimeSec],
    ['aof_current_rewrite_time_sec', rewriter.inProgress ? Math.round((Date.now() - rewriter.startedAtMs) / 1000) : -1],
    ['aof_last_bgrewrite_status', rewriter.lastStatus],
    ['aof_rewrites', rewriter.rewrites],
    ['aof_last_write_status', log.lastWriteOk && log.lastFsyncOk ? 'ok' : 'err'],
    ['aof_last_cow_size', 0],
  ]
  if (enabled) {
    fields.push(
      ['aof_current_size', log.currentSizeBytes],
      ['aof_base_size', rewriter.baseSizeBytes],
      ['aof_pending_rewrite', 0],
      ['aof_buffer_length', log.bufferedBytes],
      ['aof_pending_bio_fsync', log.writtenBytes > log.syncedBytes ? 1 : 0],
      ['aof_delayed_fsync', log.delayedFsyncs],
    )
  }
  return fields
}
