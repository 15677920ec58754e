/**
 * The master's replication commands (redis replication.c): REPLCONF, PSYNC, SYNC and WAIT. What
 * they do lives in replication/master-side.ts; these parse and check as redis does, in its order.
 */
import type { CommandContext } from '../kernel/context.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import type { PeerConnection } from '../../replication/replica-peer.js'
import {
  ERR,
  ReplyError,
  replconfIpTooLongText,
  unrecognizedReplconfText,
  unsupportedRdbFilterText,
  valueOutOfRangeText,
} from '../kernel/reply-error.js'
import { isKeyword, parseInteger, text } from '../kernel/args.js'

/** redis NET_HOST_STR_LEN: an announced address must be shorter. */
const NET_HOST_STR_LEN = 256

/** The connection behind the client; commands that need a socket refuse sessions without one (HTTP, the log's replay). */
function peerOf(ctx: CommandContext): PeerConnection {
  const peer = ctx.client.peer
  if (peer === undefined) throw new ReplyError(ERR.NEEDS_CONNECTION)
  return peer
}

/** REPLCONF <option> <value> ... (redis replconfCommand): +OK, except ACK and GETACK, which answer nothing. */
export function replconf(ctx: CommandContext, argv: CommandArgs): void {
  if (argv.length % 2 === 0) throw new ReplyError(ERR.SYNTAX)
  const master = ctx.server.masterSide
  for (let j = 1; j < argv.length; j += 2) {
    const value = argv.get(j + 1)
    if (argv.isKeyword(j, 'LISTENING-PORT')) {
      const port = parseInteger(value)
      if (port === undefined) throw new ReplyError(ERR.NOT_INTEGER)
      master.handshake(peerOf(ctx)).listeningPort = port
    } else if (argv.isKeyword(j, 'IP-ADDRESS')) {
      if (value.length >= NET_HOST_STR_LEN) throw new ReplyError(replconfIpTooLongText(value.length))
      master.handshake(peerOf(ctx)).announcedIp = text(value)
    } else if (argv.isKeyword(j, 'CAPA')) {
      // Capabilities this master does not know are ignored.
      const replica = master.handshake(peerOf(ctx))
      if (isKeyword(value, 'EOF')) replica.capaEof = true
      else if (isKeyword(value, 'PSYNC2')) replica.capaPsync2 = true
    } else if (argv.isKeyword(j, 'ACK')) {
      // Only from a replica, and never answered.
      const offset = parseInteger(value)
      if (ctx.client.peer !== undefined && offset !== undefined) master.ack(ctx.client.peer, offset)
      return
    } else if (argv.isKeyword(j, 'GETACK')) {
      // From our master: the replica side answers with an ACK at once; never a reply.
      master.onGetack(ctx.client)
      return
    } else if (argv.isKeyword(j, 'RDB-ONLY')) {
      // redis object.c getRangeLongFromObjectOrReply(0, 1).
      const only = parseInteger(value)
      if (only === undefined) throw new ReplyError(ERR.NOT_INTEGER)
      if (only < 0 || only > 1) throw new ReplyError(valueOutOfRangeText(0, 1))
      master.handshake(peerOf(ctx)).rdbOnly = only === 1
    } else if (argv.isKeyword(j, 'RDB-FILTER-ONLY')) {
      const filters = text(value)
        .split(/\s+/)
        .filter((word) => word !== '')
      // redis knows one filter, "functions"; bfs has no functions, so the payload is empty either way.
      const unsupported = filters.find((filter) => filter.toLowerCase() !== 'functions')
      if (unsupported !== undefined) throw new ReplyError(unsupportedRdbFilterText(unsupported))
      master.handshake(peerOf(ctx)).excludeData = true
    } else {
      throw new ReplyError(unrecognizedReplconfText(text(argv.get(j))), 'latin1')
    }
  }
  ctx.client.reply.simple('OK')
}

/** SYNC and PSYNC's checks before anything happens (redis syncCommand); false: nothing to do. */
function syncAllowed(ctx: CommandContext, peer: PeerConnection): boolean {
  // Already a replica: ignored, no reply.
  if (peer.kind === 'replica') return false
  const master = ctx.server.masterSide
  const refusal = master.syncRefusal()
  if (refusal !== undefined) throw new ReplyError(refusal)
  if (peer.outputBytes() > 0) throw new ReplyError(ERR.SYNC_PENDING_OUTPUT)
  const replica = master.handshake(peer)
  if (replica.excludeData && !replica.capaEof) throw new ReplyError(ERR.FILTERED_REPLICA_NEEDS_EOF)
  return true
}

/** PSYNC <replid> <offset> (redis syncCommand → masterTryPartialResynchronization). */
export function psync(ctx: CommandContext, argv: CommandArgs): void {
  const peer = peerOf(ctx)
  if (!syncAllowed(ctx, peer)) return
  const offset = parseInteger(argv.get(2))
  if (offset === undefined) {
    ctx.server.log.warning(
      `Replica ${ctx.server.masterSide.handshake(peer).label} asks for synchronization but with a wrong offset`,
    )
    throw new ReplyError(ERR.NOT_INTEGER)
  }
  ctx.server.masterSide.sync(peer, { replid: text(argv.get(1)), offset })
}

/** SYNC: the old protocol (redis-cli --replica): a full sync with no +FULLRESYNC line. */
export function sync(ctx: CommandContext): void {
  const peer = peerOf(ctx)
  if (!syncAllowed(ctx, peer)) return
  ctx.server.masterSide.sync(peer, undefined)
}

/** WAIT numreplicas timeout (redis waitCommand): the count of replicas that acknowledged the client's last write. */
export function wait(ctx: CommandContext, argv: CommandArgs): void {
  if (ctx.server.replication.role === 'replica') {
    throw new ReplyError(ERR.WAIT_ON_REPLICA)
  }
  const replicas = parseInteger(argv.get(1))
  if (replicas === undefined) throw new ReplyError(ERR.NOT_INTEGER)
  // redis timeout.c getTimeoutFromObjectOrReply, milliseconds.
  const timeoutMs = parseInteger(argv.get(2))
  if (timeoutMs === undefined) throw new ReplyError(ERR.TIMEOUT_NOT_INTEGER)
  if (timeoutMs < 0) throw new ReplyError(ERR.TIMEOUT_NEGATIVE)
  const peer = ctx.client.peer
  const master = ctx.server.masterSide
  const mayBlock = peer !== undefined && ctx.client.transaction === undefined
  const acked = peer === undefined ? master.countAcks(0) : master.waits.wait(peer, replicas, timeoutMs, mayBlock)
  if (acked !== undefined) ctx.client.reply.integer(acked)
}
