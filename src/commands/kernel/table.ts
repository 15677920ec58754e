/**
 * The declarative command table: every command's name, arity, flags and key positions in one
 * place. Dispatch checks arity, authentication and loading from here, once, before any handler;
 * COMMAND, COMMAND INFO/DOCS/COUNT/LIST and INFO commandstats are generated from it. The context a
 * handler sees is declared here too, at the end (context.ts re-exports it): the two refer to each other.
 */
import { RememberedBytes } from '../../protocol/remembered-bytes.js'
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

/** Redis 7.0 command flags (the subset bfs uses), as COMMAND INFO prints them. */
export const COMMAND_FLAGS = [
  'write', 'readonly', 'denyoom', 'admin', 'noscript', 'loading', 'stale', 'fast', 'noauth',
  'allow_busy', 'no_auth', 'module', 'no_mandatory_keys', 'skip_monitor', 'skip_slowlog', 'no_multi', 'pubsub', 'asking',
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

/**
 * A command as an embedding program declares it: a {@link CommandSpec} whose descriptive fields
 * may be left out. {@link defineCommand} fills them in.
 */
export interface CommandDefinition extends Omit<CommandSpec, 'keys' | 'group' | 'summary' | 'since' | 'handler' | 'subcommands' | 'roles' | 'help' | 'answersTogether'> {
  readonly handler: ExtensionHandler
  /** [firstKey, lastKey, step]; default [0, 0, 0] (no key). A one-key command is [1, 1, 1]. */
  readonly keys?: readonly [number, number, number]
  /** COMMAND DOCS group and ACL category (`@group`); default 'extension'. */
  readonly group?: string
  /** COMMAND DOCS summary; default ''. */
  readonly summary?: string
  /** COMMAND DOCS "since"; default '0.0.0'. */
  readonly since?: string
}

/**
 * A full {@link CommandSpec} from a definition: the name in upper case, omitted fields defaulted,
 * the handler given its arguments as a Buffer[].
 */
export function defineCommand(definition: CommandDefinition): CommandSpec {
  const handler = definition.handler
  return {
    ...definition,
    handler: (ctx, argv) => handler(ctx, argv.toArray()),
    name: definition.name.toUpperCase(),
    keys: definition.keys ?? [0, 0, 0],
    group: definition.group ?? 'extension',
    summary: definition.summary ?? '',
    since: definition.since ?? '0.0.0',
  }
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

/** A command's counters over its own row and its subcommands' (the `/metrics` per-command totals). */
export function entryCounts(entry: CommandEntry): RowCounts {
  const total: RowCounts = { calls: 0, micros: 0, failedCalls: 0, rejectedCalls: 0 }
  for (const row of entryRows(entry)) {
    total.calls += row.counts.calls
    total.micros += row.counts.micros
    total.failedCalls += row.counts.failedCalls
    total.rejectedCalls += row.counts.rejectedCalls
  }
  return total
}

/** A command's own row, then its subcommands' rows. */
export function entryRows(entry: CommandEntry): CommandRow[] {
  return [entry.row, ...(entry.subcommands?.values() ?? [])]
}

/** A command's own row or a subcommand's. */
function makeRow(spec: RowSpec, fullName: string, handler: CommandHandler, module: boolean): CommandRow {
  checkArity(spec.arity, fullName)
  if (spec.reportedArity !== undefined) checkArity(spec.reportedArity, fullName)
  // RedisBloom registers every command with arity -1 and checks in its handlers.
  return { spec, fullName, handler, queuedArity: module ? -1 : spec.reportedArity ?? spec.arity, counts: { calls: 0, micros: 0, failedCalls: 0, rejectedCalls: 0 } }
}

function checkArity(arity: number, name: string): void {
  if (!Number.isInteger(arity) || arity === 0) throw new Error(`bad arity for ${name}`)
}

function makeEntry(spec: CommandSpec): CommandEntry {
  const lowerName = spec.name.toLowerCase()
  const flags = spec.flags
  const roles = spec.roles ?? []
  const module = flags.includes('module')
  const subcommands = spec.subcommands === undefined ? undefined : new Map<string, CommandRow>()
  for (const sub of spec.subcommands ?? []) {
    const name = sub.name.toLowerCase()
    if (subcommands!.has(name)) throw new Error(`duplicate subcommand ${spec.name} ${sub.name}`)
    subcommands!.set(name, makeRow(sub, `${lowerName}|${name}`, sub.handler, module))
  }
  return {
    spec,
    lowerName,
    row: makeRow(spec, lowerName, spec.handler, module),
    subcommands,
    deniedOverMaxmemory: flags.includes('denyoom'),
    deniedOnDiskError: flags.includes('write') || lowerName === 'ping',
    allowedWhileLoading: flags.includes('loading'),
    allowedWithoutAuth: flags.includes('no_auth'),
    writes: flags.includes('write'),
    isExec: roles.includes('exec'),
    runsInsideTransaction: roles.includes('unqueued'),
    refusedOverMaxmemoryInTransaction: !roles.includes('oom_exempt'),
    refusedInTransaction: flags.includes('no_multi'),
    skipsSlowlog: flags.includes('skip_slowlog'),
    answersTogether: spec.answersTogether === true,
  }
}

/** Spellings remembered by {@link CommandTable.lookup} before the cache starts afresh. */
const MAX_SPELLINGS = 1024

/** Commands by lower-case wire name. */
export class CommandTable {
  private readonly entries = new Map<string, CommandEntry>()
  /** Every command under the name it was added with, whatever rename-command did since. */
  private readonly originals = new Map<string, CommandEntry>()
  /** Exact spellings clients sent (latin1) → entry; most clients use one spelling per command. */
  private readonly spellings = new Map<string, CommandEntry>()
  /** The last spelling {@link lookup} found, copied, and its entry: pipelines repeat one command. */
  private readonly lastSpelling = new RememberedBytes()
  private lastEntry: CommandEntry | undefined

  /** Adds a command; throws on a duplicate name, a bad arity or an unknown flag. */
  add(spec: CommandSpec): CommandEntry {
    if (this.entries.has(spec.name.toLowerCase())) throw new Error(`duplicate command ${spec.name}`)
    for (const flag of spec.flags) {
      if (!(COMMAND_FLAGS as readonly string[]).includes(flag)) {
        throw new Error(`unknown flag ${flag} for ${spec.name}`)
      }
    }
    const entry = makeEntry(spec)
    this.entries.set(entry.lowerName, entry)
    this.originals.set(entry.lowerName, entry)
    this.forgetSpellings()
    return entry
  }

  /**
   * Looks a command up by the bytes a client sent, in any letter case. The last spelling is
   * compared byte for byte and others come from a cache, so a command name costs no string.
   */
  lookup(name: Uint8Array, start = 0, end = name.length): CommandEntry | undefined {
    const last = this.lastEntry
    if (last !== undefined && this.lastSpelling.matches(name, start, end)) return last
    const spelled = Buffer.from(name.buffer, name.byteOffset, name.byteLength).toString('latin1', start, end)
    let entry = this.spellings.get(spelled)
    if (entry === undefined) {
      entry = this.entries.get(spelled.toLowerCase())
      if (entry === undefined) return undefined
      if (this.spellings.size >= MAX_SPELLINGS) this.spellings.clear()
      this.spellings.set(spelled, entry)
    }
    this.lastSpelling.remember(name, start, end) // a copy: the name is in the read buffer
    this.lastEntry = entry
    return entry
  }

  /** A renamed or removed command must not answer to an old spelling. */
  private forgetSpellings(): void {
    this.spellings.clear()
    this.lastEntry = undefined
  }

  /** Looks a command up by its lower-case name. */
  get(lowerName: string): CommandEntry | undefined {
    return this.entries.get(lowerName)
  }

  /** Renames or disables (newName '') a command, as redis.conf's rename-command does. */
  rename(lowerName: string, newName: string): boolean {
    const entry = this.entries.get(lowerName)
    if (!entry) return false
    this.entries.delete(lowerName)
    this.forgetSpellings()
    if (newName !== '') {
      const renamed: CommandEntry = { ...entry, lowerName: newName.toLowerCase() }
      this.entries.set(renamed.lowerName, renamed)
      this.originals.set(entry.spec.name.toLowerCase(), renamed)
    }
    return true
  }

  /**
   * The table under the names the commands were added with, renames and removals ignored: what
   * the append-only log's records name (bfs writes them so). A name only a rename gave (a log
   * written before records were named so) is looked up as renamed.
   */
  withOriginalNames(): CommandTable {
    const table = new CommandTable()
    for (const [name, entry] of this.entries) table.entries.set(name, entry)
    for (const [name, entry] of this.originals) table.entries.set(name, entry)
    return table
  }

  /** The original name of the command a client spelled so, when that spelling is a rename of it. */
  originalName(name: Uint8Array, start: number, end: number): string | undefined {
    const entry = this.lookup(name, start, end)
    return entry === undefined || entry.lowerName === entry.spec.name.toLowerCase() ? undefined : entry.spec.name
  }

  get size(): number {
    return this.entries.size
  }

  /** A command by the name it was added with, renamed or disabled too (what a permission check names: ACL rules name these). */
  original(lowerName: string): CommandEntry | undefined {
    return this.originals.get(lowerName)
  }

  /** Every command under the name it was added with, renamed or disabled ones too (ACL rules name these, as redis's orig_commands). */
  originalEntries(): IterableIterator<CommandEntry> {
    return this.originals.values()
  }

  [Symbol.iterator](): IterableIterator<CommandEntry> {
    return this.entries.values()
  }
}

/** Builds a table from specs; throws at startup on a duplicate or malformed row. */
export function defineTable(specs: readonly CommandSpec[]): CommandTable {
  const table = new CommandTable()
  for (const spec of specs) table.add(spec)
  return table
}

/** Whether argc (argument count, the name included) fits an arity: N exactly, -N at least N. */
export function arityFits(arity: number, argc: number): boolean {
  return arity > 0 ? argc === arity : argc >= -arity
}

/** Whether argc fits a row's arity and its upper bound, as checked before its handler runs. */
export function arityAccepts(spec: RowSpec, argc: number): boolean {
  return arityFits(spec.arity, argc) && (spec.maxArgs === undefined || argc <= spec.maxArgs)
}

/**
 * The row that checks and runs a command: a container's subcommand row when it has a second
 * argument (undefined when the container has no such subcommand), else the command's own.
 */
export function rowOf(entry: CommandEntry, argv: CommandArgs): CommandRow | undefined {
  const subcommands = entry.subcommands
  if (subcommands === undefined || argv.length < 2) return entry.row
  return subcommands.get(argv.get(1).toString('latin1').toLowerCase())
}

/** A container's HELP reply, generated from its rows (redis addReplyHelp's header). */
export function helpLines(spec: CommandSpec): string[] {
  const lines = [`${spec.name} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:`, ...(spec.help ?? [])]
  for (const sub of spec.subcommands ?? []) lines.push(...(sub.help ?? []))
  return lines
}

/** The handler of a container that needs a subcommand (arity -2): never called, as every subcommand has its row. */
export const containerOnly: CommandHandler = () => {
  throw new Error('a container command ran without a subcommand')
}

/** A container's HELP row: its reply is generated from the container's rows ({@link helpLines}). */
export function helpSubcommand(help: readonly string[]): SubcommandSpec {
  return {
    name: 'HELP',
    arity: -2,
    help,
    handler: (ctx, argv) => {
      const container = ctx.server.commands.lookup(argv.bytes(0), argv.start(0), argv.end(0))!
      const lines = helpLines(container.spec)
      const reply = ctx.client.reply
      reply.array(lines.length)
      for (const line of lines) reply.simple(line)
    },
  }
}

// What a handler sees: the client that sent the command and the server it runs in (context.ts
// re-exports these). They are interfaces so that commands/ does not depend on the socket layer;
// server/ implements them. They live beside the table because each refers to the other.

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
