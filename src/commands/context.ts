/**
 * What a command handler sees: the client that sent it and the server it runs in. These are
 * interfaces so that commands/ does not depend on the socket layer; server/ implements them.
 */
import type { ReplySink } from '../protocol/reply-sink.js'
import type { FilterRegistry } from '../store/registry.js'
import type { Databases } from '../store/databases.js'
import type { Config } from '../runtime/config.js'
import type { Stats } from '../runtime/stats.js'
import type { CommandTimer } from './command-timer.js'
import type { SlowLog } from './slowlog.js'
import type { MonitorHub } from './monitor.js'
import type { LatencyMonitor } from '../runtime/latency-monitor.js'
import type { ClientPause } from './client-pause.js'
import type { CommandTable } from './table.js'
import type { Persistence, PropagateTargets } from '../store/persistence.js'
import type { CommandArgs } from '../protocol/command-args.js'
import type { Logger } from '../runtime/logger.js'
import type { Transaction, WatchState, WatchedKeys } from './transaction.js'
import type { ReplicationState } from '../replication/replication-state.js'
import type { PubSubHub, Subscriptions } from './pubsub-hub.js'
import type { MasterSide } from '../replication/master-side.js'
import type { PeerConnection } from '../replication/replica-peer.js'
import type { ReplicaLink } from '../replication/replica-link.js'
import type { AclUsers } from './acl-users.js'
import type { ClusterState } from '../cluster/cluster-state.js'

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
  /** In the MONITOR mode (monitor.ts): CLIENT LIST's O flag. */
  monitoring?: boolean
  /** Its commands wait (WAIT, CLIENT PAUSE): CLIENT LIST's b flag. */
  readonly blocked?: boolean
  /** CLIENT NO-EVICT on: CLIENT LIST's e flag (bfs evicts no client either way). */
  noEvict?: boolean
  /** CLIENT REPLY OFF / SKIP (client-reply.ts): replies it does not want. */
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
  /** Every client's WATCHed keys: writes mark their watchers (transaction.ts). */
  readonly watchedKeys: WatchedKeys
  readonly config: Config
  /** The config file's absolute path ('' when started without one). */
  readonly configFile: string
  readonly stats: Stats
  /** The clock of commandstats' usec and the SLOWLOG, per read of commands (command-timer.ts). */
  readonly timer: CommandTimer
  /** The slow commands' log (SLOWLOG). */
  readonly slowlog: SlowLog
  /** The clients in the MONITOR mode, fed every command that ran (monitor.ts). */
  readonly monitors: MonitorHub
  /** LATENCY's events and samples (runtime/latency-monitor.ts). */
  readonly latency: LatencyMonitor
  /** CLIENT PAUSE's state: which commands wait, until when (client-pause.ts). */
  readonly pause: ClientPause
  /** The active expiry cycle runs (DEBUG SET-ACTIVE-EXPIRE 0 stops it, as redis active_expire_enabled). */
  activeExpireEnabled: boolean
  readonly commands: CommandTable
  readonly log: Logger
  readonly startedAtMs: number
  /** 40 random hex digits, new at every start (redis run_id: Sentinel notices a restart by it). */
  readonly runId: string
  /** TCP port actually bound (0 before listening). */
  readonly port: number
  /** The TLS port actually bound (0 without one). */
  readonly tlsPort?: number
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
  /** The ACL users, their check's fast-path flags and ACL LOG (acl-users.ts). */
  readonly acl: AclUsers
  /** Cluster mode's state (cluster/cluster-state.ts): undefined when cluster-enabled is no. */
  readonly cluster?: ClusterState | undefined
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
