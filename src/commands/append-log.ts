/** BGREWRITEAOF: fold the append-only log into a fresh snapshot and start an empty one. */
import type { CommandContext, ServerContext } from './context.js'
import { ReplyError } from './reply-error.js'

/** BGREWRITEAOF → +Background append only file rewriting started (redis aof.c bgrewriteaofCommand) */
export function bgrewriteaof(ctx: CommandContext): void {
  // redis 7.0: inside EXEC the rewrite is scheduled, to start once the transaction is over.
  if (ctx.server.inTransaction) {
    setImmediate(() => ctx.server.logRewriter.start())
    ctx.client.reply.simple('Background append only file rewriting scheduled')
    return
  }
  if (ctx.server.logRewriter.start() === 'in-progress') {
    throw new ReplyError('ERR Background append only file rewriting already in progress')
  }
  ctx.client.reply.simple('Background append only file rewriting started')
}

/** INFO persistence's aof_* fields, named and ordered as redis 7.0's genRedisInfoString. */
export function aofInfoFields(server: ServerContext): (readonly [string, string | number])[] {
  const { appendLog: log, logRewriter: rewriter } = server
  const enabled = server.config.appendonly && log.isOpen
  const fields: (readonly [string, string | number])[] = [
    ['aof_enabled', enabled ? 1 : 0],
    ['aof_rewrite_in_progress', rewriter.inProgress ? 1 : 0],
    ['aof_rewrite_scheduled', rewriter.baseWanted && !rewriter.inProgress ? 1 : 0],
    ['aof_last_rewrite_time_sec', rewriter.lastTimeSec],
    ['aof_current_rewrite_time_sec', rewriter.inProgress ? Math.round((Date.now() - rewriter.startedAtMs) / 1000) : -1],
    ['aof_last_bgrewrite_status', rewriter.lastStatus],
    ['aof_rewrites', rewriter.rewrites],
    ['aof_rewrites_consecutive_failures', rewriter.consecutiveFailures],
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
