/**
 * Configuration: every key with its default, unit and bounds in one table. bfs.conf is parsed
 * redis.conf style (`key value`, # comments, quoted values), then `--key value` flags override it
 * (config-load.ts, which reads through this table). CONFIG GET/SET read and write the same table.
 */
import { CLUSTER_CONFIG_ROWS, type ClusterConfig } from './config-cluster.js'
import { PROCESS_CONFIG_ROWS, type ProcessConfig } from './config-process.js'
import { TLS_CONFIG_ROWS, type TlsConfig } from './config-tls.js'
import type { ConfigKind, ConfigRow } from './config-row.js'

export type { ConfigRow, ConfigUnit } from './config-row.js'
export {
  ConfigError,
  MAX_PORT,
  MAX_SECONDS,
  MIN_PORT,
  type OutputBufferLimit,
  type OutputBufferLimits,
  type RenameRule,
} from './config-values.js'
import {
  ConfigError,
  INT64_MAX,
  INTEGER,
  MAX_PORT,
  MAX_SECONDS,
  MIN_PORT,
  checkRange,
  parseMemory,
  parseOutputBufferLimits,
  parseRenameRule,
  parseReplicaof,
  parseSaveRules,
  type OutputBufferLimit,
  type OutputBufferLimits,
  type RenameRule,
} from './config-values.js'

export type LogLevel = 'debug' | 'verbose' | 'notice' | 'warning'

/**
 * `max-filter-bytes` by default: 16 GiB. It takes the filters people reserve large on purpose (a
 * crawler's seen-set of 10^10 URLs at 1 % is 11.2 GiB, 5·10^9 at 0.1 % 8.4 GiB) and refuses a
 * capacity mistyped by a digit or more beyond them (10^11 at 1 % is 112 GiB), which would
 * otherwise be reserved and then take the machine's memory as adds touch its pages. RedisBloom
 * 2.4 has no limit; RedisBloom 8 refuses a capacity over 2^30 (1.2 GiB at 1 %).
 */
export const DEFAULT_MAX_FILTER_BYTES = 16 * 1024 * 1024 * 1024

/** The whole configuration, keyed by the names bfs.conf and CONFIG GET use. */
export interface Config extends ClusterConfig, ProcessConfig, TlsConfig {
  port: number
  bind: string
  dir: string
  maxclients: number
  /** How many databases SELECT chooses from, 0 to databases - 1 (redis `databases`; start-time only). */
  databases: number
  /** Seconds a client may stay idle before it is closed; 0 = never (redis `timeout`). */
  timeout: number
  /** Seconds between TCP keep-alive probes on client sockets; 0 = off (redis `tcp-keepalive`). */
  'tcp-keepalive': number
  /** Bytes a client may hold in an unfinished command before it is closed (redis `client-query-buffer-limit`). */
  'client-query-buffer-limit': number
  /** Largest bulk argument a client may send (redis `proto-max-bulk-len`); MIGRATE streams a larger filter in parts. */
  'proto-max-bulk-len': number
  /**
   * Unsent replies a client may hold before it is closed, per client class as redis.conf writes
   * them (`normal|replica|pubsub <hard> <soft> <soft-seconds>`; a client's class is its redis
   * getClientType). 0 = no limit.
   */
  'client-output-buffer-limit': OutputBufferLimits
  /** Bytes of filter memory (all bitmaps); commands that would grow past it get -OOM. 0 = no limit. */
  maxmemory: number
  /** `rename-command NAME NEWNAME` rules in the order given; NEWNAME '' disables the command. */
  'rename-command': readonly RenameRule[]
  'default-error-rate': number
  'default-capacity': number
  'default-expansion': number
  /** Largest single filter in bytes (all layers); 0 = no limit. */
  'max-filter-bytes': number
  loglevel: LogLevel
  /** Log file path; '' logs to standard output. */
  logfile: string
  /** Microseconds a command must take to enter the SLOWLOG; -1 = off, 0 = every command (redis `slowlog-log-slower-than`). */
  'slowlog-log-slower-than': number
  /** Most SLOWLOG entries kept (redis `slowlog-max-len`). */
  'slowlog-max-len': number
  /** Milliseconds an event must take to be a LATENCY sample; 0 = off (redis `latency-monitor-threshold`). */
  'latency-monitor-threshold': number
  /** Who may run DEBUG: 'no' (redis 7.0's default), 'yes', or 'local' (loopback connections) (redis `enable-debug-command`). */
  'enable-debug-command': 'no' | 'yes' | 'local'
  requirepass: string
  /** Snapshot rules as redis.conf writes them: "3600 1 300 100 60 10000", or "" for none. */
  save: string
  /** A snapshot file that fails to load at start: 'refuse' to start (as redis with a bad RDB) or 'move-aside' and go on without it. */
  'snapshot-on-corrupt': 'refuse' | 'move-aside'
  /** While the last background save failed and save rules are set, refuse writes with -MISCONF (redis). */
  'stop-writes-on-bgsave-error': boolean
  appendonly: boolean
  appendfsync: 'always' | 'everysec' | 'no'
  /** Prefix of the log's segment files in `dir`: <appendfilename>.<seq>.incr.aof. */
  appendfilename: string
  /** Load a log whose last record was cut short (a crash mid-write), with a warning. */
  'aof-load-truncated': boolean
  /** Load a log damaged in the middle up to the damage, with a warning, instead of refusing to start. */
  'aof-load-corrupt': boolean
  /** Rewrite when the log has grown by this many percent over its size after the last rewrite; 0 = never. */
  'auto-aof-rewrite-percentage': number
  /** ... and is at least this many bytes. */
  'auto-aof-rewrite-min-size': number
  /** HTTP listener port (the original API, /healthz, /metrics): 0 = off, -1 = any free port. */
  'http-port': number
  /** HTTP listen address(es); '' = the same as `bind`. */
  'http-bind': string
  /** The HTTP port serves HTTPS, with tls-cert-file and tls-key-file (no client certificate asked: HTTP Basic is its authentication). */
  'http-tls': boolean
  /** The filter GET /add= and /contain= act on. */
  'http-filter': string
  /** The database the HTTP API (/add=, /contain=, /filters, the status page, /metrics' filters) uses. */
  'http-db': number
  /** Longest request target (path and query) in bytes; longer → 414. */
  'http-max-url-bytes': number
  /** Largest request head (request line and headers) in bytes; larger → 431 or 414. */
  'http-max-header-bytes': number
  /** Milliseconds a client has to send a whole request head (slowloris guard). */
  'http-headers-timeout-ms': number
  /** Milliseconds an idle keep-alive connection stays open. */
  'http-keepalive-timeout-ms': number
  /** Most simultaneous HTTP connections. */
  'http-maxclients': number
  /** Filters whose item count /metrics lists (the largest by items); 0 = none. */
  'metrics-top-filters': number
  /** The master this node replicates, "host port", or '' for none (a master); REPLICAOF changes it. */
  replicaof: string
  /** Password (and user) a replica AUTHs with at its master. */
  masterauth: string
  masteruser: string
  /** A replica refuses writes from its clients (-READONLY). */
  'replica-read-only': boolean
  /** A replica whose link is down still answers reads (no: -MASTERDOWN). */
  'replica-serve-stale-data': boolean
  /** Bytes of the replication stream kept for partial resyncs. */
  'repl-backlog-size': number
  /** Seconds without replicas before the backlog is freed; 0 = never. */
  'repl-backlog-ttl': number
  /** Full syncs stream the snapshot straight to the socket ($EOF: form) instead of a disk file first. */
  'repl-diskless-sync': boolean
  /** Seconds a diskless full sync waits for more replicas to share it. */
  'repl-diskless-sync-delay': number
  /** Seconds between the master's pings on the replication stream. */
  'repl-ping-replica-period': number
  /** Seconds of silence after which a replication link is dropped. */
  'repl-timeout': number
  /** Writes are refused (-NOREPLICAS) with fewer than this many replicas lagging at most min-replicas-max-lag; 0 = off. */
  'min-replicas-to-write': number
  'min-replicas-max-lag': number
  /** Sentinel's promotion order: lower first; 0 = never promote this replica. */
  'replica-priority': number
  /** The address a replica tells its master (REPLCONF ip-address / listening-port); ''/0 = its own. */
  'replica-announce-ip': string
  'replica-announce-port': number
  /** Whether Sentinel lists this replica. */
  'replica-announced': boolean
  /** redis active-expire-effort: 1 (default) to 10, more CPU for fewer expired keys held. */
  'active-expire-effort': number
  /** The ACL users' file (ACL LOAD, ACL SAVE); '' for none (users then come from `user` lines). */
  aclfile: string
  /** Most ACL LOG entries kept. */
  'acllog-max-len': number
  /** The channels a new user may use: 'allchannels' (&*) or 'resetchannels' (none), as redis 7.0. */
  'acl-pubsub-default': string
  /** `user <name> <rule> ...` lines of the config file, each as its words (file or flags only, as in Redis). */
  user: readonly (readonly string[])[]
}

/** A configuration key, as bfs.conf and CONFIG GET/SET name it. */
export type ConfigKey = keyof Config

/** One key's row with its name: how its value is parsed, its default and unit, whether it is live, its doc line. */
export interface ConfigKeySpec<K extends ConfigKey = ConfigKey> extends ConfigRow<Config[K]> {
  readonly name: K
}

export const DEFAULT_MAXCLIENTS = 10_000
export const MAX_MAXCLIENTS = 1_000_000
export const DEFAULT_TCP_KEEPALIVE_SECONDS = 300
/** redis: client-query-buffer-limit 1gb by default, at least 1mb. */
export const DEFAULT_QUERY_BUFFER_LIMIT_BYTES = 1024 ** 3
export const MIN_QUERY_BUFFER_LIMIT_BYTES = 1024 ** 2
/** A hard limit on unsent replies (redis's normal class has none; pausing reads bounds a pipeliner). */
export const DEFAULT_OUTPUT_BUFFER_LIMIT_BYTES = 256 * 1024 ** 2
/** bfs's normal class, and redis 7.0's defaults for the two others. */
export const DEFAULT_OUTPUT_BUFFER_LIMITS: OutputBufferLimits = Object.freeze({
  normal: Object.freeze({ hard: DEFAULT_OUTPUT_BUFFER_LIMIT_BYTES, soft: 0, softSeconds: 0 }),
  replica: Object.freeze({ hard: 256 * 1024 ** 2, soft: 64 * 1024 ** 2, softSeconds: 60 }),
  pubsub: Object.freeze({ hard: 32 * 1024 ** 2, soft: 8 * 1024 ** 2, softSeconds: 60 }),
})
/** redis config.c: databases is 1..INT_MAX. */
export const MAX_DATABASES = 2_147_483_647
/** http-port -1: listen on any free port (tests); 0 leaves HTTP off. */
export const HTTP_PORT_ANY = -1
export const DEFAULT_HTTP_MAX_URL_BYTES = 8 * 1024
export const MIN_HTTP_MAX_URL_BYTES = 64
export const DEFAULT_HTTP_MAX_HEADER_BYTES = 16 * 1024
export const MIN_HTTP_MAX_HEADER_BYTES = 1024
export const MAX_HTTP_MAX_HEADER_BYTES = 1024 * 1024
export const MAX_METRICS_TOP_FILTERS = 10_000

/** No `rename-command` rules: every command keeps its name. */
const NO_RENAMES: readonly RenameRule[] = Object.freeze([])
/** No `user` lines. */
const NO_USERS: readonly (readonly string[])[] = Object.freeze([])

/** Keys only a file or flags set, repeatable, and not CONFIG GET keys (as in redis). */
export const isFileOnly = (spec: ConfigKeySpec): boolean => spec.kind.type === 'rename' || spec.kind.type === 'user'

/**
 * One row per key: its parser (kind), default, unit, whether CONFIG SET may change it, and its doc
 * line, in bfs.conf.example's order (`rename-command`, not a CONFIG GET key, last). The parser,
 * CONFIG GET/SET, DEFAULT_CONFIG and the checks of docs/reference/configuration.md and bfs.conf.example all read these rows.
 * `satisfies` makes the compiler hold every key of Config to exactly one row whose default has
 * that key's type, and no row to a key Config lacks.
 */
const ROWS = {
  port: {
    kind: { type: 'integer', min: MIN_PORT, max: MAX_PORT },
    default: 6381,
    mutable: false,
    description: 'TCP port (0 = any free port)',
  },
  bind: {
    kind: { type: 'string', words: true },
    default: '127.0.0.1',
    mutable: false,
    description:
      'address(es) to listen on, space separated; `-` before one: skipped if the machine lacks it, `*` all IPv4, `::*` all IPv6 (as Redis)',
  },
  ...TLS_CONFIG_ROWS,
  ...PROCESS_CONFIG_ROWS,
  dir: {
    kind: { type: 'string' },
    default: './data',
    mutable: false,
    description: 'data directory, created if missing',
  },
  databases: {
    kind: { type: 'integer', min: 1, max: MAX_DATABASES },
    default: 16,
    mutable: false,
    description: 'how many databases SELECT chooses from (0 to databases - 1)',
  },
  maxclients: {
    kind: { type: 'integer', min: 1, max: MAX_MAXCLIENTS },
    default: DEFAULT_MAXCLIENTS,
    mutable: true,
    description: 'most simultaneous clients',
  },
  timeout: {
    kind: { type: 'integer', min: 0, max: MAX_SECONDS },
    default: 0,
    unit: 'seconds',
    mutable: true,
    description: 'seconds before an idle client is closed, 0 = never',
  },
  'tcp-keepalive': {
    kind: { type: 'integer', min: 0, max: MAX_SECONDS },
    default: DEFAULT_TCP_KEEPALIVE_SECONDS,
    unit: 'seconds',
    mutable: true,
    description: 'seconds between TCP keep-alive probes, 0 = off',
  },
  'client-query-buffer-limit': {
    kind: { type: 'bytes', min: MIN_QUERY_BUFFER_LIMIT_BYTES, max: Number.MAX_SAFE_INTEGER },
    default: DEFAULT_QUERY_BUFFER_LIMIT_BYTES,
    unit: 'bytes',
    mutable: true,
    description: 'bytes of an unfinished command before the client is closed',
  },
  'proto-max-bulk-len': {
    kind: { type: 'bytes', min: 1024 ** 2, max: 512 * 1024 ** 2 },
    default: 512 * 1024 ** 2,
    unit: 'bytes',
    mutable: true,
    description:
      'bytes of the largest bulk argument a client may send (new connections); MIGRATE sends a larger filter in parts',
  },
  'client-output-buffer-limit': {
    kind: { type: 'output-buffer-limit' },
    default: DEFAULT_OUTPUT_BUFFER_LIMITS,
    mutable: true,
    description:
      "unsent replies before the client is closed: <class> <hard> <soft> <soft-seconds> as in redis.conf (classes normal, replica, pubsub), or one size for normal's hard limit; 0 = no limit",
  },
  maxmemory: {
    kind: { type: 'bytes', min: 0, max: Number.MAX_SAFE_INTEGER },
    default: 0,
    unit: 'bytes',
    mutable: true,
    description: 'bytes of filter memory, 0 = no limit',
  },
  'default-error-rate': {
    kind: { type: 'float', min: 0, max: 1, exclusiveMin: true, exclusiveMax: true },
    default: 0.01,
    mutable: true,
    description: 'error rate of auto-created filters',
  },
  'default-capacity': {
    kind: { type: 'integer', min: 1, max: Number.MAX_SAFE_INTEGER },
    default: 100,
    unit: 'items',
    mutable: true,
    description: 'capacity (items) of auto-created filters',
  },
  'default-expansion': {
    kind: { type: 'integer', min: 1, max: 0xffffffff },
    default: 2,
    mutable: true,
    description: 'growth factor of auto-created filters',
  },
  'max-filter-bytes': {
    kind: { type: 'bytes', min: 0, max: Number.MAX_SAFE_INTEGER },
    default: DEFAULT_MAX_FILTER_BYTES,
    unit: 'bytes',
    mutable: true,
    description: 'largest filter in bytes, 0 = no limit',
  },
  loglevel: {
    kind: { type: 'enum', values: ['debug', 'verbose', 'notice', 'warning'] },
    default: 'notice',
    mutable: true,
    description: 'log verbosity: debug, verbose, notice or warning',
  },
  logfile: { kind: { type: 'string' }, default: '', mutable: false, description: 'log file, "" for standard output' },
  'slowlog-log-slower-than': {
    kind: { type: 'integer', min: -1, max: Number.MAX_SAFE_INTEGER },
    default: 10000,
    mutable: true,
    description: 'microseconds a command must take to enter the SLOWLOG, -1 = off, 0 = every command',
  },
  'slowlog-max-len': {
    kind: { type: 'integer', min: 0, max: Number.MAX_SAFE_INTEGER },
    default: 128,
    mutable: true,
    description: 'most SLOWLOG entries kept (the oldest go first)',
  },
  'latency-monitor-threshold': {
    kind: { type: 'integer', min: 0, max: Number.MAX_SAFE_INTEGER },
    default: 0,
    unit: 'milliseconds',
    mutable: true,
    description:
      "milliseconds an event (a command, the event loop's delay, a log write) must take to be a LATENCY sample, 0 = off",
  },
  'enable-debug-command': {
    kind: { type: 'enum', values: ['no', 'yes', 'local'] },
    default: 'no',
    mutable: false,
    description: 'who may run DEBUG (SLEEP, RELOAD, ...): no (as Redis 7.0), yes, or local (loopback connections only)',
  },
  requirepass: {
    kind: { type: 'string', emptyIsNone: true },
    default: '',
    mutable: true,
    description: 'password clients must AUTH with, "" for none',
  },
  save: {
    kind: { type: 'save' },
    default: '3600 1 300 100 60 10000',
    mutable: true,
    description: 'snapshot rules: <seconds> <changes> pairs, "" disables',
  },
  'snapshot-on-corrupt': {
    kind: { type: 'enum', values: ['refuse', 'move-aside'] },
    default: 'refuse',
    mutable: true,
    description:
      'corrupt snapshot file at start: refuse (to start) or move-aside (rename it <file>.<ms>.corrupt and go on)',
  },
  'stop-writes-on-bgsave-error': {
    kind: { type: 'boolean' },
    default: true,
    mutable: true,
    description: 'refuse writes with -MISCONF while the last background save failed (and save rules are set)',
  },
  appendonly: {
    kind: { type: 'boolean' },
    default: true,
    mutable: true,
    description: 'append-only log of writes (CONFIG SET yes starts it with a rewrite)',
  },
  appendfsync: {
    kind: { type: 'enum', values: ['everysec', 'always', 'no'] },
    default: 'everysec',
    mutable: true,
    description: 'fsync policy of the append-only log: everysec, always or no',
  },
  appendfilename: {
    kind: { type: 'string' },
    default: 'appendonly.aof',
    mutable: false,
    description: 'prefix of the log segment files in dir',
  },
  'aof-load-truncated': {
    kind: { type: 'boolean' },
    default: true,
    mutable: true,
    description: 'load a log cut short in its last record, with a warning',
  },
  'aof-load-corrupt': {
    kind: { type: 'boolean' },
    default: false,
    mutable: true,
    description: 'load a log damaged in the middle up to the damage instead of refusing to start',
  },
  'auto-aof-rewrite-percentage': {
    kind: { type: 'integer', min: 0, max: 2_147_483_647 },
    default: 100,
    unit: 'percent',
    mutable: true,
    description: 'log growth in percent that triggers a rewrite, 0 = never',
  },
  'auto-aof-rewrite-min-size': {
    kind: { type: 'bytes', min: 0, max: Number.MAX_SAFE_INTEGER },
    default: 64 * 1024 * 1024,
    unit: 'bytes',
    mutable: true,
    description: 'smallest log (bytes) that is rewritten automatically',
  },
  'http-port': {
    kind: { type: 'integer', min: HTTP_PORT_ANY, max: MAX_PORT },
    default: 0,
    mutable: false,
    description: 'HTTP port, 0 = off, -1 = any free port',
  },
  'http-bind': {
    kind: { type: 'string', words: true },
    default: '',
    mutable: false,
    description: 'HTTP address(es), "" = same as bind',
  },
  'http-tls': {
    kind: { type: 'boolean' },
    default: false,
    mutable: false,
    description:
      'the HTTP port serves HTTPS with tls-cert-file and tls-key-file (reloaded with them; no client certificate asked, /healthz needs none)',
  },
  'http-filter': {
    kind: { type: 'string' },
    default: 'bfs',
    mutable: true,
    description: 'filter of GET /add= and /contain=',
  },
  'http-db': {
    kind: { type: 'integer', min: 0, max: MAX_DATABASES - 1 },
    default: 0,
    mutable: false,
    description: 'database of the HTTP API, /filters and the filters /metrics lists (below databases)',
  },
  'http-max-url-bytes': {
    kind: { type: 'bytes', min: MIN_HTTP_MAX_URL_BYTES, max: MAX_HTTP_MAX_HEADER_BYTES },
    default: DEFAULT_HTTP_MAX_URL_BYTES,
    unit: 'bytes',
    mutable: true,
    description: 'longest HTTP request target in bytes (longer: 414)',
  },
  'http-max-header-bytes': {
    kind: { type: 'bytes', min: MIN_HTTP_MAX_HEADER_BYTES, max: MAX_HTTP_MAX_HEADER_BYTES },
    default: DEFAULT_HTTP_MAX_HEADER_BYTES,
    unit: 'bytes',
    mutable: false,
    description: 'largest HTTP request head in bytes',
  },
  'http-headers-timeout-ms': {
    kind: { type: 'integer', min: 100, max: 3_600_000 },
    default: 10_000,
    unit: 'milliseconds',
    mutable: false,
    description: 'milliseconds to receive an HTTP request head',
  },
  'http-keepalive-timeout-ms': {
    kind: { type: 'integer', min: 100, max: 3_600_000 },
    default: 5_000,
    unit: 'milliseconds',
    mutable: false,
    description: 'milliseconds an idle HTTP keep-alive connection is kept',
  },
  'http-maxclients': {
    kind: { type: 'integer', min: 1, max: MAX_MAXCLIENTS },
    default: DEFAULT_MAXCLIENTS,
    mutable: false,
    description: 'most simultaneous HTTP connections',
  },
  'metrics-top-filters': {
    kind: { type: 'integer', min: 0, max: MAX_METRICS_TOP_FILTERS },
    default: 10,
    mutable: true,
    description: 'filters /metrics lists items for (largest first), 0 = none',
  },
  replicaof: {
    kind: { type: 'replicaof' },
    default: '',
    mutable: false,
    description: 'replicate the master at `<host> <port>` (`no one`: be a master); REPLICAOF changes it at run time',
  },
  masterauth: {
    kind: { type: 'string', emptyIsNone: true },
    default: '',
    mutable: true,
    description: 'password a replica AUTHs with at its master, "" for none',
  },
  masteruser: {
    kind: { type: 'string', emptyIsNone: true },
    default: '',
    mutable: true,
    description: 'user a replica AUTHs as at its master (AUTH masteruser masterauth), "" for none',
  },
  'replica-read-only': {
    kind: { type: 'boolean' },
    default: true,
    mutable: true,
    description: 'a replica refuses writes from its clients (-READONLY)',
  },
  'replica-serve-stale-data': {
    kind: { type: 'boolean' },
    default: true,
    mutable: true,
    description: 'a replica whose link to its master is down still answers reads (no: -MASTERDOWN)',
  },
  'repl-backlog-size': {
    kind: { type: 'bytes', min: 16 * 1024, max: Number.MAX_SAFE_INTEGER },
    default: 1024 * 1024,
    unit: 'bytes',
    mutable: true,
    description: 'bytes of the replication stream kept so that a replica that reconnects continues (partial resync)',
  },
  'repl-backlog-ttl': {
    kind: { type: 'integer', min: 0, max: MAX_SECONDS },
    default: 3600,
    unit: 'seconds',
    mutable: true,
    description: 'seconds without replicas before a master frees its backlog, 0 = never',
  },
  'repl-diskless-sync': {
    kind: { type: 'boolean' },
    default: true,
    mutable: true,
    description:
      'a full sync streams the snapshot to the replica as it is made ($EOF: form); no: written to disk first',
  },
  'repl-diskless-sync-delay': {
    kind: { type: 'integer', min: 0, max: MAX_SECONDS },
    default: 5,
    unit: 'seconds',
    mutable: true,
    description: 'seconds a diskless full sync waits for more replicas to share it',
  },
  'repl-ping-replica-period': {
    kind: { type: 'integer', min: 1, max: MAX_SECONDS },
    default: 10,
    unit: 'seconds',
    mutable: true,
    description: "seconds between the master's pings on the replication stream",
  },
  'repl-timeout': {
    kind: { type: 'integer', min: 1, max: MAX_SECONDS },
    default: 60,
    unit: 'seconds',
    mutable: true,
    description: 'seconds of silence before a replication link is dropped',
  },
  'min-replicas-to-write': {
    kind: { type: 'integer', min: 0, max: MAX_SECONDS },
    default: 0,
    mutable: true,
    description:
      'refuse writes (-NOREPLICAS) with fewer replicas than this lagging at most min-replicas-max-lag, 0 = off',
  },
  'min-replicas-max-lag': {
    kind: { type: 'integer', min: 0, max: MAX_SECONDS },
    default: 10,
    unit: 'seconds',
    mutable: true,
    description: 'seconds since its last ACK under which a replica counts for min-replicas-to-write',
  },
  'replica-priority': {
    kind: { type: 'integer', min: 0, max: MAX_SECONDS },
    default: 100,
    mutable: true,
    description: 'Sentinel promotes replicas with a lower priority first; 0 = never promote this one',
  },
  'replica-announce-ip': {
    kind: { type: 'string', emptyIsNone: true },
    default: '',
    mutable: true,
    description: 'address a replica gives its master (and Sentinel), "" = the connection\'s',
  },
  'replica-announce-port': {
    kind: { type: 'integer', min: MIN_PORT, max: MAX_PORT },
    default: 0,
    mutable: true,
    description: 'port a replica gives its master (and Sentinel), 0 = its own port',
  },
  'replica-announced': {
    kind: { type: 'boolean' },
    default: true,
    mutable: true,
    description: 'whether Sentinel lists this replica',
  },
  'active-expire-effort': {
    kind: { type: 'integer', min: 1, max: 10 },
    default: 1,
    mutable: true,
    description: 'effort of the active expiry of keys, 1-10: more CPU for fewer expired keys held (as Redis)',
  },
  aclfile: {
    kind: { type: 'string', emptyIsNone: true },
    default: '',
    mutable: false,
    description:
      'file of the ACL users (`user` lines, as ACL LIST writes them) that ACL LOAD reads and ACL SAVE writes; "" for none (then `user` lines in this file)',
  },
  'acllog-max-len': {
    kind: { type: 'integer', min: 0, max: Number.MAX_SAFE_INTEGER },
    default: 128,
    mutable: true,
    description: 'most ACL LOG entries kept (denied commands, keys, channels and failed AUTHs)',
  },
  'acl-pubsub-default': {
    kind: { type: 'enum', values: ['allchannels', 'resetchannels'] },
    default: 'resetchannels',
    mutable: true,
    description:
      "pub/sub channels a new ACL user may use: allchannels (&*) or resetchannels (none, Redis 7.0's default)",
  },
  ...CLUSTER_CONFIG_ROWS,
  user: {
    kind: { type: 'user' },
    default: NO_USERS,
    mutable: false,
    description:
      '`user <name> <rule> ...`, repeatable: an ACL user as ACL SETUSER takes it (file or flags only, as in Redis; not with aclfile)',
  },
  'rename-command': {
    kind: { type: 'rename' },
    default: NO_RENAMES,
    mutable: false,
    description:
      '`rename-command NAME NEWNAME`, repeatable; `""` as NEWNAME disables the command (file or flags only, as in Redis)',
  },
} satisfies { readonly [K in ConfigKey]: ConfigRow<Config[K]> }

/** Every key's row, `rename-command` included, in bfs.conf.example's order. */
export const CONFIG_ROWS: readonly ConfigKeySpec[] = Object.entries(ROWS).map(([name, row]) => ({
  name: name as ConfigKey,
  ...row,
}))

/** Every default, from the rows; each key's unit is in its row. */
export const DEFAULT_CONFIG: Readonly<Config> = Object.freeze(
  Object.fromEntries(CONFIG_ROWS.map((row) => [row.name, row.default])) as unknown as Config,
)

/** The keys CONFIG GET/SET know (all but `rename-command`), in the order bfs.conf.example lists them. */
export const CONFIG_KEYS: readonly ConfigKeySpec[] = CONFIG_ROWS.filter((row) => !isFileOnly(row))

/**
 * redis 7.0's older names of bfs's keys (config.c static_configs: the second name of
 * createBoolConfig("replica-read-only", "slave-read-only", ...) and the like). An alias is read
 * in bfs.conf and flags, and known to CONFIG GET and SET under its own name, as in redis.
 */
export const CONFIG_ALIASES: ReadonlyMap<string, ConfigKey> = new Map<string, ConfigKey>([
  ['slaveof', 'replicaof'],
  ['slave-read-only', 'replica-read-only'],
  ['slave-serve-stale-data', 'replica-serve-stale-data'],
  ['repl-ping-slave-period', 'repl-ping-replica-period'],
  ['min-slaves-to-write', 'min-replicas-to-write'],
  ['min-slaves-max-lag', 'min-replicas-max-lag'],
  ['slave-priority', 'replica-priority'],
  ['slave-announce-ip', 'replica-announce-ip'],
  ['slave-announce-port', 'replica-announce-port'],
])

/** A key under one of its names: `name` is the key's own or an alias, as the table spells it. */
export interface ConfigName {
  readonly name: string
  readonly spec: ConfigKeySpec
}

/** Every name of every row, `rename-command` too: a key's own, then its aliases. */
const FILE_NAMES: readonly ConfigName[] = CONFIG_ROWS.flatMap((spec) => [
  { name: spec.name, spec },
  ...[...CONFIG_ALIASES].filter(([, key]) => key === spec.name).map(([alias]) => ({ name: alias, spec })),
])

/** The names CONFIG GET matches and CONFIG SET takes (all but `rename-command`), in the table's order. */
export const CONFIG_NAMES: readonly ConfigName[] = FILE_NAMES.filter((entry) => !isFileOnly(entry.spec))

const BY_NAME = new Map<string, ConfigName>(CONFIG_NAMES.map((entry) => [entry.name, entry]))
/** What bfs.conf and flags may name: every name, `rename-command` too. */
const FILE_BY_NAME = new Map<string, ConfigName>(FILE_NAMES.map((entry) => [entry.name, entry]))

/** A CONFIG GET/SET name (a key's own or an alias, any case), as the table spells it; undefined if unknown. */
export function configName(name: string): ConfigName | undefined {
  return BY_NAME.get(name.toLowerCase())
}

/** A name bfs.conf or a flag may use (CONFIG's, and `rename-command`), any case; undefined if unknown. */
export function configFileName(name: string): ConfigName | undefined {
  return FILE_BY_NAME.get(name.toLowerCase())
}

/** The row of a key named by its own name or an alias, any case. */
export function configKeySpec(name: string): ConfigKeySpec | undefined {
  return configName(name)?.spec
}

/** An integer key's value: redis config.c numericParseString (string2ll, then numericBoundaryCheck), or `auto` (0) where the key takes it. */
function parseInteger(raw: string, kind: Extract<ConfigKind, { type: 'integer' }>): number {
  if (kind.auto === true) {
    if (raw.toLowerCase() === 'auto') return 0
    const value = INTEGER.test(raw) ? Number(raw) : NaN
    if (!(value >= kind.min && value <= kind.max)) {
      throw new ConfigError(`argument must be auto or between ${kind.min} and ${kind.max} inclusive`)
    }
    return value
  }
  if (!INTEGER.test(raw) || BigInt(raw) > INT64_MAX || BigInt(raw) < -INT64_MAX - 1n) {
    throw new ConfigError("argument couldn't be parsed into an integer")
  }
  return checkRange(Number(raw), kind.min, kind.max)
}

/**
 * Parses one key's value(s) into its typed form; throws ConfigError naming the key. `current` is
 * the configuration the value goes into: classes of client-output-buffer-limit not given keep
 * their limits from it, as in redis.
 */
export function parseConfigValue(
  spec: ConfigKeySpec,
  args: readonly string[],
  current: Config = DEFAULT_CONFIG,
): Config[ConfigKey] {
  const kind = spec.kind
  const name = spec.name
  if (kind.type === 'save') return parseSaveRules(args)
  if (kind.type === 'output-buffer-limit') return parseOutputBufferLimits(args, current['client-output-buffer-limit'])
  if (kind.type === 'rename') return parseRenameRule(args, current['rename-command'])
  if (kind.type === 'replicaof') return parseReplicaof(args)
  if (kind.type === 'string' && kind.words) return args.join(' ')
  if (kind.type === 'user') {
    if (args.length < 1) throw new ConfigError("'user' takes <name> [<rule> ...]")
    return [...current.user, [...args]]
  }
  if (args.length !== 1) throw new ConfigError(`'${name}' takes one value, got ${args.length}`)
  const raw = args[0]!
  switch (kind.type) {
    case 'integer':
      return parseInteger(raw, kind)
    case 'bytes':
      return checkRange(parseMemory(raw), kind.min, kind.max)
    case 'float': {
      const value = Number(raw)
      if (raw.trim() === '' || !Number.isFinite(value))
        throw new ConfigError(`'${name}' must be a number, got '${raw}'`)
      const low = kind.exclusiveMin ? value <= kind.min : value < kind.min
      const high = kind.exclusiveMax ? value >= kind.max : value > kind.max
      if (low || high) {
        const open = kind.exclusiveMin ? '(' : '['
        const close = kind.exclusiveMax ? ')' : ']'
        throw new ConfigError(`'${name}' must be in ${open}${kind.min}, ${kind.max}${close}, got '${raw}'`)
      }
      return value
    }
    case 'string':
      return raw
    case 'octal':
      // redis config.c OCTAL_CONFIG: strtoll base 8 of the whole word.
      if (!/^[0-7]+$/.test(raw)) throw new ConfigError("argument couldn't be parsed into an integer")
      return checkRange(parseInt(raw, 8), 0, kind.max)
    case 'enum': {
      const value = raw.toLowerCase()
      if (!kind.values.includes(value))
        throw new ConfigError(`argument(s) must be one of the following: ${kind.values.join(', ')}`)
      return value as Config[ConfigKey]
    }
    case 'boolean': {
      const value = raw.toLowerCase()
      if (value !== 'yes' && value !== 'no') throw new ConfigError("argument must be 'yes' or 'no'")
      return value === 'yes'
    }
  }
}

/** The value as CONFIG GET and a rewritten bfs.conf show it. */
export function formatConfigValue(config: Config, name: ConfigKey): string {
  const value = config[name]
  if (typeof value === 'boolean') return value ? 'yes' : 'no'
  const kind: ConfigKind = ROWS[name].kind
  if (kind.type === 'integer' && kind.auto === true && value === 0) return 'auto'
  if (name === 'unixsocketperm') return (value as number).toString(8)
  if (name === 'client-output-buffer-limit') {
    const limits = value as OutputBufferLimits
    const one = (label: string, limit: OutputBufferLimit): string =>
      `${label} ${limit.hard} ${limit.soft} ${limit.softSeconds}`
    return [one('normal', limits.normal), one('slave', limits.replica), one('pubsub', limits.pubsub)].join(' ')
  }
  return String(value)
}
