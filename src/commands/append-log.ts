/** BGREWRITEAOF: fold the append-only log into a fresh snapshot and start an empty one. */
import type { CommandContext } from './context.js'
import { ReplyError } from './reply-error.js'

/** BGREWRITEAOF → +Background append only file rewriting started (redis aof.c bgrewriteaofCommand) */
export function bgrewriteaof(ctx: CommandContext): void {
  // redis 7.0: inside EXEC the rewrite is scheduled, to start once the transaction is over.
  if (ctx.server.persistence.inTransaction) {
    setImmediate(() => ctx.server.persistence.logRewriter.start())
    ctx.client.reply.simple('Background append only file rewriting scheduled')
    return
  }
  if (ctx.server.persistence.logRewriter.start() === 'in-progress') {
    throw new ReplyError('ERR Background append only file rewriting already in progress')
  }
  ctx.client.reply.simple('Background append only file rewriting started')
}
