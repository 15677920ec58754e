/** CLIENT PAUSE and CLIENT UNPAUSE; the pauses and what they hold are state/client-pause.ts. */
import type { CommandContext } from '../kernel/context.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { ERR, ReplyError, subcommandSyntaxText } from '../kernel/reply-error.js'
import { parseInteger } from '../kernel/args.js'
import type { PauseType } from '../state/client-pause.js'

/** CLIENT PAUSE timeout [WRITE|ALL] → +OK */
export function clientPause(ctx: CommandContext, argv: CommandArgs): void {
  if (argv.length > 4) throw new ReplyError(subcommandSyntaxText(argv.get(0), argv.get(1)), 'latin1')
  let type: PauseType = 'all'
  if (argv.length === 4) {
    if (argv.isKeyword(3, 'WRITE')) type = 'write'
    else if (argv.isKeyword(3, 'ALL')) type = 'all'
    else throw new ReplyError(ERR.CLIENT_PAUSE_MODE)
  }
  // redis timeout.c getTimeoutFromObjectOrReply, UNIT_MILLISECONDS.
  const timeout = parseInteger(argv.get(2))
  if (timeout === undefined) throw new ReplyError(ERR.TIMEOUT_NOT_INTEGER)
  if (timeout < 0) throw new ReplyError(ERR.TIMEOUT_NEGATIVE)
  ctx.server.pause.pause('client', Date.now() + timeout, type)
  ctx.client.reply.simple('OK')
}

/** CLIENT UNPAUSE → +OK */
export function clientUnpause(ctx: CommandContext): void {
  ctx.server.pause.unpause('client')
  ctx.client.reply.simple('OK')
}
