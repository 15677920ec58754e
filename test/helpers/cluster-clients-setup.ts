/**
 * A cluster-mode bfs cluster for the client tests: `masters` shards of a master and `replicas`
 * replicas each, made as an operator without redis-cli would (redis-cli --cluster create needs 3
 * masters): CLUSTER ADDSLOTSRANGE of an equal share of the 16384 slots and SET-CONFIG-EPOCH on each
 * master, CLUSTER MEET of every node with the first, CLUSTER REPLICATE on each replica; then it
 * waits until every node's CLUSTER SLOTS shows every shard with all its replicas and CLUSTER INFO
 * says `cluster_state:ok`. The nodes are cluster-mode.ts's (ModeCluster: config file, log,
 * SIGKILL in stopAll()).
 */
import { CLUSTER_SLOTS } from '../../src/core/key-slot.js'
import { type ClusterNode, parseInfo, waitUntil } from './cluster-nodes.js'
import type { ModeCluster } from './cluster-mode.js'

/**
 * The nodes' extra config: a node timeout longer than cluster-mode.ts's 2 s, so that a node busy
 * with 100,000 items on 2 loaded cores is not flagged failing; no append-only log (not under test).
 */
const EXTRA = ['cluster-node-timeout 5000', 'appendonly no']

/** One shard: its master, its replicas, their node ids and the slots it serves. */
export interface Shard {
  readonly master: ClusterNode
  readonly replicas: readonly ClusterNode[]
  readonly masterId: string
  readonly first: number
  readonly last: number
}

/** CLUSTER SLOTS as the clients read it: [first, last, [host, port, id], ...replicas]. */
type SlotsReply = [number, number, ...[string, number, ...unknown[]][]][]

/** The first and last slot of shard `index` of `count` (redis-cli --cluster create's split). */
export function shardRange(index: number, count: number): [number, number] {
  const per = CLUSTER_SLOTS / count
  return [Math.round(index * per), Math.round((index + 1) * per) - 1]
}

/** Starts and joins `masters` shards of one master and `replicas` replicas each. */
export async function startShards(cluster: ModeCluster, masters: number, replicas = 0): Promise<Shard[]> {
  const nodes = await cluster.nodes(masters * (1 + replicas), EXTRA)
  const ids = await Promise.all(nodes.map(async (node) => String(await node.command('CLUSTER', 'MYID'))))
  const shards: Shard[] = []
  for (let i = 0; i < masters; i++) {
    const [first, last] = shardRange(i, masters)
    const master = nodes[i]!
    await master.command('CLUSTER', 'ADDSLOTSRANGE', first, last)
    await master.command('CLUSTER', 'SET-CONFIG-EPOCH', i + 1)
    shards.push({
      master,
      replicas: nodes.slice(masters + i * replicas, masters + (i + 1) * replicas),
      masterId: ids[i]!,
      first,
      last,
    })
  }
  for (const node of nodes.slice(1)) await node.command('CLUSTER', 'MEET', '127.0.0.1', nodes[0]!.port)
  await waitUntil('every node knows every node', async () => {
    const known = await Promise.all(
      nodes.map(
        async (node) =>
          String(await node.command('CLUSTER', 'NODES'))
            .trim()
            .split('\n').length,
      ),
    )
    return known.every((count) => count === nodes.length)
  })
  for (const shard of shards)
    for (const replica of shard.replicas) await replica.command('CLUSTER', 'REPLICATE', shard.masterId)
  await waitReady(nodes, shards)
  return shards
}

/** Whether `slots` (one node's CLUSTER SLOTS) shows each shard with its master and all its replicas. */
function showsShards(slots: SlotsReply, shards: readonly Shard[]): boolean {
  return shards.every((shard) => {
    const range = slots.find(([first, last]) => first === shard.first && last === shard.last)
    if (range === undefined) return false
    const ports = (range.slice(2) as [string, number, ...unknown[]][]).map((node) => Number(node[1]))
    return ports[0] === shard.master.port && shard.replicas.every((replica) => ports.slice(1).includes(replica.port))
  })
}

/** Waits until every node's CLUSTER SLOTS shows every shard and its CLUSTER INFO `cluster_state:ok`, and every replica's link is up. */
async function waitReady(nodes: readonly ClusterNode[], shards: readonly Shard[]): Promise<void> {
  await waitUntil(
    'every node shows every shard with its replicas and cluster_state:ok',
    async () => {
      for (const node of nodes) {
        const info = parseInfo(String(await node.command('CLUSTER', 'INFO')))
        if (info.get('cluster_state') !== 'ok') return false
        if (!showsShards((await node.command('CLUSTER', 'SLOTS')) as SlotsReply, shards)) return false
      }
      return true
    },
    { timeoutMs: 60_000 },
  )
  for (const shard of shards) for (const replica of shard.replicas) await replica.waitLinkUp(shard.master.port)
}

/** Every node of the shards, masters first. */
export function allNodes(shards: readonly Shard[]): ClusterNode[] {
  return [...shards.map((shard) => shard.master), ...shards.flatMap((shard) => shard.replicas)]
}
