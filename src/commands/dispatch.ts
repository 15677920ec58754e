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
    reply.error(unknownCommandText(argv.toArray()), 'latin1')
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
  if (maxmemory > 0 && entry.deniedOverMaxmemory && MemoryGuard.of(server.registry).isOverLimit(maxmemory)) {
    return reject(ctx, entry, OOM)
  }
  if (entry.deniedOnDiskError) {
    const refusal = diskErrorRefusal(server)
    if (refusal !== undefined) return reject(ctx, entry, refusal)
  }
  entry.calls++
  try {
    spec.handler(ctx, argv)
  } catch (error) {
    entry.failedCalls++
    stats.errorReplies++
    if (error instanceof ReplyError) {
      reply.error(error.message, error.encoding)
    } else {
      server.log.warning(`internal error in ${spec.name}: ${(error as Error)?.stack ?? String(error)}`)
      reply.error(ERR.INTERNAL)
    }
  }
  return entry
}

function reject(ctx: CommandContext, entry: CommandEntry, text: string): CommandEntry {
  entry.rejectedCalls++
  ctx.server.stats.errorReplies++
  ctx.client.reply.error(text)
  return entry
}
