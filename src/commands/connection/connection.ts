/** Connection commands: PING, ECHO, QUIT, HELLO, AUTH, SELECT, RESET, CLIENT and its subcommands, as redis 7.0 answers them. */
import type { CommandContext, ClientSession } from '../kernel/context.js'
import {
  ERR,
  ReplyError,
  helloSyntaxText,
  noSuchUserText,
  subcommandSyntaxText,
  unknownClientTypeText,
  unrecognizedOptionText,
} from '../kernel/reply-error.js'
import { isKeyword, parseInteger, text } from '../kernel/args.js'
import { REDIS_VERSION } from '../../runtime/version.js'
import { writeModuleList } from '../kernel/modules.js'
import { PONG } from '../../protocol/shared-replies.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { stopMonitoring } from './monitor.js'
import { logDenial } from '../kernel/acl-check.js'
import { clientInfoLine, clientType, type ClientType } from '../kernel/client-info.js'
import { DEFAULT_USER } from '../state/acl/acl-users.js'

/** PING [message] → +PONG or the message; subscribed in RESP2, `pong` and the message (or '') as an array (redis pingCommand) */
export function ping(ctx: CommandContext, argv: CommandArgs): void {
  const reply = ctx.client.reply
  if (ctx.client.subscriptions !== undefined && reply.protocol === 2) {
    reply.array(2)
    reply.bulk('pong')
    reply.bulk(argv.length === 1 ? '' : argv.get(1))
  } else if (argv.length === 1) reply.raw(PONG)
  else reply.bulk(argv.get(1))
}

/** ECHO message → message */
export function echo(ctx: CommandContext, argv: CommandArgs): void {
  ctx.client.reply.bulk(argv.get(1))
}

/** QUIT → +OK, then the connection closes */
export function quit(ctx: CommandContext): void {
  ctx.client.reply.simple('OK')
  ctx.client.closeAfterReply()
}

/**
 * The user name and password check shared by AUTH and HELLO ... AUTH (redis ACLAuthenticateUser):
 * the session becomes that user's; a failure is in ACL LOG (object: the command's own name).
 */
function authenticate(ctx: CommandContext, user: Buffer, password: Buffer, command: Buffer): boolean {
  const found = ctx.server.acl.authenticate(user, password)
  if (found === undefined) {
    logDenial(ctx, 'auth', Buffer.from(command), Buffer.from(user))
    return false
  }
  ctx.client.authenticated = true
  ctx.client.user = found.name
  return true
}

/** AUTH [username] password → +OK, or WRONGPASS */
export function auth(ctx: CommandContext, argv: CommandArgs): void {
  if (argv.length > 3) throw new ReplyError(ERR.SYNTAX)
  if (argv.length === 2 && ctx.server.acl.get(DEFAULT_USER)!.nopass) {
    // redis 7.0 acl.c authCommand
    throw new ReplyError(ERR.AUTH_WITHOUT_PASSWORD)
  }
  const user = argv.length === 3 ? argv.get(1) : Buffer.from('default')
  if (!authenticate(ctx, user, argv.get(argv.length - 1), argv.get(0))) throw new ReplyError(ERR.WRONGPASS)
  ctx.client.reply.simple('OK')
}

/** HELLO [protover [AUTH username password] [SETNAME clientname]] → the server's map */
export function hello(ctx: CommandContext, argv: CommandArgs): void {
  const client = ctx.client
  let protocol: 2 | 3 | undefined
  if (argv.length >= 2) {
    const version = parseInteger(argv.get(1))
    if (version === undefined) throw new ReplyError(ERR.PROTOCOL_VERSION_NOT_INTEGER)
    if (version < 2 || version > 3) throw new ReplyError(ERR.NOPROTO)
    protocol = version as 2 | 3
  }
  // redis 7.0 networking.c helloCommand acts on each option as it reads it: an AUTH or SETNAME
  // before a bad option or a wrong password stays done, and SETNAME works before authentication.
  for (let i = 2; i < argv.length; i++) {
    const more = argv.length - i - 1
    if (argv.isKeyword(i, 'AUTH') && more >= 2) {
      if (!authenticate(ctx, argv.get(i + 1), argv.get(i + 2), argv.get(0))) throw new ReplyError(ERR.WRONGPASS)
      i += 2
    } else if (argv.isKeyword(i, 'SETNAME') && more >= 1) {
      setClientName(client, argv.get(i + 1))
      i += 1
    } else {
      throw new ReplyError(helloSyntaxText(argv.get(i).toString('latin1')), 'latin1')
    }
  }
  if (!client.authenticated) {
    // redis 7.0's words (7.2 added "<proto>").
    throw new ReplyError(ERR.HELLO_NOAUTH)
  }
  if (protocol !== undefined) client.reply.protocol = protocol
  const reply = client.reply
  reply.map(7)
  reply.bulk('server')
  reply.bulk('redis')
  reply.bulk('version')
  reply.bulk(REDIS_VERSION)
  reply.bulk('proto')
  reply.integer(reply.protocol)
  reply.bulk('id')
  reply.integer(client.id)
  reply.bulk('mode')
  reply.bulk(ctx.server.cluster === undefined ? 'standalone' : 'cluster')
  reply.bulk('role')
  reply.bulk('master')
  reply.bulk('modules')
  writeModuleList(reply)
}

/** RESET → +RESET: back to RESP2, no name, not authenticated when a password is set */
export function reset(ctx: CommandContext): void {
  const client = ctx.client
  client.reply.protocol = 2
  client.name = ''
  // redis clearClientConnectionState: back to the default user, authenticated only if it needs no password.
  client.user = DEFAULT_USER
  client.authenticated = ctx.server.acl.defaultOpen
  // back in database 0,
  client.db = 0
  // out of any transaction, nothing watched.
  client.transaction = undefined
  ctx.server.watchedKeys.unwatchAll(client)
  // and out of the subscribed mode, with no unsubscribe confirmations.
  ctx.server.pubsub.unsubscribeAll(client)
  // and out of the monitor mode.
  stopMonitoring(ctx)
  // Cluster mode: no READONLY, no pending ASKING.
  client.clusterReadonly = false
  client.asking = false
  client.reply.simple('RESET')
}

/** redis networking.c validateClientAttr: no spaces, newlines or special characters. */
function setClientName(client: ClientSession, name: Buffer): void {
  for (const c of name) {
    if (c < 0x21 || c > 0x7e) throw new ReplyError(ERR.CLIENT_NAME_CHARACTERS)
  }
  client.name = name.toString('latin1')
}

/** CLIENT ID → the connection's id */
export function clientId(ctx: CommandContext): void {
  ctx.client.reply.integer(ctx.client.id)
}

/** CLIENT GETNAME → the name, or null */
export function clientGetname(ctx: CommandContext): void {
  const self = ctx.client
  if (self.name === '') self.reply.nullBulk()
  else self.reply.bulk(self.name)
}

/** CLIENT SETNAME name → +OK */
export function clientSetname(ctx: CommandContext, argv: CommandArgs): void {
  setClientName(ctx.client, argv.get(2))
  ctx.client.reply.simple('OK')
}

/** CLIENT SETINFO LIB-NAME|LIB-VER value → +OK */
export function clientSetinfo(ctx: CommandContext, argv: CommandArgs): void {
  const self = ctx.client
  const value = argv.get(3).toString('latin1')
  if (/[\s]/.test(value)) throw new ReplyError(ERR.CLIENT_LIB_CHARACTERS)
  if (argv.isKeyword(2, 'LIB-NAME')) self.libName = value
  else if (argv.isKeyword(2, 'LIB-VER')) self.libVersion = value
  else throw new ReplyError(unrecognizedOptionText(argv.get(2).toString('latin1')), 'latin1')
  self.reply.simple('OK')
}

/** CLIENT LIST → one line per client */
export function clientList(ctx: CommandContext, argv: CommandArgs): void {
  const lines: string[] = []
  for (const other of clientsToList(ctx, argv)) lines.push(clientInfoLine(ctx, other) + '\n')
  ctx.client.reply.verbatim(lines.join(''))
}

/** CLIENT INFO → the connection's own line */
export function clientInfo(ctx: CommandContext): void {
  ctx.client.reply.verbatim(clientInfoLine(ctx, ctx.client) + '\n')
}

/** redis 7.0 clientCommand's CLIENT LIST [TYPE type | ID id [id ...]]. */
function clientsToList(ctx: CommandContext, argv: CommandArgs): Iterable<ClientSession> {
  const argc = argv.length
  if (argc === 4 && argv.isKeyword(2, 'TYPE')) {
    const type = clientTypeByName(argv.get(3))
    return [...ctx.server.clients()].filter((other) => clientType(other) === type)
  }
  if (argc > 3 && argv.isKeyword(2, 'ID')) {
    const found: ClientSession[] = []
    for (let j = 3; j < argc; j++) {
      const id = parseInteger(argv.get(j))
      if (id === undefined) throw new ReplyError(ERR.INVALID_CLIENT_ID)
      for (const other of ctx.server.clients()) if (other.id === id) found.push(other)
    }
    return found
  }
  if (argc !== 2) throw new ReplyError(ERR.SYNTAX)
  return ctx.server.clients()
}

/** redis networking.c getClientTypeByName (slave is replica); any other name is an error. */
function clientTypeByName(name: Buffer): ClientType {
  if (isKeyword(name, 'NORMAL')) return 'normal'
  if (isKeyword(name, 'SLAVE') || isKeyword(name, 'REPLICA')) return 'replica'
  if (isKeyword(name, 'PUBSUB')) return 'pubsub'
  if (isKeyword(name, 'MASTER')) return 'master'
  throw new ReplyError(unknownClientTypeText(name.toString('latin1')), 'latin1')
}

/** CLIENT KILL ip:port | CLIENT KILL [ID id] [TYPE type] [USER user] [ADDR ip:port] [LADDR ip:port] [SKIPME yes|no] */
export function clientKill(ctx: CommandContext, argv: CommandArgs): void {
  const self = ctx.client
  if (argv.length === 3) {
    const addr = text(argv.get(2))
    for (const other of ctx.server.clients()) {
      if (other.addr === addr) {
        killClient(self, other)
        self.reply.simple('OK')
        return
      }
    }
    throw new ReplyError(ERR.NO_SUCH_CLIENT)
  }
  if (argv.length % 2 !== 0) throw new ReplyError(ERR.SYNTAX)
  let id: number | undefined
  let addr: string | undefined
  let laddr: string | undefined
  let skipMe = true
  let type: ClientType | undefined
  let user: string | undefined
  for (let i = 2; i < argv.length; i += 2) {
    const option = argv.get(i)
    const value = argv.get(i + 1)
    if (isKeyword(option, 'ID')) {
      id = parseInteger(value)
      if (id === undefined || id <= 0) throw new ReplyError(ERR.CLIENT_ID_NOT_POSITIVE)
    } else if (isKeyword(option, 'TYPE')) type = clientTypeByName(value)
    else if (isKeyword(option, 'USER')) {
      user = value.toString('latin1')
      if (ctx.server.acl.get(user) === undefined) throw new ReplyError(noSuchUserText(user), 'latin1')
    } else if (isKeyword(option, 'ADDR')) addr = text(value)
    else if (isKeyword(option, 'LADDR')) laddr = text(value)
    else if (isKeyword(option, 'SKIPME')) {
      if (isKeyword(value, 'YES')) skipMe = true
      else if (isKeyword(value, 'NO')) skipMe = false
      else throw new ReplyError(ERR.SYNTAX)
    } else throw new ReplyError(ERR.SYNTAX)
  }
  let killed = 0
  for (const other of [...ctx.server.clients()]) {
    if ((type !== undefined && clientType(other) !== type) || (id !== undefined && other.id !== id)) continue
    if (addr !== undefined && other.addr !== addr) continue
    if (laddr !== undefined && other.laddr !== laddr) continue
    if (user !== undefined && other.user !== user) continue
    if (skipMe && other === self) continue
    killClient(self, other)
    killed++
  }
  self.reply.integer(killed)
}

function killClient(self: ClientSession, other: ClientSession): void {
  if (other === self) self.closeAfterReply()
  else other.kill()
}

// CLIENT REPLY, NO-EVICT, UNBLOCK, and the client-side caching subcommands (TRACKING, CACHING,
// GETREDIR, TRACKINGINFO), as redis 7.0 networking.c clientCommand answers them. bfs has no
// client-side caching: TRACKING OFF is accepted, TRACKING ON refused with a clear error, and the
// rest answer as redis does for a client that never turned tracking on.

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

/** CLIENT UNBLOCK id [TIMEOUT|ERROR] → 1 when the client was blocked in WAIT (it answers now), else 0 */
export function clientUnblock(ctx: CommandContext, argv: CommandArgs): void {
  if (argv.length > 4) throw new ReplyError(subcommandSyntaxText(argv.get(0), argv.get(1)), 'latin1')
  let error = false
  if (argv.length === 4) {
    if (argv.isKeyword(3, 'TIMEOUT')) error = false
    else if (argv.isKeyword(3, 'ERROR')) error = true
    else throw new ReplyError(ERR.CLIENT_UNBLOCK_REASON)
  }
  const id = parseInteger(argv.get(2))
  if (id === undefined) throw new ReplyError(ERR.NOT_INTEGER)
  let unblocked = false
  for (const other of ctx.server.clients()) {
    // Only WAIT blocks with a timeout; a client waiting for CLIENT PAUSE's end is not unblocked (as redis).
    if (other.id === id && other.peer !== undefined)
      unblocked = ctx.server.masterSide.waits.unblock(other.peer, error ? ERR.UNBLOCKED_BY_CLIENT : undefined)
  }
  ctx.client.reply.integer(unblocked ? 1 : 0)
}

/** CLIENT TRACKING ON|OFF [options] → +OK for OFF; bfs has no client-side caching, so ON is refused */
export function clientTracking(ctx: CommandContext, argv: CommandArgs): void {
  if (argv.isKeyword(2, 'OFF')) ctx.client.reply.simple('OK')
  else if (argv.isKeyword(2, 'ON')) throw new ReplyError(ERR.CLIENT_TRACKING_UNSUPPORTED)
  else throw new ReplyError(ERR.SYNTAX)
}

/** CLIENT CACHING YES|NO → redis's error for a client not tracking in OPTIN/OPTOUT mode (every bfs client) */
export function clientCaching(ctx: CommandContext, argv: CommandArgs): void {
  void argv
  void ctx
  throw new ReplyError(ERR.CLIENT_CACHING_NOT_TRACKING)
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
    'KILL <ip:port>',
    '    Kill connection made from <ip:port>.',
    'KILL <option> <value> [<option> <value> [...]]',
    '    Kill connections. Options are:',
    '    * ADDR (<ip:port>|<unixsocket>:0)',
    '      Kill connections made from the specified address',
    '    * LADDR (<ip:port>|<unixsocket>:0)',
    '      Kill connections made to specified local address',
    '    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)',
    '      Kill connections by type.',
    '    * USER <username>',
    '      Kill connections authenticated by <username>.',
    '    * SKIPME (YES|NO)',
    '      Skip killing current connection (default: yes).',
  ],
  LIST: [
    'LIST [options ...]',
    '    Return information about client connections. Options:',
    '    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)',
    '      Return clients of specified type.',
  ],
  UNPAUSE: ['UNPAUSE', '    Stop the current client pause, resuming traffic.'],
  PAUSE: ['PAUSE <timeout> [WRITE|ALL]', '    Suspend all, or just write, clients for <timeout> milliseconds.'],
  REPLY: ['REPLY (ON|OFF|SKIP)', '    Control the replies sent to the current connection.'],
  SETNAME: ['SETNAME <name>', '    Assign the name <name> to the current connection.'],
  UNBLOCK: ['UNBLOCK <clientid> [TIMEOUT|ERROR]', '    Unblock the specified blocked client.'],
  TRACKING: [
    'TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]',
    '         [OPTIN] [OPTOUT] [NOLOOP]',
    '    Control server assisted client side caching.',
  ],
  TRACKINGINFO: ['TRACKINGINFO', '    Report tracking status for the current connection.'],
  'NO-EVICT': ['NO-EVICT (ON|OFF)', '    Protect current client connection from eviction.'],
}
