/**
 * REPLICAOF / SLAVEOF and ROLE (redis 7.0 replication.c replicaofCommand, roleCommand). The link
 * itself is replication/replica-link.ts.
 */
import type { CommandContext } from '../kernel/context.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { isKeyword, parseInteger, text } from '../kernel/args.js'
import { ERR, ReplyError } from '../kernel/reply-error.js'
import { replicaRole } from '../../replication/replica-info.js'
import { clusterReplicaofAddress, clusterReplicaofNoOne } from '../kernel/cluster-replicaof.js'

/** REPLICAOF host port | NO ONE → +OK, or +OK Already connected to specified master */
export function replicaof(ctx: CommandContext, argv: CommandArgs): void {
  const link = ctx.server.replicaLink
  const client = ctx.client
  // Cluster mode: NO ONE is a takeover, host port a CLUSTER REPLICATE (cluster-replicaof.ts).
  const cluster = ctx.server.cluster !== undefined
  if (isKeyword(argv.get(1), 'NO') && isKeyword(argv.get(2), 'ONE')) {
    if (cluster) return clusterReplicaofNoOne(ctx)
    if (ctx.server.replication.role === 'replica') {
      link.unsetMaster()
      ctx.server.log.notice(`MASTER MODE enabled (user request from 'id=${client.id} addr=${client.addr}')`)
    }
    client.reply.simple('OK')
    return
  }
  if (client.kind === 'replica') throw new ReplyError(ERR.REPLICAOF_FROM_REPLICA)
  const port = parseInteger(argv.get(2))
  if (port === undefined || port < 0 || port > 65535) throw new ReplyError(ERR.INVALID_MASTER_PORT)
  const host = text(argv.get(1))
  if (cluster) return clusterReplicaofAddress(ctx, host, port)
  if (
    ctx.server.replication.role === 'replica' &&
    link.masterHost.toLowerCase() === host.toLowerCase() &&
    link.masterPort === port
  ) {
    ctx.server.log.notice(
      'REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.',
    )
    client.reply.simple('OK Already connected to specified master')
    return
  }
  link.setMaster(host, port)
  ctx.server.log.notice(`REPLICAOF ${host}:${port} enabled (user request from 'id=${client.id} addr=${client.addr}')`)
  client.reply.simple('OK')
}

/** ROLE → master: ["master", offset, [[ip, port, ack offset], ...]]; replica: ["slave", host, port, state, offset] */
export function role(ctx: CommandContext): void {
  const reply = ctx.client.reply
  const server = ctx.server
  if (server.replication.role === 'replica') {
    const { host, port, state, offset } = replicaRole(server.replicaLink)
    reply.array(5)
    reply.bulk('slave')
    reply.bulk(host)
    reply.integer(port)
    reply.bulk(state)
    reply.integer(offset)
    return
  }
  const replicas = server.masterSide.onlineReplicas()
  reply.array(3)
  reply.bulk('master')
  reply.integer(server.replication.masterReplOffset)
  reply.array(replicas.length)
  for (const replica of replicas) {
    reply.array(3)
    reply.bulk(replica.ip)
    reply.bulk(String(replica.port))
    reply.bulk(String(replica.offset))
  }
}
