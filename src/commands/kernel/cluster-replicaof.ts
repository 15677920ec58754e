/**
 * REPLICAOF / SLAVEOF in cluster mode, as Sentinel drives a shard (one master name per shard):
 * - `SLAVEOF NO ONE` on a replica is a takeover: the node becomes a master with configEpoch =
 *   ++currentEpoch and claims its former master's slots; the claim spreads by pull gossip, and the
 *   old master, on seeing the higher epoch for its slots, becomes a replica.
 * - `SLAVEOF host port` is `CLUSTER REPLICATE <id of the node at that address>`; an address that
 *   is no known node is refused with CLUSTER REPLICATE's text for an unknown node.
 * redis 7.0 refuses both in cluster mode (`ERR REPLICAOF not allowed in cluster mode.`), so that
 * unmodified Sentinel cannot fail over a redis cluster node: docs/reference/compatibility.md.
 */
import type { CommandContext, ServerContext } from './context.js'
import { ReplyError, unknownNodeText } from './reply-error.js'

/** REPLICAOF NO ONE in cluster mode → +OK; a replica takes its master's slots over */
export function clusterReplicaofNoOne(ctx: CommandContext): void {
  const { server, client } = ctx
  if (!server.cluster!.myself.isMaster)
    takeOverMaster(server, `user request from 'id=${client.id} addr=${client.addr}'`)
  client.reply.simple('OK')
}

/** REPLICAOF host port in cluster mode (its arguments checked by replicaof.ts) → +OK; CLUSTER REPLICATE of that node */
export function clusterReplicaofAddress(ctx: CommandContext, host: string, port: number): void {
  const { server, client } = ctx
  const cluster = server.cluster!
  const node = cluster.nodeByAddress(host, port)
  // cluster.c CLUSTER REPLICATE: "Unknown node <id>"; here the node is named by its address.
  if (node === undefined) throw new ReplyError(unknownNodeText(`${host}:${port}`))
  if (cluster.myself.masterId === node.id && server.replication.role === 'replica') {
    client.reply.simple('OK Already connected to specified master')
    return
  }
  const refused = cluster.replicate(node.id)
  if (refused !== undefined) throw new ReplyError(refused)
  server.log.notice(
    `REPLICAOF ${host}:${port} enabled as CLUSTER REPLICATE ${node.id} (user request from 'id=${client.id} addr=${client.addr}')`,
  )
  client.reply.simple('OK')
}

/**
 * The takeover of SLAVEOF NO ONE and CLUSTER FAILOVER (ClusterState.takeOver): master with a new
 * config epoch and the former master's slots (saved to nodes.conf), and the replication link
 * dropped as for any REPLICAOF NO ONE (the data kept, the replication id moved to replid2 so that
 * replicas continue: redis replicationUnsetMaster).
 */
export function takeOverMaster(server: ServerContext, why: string): void {
  const cluster = server.cluster!
  if (!cluster.takeOver()) return
  server.log.notice(
    `MASTER MODE enabled (${why}): configEpoch ${cluster.myself.configEpoch}, the slots of my former master are mine`,
  )
}
