/**
 * INFO, in redis 7.0's shape (genRedisInfoString): "# Section" headers, `field:value` lines,
 * CRLF line ends, sections separated by a blank line.
 */
import os from 'node:os'
import type { CommandContext } from '../kernel/context.js'
import { BFS_VERSION, REDIS_VERSION } from '../../runtime/version.js'
import { MODULE_NAME, MODULE_VERSION } from '../kernel/modules.js'
import { replicationInfo } from '../../replication/replication-info.js'
import { replicaInfoFields } from '../../replication/replica-info.js'
import { entryRows } from '../kernel/table.js'
import { arenaMemory, probeArenaMemory } from '../../core/arena.js'
import {
  clientsExtraFields,
  cpuExtraFields,
  memoryExtraFields,
  persistenceExtraFields,
  serverExtraFields,
  statsExtraFields,
} from './info-exporter-fields.js'

/** `key=value` pairs, printed joined by commas (`keys=1,expires=0,avg_ttl=0`). */
export type InfoPairs = readonly (readonly [string, string | number])[]
/** A field's value as INFO holds it: text, a number, or pairs. */
export type InfoValue = string | number | InfoPairs
type Field = readonly [string, InfoValue]
type Section = (ctx: CommandContext) => Field[]

/** One section of INFO: its name (`cpu`), its title (`CPU`) and its fields in order. */
export interface InfoSection {
  readonly name: string
  readonly title: string
  readonly fields: readonly Field[]
}

const SECTIONS: Record<string, Section> = {
  server: (ctx) => {
    const uptimeSeconds = Math.floor((Date.now() - ctx.server.startedAtMs) / 1000)
    return [
      ['redis_version', REDIS_VERSION],
      ['bfs_version', BFS_VERSION],
      ['redis_mode', ctx.server.cluster === undefined ? 'standalone' : 'cluster'],
      ['os', `${os.type()} ${os.release()} ${os.arch()}`],
      ['arch_bits', 64],
      ['multiplexing_api', 'epoll'],
      ['node_version', process.versions.node],
      ['process_id', process.pid],
      ['run_id', ctx.server.runId],
      ['tcp_port', ctx.server.port],
      ['server_time_usec', Date.now() * 1000],
      ['uptime_in_seconds', uptimeSeconds],
      ['uptime_in_days', Math.floor(uptimeSeconds / 86400)],
      ['executable', process.argv[1] ?? ''],
      ['config_file', ctx.server.configFile],
      ...serverExtraFields(ctx),
    ]
  },
  clients: (ctx) => {
    let count = 0
    let biggestInput = 0
    let biggestOutput = 0
    for (const client of ctx.server.clients()) {
      count++
      biggestInput = Math.max(biggestInput, client.queryBufferBytes())
      biggestOutput = Math.max(biggestOutput, client.outputBytes())
    }
    return [
      ['connected_clients', count],
      ['bfs_http_connected_clients', ctx.server.httpClientCount ?? 0],
      ['bfs_tls_handshakes', ctx.server.tlsHandshakes ?? 0],
      ['maxclients', ctx.server.config.maxclients],
      ['client_recent_max_input_buffer', biggestInput],
      ['client_recent_max_output_buffer', biggestOutput],
      ['blocked_clients', ctx.server.masterSide.waits.size + ctx.server.pause.postponedCount],
      ...clientsExtraFields(ctx),
    ]
  },
  memory: (ctx) => {
    const usage = process.memoryUsage()
    const filterBytes = ctx.server.databases.bitmapBytes()
    const used = usedMemory(usage)
    const stats = ctx.server.stats
    stats.notePeak(used)
    return [
      ['used_memory', used],
      ['used_memory_human', human(used)],
      ['used_memory_rss', usage.rss],
      ['used_memory_rss_human', human(usage.rss)],
      ['used_memory_peak', stats.peakMemory],
      ['used_memory_peak_human', human(stats.peakMemory)],
      ['used_memory_peak_perc', `${((used * 100) / stats.peakMemory).toFixed(2)}%`],
      ['used_memory_dataset', filterBytes],
      ['bfs_filter_bytes', filterBytes],
      ['total_system_memory', os.totalmem()],
      ['total_system_memory_human', human(os.totalmem())],
      ['maxmemory', ctx.server.config.maxmemory],
      ['maxmemory_policy', 'noeviction'],
      // redis: rss over used memory, "%.2f".
      ['mem_fragmentation_ratio', (usage.rss / used).toFixed(2)],
      ...memoryExtraFields(ctx, used, usage.rss, human),
    ]
  },
  // loading, the rdb_* fields, then the aof_* block (store/persistence-info.ts).
  persistence: (ctx) => [...ctx.server.persistence.infoFields(), ...persistenceExtraFields(ctx)],
  stats: (ctx) => {
    const stats = ctx.server.stats
    return [
      ['total_connections_received', stats.connectionsReceived],
      ['total_commands_processed', stats.commandsProcessed],
      ['instantaneous_ops_per_sec', stats.opsPerSecond.value()],
      ['total_net_input_bytes', stats.netInputBytes],
      ['total_net_output_bytes', stats.netOutputBytes],
      ['instantaneous_input_kbps', (stats.inputPerSecond.value() / 1024).toFixed(2)],
      ['instantaneous_output_kbps', (stats.outputPerSecond.value() / 1024).toFixed(2)],
      ['rejected_connections', stats.rejectedConnections],
      ['sync_full', stats.syncFull],
      ['sync_partial_ok', stats.syncPartialOk],
      ['sync_partial_err', stats.syncPartialErr],
      ['expired_keys', stats.expiredKeys],
      ['expired_stale_perc', (stats.expiredStalePerc * 100).toFixed(2)],
      ['expired_time_cap_reached_count', stats.expiredTimeCapReached],
      ['expire_cycle_cpu_milliseconds', Math.floor(stats.expireCycleMicros / 1000)],
      ['keyspace_hits', stats.keyspaceHits],
      ['keyspace_misses', stats.keyspaceMisses],
      ['pubsub_channels', ctx.server.pubsub.count('channels')],
      ['pubsub_patterns', ctx.server.pubsub.count('patterns')],
      ['pubsubshard_channels', ctx.server.pubsub.count('shardChannels')],
      ['total_error_replies', stats.errorReplies],
      ['bfs_total_http_requests', stats.httpRequests],
      ['bfs_io_threaded_commands_processed', stats.threadedCommandsProcessed],
      ...statsExtraFields(ctx),
    ]
  },
  // The replica's block (replication/replica-info.ts) follows role:slave.
  replication: (ctx) =>
    replicationInfo(ctx.server.replication, ctx.server.masterSide, ctx.server.config, () =>
      replicaInfoFields(ctx.server.replicaLink, ctx.server.config, Date.now()),
    ),
  cpu: () => {
    const usage = process.cpuUsage()
    return [
      ['used_cpu_sys', (usage.system / 1e6).toFixed(6)],
      ['used_cpu_user', (usage.user / 1e6).toFixed(6)],
      ...cpuExtraFields(),
    ]
  },
  modules: () => [
    [
      'module',
      [
        ['name', MODULE_NAME],
        ['ver', MODULE_VERSION],
        ['api', 1],
        ['filters', 0],
        ['usedby', '[]'],
        ['using', '[]'],
        ['options', '[]'],
      ],
    ],
  ],
  commandstats: (ctx) => {
    const fields: Field[] = []
    for (const entry of ctx.server.commands) {
      // A container's subcommands one by one, as redis 7.0 (cmdstat_config|get); the container
      // itself when it ran alone (COMMAND). Timed as commands/state/command-timer.ts says.
      for (const row of entryRows(entry)) {
        const { calls, micros, rejectedCalls, failedCalls } = row.counts
        if (calls + rejectedCalls === 0) continue
        const perCall = calls === 0 ? 0 : micros / calls
        fields.push([
          `cmdstat_${row.fullName}`,
          [
            ['calls', calls],
            ['usec', Math.floor(micros)],
            ['usec_per_call', perCall.toFixed(2)],
            ['rejected_calls', rejectedCalls],
            ['failed_calls', failedCalls],
          ],
        ])
      }
    }
    return fields
  },
  // redis 7.0 genRedisInfoString: the error codes in the order of their bytes (its rax).
  errorstats: (ctx) =>
    [...ctx.server.stats.errorCodes]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([code, count]): Field => [`errorstat_${code}`, [['count', count]]]),
  // redis 7.0 genRedisInfoString: `# Cluster` (read by redis-cli --cluster to tell a cluster node).
  cluster: (ctx) => [['cluster_enabled', ctx.server.cluster === undefined ? 0 : 1]],
  // redis 7.0 genRedisInfoString: a line per database holding keys, by index.
  keyspace: (ctx) =>
    ctx.server.databases.made().flatMap((registry): Field[] => {
      const { keys, expires, avgTtlMs } = registry.keyspaceFigures()
      return keys > 0
        ? [
            [
              `db${registry.index}`,
              [
                ['keys', keys],
                ['expires', expires],
                ['avg_ttl', avgTtlMs],
              ],
            ],
          ]
        : []
    }),
}

const DEFAULT_SECTIONS = [
  'server',
  'clients',
  'memory',
  'persistence',
  'stats',
  'replication',
  'cpu',
  'modules',
  'errorstats',
  'cluster',
  'keyspace',
]
const ALL_SECTIONS = Object.keys(SECTIONS)

/** The requested sections (none: the default ones), in INFO's order. */
export function infoSections(ctx: CommandContext, requested: readonly string[]): InfoSection[] {
  ctx.server.threadPlane?.fold()
  return sectionNames(requested).map((name) => {
    const title = name.charAt(0).toUpperCase() + name.slice(1)
    return { name, title: title === 'Cpu' ? 'CPU' : title, fields: SECTIONS[name]!(ctx) }
  })
}

/** A value as INFO prints it. */
export function infoValueText(value: InfoValue): string {
  if (typeof value !== 'object') return String(value)
  return value.map(([key, part]) => `${key}=${part}`).join(',')
}

/** The INFO text for the requested section names (none: the default sections). */
export function infoText(ctx: CommandContext, requested: readonly string[]): string {
  const blocks: string[] = []
  for (const { title, fields } of infoSections(ctx, requested)) {
    const lines = [`# ${title}`]
    for (const [key, value] of fields) lines.push(`${key}:${infoValueText(value)}`)
    blocks.push(lines.join('\r\n') + '\r\n')
  }
  return blocks.join('\r\n')
}

/**
 * The fields INFO `requested` shows, as values (in-process readers: /metrics, the status page);
 * a field of a later section wins.
 */
export function infoFields(ctx: CommandContext, requested: readonly string[]): Map<string, InfoValue> {
  const fields = new Map<string, InfoValue>()
  for (const section of infoSections(ctx, requested)) {
    for (const [key, value] of section.fields) fields.set(key, value)
  }
  return fields
}

function sectionNames(requested: readonly string[]): readonly string[] {
  if (requested.length === 0 || requested.includes('default')) return DEFAULT_SECTIONS
  if (requested.includes('all') || requested.includes('everything')) return ALL_SECTIONS
  return ALL_SECTIONS.filter((name) => requested.includes(name))
}

/**
 * Memory in use as INFO's used_memory counts it: the JS heap in use, plus memory outside it
 * (Buffers, filters), with the arenas (core/arena.ts) at what they hand out (live bitmaps and
 * their scratch areas) instead of their whole size, which the engine counts from their creation.
 */
export function usedMemory(usage: NodeJS.MemoryUsage = process.memoryUsage()): number {
  const arenas = arenaMemory()
  let used = usage.heapUsed + usage.external + usage.arrayBuffers + arenas.used
  if (arenas.reserved > 0 && arenasCountedAsExternal()) used -= arenas.reserved
  return Math.max(used, usage.heapUsed)
}

/** Whether the engine counts an arena's memory in `external`: measured once. */
let countedAsExternal: boolean | undefined

/** Whether a 4 MiB memory of the arenas' kind raised `external` by at least half its size. */
function arenasCountedAsExternal(): boolean {
  if (countedAsExternal === undefined) {
    try {
      const before = process.memoryUsage().external
      const probe = probeArenaMemory()
      countedAsExternal = probe !== undefined && process.memoryUsage().external - before >= 2 * 1024 * 1024
    } catch {
      countedAsExternal = false // the engine makes no such memory: there is no arena either
    }
  }
  return countedAsExternal
}

/** Bytes as redis's bytesToHuman writes them: 512B, 1.50K, 2.00M. */
export function human(bytes: number): string {
  const units = ['B', 'K', 'M', 'G', 'T']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${bytes}B` : `${value.toFixed(2)}${units[unit]}`
}
