/**
 * The one place that checks a command before it runs: lookup, arity, authentication, loading.
 * Handlers never re-check these. Errors thrown by handlers become replies here.
 */
import type { CommandContext } from './context.js'
import { arityAccepts, type CommandEntry } from './table.js'
import { ERR, ReplyError, unknownCommandText, wrongArityText } from './reply-error.js'
import { MemoryGuard } from '../store/memory-guard.js'

const NOAUTH = 'NOAUTH Authentication required.'
const LOADING = 'LOADING Redis is loading the dataset in memory'
/** redis 7.0 server.c shared.oomerr. */
export const OOM = "OOM command not allowed when used memory > 'maxmemory'."

/** Runs one command and writes its reply. Returns the table entry that ran, if any. */
export function dispatch(ctx: CommandContext, argv: Buffer[]): CommandEntry | undefined {
  const { client, server } = ctx
  const reply = client.reply
  const stats = server.stats
  const entry = lookupCommand(ctx, argv[0]!)
  stats.commandsProcessed++
  if (entry === undefined) {
    stats.errorReplies++
    reply.error(unknownCommandText(argv))
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
  if (maxmemory > 0 && spec.flags.includes('denyoom') && MemoryGuard.of(server.registry).isOverLimit(maxmemory)) {
    return reject(ctx, entry, OOM)
  }
  entry.calls++
  try {
    spec.handler(ctx, argv)
  } catch (error) {
    entry.failedCalls++
    stats.errorReplies++
    if (error instanceof ReplyError) {
      reply.error(error.message)
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

/** Commands by the exact bytes a client sent (most send one spelling), falling back to lower case. */
const spellingCache = new WeakMap<object, Map<string, CommandEntry>>()

function lookupCommand(ctx: CommandContext, name: Buffer): CommandEntry | undefined {
  const table = ctx.server.commands
  let cache = spellingCache.get(table)
  if (cache === undefined) {
    cache = new Map()
    spellingCache.set(table, cache)
  }
  const spelled = name.toString('latin1')
  const hit = cache.get(spelled)
  // A renamed or removed command must not answer to its old spelling.
  if (hit !== undefined && table.get(hit.lowerName) === hit) return hit
  const entry = table.get(spelled.toLowerCase())
  if (entry !== undefined && cache.size < 1024) cache.set(spelled, entry)
  return entry
}
