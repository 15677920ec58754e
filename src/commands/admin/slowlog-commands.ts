/** SLOWLOG GET/LEN/RESET: the log itself and what enters it are state/slowlog.ts. */
import type { CommandContext } from '../kernel/context.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { ERR, ReplyError, subcommandSyntaxText } from '../kernel/reply-error.js'
import { parseInteger } from '../kernel/args.js'

/** SLOWLOG GET [count] → the newest entries (10 unless told; -1: all) */
export function slowlogGet(ctx: CommandContext, argv: CommandArgs): void {
  if (argv.length > 3) throw new ReplyError(subcommandSyntaxText(argv.get(0), argv.get(1)))
  const { slowlog, config } = ctx.server
  let count = 10
  if (argv.length === 3) {
    const asked = parseInteger(argv.get(2))
    if (asked === undefined || asked < -1) throw new ReplyError(ERR.SLOWLOG_COUNT)
    count = asked === -1 ? slowlog.length : asked
  }
  if (config['slowlog-log-slower-than'] >= 0) slowlog.trim(config['slowlog-max-len'])
  const reply = ctx.client.reply
  const entries = slowlog.newest(count)
  reply.array(entries.length)
  for (const entry of entries) {
    reply.array(6)
    reply.integer(entry.id)
    reply.integer(entry.unixSeconds)
    reply.integer(entry.micros)
    reply.array(entry.argv.length)
    for (const arg of entry.argv) reply.bulk(arg)
    reply.bulk(entry.addr)
    reply.bulk(entry.name)
  }
}

/** SLOWLOG LEN → :entries */
export function slowlogLen(ctx: CommandContext): void {
  const { slowlog, config } = ctx.server
  if (config['slowlog-log-slower-than'] >= 0) slowlog.trim(config['slowlog-max-len'])
  ctx.client.reply.integer(slowlog.length)
}

/** SLOWLOG RESET → +OK */
export function slowlogReset(ctx: CommandContext): void {
  ctx.server.slowlog.reset()
  ctx.client.reply.simple('OK')
}
