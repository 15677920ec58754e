/**
 * The redis 7.0.15 directives bfs accepts in a config file (or as flags) without acting on them,
 * so that a stock redis.conf starts bfs: each group says why bfs has no use for it, and the start
 * logs one warning line naming those a file set (ignoredWarning). A value that asks for what bfs
 * cannot give (eviction, syslog, keyspace events, a module) is refused instead: a server
 * that quietly did less than its file asked would fail later and further from the cause.
 */
import { ConfigError } from './config-values.js'

interface IgnoredGroup {
  /** Why bfs ignores them, in the warning's parentheses. */
  readonly reason: string
  readonly names: readonly string[]
}

const GROUPS: readonly IgnoredGroup[] = [
  {
    reason: "Redis's own files and encodings: bfs keeps its own layout in dir",
    names: [
      'dbfilename',
      'appenddirname',
      'rdbcompression',
      'rdbchecksum',
      'aof-use-rdb-preamble',
      'aof-timestamp-enabled',
      'rdb-del-sync-files',
      'aof-rewrite-incremental-fsync',
      'rdb-save-incremental-fsync',
      'aof-disable-auto-gc',
      'no-appendfsync-on-rewrite',
      'sanitize-dump-payload',
    ],
  },
  {
    reason: 'encodings of data types bfs does not have',
    names: [
      'hash-max-listpack-entries',
      'hash-max-listpack-value',
      'hash-max-ziplist-entries',
      'hash-max-ziplist-value',
      'list-max-listpack-size',
      'list-max-ziplist-size',
      'list-compress-depth',
      'set-max-intset-entries',
      'zset-max-listpack-entries',
      'zset-max-listpack-value',
      'zset-max-ziplist-entries',
      'zset-max-ziplist-value',
      'hll-sparse-max-bytes',
      'stream-node-max-bytes',
      'stream-node-max-entries',
    ],
  },
  {
    reason:
      "Redis's allocator, defragmentation, lazy freeing and eviction sampling: Node manages bfs's memory, and bfs never evicts",
    names: [
      'activedefrag',
      'active-defrag-cycle-max',
      'active-defrag-cycle-min',
      'active-defrag-ignore-bytes',
      'active-defrag-max-scan-fields',
      'active-defrag-threshold-lower',
      'active-defrag-threshold-upper',
      'activerehashing',
      'jemalloc-bg-thread',
      'disable-thp',
      'lazyfree-lazy-eviction',
      'lazyfree-lazy-expire',
      'lazyfree-lazy-server-del',
      'lazyfree-lazy-user-del',
      'lazyfree-lazy-user-flush',
      'replica-lazy-flush',
      'slave-lazy-flush',
      'maxmemory-samples',
      'maxmemory-eviction-tenacity',
      'maxmemory-clients',
      'lfu-log-factor',
      'lfu-decay-time',
      'tracking-table-max-keys',
      'replica-ignore-maxmemory',
      'slave-ignore-maxmemory',
    ],
  },
  {
    reason: 'process tuning of redis-server: bfs runs a fixed 10 Hz cron and a 4096 listen backlog',
    names: [
      'hz',
      'dynamic-hz',
      'tcp-backlog',
      'oom-score-adj',
      'oom-score-adj-values',
      'server_cpulist',
      'bio_cpulist',
      'aof_rewrite_cpulist',
      'bgsave_cpulist',
      'set-proc-title',
      'proc-title-template',
      'socket-mark-id',
      'bind-source-addr',
      'shutdown-timeout',
    ],
  },
  {
    reason: "redis-server's logo, crash report and syslog naming",
    names: [
      'always-show-logo',
      'crash-log-enabled',
      'crash-memcheck-enabled',
      'syslog-enabled',
      'syslog-ident',
      'syslog-facility',
    ],
  },
  {
    reason: 'scripting, modules, protected configs, latency histograms and warnings bfs does not have',
    names: [
      'lua-time-limit',
      'busy-reply-threshold',
      'enable-protected-configs',
      'enable-module-command',
      'latency-tracking',
      'latency-tracking-info-percentiles',
      'ignore-warnings',
      'notify-keyspace-events',
      'maxmemory-policy',
      'shutdown-on-sigint',
      'shutdown-on-sigterm',
    ],
  },
  {
    reason: "replication and cluster tuning for Redis's own sync and cluster bus",
    names: [
      'repl-diskless-load',
      'repl-diskless-sync-max-replicas',
      'repl-disable-tcp-nodelay',
      'propagation-error-behavior',
      'replica-ignore-disk-write-errors',
      'cluster-allow-pubsubshard-when-down',
      'cluster-allow-replica-migration',
      'cluster-announce-hostname',
      'cluster-link-sendbuf-limit',
      'cluster-migration-barrier',
      'cluster-port',
      'cluster-preferred-endpoint-type',
      'cluster-replica-no-failover',
      'cluster-slave-no-failover',
      'cluster-replica-validity-factor',
      'cluster-slave-validity-factor',
    ],
  },
]

const GROUP_OF = new Map<string, IgnoredGroup>(
  GROUPS.flatMap((group) => group.names.map((name) => [name, group] as const)),
)

/**
 * The values bfs refuses: the value a directive must have (any case; a missing or "" value passes
 * too) and why bfs cannot honour another.
 */
const REFUSED: ReadonlyMap<string, { readonly allowed: readonly string[]; readonly why: string }> = new Map([
  ['maxmemory-policy', { allowed: ['noeviction'], why: 'bfs never evicts keys: past maxmemory, writes get -OOM' }],
  [
    'syslog-enabled',
    { allowed: ['no'], why: 'bfs cannot log to syslog: use logfile, or standard output under systemd' },
  ],
  ['notify-keyspace-events', { allowed: [''], why: 'bfs publishes no keyspace notifications' }],
  [
    'shutdown-on-sigterm',
    {
      allowed: ['default'],
      why: "bfs shuts down on SIGTERM as redis's default does (a final save when save rules are set)",
    },
  ],
  [
    'shutdown-on-sigint',
    {
      allowed: ['default'],
      why: "bfs shuts down on SIGINT as redis's default does (a final save when save rules are set)",
    },
  ],
])

/** Directives a file may hold that bfs cannot honour at all. */
const NEVER: ReadonlyMap<string, string> = new Map([
  ['loadmodule', 'bfs cannot load Redis modules (its Bloom filter commands are built in)'],
])

/** Whether `name` (lower case) is a redis directive bfs accepts and ignores (CONFIG REWRITE keeps its lines as they are). */
export function isIgnoredDirective(name: string): boolean {
  return GROUP_OF.has(name)
}

/**
 * Whether bfs accepts `name` as a directive it ignores; throws ConfigError when its value asks for
 * what bfs cannot give.
 */
export function acceptIgnored(name: string, args: readonly string[]): boolean {
  const never = NEVER.get(name)
  if (never !== undefined) throw new ConfigError(`'${name}' is not supported: ${never}`)
  if (!GROUP_OF.has(name)) return false
  const refusal = REFUSED.get(name)
  const value = args.join(' ').toLowerCase()
  if (refusal !== undefined && value !== '' && !refusal.allowed.includes(value)) {
    throw new ConfigError(`'${name} ${args.join(' ')}' cannot be honoured: ${refusal.why}`)
  }
  return true
}

/** The one start-up warning naming the ignored directives a configuration set, grouped with why; undefined if none. */
export function ignoredWarning(names: readonly string[]): string | undefined {
  const seen = new Set(names)
  if (seen.size === 0) return undefined
  const parts = GROUPS.flatMap((group) => {
    const here = group.names.filter((name) => seen.has(name))
    return here.length === 0 ? [] : [`${here.join(', ')} (${group.reason})`]
  })
  return `Ignoring redis.conf directives bfs has no use for: ${parts.join('; ')}`
}
