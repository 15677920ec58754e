/**
 * The CLUSTER subcommands that describe the cluster (redis 7.0.15 cluster.c): NODES, SLOTS,
 * SHARDS, INFO, REPLICAS/SLAVES, MYID, KEYSLOT, COUNT-FAILURE-REPORTS, LINKS.
 */
import type { CommandContext } from '../kernel/context.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { ERR, ReplyError, subcommandSyntaxWords, unknownNodeText } from '../kernel/reply-error.js'
import type { ClusterState } from '../../cluster/cluster-state.js'
import type { ClusterNode } from '../../cluster/cluster-node.js'
import { CLUSTER_SLOTS, keyHashSlot } from '../../core/key-slot.js'
import { describeNode, describeNodes } from '../../cluster/nodes-conf.js'
import { failureReportCount } from '../../cluster/cluster-health.js'
import { slotRanges } from '../../cluster/slot-ranges.js'

/** The cluster state of a server in cluster mode (the container's wrapper checked it). */
export function clusterOf(ctx: CommandContext): ClusterState {
  return ctx.server.cluster!
}

/** redis addReplySubcommandSyntaxError: a subcommand given a count of arguments it does not take. */
export function subcommandSyntaxError(argv: CommandArgs): ReplyError {
  const command = argv.get(0).toString('utf8').toUpperCase()
  return new ReplyError(subcommandSyntaxWords(command, argv.get(1).toString('utf8')))
}

/** A node named by argument `index`, or redis's `Unknown node <id>`. */
export function namedNode(state: ClusterState, argv: CommandArgs, index: number): ClusterNode {
  const id = argv.get(index).toString('utf8')
  const node = state.nodeById(id)
  if (node === undefined) throw new ReplyError(unknownNodeText(id))
  return node
}

/** CLUSTER NODES → every node's line (a verbatim string under RESP3) */
export function clusterNodes(ctx: CommandContext): void {
  ctx.client.reply.verbatim(describeNodes(clusterOf(ctx), ctx.client.tls !== false))
}

/** CLUSTER MYID → this node's id */
export function clusterMyid(ctx: CommandContext): void {
  ctx.client.reply.bulk(clusterOf(ctx).myself.id)
}

/** CLUSTER KEYSLOT key → the key's hash slot */
export function clusterKeyslot(ctx: CommandContext, argv: CommandArgs): void {
  ctx.client.reply.integer(keyHashSlot(argv.bytes(2), argv.start(2), argv.end(2)))
}

/** CLUSTER COUNT-FAILURE-REPORTS node-id → the masters' failure reports about it */
export function clusterCountFailureReports(ctx: CommandContext, argv: CommandArgs): void {
  const state = clusterOf(ctx)
  ctx.client.reply.integer(failureReportCount(state, namedNode(state, argv, 2)))
}

/** CLUSTER LINKS → no bus links (bfs has no cluster bus) */
export function clusterLinks(ctx: CommandContext): void {
  ctx.client.reply.array(0)
}

/** CLUSTER REPLICAS|SLAVES node-id → the lines of its replicas */
export function clusterReplicas(ctx: CommandContext, argv: CommandArgs): void {
  const state = clusterOf(ctx)
  const node = namedNode(state, argv, 2)
  if (!node.isMaster) throw new ReplyError(ERR.NODE_NOT_MASTER)
  const replicas = state.replicasOf(node)
  ctx.client.reply.array(replicas.length)
  for (const replica of replicas) ctx.client.reply.bulk(describeNode(state, replica, ctx.client.tls !== false))
}

/** CLUSTER INFO → cluster_state and the counts, `field:value\r\n` lines (verbatim under RESP3) */
export function clusterInfo(ctx: CommandContext): void {
  const state = clusterOf(ctx)
  let assigned = 0
  let ok = 0
  let pfail = 0
  let fail = 0
  for (let slot = 0; slot < CLUSTER_SLOTS; slot++) {
    const owner = state.slotOwner(slot)
    if (owner === undefined) continue
    assigned++
    if (owner.fail) fail++
    else if (owner.pfail) pfail++
    else ok++
  }
  const myself = state.myself
  const fields: [string, string | number][] = [
    ['cluster_state', state.state],
    ['cluster_slots_assigned', assigned],
    ['cluster_slots_ok', ok],
    ['cluster_slots_pfail', pfail],
    ['cluster_slots_fail', fail],
    ['cluster_known_nodes', state.nodes.size],
    ['cluster_size', state.size],
    ['cluster_current_epoch', state.currentEpoch],
    ['cluster_my_epoch', state.printedEpoch(myself)],
    ['cluster_stats_messages_sent', 0],
    ['cluster_stats_messages_received', 0],
    ['total_cluster_links_buffer_limit_exceeded', 0],
  ]
  ctx.client.reply.verbatim(fields.map(([name, value]) => `${name}:${value}\r\n`).join(''))
}

/** One node of CLUSTER SLOTS: [ip, port, id, metadata] (metadata empty: no hostname); the port as the client's connection asks. */
function slotNode(ctx: CommandContext, state: ClusterState, node: ClusterNode): void {
  const reply = ctx.client.reply
  reply.array(4)
  reply.bulk(node.ip)
  reply.integer(state.clientPort(node, ctx.client.tls !== false))
  reply.bulk(node.id)
  reply.map(0)
}

/** Replicas CLUSTER SLOTS and SHARDS list after their master: those not failed. */
function servingReplicas(state: ClusterState, master: ClusterNode): ClusterNode[] {
  return state.replicasOf(master).filter((replica) => !replica.fail)
}

/** CLUSTER SLOTS → [start, end, master, ...replicas] per maximal range of one owner */
export function clusterSlots(ctx: CommandContext): void {
  const state = clusterOf(ctx)
  const runs: [number, number, ClusterNode][] = []
  for (let slot = 0; slot < CLUSTER_SLOTS; slot++) {
    const owner = state.slotOwner(slot)
    if (owner === undefined) continue
    const last = runs[runs.length - 1]
    if (last !== undefined && last[2] === owner && last[1] === slot - 1) last[1] = slot
    else runs.push([slot, slot, owner])
  }
  const reply = ctx.client.reply
  reply.array(runs.length)
  for (const [start, end, owner] of runs) {
    const replicas = servingReplicas(state, owner)
    reply.array(3 + replicas.length)
    reply.integer(start)
    reply.integer(end)
    slotNode(ctx, state, owner)
    for (const replica of replicas) slotNode(ctx, state, replica)
  }
}

/**
 * One node of CLUSTER SHARDS: id, port and/or tls-port, ip, endpoint, role, replication-offset,
 * health. redis 7.0 addNodeDetailsToShardReply gives every client both ports a node has: under
 * tls-cluster its TLS port, and its plaintext port when it has one.
 */
function shardNode(ctx: CommandContext, state: ClusterState, node: ClusterNode): void {
  const reply = ctx.client.reply
  const offset = node === state.myself ? ctx.server.replication.masterReplOffset : 0
  const tlsCluster = ctx.server.config['tls-cluster']
  const plaintextPort = tlsCluster ? node.pport : node.port
  reply.map(6 + (plaintextPort !== 0 ? 1 : 0) + (tlsCluster ? 1 : 0))
  reply.bulk('id')
  reply.bulk(node.id)
  if (plaintextPort !== 0) {
    reply.bulk('port')
    reply.integer(plaintextPort)
  }
  if (tlsCluster) {
    reply.bulk('tls-port')
    reply.integer(node.port)
  }
  reply.bulk('ip')
  reply.bulk(node.ip)
  reply.bulk('endpoint')
  reply.bulk(node.ip)
  reply.bulk('role')
  reply.bulk(node.isMaster ? 'master' : 'replica')
  reply.bulk('replication-offset')
  reply.integer(offset)
  reply.bulk('health')
  reply.bulk(node.fail ? 'fail' : 'online')
}

/** CLUSTER SHARDS → per master: {slots: [start, end, ...], nodes: [master, ...replicas]} */
export function clusterShards(ctx: CommandContext): void {
  const state = clusterOf(ctx)
  const masters = state.masters()
  const reply = ctx.client.reply
  reply.array(masters.length)
  for (const master of masters) {
    reply.map(2)
    reply.bulk('slots')
    const ranges = slotRanges((slot) => state.owns(master, slot))
    reply.array(ranges.length * 2)
    for (const [start, end] of ranges) {
      reply.integer(start)
      reply.integer(end)
    }
    reply.bulk('nodes')
    const replicas = state.replicasOf(master)
    reply.array(1 + replicas.length)
    shardNode(ctx, state, master)
    for (const replica of replicas) shardNode(ctx, state, replica)
  }
}
