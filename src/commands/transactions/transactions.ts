/**
 * MULTI, DISCARD, WATCH and UNWATCH, as redis 7.0's multi.c. EXEC has a row and no handler of its
 * own: dispatch runs it (kernel/transaction.ts), since it runs the queued commands as dispatch
 * does; queueing between MULTI and EXEC is dispatch's too.
 */
import { keyspace, type CommandContext } from '../kernel/context.js'
import { discardTransaction } from '../kernel/transaction.js'
import { ERR, ReplyError } from '../kernel/reply-error.js'
import type { CommandArgs } from '../../protocol/command-args.js'

/** MULTI → +OK */
export function multi(ctx: CommandContext): void {
  if (ctx.client.transaction !== undefined) throw new ReplyError(ERR.MULTI_NESTED)
  ctx.client.transaction = { queued: [], failed: false }
  ctx.client.reply.simple('OK')
}

/** DISCARD → +OK */
export function discard(ctx: CommandContext): void {
  if (ctx.client.transaction === undefined) throw new ReplyError(ERR.DISCARD_WITHOUT_MULTI)
  discardTransaction(ctx.client, ctx.server)
  ctx.client.reply.simple('OK')
}

/** WATCH key [key ...] → +OK */
export function watch(ctx: CommandContext, argv: CommandArgs): void {
  if (ctx.client.transaction !== undefined) throw new ReplyError(ERR.WATCH_INSIDE_MULTI)
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
