/**
 * The redis 7.0 INFO fields that dashboards and exporters read (oliver006/redis_exporter's
 * metric maps: docs/exporter-fields.md) and that bfs can answer truthfully, appended to their
 * sections (info.ts). Most say what bfs does not do, in redis's words: no fork (latest_fork_usec,
 * total_forks, the copy-on-write sizes: 0), no eviction (evicted_keys: 0), no Lua or functions
 * (their memory and counts: 0), no client-side caching (tracking_*: 0), no defragmentation, no
 * child processes (used_cpu_*_children: 0). The others are measured: socket
 * reads and writes, client buffers, the backlog, the log's unwritten bytes, the LRU clock, hz.
 */
import type { CommandContext } from '../kernel/context.js'

type Field = readonly [string, string | number]

/** bfs's cron frequency: redis's default hz, fixed (server.ts). */
const HZ = 10
/** redis server.h LRU_CLOCK_MAX and LRU_CLOCK_RESOLUTION (ms). */
const LRU_CLOCK_MAX = (1 << 24) - 1

export function serverExtraFields(ctx: CommandContext): Field[] {
  return [
    ['redis_git_sha1', '00000000'],
    ['redis_git_dirty', 0],
    ['redis_build_id', '0'],
    // process.hrtime / performance.now: libuv's uv_hrtime, clock_gettime(CLOCK_MONOTONIC).
    ['monotonic_clock', 'POSIX clock_gettime'],
    ['process_supervised', 'no'],
    ['hz', HZ],
    ['configured_hz', HZ],
    ['lru_clock', Math.floor(Date.now() / 1000) & LRU_CLOCK_MAX],
    ['io_threads_active', ctx.server.config['io-threads'] > 1 ? 1 : 0],
  ]
}

export function clientsExtraFields(ctx: CommandContext): Field[] {
  return [
    ['tracking_clients', 0],
    ['clients_in_timeout_table', ctx.server.masterSide.waits.timedCount],
  ]
}

export function memoryExtraFields(
  ctx: CommandContext,
  used: number,
  rss: number,
  human: (bytes: number) => string,
): Field[] {
  let normal = 0
  let replicas = 0
  for (const client of ctx.server.clients()) {
    const bytes = client.outputBytes() + client.queryBufferBytes()
    if (client.kind === 'replica') replicas += bytes
    else normal += bytes
  }
  const backlog = ctx.server.masterSide.backlog?.size ?? 0
  return [
    ['maxmemory_human', human(ctx.server.config.maxmemory)],
    ['mem_fragmentation_bytes', rss - used],
    ['mem_not_counted_for_evict', 0],
    ['mem_replication_backlog', backlog],
    ['mem_total_replication_buffers', backlog + replicas],
    ['mem_clients_slaves', replicas],
    ['mem_clients_normal', normal],
    ['mem_cluster_links', 0],
    ['mem_aof_buffer', ctx.server.persistence.appendLog.bufferedBytes],
    ['active_defrag_running', 0],
    ['used_memory_lua', 0],
    ['used_memory_vm_eval', 0],
    ['used_memory_scripts_eval', 0],
    ['number_of_cached_scripts', 0],
    ['number_of_functions', 0],
    ['number_of_libraries', 0],
    ['used_memory_vm_functions', 0],
    ['used_memory_vm_total', 0],
    ['used_memory_functions', 0],
    ['used_memory_scripts', 0],
    ['lazyfree_pending_objects', 0],
    ['lazyfreed_objects', 0],
  ]
}

export function persistenceExtraFields(ctx: CommandContext): Field[] {
  return [
    ['rdb_last_load_keys_expired', ctx.server.stats.loadKeysExpired],
    ['rdb_last_cow_size', 0],
    ['module_fork_in_progress', 0],
    ['module_fork_last_cow_size', 0],
    ['current_cow_size', 0],
    ['current_fork_perc', '0.00'],
  ]
}

export function statsExtraFields(ctx: CommandContext): Field[] {
  const stats = ctx.server.stats
  return [
    ['evicted_keys', 0],
    ['evicted_clients', 0],
    ['total_eviction_exceeded_time', 0],
    ['current_eviction_exceeded_time', 0],
    ['latest_fork_usec', 0],
    ['total_forks', 0],
    ['migrate_cached_sockets', 0],
    ['slave_expires_tracked_keys', 0],
    ['active_defrag_hits', 0],
    ['active_defrag_misses', 0],
    ['active_defrag_key_hits', 0],
    ['active_defrag_key_misses', 0],
    ['total_active_defrag_time', 0],
    ['current_active_defrag_time', 0],
    ['tracking_total_keys', 0],
    ['tracking_total_items', 0],
    ['tracking_total_prefixes', 0],
    ['unexpected_error_replies', 0],
    ['dump_payload_sanitizations', 0],
    ['total_reads_processed', stats.readsProcessed],
    ['total_writes_processed', stats.writesProcessed],
    ['io_threaded_reads_processed', stats.threadedReadsProcessed],
    ['io_threaded_writes_processed', stats.threadedWritesProcessed],
    ['reply_buffer_shrinks', 0],
    ['reply_buffer_expands', 0],
  ]
}

export function cpuExtraFields(): Field[] {
  return [
    ['used_cpu_sys_children', '0.000000'],
    ['used_cpu_user_children', '0.000000'],
  ]
}
