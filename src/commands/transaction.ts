/**
 * MULTI / EXEC / DISCARD / WATCH / UNWATCH, as redis 7.0's multi.c: between MULTI and EXEC a
 * client's commands are checked as usual (dispatch) and queued, answered +QUEUED; EXEC runs them
 * one after another with nothing in between, and answers an array of their replies. A command
 * refused while queueing (unknown command or subcommand, wrong arity, NOAUTH, OOM, MISCONF, not
 * allowed in a transaction) makes EXEC answer -EXECABORT instead. EXEC answers a null array when a key WATCHed before MULTI
 * was written by anyone meanwhile.
 *
 * In the append-only log a transaction whose commands wrote two records or more is wrapped in
 * MULTI ... EXEC, as redis wraps it in its AOF: a replay runs it whole or, cut short at the end of
 * a segment, not at all.
 */
import { keyspace, type ClientSession, type CommandContext, type ServerContext } from './context.js'
import type { CommandEntry } from './table.js'
import { ReplyError } from './reply-error.js'
import { CommandArgs } from '../protocol/command-args.js'
import type { FilterEntry } from '../store/registry.js'
import type { Databases } from '../store/databases.js'

/** A client's open transaction (between MULTI and EXEC or DISCARD). */
export interface Transaction {
  /** The queued commands, copied (a read buffer does not outlive its command). */
  readonly queued: { entry: CommandEntry; argv: Buffer[] }[]
  /** A command was refused while queueing: EXEC answers -EXECABORT (redis CLIENT_DIRTY_EXEC). */
  failed: boolean
}

/** The keys a client WATCHes ({@link watchId}s), and whether one was written since (redis CLIENT_DIRTY_CAS). */
export interface WatchState {
  readonly keys: Set<string>
  touched: boolean
}

const EXECABORT = 'EXECABORT Transaction discarded because of previous errors.'

/**
 * A watched key's id: its database and its name (latin1 of its bytes), as redis's watchedKey
 * holds both. The database's digits end at the first ':'.
 */
export function watchId(db: number, key: string): string {
  return `${db}:${key}`
}

/** The database and the name of a {@link watchId}. */
export function splitWatchId(id: string): { db: number; key: string } {
  const colon = id.indexOf(':')
  return { db: Number(id.slice(0, colon)), key: id.slice(colon + 1) }
}

/**
 * Every client's WATCHed keys, by {@link watchId}: written keys mark their watchers.
 * Empty, as it nearly always is, it costs a write one size check.
 */
export class WatchedKeys {
  private readonly byKey = new Map<string, Set<ClientSession>>()
  /** Whether the module command running opened its key for writing ({@link openedForWrite}). */
  private keyOpened = false

  get size(): number {
    return this.byKey.size
  }

  /** WATCH of `key` in database `db`. */
  watch(client: ClientSession, db: number, key: string): void {
    key = watchId(db, key)
    const state = (client.watch ??= { keys: new Set(), touched: false })
    if (state.keys.has(key)) return
    state.keys.add(key)
    let clients = this.byKey.get(key)
    if (clients === undefined) this.byKey.set(key, (clients = new Set()))
    clients.add(client)
  }

  /** Forgets every key the client watches (UNWATCH, EXEC, DISCARD, RESET, disconnect). */
  unwatchAll(client: ClientSession): void {
    const state = client.watch
    if (state === undefined) return
    for (const key of state.keys) {
      const clients = this.byKey.get(key)
      clients?.delete(client)
      if (clients?.size === 0) this.byKey.delete(key)
    }
    client.watch = undefined
  }

  /** A write to `key` in database `db` (redis signalModifiedKey → touchWatchedKey). */
  touch(db: number, key: string): void {
    this.touchId(watchId(db, key))
  }

  private touchId(id: string): void {
    const clients = this.byKey.get(id)
    if (clients !== undefined) for (const client of clients) client.watch!.touched = true
  }

  /** The watched keys among those a write command names (its COMMAND key positions; none: every one). */
  private watchedKeysOf(entry: CommandEntry, argv: CommandArgs, db: number): string[] {
    const [first, last, step] = entry.spec.keys
    // FLUSHDB, FLUSHALL, SWAPDB: every watched key of every database is looked at.
    if (first === 0) return [...this.byKey.keys()]
    const keys: string[] = []
    const end = last < 0 ? argv.length + last : last
    for (let i = first; i <= end && i < argv.length; i += step) {
      const key = watchId(db, argv.bytes(i).toString('latin1', argv.start(i), argv.end(i)))
      if (this.byKey.has(key)) keys.push(key)
    }
    return keys
  }

  /**
   * Before a write runs: the state of the watched keys it may change, for {@link touchChanged}.
   * RedisBloom's commands open their key for writing, which touches it whatever they do
   * (RM_CloseKey): for those only the names are kept.
   */
  capture(entry: CommandEntry, argv: CommandArgs, db: number, databases: Databases): WatchCapture {
    const keys = this.watchedKeysOf(entry, argv, db)
    this.keyOpened = false
    if (entry.spec.flags.includes('module')) return { keys, opened: true, before: [] }
    return { keys, opened: false, before: keys.map((id) => lookupWatched(databases, id)).map((found) => [found, found?.version ?? 0, found?.expiresAt] as const) }
  }

  /** The running command opened its key for writing: it touches it even if it fails. */
  opened(): void {
    this.keyOpened = true
  }

  /** The running command was refused as redis refuses before running one (-OOM): no key was opened. */
  notOpened(): void {
    this.keyOpened = false
  }

  /**
   * After the write: touches what it changed (redis signalModifiedKey on a real change only); a
   * module command, what it named if it succeeded or failed after opening its key.
   */
  touchChanged(capture: WatchCapture, databases: Databases, succeeded: boolean): void {
    capture.keys.forEach((id, i) => {
      if (capture.opened) {
        if (succeeded || this.keyOpened) this.touchId(id)
        return
      }
      const [entry, version, expiresAt] = capture.before[i]!
      const now = lookupWatched(databases, id)
      if (now !== entry || (now !== undefined && (now.version !== version || now.expiresAt !== expiresAt))) this.touchId(id)
    })
  }
}

/**
 * RedisBloom's RedisModule_OpenKey(key, READ | WRITE): from here on the command touches its key's
 * watchers even when it then fails (an existing key for BF.RESERVE, a missing one for NOCREATE,
 * bad LOADCHUNK data), because RM_CloseKey signals every key opened for writing. Called where
 * rebloom.c opens the key: after the arguments are parsed, before the key is looked at. One size
 * check while nobody watches.
 */
export function openedForWrite(ctx: CommandContext): void {
  const watched = ctx.server.watchedKeys
  if (watched.size > 0) watched.opened()
}

/** The entry a {@link watchId} names, unless expired (an expired one is deleted, which touches it). */
function lookupWatched(databases: Databases, id: string): FilterEntry | undefined {
  const { db, key } = splitWatchId(id)
  return databases.has(db) ? databases.db(db).get(key) : undefined
}

/** What {@link WatchedKeys.capture} saw before a write. */
export interface WatchCapture {
  readonly keys: string[]
  readonly opened: boolean
  readonly before: (readonly [FilterEntry | undefined, number, number | undefined])[]
}

/** Queues a checked command of a client in a transaction: +QUEUED. */
export function queueCommand(ctx: CommandContext, entry: CommandEntry, argv: CommandArgs): void {
  const copy = argv.toArray().map((arg) => Buffer.from(arg))
  ctx.client.transaction!.queued.push({ entry, argv: copy })
  ctx.client.reply.simple('QUEUED')
}

/**
 * What a refusal inside a transaction does besides its error reply: the transaction fails
 * (redis flagTransaction). A refused EXEC ends it, with its reason.
 * @returns the text to answer with
 */
export function refuseInTransaction(client: ClientSession, entry: CommandEntry | undefined, text: string, server: ServerContext): string {
  // redis rejectCommand: a refused EXEC always goes through execCommandAbort (with or without
  // MULTI), whose reason is the refusal without its "ERR " (rejectCommandFormat has none).
  if (entry?.isExec === true) {
    discardTransaction(client, server)
    return `EXECABORT Transaction discarded because of: ${text.startsWith('ERR ') ? text.slice(4) : text}`
  }
  if (client.transaction !== undefined) client.transaction.failed = true
  return text
}

function discardTransaction(client: ClientSession, server: ServerContext): void {
  client.transaction = undefined
  server.watchedKeys.unwatchAll(client)
}

/** MULTI → +OK */
export function multi(ctx: CommandContext): void {
  if (ctx.client.transaction !== undefined) throw new ReplyError('ERR MULTI calls can not be nested')
  ctx.client.transaction = { queued: [], failed: false }
  ctx.client.reply.simple('OK')
}

/** DISCARD → +OK */
export function discard(ctx: CommandContext): void {
  if (ctx.client.transaction === undefined) throw new ReplyError('ERR DISCARD without MULTI')
  discardTransaction(ctx.client, ctx.server)
  ctx.client.reply.simple('OK')
}

/** WATCH key [key ...] → +OK */
export function watch(ctx: CommandContext, argv: CommandArgs): void {
  if (ctx.client.transaction !== undefined) throw new ReplyError('ERR WATCH inside MULTI is not allowed')
  for (let i = 1; i < argv.length; i++) {
    const key = argv.bytes(i).toString('latin1', argv.start(i), argv.end(i))
    // A key already expired is deleted now, so that it does not fail the EXEC (redis wk->expired).
    keyspace(ctx).get(key)
    ctx.server.watchedKeys.watch(ctx.client, ctx.client.db, key)
  }
  ctx.client.reply.simple('OK')
}

/** UNWATCH → +OK */
export function unwatch(ctx: CommandContext): void {
  ctx.server.watchedKeys.unwatchAll(ctx.client)
  ctx.client.reply.simple('OK')
}

/**
 * EXEC → an array of the queued commands' replies; a null array when a watched key was written;
 * -EXECABORT when a command was refused while queueing. The transaction stays open while its
 * commands run (CLIENT LIST shows it), and their log records are written together at the end
 * (store/persistence.ts, Persistence.runTransaction).
 * @param run runs one queued command as dispatch would after its checks (counted in its stats)
 */
export function exec(ctx: CommandContext, run: (ctx: CommandContext, entry: CommandEntry, argv: CommandArgs) => void): void {
  const { client, server } = ctx
  const transaction = client.transaction
  if (transaction === undefined) throw new ReplyError('ERR EXEC without MULTI')
  // A watched key that expired since is deleted by this lookup, which touches it (redis isWatchedKeyExpired).
  if (client.watch !== undefined) for (const id of client.watch.keys) lookupWatched(server.databases, id)
  const touched = client.watch?.touched === true
  // redis execCommand unwatches first: the transaction's own writes do not matter.
  server.watchedKeys.unwatchAll(client)
  if (transaction.failed || touched) {
    client.transaction = undefined
    if (transaction.failed) throw new ReplyError(EXECABORT)
    client.reply.nullArray()
    return
  }
  const queued = transaction.queued
  client.reply.array(queued.length)
  const args = new CommandArgs()
  try {
    server.persistence.runTransaction(() => {
      for (const { entry, argv } of queued) run(ctx, entry, args.assign(argv))
    })
  } finally {
    client.transaction = undefined
  }
}
