/**
 * MULTI / EXEC / DISCARD / WATCH / UNWATCH, as redis 7.0's multi.c: between MULTI and EXEC a
 * client's commands are checked as usual (dispatch) and queued, answered +QUEUED; EXEC runs them
 * one after another with nothing in between, and answers an array of their replies. A command
 * refused while queueing (unknown, wrong arity, NOAUTH, OOM, MISCONF, not allowed in a transaction)
 * makes EXEC answer -EXECABORT instead. EXEC answers a null array when a key WATCHed before MULTI
 * was written by anyone meanwhile.
 *
 * In the append-only log a transaction whose commands wrote two records or more is wrapped in
 * MULTI ... EXEC, as redis wraps it in its AOF: a replay runs it whole or, cut short at the end of
 * a segment, not at all.
 */
import type { ClientSession, CommandContext, ServerContext } from './context.js'
import type { CommandEntry } from './table.js'
import { ReplyError } from './reply-error.js'
import { CommandArgs } from '../protocol/command-args.js'

/** A client's open transaction (between MULTI and EXEC or DISCARD). */
export interface Transaction {
  /** The queued commands, copied (a read buffer does not outlive its command). */
  readonly queued: { entry: CommandEntry; argv: Buffer[] }[]
  /** A command was refused while queueing: EXEC answers -EXECABORT (redis CLIENT_DIRTY_EXEC). */
  failed: boolean
}

/** The keys a client WATCHes, and whether one was written since (redis CLIENT_DIRTY_CAS). */
export interface WatchState {
  readonly keys: Set<string>
  touched: boolean
}

const EXECABORT = 'EXECABORT Transaction discarded because of previous errors.'
const MULTI_RECORD = [Buffer.from('MULTI')]
const EXEC_RECORD = [Buffer.from('EXEC')]

/** Commands that run at once inside a transaction instead of being queued (redis processCommand). */
export function runsInsideTransaction(entry: CommandEntry): boolean {
  const name = entry.lowerName
  return name === 'exec' || name === 'discard' || name === 'multi' || name === 'watch' || name === 'quit' || name === 'reset'
}

/**
 * Every client's WATCHed keys, by key (latin1 of its bytes): written keys mark their watchers.
 * Empty, as it nearly always is, it costs a write one size check.
 */
export class WatchedKeys {
  private readonly byKey = new Map<string, Set<ClientSession>>()

  get size(): number {
    return this.byKey.size
  }

  watch(client: ClientSession, key: string): void {
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

  /** A write to `key` (redis signalModifiedKey → touchWatchedKey). */
  touch(key: string): void {
    const clients = this.byKey.get(key)
    if (clients !== undefined) for (const client of clients) client.watch!.touched = true
  }

  /** FLUSHALL and other writes with no key: every watched key may have changed. */
  touchAll(): void {
    for (const clients of this.byKey.values()) for (const client of clients) client.watch!.touched = true
  }

  /** Marks the watchers of the keys a write command names (its COMMAND key positions). */
  touchKeysOf(entry: CommandEntry, argv: CommandArgs): void {
    const [first, last, step] = entry.spec.keys
    if (first === 0) {
      this.touchAll()
      return
    }
    const end = last < 0 ? argv.length + last : last
    for (let i = first; i <= end && i < argv.length; i += step) this.touch(argv.bytes(i).toString('latin1', argv.start(i), argv.end(i)))
  }
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
  const transaction = client.transaction
  if (transaction === undefined) return text
  if (entry?.lowerName === 'exec') {
    discardTransaction(client, server)
    return `EXECABORT Transaction discarded because of: ${text}`
  }
  transaction.failed = true
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
  for (let i = 1; i < argv.length; i++) ctx.server.watchedKeys.watch(ctx.client, argv.bytes(i).toString('latin1', argv.start(i), argv.end(i)))
  ctx.client.reply.simple('OK')
}

/** UNWATCH → +OK */
export function unwatch(ctx: CommandContext): void {
  ctx.server.watchedKeys.unwatchAll(ctx.client)
  ctx.client.reply.simple('OK')
}

/**
 * EXEC → an array of the queued commands' replies; a null array when a watched key was written;
 * -EXECABORT when a command was refused while queueing.
 * @param run runs one queued command as dispatch would after its checks (counted in its stats)
 */
export function exec(ctx: CommandContext, run: (ctx: CommandContext, entry: CommandEntry, argv: CommandArgs) => void): void {
  const { client, server } = ctx
  const transaction = client.transaction
  if (transaction === undefined) throw new ReplyError('ERR EXEC without MULTI')
  const touched = client.watch?.touched === true
  discardTransaction(client, server)
  if (transaction.failed) throw new ReplyError(EXECABORT)
  if (touched) {
    client.reply.nullArray()
    return
  }
  const queued = transaction.queued
  client.reply.array(queued.length)
  // Two records or more go to the log between MULTI and EXEC; one needs no wrapping.
  let records = 0
  let first: Buffer[] | undefined
  const view: CommandContext = {
    client,
    server: Object.create(server, {
      propagate: {
        value: (argv: CommandArgs | readonly Uint8Array[]) => {
          records++
          if (records === 1) {
            first = (argv instanceof CommandArgs ? argv.toArray() : [...argv]).map((arg) => Buffer.from(arg))
            return
          }
          if (records === 2) {
            server.propagate(MULTI_RECORD)
            server.propagate(first!)
          }
          server.propagate(argv)
        },
      },
    }) as ServerContext,
  }
  const args = new CommandArgs()
  for (const { entry, argv } of queued) run(view, entry, args.assign(argv))
  if (records === 1) server.propagate(first!)
  else if (records > 1) server.propagate(EXEC_RECORD)
}
