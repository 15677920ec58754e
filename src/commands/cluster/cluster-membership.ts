/**
 * The CLUSTER subcommands that change who is in the cluster and whom this node replicates
 * (redis 7.0.15 cluster.c clusterCommand): MEET, FORGET, REPLICATE, RESET; and READONLY,
 * READWRITE and ASKING, the connection flags routing reads (cluster-routing.ts).
 */
import net from 'node:net'
import { keyspace, type CommandContext } from '../kernel/context.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { ERR, ReplyError, meetRefusalText } from '../kernel/reply-error.js'
import { parseInteger } from '../kernel/args.js'
import { clusterOf, namedNode, subcommandSyntaxError } from './cluster-view.js'

/** redis CLUSTER_PORT_INCR: the bus port is the port + 10000 unless given. */
const PORT_INCR = 10000

/** The ip of an "ip:port" (or "[v6]:port") address. */
function ipOf(address: string): string {
  const colon = address.lastIndexOf(':')
  const ip = colon === -1 ? address : address.slice(0, colon)
  return ip.startsWith('[') ? ip.slice(1, -1) : ip
}

/** CLUSTER MEET ip port [bus-port] → +OK; the pull then identifies the node at that address */
export function clusterMeet(ctx: CommandContext, argv: CommandArgs): void {
  if (argv.length !== 4 && argv.length !== 5) throw subcommandSyntaxError(argv)
  const state = clusterOf(ctx)
  const host = argv.get(2).toString('utf8')
  const portText = argv.get(3).toString('utf8')
  const port = parseInteger(argv.get(3))
  if (port === undefined) throw new ReplyError(meetRefusalText('TCP base port', portText))
  let cport = port + PORT_INCR
  if (argv.length === 5) {
    const given = parseInteger(argv.get(4))
    if (given === undefined) throw new ReplyError(meetRefusalText('TCP bus port', argv.get(4).toString('utf8')))
    cport = given
  }
  // redis clusterStartHandshake: an IP (no host name) and ports in 1..65535.
  const ip = host.startsWith('::ffff:') ? host.slice(7) : host
  if (net.isIP(ip) === 0 || port <= 0 || port > 65535 || cport <= 0 || cport > 65535) {
    throw new ReplyError(meetRefusalText('node address', `${host}:${portText}`))
  }
  state.learnMyIp(ipOf(ctx.client.laddr))
  const mine = state.myself.port === port && (state.myself.ip === ip || state.myself.ip === '')
  if (!mine && state.nodeByAddress(ip, port) === undefined) {
    state.pendingMeets.set(`${ip}:${port}`, { host: ip, port, cport, sinceMs: Date.now() })
  }
  ctx.client.reply.simple('OK')
}

/** CLUSTER FORGET node-id → +OK; the node is blacklisted for 60 s */
export function clusterForget(ctx: CommandContext, argv: CommandArgs): void {
  const state = clusterOf(ctx)
  const node = namedNode(state, argv, 2)
  if (node === state.myself) throw new ReplyError(ERR.FORGET_MYSELF)
  if (!state.myself.isMaster && state.myself.masterId === node.id) throw new ReplyError(ERR.FORGET_MY_MASTER)
  state.forget(node)
  ctx.client.reply.simple('OK')
}

/** CLUSTER REPLICATE node-id → +OK; this node replicates that master */
export function clusterReplicate(ctx: CommandContext, argv: CommandArgs): void {
  const refused = clusterOf(ctx).replicate(argv.get(2).toString('utf8'))
  if (refused !== undefined) throw new ReplyError(refused)
  ctx.client.reply.simple('OK')
}

/** CLUSTER RESET [HARD|SOFT] → +OK; a master must hold no keys */
export function clusterReset(ctx: CommandContext, argv: CommandArgs): void {
  let hard = false
  if (argv.length === 3) {
    if (argv.isKeyword(2, 'HARD')) hard = true
    else if (!argv.isKeyword(2, 'SOFT')) throw new ReplyError(ERR.SYNTAX)
  } else if (argv.length > 3) throw subcommandSyntaxError(argv)
  const state = clusterOf(ctx)
  if (state.myself.isMaster && keyspace(ctx).size !== 0) throw new ReplyError(ERR.RESET_WITH_KEYS)
  state.reset(hard)
  ctx.client.reply.simple('OK')
}

/** READONLY → +OK: a replica serves this connection reads of its master's slots */
export function readonly(ctx: CommandContext): void {
  if (ctx.server.cluster === undefined) throw new ReplyError(ERR.CLUSTER_DISABLED)
  ctx.client.clusterReadonly = true
  ctx.client.reply.simple('OK')
}

/** READWRITE → +OK: READONLY undone */
export function readwrite(ctx: CommandContext): void {
  if (ctx.server.cluster === undefined) throw new ReplyError(ERR.CLUSTER_DISABLED)
  ctx.client.clusterReadonly = false
  ctx.client.reply.simple('OK')
}

/** ASKING → +OK: the next command may use a slot this node is importing */
export function asking(ctx: CommandContext): void {
  if (ctx.server.cluster === undefined) throw new ReplyError(ERR.CLUSTER_DISABLED)
  ctx.client.asking = true
  ctx.client.reply.simple('OK')
}
