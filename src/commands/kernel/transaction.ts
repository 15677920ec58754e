/**
 * What dispatch does with a transaction, as redis 7.0's multi.c: between MULTI and EXEC a
 * client's commands are checked as usual (dispatch) and queued, answered +QUEUED; EXEC runs them
 * one after another with nothing in between, and answers an array of their replies. A command
 * refused while queueing (unknown command or subcommand, wrong arity, NOAUTH, OOM, MISCONF, not
 * allowed in a transaction) makes EXEC answer -EXECABORT instead. EXEC answers a null array when a key WATCHed before MULTI
 * was written by anyone meanwhile. MULTI, DISCARD, WATCH and UNWATCH are commands/transactions/'s.
 *
 * In the append-only log a transaction whose commands wrote two records or more is wrapped in
 * MULTI ... EXEC, as redis wraps it in its AOF: a replay runs it whole or, cut short at the end of
 * a segment, not at all.
 */
import type { ClientSession, CommandContext, CommandEntry, ServerContext } from './context.js'
import { lookupWatched } from '../state/watched-keys.js'
import { ERR, ReplyError, execAbortText } from './reply-error.js'
import { CommandArgs } from '../../protocol/command-args.js'

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
export function refuseInTransaction(
  client: ClientSession,
  entry: CommandEntry | undefined,
  text: string,
  server: ServerContext,
): string {
  // redis rejectCommand: a refused EXEC always goes through execCommandAbort (with or without
  // MULTI), whose reason is the refusal without its "ERR " (rejectCommandFormat has none).
  if (entry?.isExec === true) {
    discardTransaction(client, server)
    return execAbortText(text)
  }
  if (client.transaction !== undefined) client.transaction.failed = true
  return text
}

/** Ends a client's transaction and forgets its WATCHed keys (DISCARD, a refused EXEC). */
export function discardTransaction(client: ClientSession, server: ServerContext): void {
  client.transaction = undefined
  server.watchedKeys.unwatchAll(client)
}

/**
 * EXEC → an array of the queued commands' replies; a null array when a watched key was written;
 * -EXECABORT when a command was refused while queueing. The transaction stays open while its
 * commands run (CLIENT LIST shows it), and their log records are written together at the end
 * (store/persistence.ts, Persistence.runTransaction).
 * @param run runs one queued command as dispatch would after its checks (counted in its stats)
 */
export function exec(
  ctx: CommandContext,
  run: (ctx: CommandContext, entry: CommandEntry, argv: CommandArgs) => void,
): void {
  const { client, server } = ctx
  const transaction = client.transaction
  if (transaction === undefined) throw new ReplyError(ERR.EXEC_WITHOUT_MULTI)
  // A watched key that expired since is deleted by this lookup, which touches it (redis isWatchedKeyExpired).
  if (client.watch !== undefined) for (const id of client.watch.keys) lookupWatched(server.databases, id)
  const touched = client.watch?.touched === true
  // redis execCommand unwatches first: the transaction's own writes do not matter.
  server.watchedKeys.unwatchAll(client)
  if (transaction.failed || touched) {
    client.transaction = undefined
    if (transaction.failed) throw new ReplyError(ERR.EXECABORT)
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
