/**
 * The one place that checks a command before it runs: lookup, arity, authentication, loading,
 * maxmemory, persistence errors.
 * Handlers never re-check these. Errors thrown by handlers become replies here.
 */
import type { CommandContext } from './context.js'
import { arityAccepts, type CommandEntry } from './table.js'
import { ERR, ReplyError, unknownCommandText, wrongArityText } from './reply-error.js'
import { MemoryGuard } from '../store/memory-guard.js'
import type { CommandArgs } from '../protocol/command-args.js'
import { exec, queueCommand, refuseInTransaction } from './transaction.js'

const NOAUTH = 'NOAUTH Authentication required.'
const LOADING = 'LOADING Redis is loading the dataset in memory'
/** redis 7.0 server.c shared.oomerr. */
export const OOM = "OOM command not allowed when used memory > 'maxmemory'."

/** Runs one command and writes its reply. Returns the table entry that ran, if any. */
export function dispatch(ctx: CommandContext, argv: CommandArgs): CommandEntry | undefined {
  const { client, server } = ctx
  const stats = server.stats
  const entry = server.commands.lookup(argv.bytes(0), argv.start(0), argv.end(0))
  if (entry === undefined) {
    stats.commandsProcessed++
    stats.errorReplies++
    client.reply.error(refuseInTransaction(client, undefined, unknownCommandText(argv.toArray()), server), 'latin1')
    return undefined
  }
  client.lastCommand = entry.lowerName
  const spec = entry.spec
  const transaction = client.transaction
  const queueing = transaction !== undefined && !entry.runsInsideTransaction
  // Queued, a command whose argument count redis checks only when it runs is queued all the
  // same, and fails in EXEC.
  if (!arityAccepts(spec, argv.length) && !(queueing && entry.arityCheckedWhenRun(argv.length))) {
    return reject(ctx, entry, wrongArityText(spec.name))
  }
  if (!client.authenticated && !entry.allowedWithoutAuth) {
    return reject(ctx, entry, NOAUTH)
  }
  if (server.loading && !entry.allowedWhileLoading) {
    return reject(ctx, entry, LOADING)
  }
  // redis 7.0 processCommand: with maxmemory set, a denyoom command is refused while used >
  // maxmemory, and so is every command queued in a transaction (its queue grows without bound),
  // and an EXEC of denyoom commands.
  const maxmemory = server.config.maxmemory
  if (maxmemory > 0 && (entry.deniedOverMaxmemory || (transaction !== undefined && (entry.refusedOverMaxmemoryInTransaction || (entry.isExec && transaction.queued.some((queued) => queued.entry.deniedOverMaxmemory)))))) {
    if (MemoryGuard.of(server.registry).isOverLimit(maxmemory)) return reject(ctx, entry, OOM)
  }
  // An EXEC of writes is refused as writes are (redis is_write_command).
  if (entry.deniedOnDiskError || (transaction !== undefined && entry.isExec && transaction.queued.some((queued) => queued.entry.writes))) {
    const refusal = server.persistence.writeRefusal()
    if (refusal !== undefined) return reject(ctx, entry, refusal)
  }
  if (queueing) {
    if (entry.refusedInTransaction) return reject(ctx, entry, 'ERR Command not allowed inside a transaction')
    queueCommand(ctx, entry, argv)
    return entry
  }
  if (entry.isExec) {
    stats.commandsProcessed++
    try {
      exec(ctx, runQueued)
    } catch (error) {
      failed(ctx, entry, error)
    }
    // As redis counts a call once it returned: an INFO inside the transaction does not see it.
    entry.calls++
    return entry
  }
  run(ctx, entry, argv)
  return entry
}

/** Runs a queued command inside EXEC: the argument count it skipped when queued is checked now. */
function runQueued(ctx: CommandContext, entry: CommandEntry, argv: CommandArgs): void {
  if (!arityAccepts(entry.spec, argv.length)) {
    ctx.server.stats.commandsProcessed++
    entry.calls++
    failed(ctx, entry, new ReplyError(wrongArityText(entry.spec.name)))
    return
  }
  run(ctx, entry, argv)
}

/** Runs a command whose checks passed (dispatch's, or MULTI's when it was queued). */
function run(ctx: CommandContext, entry: CommandEntry, argv: CommandArgs): void {
  const server = ctx.server
  server.stats.commandsProcessed++
  entry.calls++
  // A write marks the clients WATCHing the keys it changes (redis signalModifiedKey), when there are any.
  const capture = entry.writes && server.watchedKeys.size > 0 ? server.watchedKeys.capture(entry, argv, server.registry) : undefined
  let succeeded = true
  try {
    entry.spec.handler(ctx, argv)
  } catch (error) {
    succeeded = false
    failed(ctx, entry, error)
  }
  if (capture !== undefined) server.watchedKeys.touchChanged(capture, server.registry, succeeded)
}

function failed(ctx: CommandContext, entry: CommandEntry, error: unknown): void {
  entry.failedCalls++
  ctx.server.stats.errorReplies++
  if (error instanceof ReplyError) {
    ctx.client.reply.error(error.message, error.encoding)
  } else {
    ctx.server.log.warning(`internal error in ${entry.spec.name}: ${(error as Error)?.stack ?? String(error)}`)
    ctx.client.reply.error(ERR.INTERNAL)
  }
}

function reject(ctx: CommandContext, entry: CommandEntry, text: string): CommandEntry {
  ctx.server.stats.commandsProcessed++
  entry.rejectedCalls++
  ctx.server.stats.errorReplies++
  ctx.client.reply.error(refuseInTransaction(ctx.client, entry, text, ctx.server))
  return entry
}
