/**
 * CLIENT REPLY, NO-EVICT, UNBLOCK, and the client-side caching subcommands (TRACKING, CACHING,
 * GETREDIR, TRACKINGINFO), as redis 7.0 networking.c clientCommand answers them. bfs has no
 * client-side caching: TRACKING OFF is accepted, TRACKING ON refused with a clear error, and the
 * rest answer as redis does for a client that never turned tracking on.
 */
import type { ClientSession, CommandContext } from './context.js'
import type { CommandArgs } from '../protocol/command-args.js'
import { ERR, ReplyError, subcommandSyntaxText } from './reply-error.js'
import { parseInteger } from './args.js'

/** CLIENT REPLY ON|OFF|SKIP → +OK for ON; OFF and SKIP answer nothing (the client's replies are dropped: server/client.ts) */
export function clientReply(ctx: CommandContext, argv: CommandArgs): void {
  const client = ctx.client
  if (argv.isKeyword(2, 'ON')) {
    client.replyMode = undefined
    client.reply.simple('OK')
  } else if (argv.isKeyword(2, 'OFF')) client.replyMode = 'off'
  else if (argv.isKeyword(2, 'SKIP')) {
    // redis: SKIP while OFF changes nothing; else the next command's reply is dropped.
    if (client.replyMode !== 'off') client.replyMode = 'skip'
  } else throw new ReplyError(ERR.SYNTAX)
}

/**
 * After a command of a client whose replies were off or skipped when it began (`before`; `mark`:
 * its pending bytes then): drops the command's reply unless it turned replies on, and a SKIP
 * lasts one command (redis commandProcessed).
 */
export function applyReplyMode(client: ClientSession, before: ClientSession['replyMode'], mark: number): void {
  const now = client.replyMode
  if (now === 'off' || now === 'skip') client.reply.truncate(mark)
  if (before === 'skip' && now === 'skip') client.replyMode = undefined
}

/** CLIENT NO-EVICT | NO-TOUCH ON|OFF → +OK (bfs evicts no client and keeps no access times; NO-EVICT shows as flag e) */
export function clientNoEvict(ctx: CommandContext, argv: CommandArgs): void {
  let on: boolean
  if (argv.isKeyword(2, 'ON')) on = true
  else if (argv.isKeyword(2, 'OFF')) on = false
  else throw new ReplyError(ERR.SYNTAX)
  if (argv.isKeyword(1, 'NO-EVICT')) ctx.client.noEvict = on
  ctx.client.reply.simple('OK')
}

/** redis 7.0 blocked.c: what a client unblocked with CLIENT UNBLOCK id ERROR receives. */
const UNBLOCKED = 'UNBLOCKED client unblocked via CLIENT UNBLOCK'

/** CLIENT UNBLOCK id [TIMEOUT|ERROR] → 1 when the client was blocked in WAIT (it answers now), else 0 */
export function clientUnblock(ctx: CommandContext, argv: CommandArgs): void {
  if (argv.length > 4) throw new ReplyError(subcommandSyntaxText(argv.get(0), argv.get(1)), 'latin1')
  let error = false
  if (argv.length === 4) {
    if (argv.isKeyword(3, 'TIMEOUT')) error = false
    else if (argv.isKeyword(3, 'ERROR')) error = true
    else throw new ReplyError('ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR')
  }
  const id = parseInteger(argv.get(2))
  if (id === undefined) throw new ReplyError(ERR.NOT_INTEGER)
  let unblocked = false
  for (const other of ctx.server.clients()) {
    // Only WAIT blocks with a timeout; a client waiting for CLIENT PAUSE's end is not unblocked (as redis).
    if (other.id === id && other.peer !== undefined) unblocked = ctx.server.masterSide.waits.unblock(other.peer, error ? UNBLOCKED : undefined)
  }
  ctx.client.reply.integer(unblocked ? 1 : 0)
}

/** CLIENT TRACKING ON|OFF [options] → +OK for OFF; bfs has no client-side caching, so ON is refused */
export function clientTracking(ctx: CommandContext, argv: CommandArgs): void {
  if (argv.isKeyword(2, 'OFF')) ctx.client.reply.simple('OK')
  else if (argv.isKeyword(2, 'ON')) throw new ReplyError('ERR CLIENT TRACKING is not supported by this server (bfs has no client-side caching)')
  else throw new ReplyError(ERR.SYNTAX)
}

/** CLIENT CACHING YES|NO → redis's error for a client not tracking in OPTIN/OPTOUT mode (every bfs client) */
export function clientCaching(ctx: CommandContext, argv: CommandArgs): void {
  void argv
  void ctx
  throw new ReplyError('ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled')
}

/** CLIENT GETREDIR → -1 (tracking is off) */
export function clientGetredir(ctx: CommandContext): void {
  ctx.client.reply.integer(-1)
}

/** CLIENT TRACKINGINFO → flags [off], redirect -1, prefixes [] (redis for a client with tracking off) */
export function clientTrackinginfo(ctx: CommandContext): void {
  const reply = ctx.client.reply
  reply.map(3)
  reply.bulk('flags')
  reply.set(1)
  reply.bulk('off')
  reply.bulk('redirect')
  reply.integer(-1)
  reply.bulk('prefixes')
  reply.array(0)
}

/** redis 7.0 networking.c clientCommand's HELP lines, by subcommand, in its order. */
export const CLIENT_HELP: Readonly<Record<string, readonly string[]>> = {
  CACHING: ['CACHING (YES|NO)', '    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.'],
  GETREDIR: ['GETREDIR', '    Return the client ID we are redirecting to when tracking is enabled.'],
  GETNAME: ['GETNAME', '    Return the name of the current connection.'],
  ID: ['ID', '    Return the ID of the current connection.'],
  INFO: ['INFO', '    Return information about the current client connection.'],
  KILL: [
    'KILL <ip:port>', '    Kill connection made from <ip:port>.', 'KILL <option> <value> [<option> <value> [...]]', '    Kill connections. Options are:',
    '    * ADDR (<ip:port>|<unixsocket>:0)', '      Kill connections made from the specified address', '    * LADDR (<ip:port>|<unixsocket>:0)',
    '      Kill connections made to specified local address', '    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)', '      Kill connections by type.',
    '    * USER <username>', '      Kill connections authenticated by <username>.', '    * SKIPME (YES|NO)', '      Skip killing current connection (default: yes).',
  ],
  LIST: ['LIST [options ...]', '    Return information about client connections. Options:', '    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)', '      Return clients of specified type.'],
  UNPAUSE: ['UNPAUSE', '    Stop the current client pause, resuming traffic.'],
  PAUSE: ['PAUSE <timeout> [WRITE|ALL]', '    Suspend all, or just write, clients for <timeout> milliseconds.'],
  REPLY: ['REPLY (ON|OFF|SKIP)', '    Control the replies sent to the current connection.'],
  SETNAME: ['SETNAME <name>', '    Assign the name <name> to the current connection.'],
  UNBLOCK: ['UNBLOCK <clientid> [TIMEOUT|ERROR]', '    Unblock the specified blocked client.'],
  TRACKING: ['TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]', '         [OPTIN] [OPTOUT] [NOLOOP]', '    Control server assisted client side caching.'],
  TRACKINGINFO: ['TRACKINGINFO', '    Report tracking status for the current connection.'],
  'NO-EVICT': ['NO-EVICT (ON|OFF)', '    Protect current client connection from eviction.'],
}
