/**
 * What a command handler sees: the client that sent the command and the server it runs in, and
 * what the server's command table holds of each command (its flags, its rows, its handler). The
 * two are declared together because each refers to the other: a handler takes a CommandContext,
 * whose server holds the table of handlers. They are interfaces, so that commands/ does not depend
 * on the socket layer (server/ implements the context) and handlers not on the table's class
 * (table.ts's CommandTable is a {@link CommandTableView}).
 */
import type { CommandArgs } from '../../protocol/command-args.js'
import type { ReplySink } from '../../protocol/reply-sink.js'
import type { FilterRegistry } from '../../store/registry.js'
import type { Databases } from '../../store/databases.js'
import type { Config } from '../../runtime/config.js'
import type { Stats } from '../../runtime/stats.js'
import type { CommandTimer } from '../state/command-timer.js'
import type { SlowLog } from '../state/slowlog.js'
import type { MonitorHub } from '../state/monitor-hub.js'
import type { LatencyMonitor } from '../../runtime/latency-monitor.js'
import type { ClientPause } from '../state/client-pause.js'
import type { Persistence, PropagateTargets } from '../../store/persistence.js'
import type { Logger } from '../../runtime/logger.js'
import type { ReplicationState } from '../../replication/replication-state.js'
import type { PubSubHub, Subscriptions } from '../state/pubsub-hub.js'
import type { MasterSide } from '../../replication/master-side.js'
import type { PeerConnection } from '../../replication/replica-peer.js'
import type { ReplicaLink } from '../../replication/replica-link.js'
import type { AclUsers } from '../state/acl/acl-users.js'
import type { ClusterState } from '../../cluster/cluster-state.js'
import type { WatchState, WatchedKeys } from '../state/watched-keys.js'
import type { BloomEntry } from '../../store/registry.js'

/** A client's open transaction (between MULTI and EXEC or DISCARD). */
export interface Transaction {
  /** The queued commands, copied (a read buffer does not outlive its command). */
  readonly queued: { entry: CommandEntry; argv: Buffer[] }[]
  /** A command was refused while queueing: EXEC answers -EXECABORT (redis CLIENT_DIRTY_EXEC). */
  failed: boolean
}

/**
 * What a connection is to the server, beyond a client sending commands (redis CLIENT_SLAVE,
 * CLIENT_MASTER): 'replica' once it asked for the replication stream (SYNC/PSYNC), 'master' for a
 * replica's link to its master. Pub/sub is not a kind: see {@link ClientSession.subscriptionCount}.
 */
export type ClientKind = 'normal' | 'replica' | 'master'

/** One connected client, as handlers see it. */
export interface ClientSession {
  readonly id: number
  readonly reply: ReplySink
  /** "ip:port" of the peer and of the local end ("<unixsocket>:0" for both on the Unix socket, as redis). */
  readonly addr: string
  readonly laddr: string
  /** Whether it came through the Unix socket (CLIENT LIST flag U). */
  readonly unixSocket?: boolean
  /**
   * Whether it came through the TLS port: under tls-cluster, cluster replies give a client known to
   * be plaintext (false) the nodes' plaintext ports, any other session their TLS ports (redis use_pport).
   */
  readonly tls?: boolean
  readonly createdAtMs: number
  readonly lastInteractionMs: number
  name: string
  libName: string
  libVersion: string
  authenticated: boolean
  /**
   * The ACL user it is authenticated as ('default' until AUTH names another; redis client->user);
   * '' for the server's own sessions (the master's link, the log's replay), which run anything.
   */
  user: string
  /** The database it selected (SELECT; 0 until then). Commands reach it through {@link keyspace}. */
  db: number
  /** The last command's name, lower case, for CLIENT LIST. */
  lastCommand: string
  /** Send what is pending, then close (QUIT, CLIENT KILL of oneself). */
  closeAfterReply(): void
  /** Close now, dropping anything pending (CLIENT KILL of another client). */
  kill(): void
  /** Pending output bytes, for CLIENT LIST and INFO. */
  outputBytes(): number
  queryBufferBytes(): number
  /** The open transaction, between MULTI and EXEC (undefined outside one). */
  transaction?: Transaction | undefined
  /** The keys it WATCHes (undefined: none). */
  watch?: WatchState | undefined
  /** 'normal' unless it is a replica's stream or the link to our master ({@link ClientKind}). */
  kind: ClientKind
  /** The replication offset after its last write (redis woff): what its WAIT waits for. */
  replOffset: number
  /** Channels, patterns and shard channels it is subscribed to (0: none; CLIENT LIST's P flag, type pubsub). */
  subscriptionCount(): number
  /** In the MONITOR mode (state/monitor-hub.ts): CLIENT LIST's O flag. */
  monitoring?: boolean
  /** Its commands wait (WAIT, CLIENT PAUSE): CLIENT LIST's b flag. */
  readonly blocked?: boolean
  /** CLIENT NO-EVICT on: CLIENT LIST's e flag (bfs evicts no client either way). */
  noEvict?: boolean
  /** CLIENT REPLY OFF / SKIP (commands/connection/connection.ts): replies it does not want. */
  replyMode?: 'off' | 'skip' | undefined
  /** Its pub/sub subscriptions (pubsub-hub.ts); undefined when it has none (not in the subscribed mode). */
  subscriptions?: Subscriptions | undefined
  /** Its connection, for replication (raw writes, blocking in WAIT); none for HTTP and the log's replay. */
  readonly peer?: PeerConnection
  /** Cluster mode: READONLY was sent (a replica serves it reads of its master's slots). */
  clusterReadonly?: boolean
  /** Cluster mode: ASKING was sent, for the next command only (an importing slot serves it). */
  asking?: boolean
}

/** The server as handlers see it. */
export interface ServerContext {
  /** Database 0 (the library's `server.registry`); commands use {@link keyspace}, server-wide views {@link databases}. */
  readonly registry: FilterRegistry
  /** Every database (store/databases.ts): what is server-wide (memory, saves, INFO keyspace, FLUSHALL). */
  readonly databases: Databases
  /** Every client's WATCHed keys: writes mark their watchers (state/watched-keys.ts). */
  readonly watchedKeys: WatchedKeys
  readonly config: Config
  /** The config file's absolute path ('' when started without one). */
  readonly configFile: string
  readonly stats: Stats
  /** The clock of commandstats' usec and the SLOWLOG, per read of commands (command-timer.ts). */
  readonly timer: CommandTimer
  /** The slow commands' log (SLOWLOG). */
  readonly slowlog: SlowLog
  /** The clients in the MONITOR mode, fed every command that ran (state/monitor-hub.ts). */
  readonly monitors: MonitorHub
  /** LATENCY's events and samples (runtime/latency-monitor.ts). */
  readonly latency: LatencyMonitor
  /** CLIENT PAUSE's state: which commands wait, until when (client-pause.ts). */
  readonly pause: ClientPause
  /** The active expiry cycle runs (DEBUG SET-ACTIVE-EXPIRE 0 stops it, as redis active_expire_enabled). */
  activeExpireEnabled: boolean
  readonly commands: CommandTableView
  readonly log: Logger
  readonly startedAtMs: number
  /** 40 random hex digits, new at every start (redis run_id: Sentinel notices a restart by it). */
  readonly runId: string
  /** TCP port actually bound (0 before listening). */
  readonly port: number
  /** The TLS port actually bound (0 without one). */
  readonly tlsPort?: number
  /** `io-threads` as configured (0: auto), where the config holds the count it resolved to: what CONFIG REWRITE writes. */
  readonly ioThreadsConfigured?: number
  /** CONFIG SET of a TLS key: new TLS connections use `next`'s keys. @throws TlsConfigError, nothing changed */
  reconfigureTls?(next: Config): void
  clients(): Iterable<ClientSession>
  /** Starts a graceful shutdown; returns an error text when it must not happen now. */
  shutdown(options: { save?: boolean; noSave?: boolean }): string | undefined
  /**
   * Everything that decides when a write is durable (store/persistence.ts): the snapshot
   * (`snapshots`: SAVE, BGSAVE, LASTSAVE, BF.SAVE/BF.LOAD), the append-only log and its rewriter
   * (`appendLog`, `logRewriter`: BGREWRITEAOF), `propagate` (every write hands its record there),
   * `runTransaction` (EXEC), `setAppendOnly` (CONFIG SET appendonly), `whenDurable` (the HTTP
   * front end), the -MISCONF refusal and INFO persistence.
   */
  readonly persistence: Persistence
  /**
   * Hands a change to the persistence layer (the append-only log), in the order it was applied:
   * `persistence.propagate`, here for every command handler, built-in or an extension's.
   * The arguments are encoded before it returns, so a command's own `argv` may be passed.
   */
  propagate(argv: CommandArgs | readonly Uint8Array[], targets?: PropagateTargets): void
  /** The replication ids, offset and stream (replication/replication-state.ts); its role. */
  readonly replication: ReplicationState
  /** Who is subscribed to what, and the delivery of PUBLISH (pubsub-hub.ts). */
  readonly pubsub: PubSubHub
  /** The master's side of replication: replicas, backlog, full syncs, WAIT (replication/master-side.ts). */
  readonly masterSide: MasterSide
  /** The link to this node's master (REPLICAOF, ROLE, INFO's role:slave block). */
  readonly replicaLink: ReplicaLink
  /** Whether the dataset is still being loaded from disk (commands without the loading flag are refused). */
  readonly loading: boolean
  /** Open HTTP connections (absent or 0 when the HTTP listener is off). */
  readonly httpClientCount?: number
  /** Connections to the TLS port still in their handshake (not clients yet), every thread's. */
  readonly tlsHandshakes?: number
  /** The ACL users, their check's fast-path flags and ACL LOG (acl-users.ts). */
  readonly acl: AclUsers
  /** Cluster mode's state (cluster/cluster-state.ts): undefined when cluster-enabled is no. */
  readonly cluster?: ClusterState | undefined
  /** With io-threads > 1: the checks the I/O threads answer themselves (server/thread-plane.ts). */
  readonly threadPlane?: ThreadChecks | undefined
}

/** What the command handlers see of the checks the I/O threads answer themselves (server/thread-plane.ts). */
export interface ThreadChecks {
  /** A connection checked a Bloom filter here, in database `db`: its thread may learn the filter's layout. */
  looked(client: ClientSession, db: number, entry: BloomEntry): void
  /** Adds what the threads answered to INFO's counters (INFO, CONFIG RESETSTAT, the stats sample). */
  fold(): void
  /** No thread adds to a filter until the threads are let add again: before every command runs. */
  quiesce(): void
  /** A write command is about to run: a thread's reply that may show it waits until it is durable. */
  wrote(): void
}

/** What a command handler receives: the client that sent the command and the server it runs in. */
export interface CommandContext {
  readonly client: ClientSession
  readonly server: ServerContext
}

/**
 * The keyspace a command's keys live in: the client's selected database. Every command that reads
 * or writes keys goes through here; server-wide views (INFO, memory limits, saves) use
 * `server.databases`.
 */
export function keyspace(ctx: CommandContext): FilterRegistry {
  return ctx.server.databases.db(ctx.client.db)
}

// What a command is, as the table holds it.

/** Redis 7.0 command flags (the subset bfs uses), as COMMAND INFO prints them. */
export const COMMAND_FLAGS = [
  'write',
  'readonly',
  'denyoom',
  'admin',
  'noscript',
  'loading',
  'stale',
  'fast',
  'noauth',
  'allow_busy',
  'no_auth',
  'module',
  'no_mandatory_keys',
  'skip_monitor',
  'skip_slowlog',
  'no_multi',
  'pubsub',
  'asking',
] as const
/** One of {@link COMMAND_FLAGS}. */
export type CommandFlag = (typeof COMMAND_FLAGS)[number]

/**
 * A handler writes its reply to ctx.client.reply, or throws ReplyError before writing anything.
 * `argv` is valid only until it returns (see {@link CommandArgs}): what outlives the command is copied.
 */
export type CommandHandler = (ctx: CommandContext, argv: CommandArgs) => void

/**
 * An extension's handler: as {@link CommandHandler}, with the arguments as an array of Buffers made
 * for each call (views of the read buffer: copy what you keep beyond the command).
 */
export type ExtensionHandler = (ctx: CommandContext, argv: Buffer[]) => void

/**
 * How a command takes part in a transaction, as flags (redis 7.0 processCommand keys these on the
 * command's function, so they follow a command through rename-command):
 * - `unqueued`: runs at once between MULTI and EXEC instead of being queued (EXEC, DISCARD, MULTI,
 *   WATCH, QUIT, RESET);
 * - `oom_exempt`: not refused inside MULTI while over maxmemory (EXEC, DISCARD, QUIT, RESET:
 *   redis reject_cmd_on_oom);
 * - `exec`: EXEC itself, which runs the queue.
 */
export type TransactionRole = 'unqueued' | 'oom_exempt' | 'exec'

/**
 * What a command and a subcommand row share: dispatch checks the argument count from these, and
 * HELP is generated from `help`.
 */
export interface RowSpec {
  /** N: exactly N arguments counting the name (and the subcommand's); -N: at least N. Enforced. */
  readonly arity: number
  /**
   * The arity COMMAND INFO reports when it is not the one enforced: RedisBloom registers every
   * command with -1 and checks the count in its handlers.
   */
  readonly reportedArity?: number
  /** An upper bound some commands check on top of arity (BF.RESERVE: 7), in their handler in redis. */
  readonly maxArgs?: number
  /** This row's lines of its container's HELP reply, as redis prints them. */
  readonly help?: readonly string[]
}

/** One subcommand of a container command (`CONFIG GET`), as redis's commands.def declares it. */
export interface SubcommandSpec extends RowSpec {
  /** The wire name, upper case: 'GET'. */
  readonly name: string
  readonly handler: CommandHandler
}

/** One row of the command table: everything dispatch, COMMAND and INFO need about a command. */
export interface CommandSpec extends RowSpec {
  /** The wire name, upper case: 'BF.ADD'. */
  readonly name: string
  readonly flags: readonly CommandFlag[]
  /** [firstKey, lastKey, step] as COMMAND INFO reports them; lastKey -1 means "to the end". */
  readonly keys: readonly [number, number, number]
  /** COMMAND DOCS group: 'bf', 'server', 'connection', 'generic', or an extension's own. */
  readonly group: string
  /**
   * COMMAND DOCS's summary and since, unless command-docs/ documents the command (every Redis
   * command: there redis 7.0.15's own texts are served).
   */
  readonly summary: string
  readonly since: string
  /** Runs the command; for a container, only without a subcommand (COMMAND alone). */
  readonly handler: CommandHandler
  /** A container's subcommands (`CONFIG GET`, ...): the second argument picks one. */
  readonly subcommands?: readonly SubcommandSpec[]
  /** Its part in a transaction; none: queued between MULTI and EXEC, refused there over maxmemory. */
  readonly roles?: readonly TransactionRole[]
  /**
   * It may run after the commands that follow it in the same read (read-batch.ts: BF.EXISTS,
   * BF.ADD, CF.EXISTS, CF.ADD and CF.DEL): dispatch does not settle a waiting batch before it.
   */
  readonly answersTogether?: boolean
}

/** A row as dispatch checks and runs it: a command, or one subcommand of a container. */
export interface CommandRow {
  readonly spec: RowSpec
  /** The name its wrong-arity error names, lower case: 'bf.add', 'config|get'. */
  readonly fullName: string
  readonly handler: CommandHandler
  /**
   * The arity checked before a command is queued between MULTI and EXEC: the one redis registers
   * (RedisBloom's -1), the rest being checked by the handler, so in EXEC.
   */
  readonly queuedArity: number
  /** Its own counters: a container's subcommands are reported one by one (`cmdstat_config|get`), as redis 7.0 does. */
  readonly counts: RowCounts
}

/** INFO commandstats' counters of a row (state/command-timer.ts adds the time). */
export interface RowCounts {
  calls: number
  /** µs, fractional. */
  micros: number
  failedCalls: number
  rejectedCalls: number
}

/** A table row: the command's rows (each with its INFO commandstats counters) and what dispatch checks. */
export interface CommandEntry {
  readonly spec: CommandSpec
  readonly lowerName: string
  /** The command itself as a row (a container's, without a subcommand). */
  readonly row: CommandRow
  /** A container's subcommand rows, by lower-case name. */
  readonly subcommands: ReadonlyMap<string, CommandRow> | undefined
  /** Refused while filter memory is over `maxmemory` (the `denyoom` flag), as redis does. */
  readonly deniedOverMaxmemory: boolean
  /** Refused while persistence fails (the `write` flag, and PING), as redis does. */
  readonly deniedOnDiskError: boolean
  readonly allowedWhileLoading: boolean
  readonly allowedWithoutAuth: boolean
  /** The `write` flag: a write touches WATCHed keys. */
  readonly writes: boolean
  /** EXEC itself (the `exec` role, kept through rename-command as redis keys its checks on execCommand). */
  readonly isExec: boolean
  /** The `unqueued` role: runs at once inside MULTI instead of being queued. */
  readonly runsInsideTransaction: boolean
  /** Refused inside MULTI while over maxmemory: all but the `oom_exempt` role (redis reject_cmd_on_oom). */
  readonly refusedOverMaxmemoryInTransaction: boolean
  /** The `no_multi` flag: refused inside MULTI. */
  readonly refusedInTransaction: boolean
  /** Not in the SLOWLOG (the `skip_slowlog` flag: EXEC, whose commands are). */
  readonly skipsSlowlog: boolean
  /** {@link CommandSpec.answersTogether}. */
  readonly answersTogether: boolean
}

/**
 * The command table as commands reach it through the server, `ctx.server.commands`: table.ts's
 * CommandTable, which also adds and renames commands.
 */
export interface CommandTableView extends Iterable<CommandEntry> {
  /** A command by the bytes a client sent, in any letter case (CommandTable.lookup). */
  lookup(name: Uint8Array, start?: number, end?: number): CommandEntry | undefined
  /** A command by its lower-case name. */
  get(lowerName: string): CommandEntry | undefined
  /** A command by the name it was added with, renamed or disabled too. */
  original(lowerName: string): CommandEntry | undefined
  /** Every command under the name it was added with, renamed or disabled ones too. */
  originalEntries(): IterableIterator<CommandEntry>
  /** The table under the names the commands were added with (what the append-only log's records name). */
  withOriginalNames(): CommandTableView
  readonly size: number
}
