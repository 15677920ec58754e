/**
 * What a command handler sees: the client that sent it and the server it runs in. These are
 * interfaces so that commands/ does not depend on the socket layer; server/ implements them.
 */
import type { ReplyWriter } from '../protocol/reply-writer.js'
import type { FilterRegistry } from '../store/registry.js'
import type { Config } from '../server/config.js'
import type { Stats } from '../server/stats.js'
import type { CommandTable } from './table.js'
import type { SnapshotStore } from '../store/snapshot.js'
import type { AppendLog } from '../store/append-log.js'
import type { LogRewriter } from '../store/log-rewrite.js'
import type { CommandArgs } from '../protocol/command-args.js'
import type { Transaction, WatchState, WatchedKeys } from './transaction.js'

/** One connected client, as handlers see it. */
export interface ClientSession {
  readonly id: number
  readonly reply: ReplyWriter
  /** "ip:port" of the peer and of the local end. */
  readonly addr: string
  readonly laddr: string
  readonly createdAtMs: number
  readonly lastInteractionMs: number
  name: string
  libName: string
  libVersion: string
  authenticated: boolean
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
}

/** Minimal leveled logger with redis-server's levels. */
export interface Logger {
  debug(message: string): void
  verbose(message: string): void
  notice(message: string): void
  warning(message: string): void
}

/** The server as handlers see it. */
export interface ServerContext {
  readonly registry: FilterRegistry
  /** Every client's WATCHed keys: writes mark their watchers (transaction.ts). */
  readonly watchedKeys: WatchedKeys
  readonly config: Config
  /** The config file's absolute path ('' when started without one). */
  readonly configFile: string
  readonly stats: Stats
  readonly commands: CommandTable
  readonly log: Logger
  readonly startedAtMs: number
  /** TCP port actually bound (0 before listening). */
  readonly port: number
  clients(): Iterable<ClientSession>
  /** Starts a graceful shutdown; returns an error text when it must not happen now. */
  shutdown(options: { save?: boolean; noSave?: boolean }): string | undefined
  /** The snapshot in `dir`: SAVE, BGSAVE, LASTSAVE, BF.SAVE/BF.LOAD and INFO persistence use it. */
  readonly snapshots: SnapshotStore
  /** The append-only log and its rewriter: BGREWRITEAOF and INFO persistence's aof_* fields. */
  readonly appendLog: AppendLog
  readonly logRewriter: LogRewriter
  /**
   * Resolves once everything appended to the log so far is durable under the fsync policy (at
   * once when it already is, or when the log is off): a front end that answers outside RESP
   * (HTTP) waits on it as RESP replies do. While the log cannot be written, only up to
   * `ownOffset`, the log offset past the caller's own records (0: it wrote none). Resolves
   * false instead when they never will be: the server shut down with the disk refusing them.
   */
  whenDurable(ownOffset?: number): Promise<boolean>
  /**
   * Runs EXEC's commands: the log records they make are written together at the end, between
   * MULTI and EXEC when there are two or more (redis propagates a transaction so), and background
   * saves and rewrites they start wait until it is over, so that no snapshot sees half of it.
   */
  runTransaction(run: () => void): void
  /** Whether EXEC's commands are running ({@link runTransaction}). */
  readonly inTransaction: boolean
  /**
   * Hands a change to the persistence layer (the append-only log), in the order it was applied.
   * The arguments are encoded before it returns, so a command's own `argv` may be passed.
   */
  propagate(argv: CommandArgs | readonly Uint8Array[]): void
  /**
   * CONFIG SET appendonly: opens the log (with a rewrite as its base) or writes, fsyncs and closes it.
   * @throws Error when the log cannot be opened
   */
  setAppendOnly(on: boolean): void
  /** Whether the dataset is still being loaded from disk (commands without the loading flag are refused). */
  readonly loading: boolean
  /** Open HTTP connections (absent or 0 when the HTTP listener is off). */
  readonly httpClientCount?: number
}

/** What a command handler receives: the client that sent the command and the server it runs in. */
export interface CommandContext {
  readonly client: ClientSession
  readonly server: ServerContext
}
