/**
 * The one place that checks a command before it runs: lookup, arity, authentication, loading,
 * maxmemory, persistence errors.
 * Handlers never re-check these. Errors thrown by handlers become replies here.
 */
import type { CommandContext } from './context.js'
import { arityAccepts, type CommandEntry } from './table.js'
import { ERR, ReplyError, unknownCommandText, wrongArityText } from './reply-error.js'
import { MemoryGuard } from '../store/memory-guard.js'
import { diskErrorRefusal } from './disk-error.js'
import type { CommandArgs } from '../protocol/command-args.js'
import { exec, queueCommand, refuseInTransaction, runsInsideTransaction } from './transaction.js'

const NOAUTH = 'NOAUTH Authentication required.'
const LOADING = 'LOADING Redis is loading the dataset in memory'
/** redis 7.0 server.c shared.oomerr. */
export const OOM = "OOM command not allowed when used memory > 'maxmemory'."

/** Runs one command and writes its reply. Returns the table entry that ran, if any. */
export function dispatch(ctx: CommandContext, argv: CommandArgs): CommandEntry | undefined {
  const { client, server } = ctx
  const reply = client.reply
  const stats = server.stats
  const entry = server.commands.lookup(argv.bytes(0), argv.start(0), argv.end(0))
  stats.commandsProcessed++
  if (entry === undefined) {
    stats.errorReplies++
    reply.error(refuseInTransaction(client, undefined, unknownCommandText(argv.toArray()), server), 'latin1')
    return undefined
  }
  client.lastCommand = entry.lowerName
  const spec = entry.spec
  if (!arityAccepts(spec, argv.length)) {
    return reject(ctx, entry, wrongArityText(spec.name))
  }
  if (!client.authenticated && !entry.allowedWithoutAuth) {
    return reject(ctx, entry, NOAUTH)
  }
  if (server.loading && !entry.allowedWhileLoading) {
    return reject(ctx, entry, LOADING)
  }
  // redis 7.0 processCommand: with maxmemory set, a denyoom command is refused while used > maxmemory.
  const maxmemory = server.config.maxmemory
  const transaction = client.transaction
  // redis 7.0: EXEC is refused as the commands it would run are (is_denyoom_command, is_write_command).
  const execWrites = transaction !== undefined && entry.lowerName === 'exec' && transaction.queued.some(({ entry: queued }) => queued.deniedOnDiskError && queued.spec.flags.includes('write'))
  const execDenyOom = transaction !== undefined && entry.lowerName === 'exec' && transaction.queued.some(({ entry: queued }) => queued.deniedOverMaxmemory)
  if (maxmemory > 0 && (entry.deniedOverMaxmemory || execDenyOom) && MemoryGuard.of(server.registry).isOverLimit(maxmemory)) {
    return reject(ctx, entry, OOM)
  }
  if (entry.deniedOnDiskError || execWrites) {
    const refusal = diskErrorRefusal(server)
    if (refusal !== undefined) return reject(ctx, entry, refusal)
  }
  if (transaction !== undefined && !runsInsideTransaction(entry)) {
    if (entry.spec.flags.includes('no_multi')) return reject(ctx, entry, 'ERR Command not allowed inside a transaction')
    queueCommand(ctx, entry, argv)
    return entry
  }
  if (entry.lowerName === 'exec') {
    entry.calls++
    try {
      exec(ctx, run)
    } catch (error) {
      failed(ctx, entry, error)
    }
    return entry
  }
  run(ctx, entry, argv)
  return entry
}

/** Runs a command whose checks passed (dispatch's, or MULTI's when it was queued). */
function run(ctx: CommandContext, entry: CommandEntry, argv: CommandArgs): void {
  const server = ctx.server
  entry.calls++
  try {
    entry.spec.handler(ctx, argv)
  } catch (error) {
    failed(ctx, entry, error)
  }
  // A write marks the clients WATCHing its keys (redis signalModifiedKey), when there are any.
  if (server.watchedKeys.size > 0 && entry.spec.flags.includes('write')) server.watchedKeys.touchKeysOf(entry, argv)
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
  entry.rejectedCalls++
  ctx.server.stats.errorReplies++
  ctx.client.reply.error(refuseInTransaction(ctx.client, entry, text, ctx.server))
  return entry
}
