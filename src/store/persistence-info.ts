/**
 * INFO persistence: redis 7.0's field names and order (rdb.c / server.c / aof.c genRedisInfoString),
 * read from the parts of persistence (persistence-parts.ts; `Persistence` in persistence.ts is one).
 */
import type { PersistenceParts } from './persistence-parts.js'

/** INFO persistence, redis 7.0's field names (rdb.c / server.c genRedisInfoString). */
export function persistenceInfo(server: PersistenceParts): [string, string | number][] {
  const store = server.snapshots
  const fields: [string, string | number][] = [
    ['loading', server.loading ? 1 : 0],
    ['async_loading', 0],
    ['rdb_changes_since_last_save', server.databases.dirty],
  ]
  const now = Date.now()
  fields.push(
    ['rdb_bgsave_in_progress', store.inProgress ? 1 : 0],
    ['rdb_last_save_time', Math.floor(store.lastSaveMs / 1000)],
    ['rdb_last_bgsave_status', store.lastBgsaveStatus],
    ['rdb_last_bgsave_time_sec', store.lastBgsaveSeconds],
    [
      'rdb_current_bgsave_time_sec',
      store.bgsaveStartedMs === undefined ? -1 : Math.floor((now - store.bgsaveStartedMs) / 1000),
    ],
    ['rdb_saves', store.saves],
    ['rdb_last_load_keys_loaded', store.lastLoad?.filters ?? 0],
    ['bfs_snapshot_bytes', store.committedBytes],
  )
  return fields
}

/** INFO persistence's aof_* fields, named and ordered as redis 7.0's genRedisInfoString. */
export function aofInfoFields(server: PersistenceParts): (readonly [string, string | number])[] {
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
