/**
 * Cluster-mode shards for the failover tests (test/distributed/cluster-failover.test.ts): bfs
 * nodes with `cluster-enabled yes`, made into shards of a master and a replica by the unmodified
 * `redis-cli --cluster create ... --cluster-replicas 1`, and real redis-sentinel processes that
 * monitor one master name per shard (`shard-0`, `shard-1`, ...), as docs/operations/cluster.md
 * sets them up. The processes are those of cluster-nodes.ts (a Cluster is the test file's set of
 * processes, not a cluster-mode cluster), stopped by its stopAll().
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { type Cluster, type ClusterNode, commandOn, startOnFreePort, waitUntil } from './cluster-nodes.js'
import { SENTINEL_SETTINGS, Sentinel } from './cluster-sentinels.js'
import { runTool } from './tools.js'

/** The config lines of a cluster-mode node (its nodes.conf next to node.conf, in its own dir). */
export const CLUSTER_MODE_LINES = ['cluster-enabled yes', 'cluster-config-file nodes.conf', 'cluster-node-timeout 3000']

/** One line of CLUSTER NODES. */
export interface NodesLine {
  id: string
  port: number
  flags: string[]
  masterId: string
  configEpoch: number
  link: string
  slots: string[]
}

/** CLUSTER NODES' text, line by line. */
export function parseNodes(text: string): NodesLine[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [id, address, flags, masterId, , , epoch, link, ...slots] = line.trim().split(' ')
      return {
        id: id!,
        port: Number(/:(\d+)/.exec(address!)?.[1]),
        flags: flags!.split(','),
        masterId: masterId!,
        configEpoch: Number(epoch),
        link: link!,
        slots,
      }
    })
}

/** The CLUSTER NODES of the node on `port`. */
export async function clusterNodes(port: number): Promise<NodesLine[]> {
  return parseNodes(String(await commandOn(port, ['CLUSTER', 'NODES'])))
}

/** One range of CLUSTER SLOTS: its slots and the port of the node it names as the master. */
export interface SlotRange {
  start: number
  end: number
  masterPort: number
  replicaPorts: number[]
}

/** The CLUSTER SLOTS of the node on `port`. */
export async function clusterSlots(port: number): Promise<SlotRange[]> {
  const reply = (await commandOn(port, ['CLUSTER', 'SLOTS'])) as [number, number, ...[string, number, string][]][]
  return reply.map(([start, end, master, ...replicas]) => ({
    start,
    end,
    masterPort: Number(master[1]),
    replicaPorts: replicas.map((replica) => Number(replica[1])),
  }))
}

/** The port CLUSTER SLOTS (of the node on `port`) names as the master of `slot`, if any. */
export function ownerIn(ranges: readonly SlotRange[], slot: number): number | undefined {
  return ranges.find((range) => range.start <= slot && slot <= range.end)?.masterPort
}

/** A shard: its master's and its replica's nodes, as CLUSTER NODES made them after the create. */
export interface Shard {
  name: string
  master: ClusterNode
  replica: ClusterNode
  /** One slot the shard owns (its first). */
  slot: number
}

/**
 * `redis-cli --cluster create` with `--cluster-replicas 1` over `nodes`, then waits until every
 * node says cluster_state:ok and knows every other, and every replica's link is up. Returns the
 * shards, in the order of their first slot (shard-0 has slot 0).
 */
export async function createShards(nodes: readonly ClusterNode[]): Promise<Shard[]> {
  const addresses = nodes.map((node) => `127.0.0.1:${node.port}`)
  const created = await runTool('redis-cli', [
    '--cluster',
    'create',
    ...addresses,
    '--cluster-replicas',
    '1',
    '--cluster-yes',
  ])
  if (created.code !== 0)
    throw new Error(`redis-cli --cluster create failed (${created.code}):\n${created.stdout}\n${created.stderr}`)
  const byPort = new Map(nodes.map((node) => [node.port, node]))
  const lines = await waitUntil(
    'every node says cluster_state:ok and lists every node, each master with one replica',
    async () => {
      for (const node of nodes) {
        const info = String(await node.command('CLUSTER', 'INFO'))
        if (!info.includes('cluster_state:ok')) return undefined
        if ((await clusterNodes(node.port)).length !== nodes.length) return undefined
      }
      const view = await clusterNodes(nodes[0]!.port)
      const masters = view.filter((line) => line.flags.includes('master'))
      const replicas = view.filter((line) => line.flags.includes('slave'))
      const paired = masters.every(
        (master) => replicas.filter((replica) => replica.masterId === master.id).length === 1,
      )
      return paired && masters.length * 2 === nodes.length ? view : undefined
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  )
  const shards = lines
    .filter((line) => line.flags.includes('master'))
    .map((master) => {
      const replica = lines.find((line) => line.masterId === master.id)!
      return {
        master: byPort.get(master.port)!,
        replica: byPort.get(replica.port)!,
        slot: Number(master.slots[0]!.split('-')[0]),
      }
    })
    .sort((a, b) => a.slot - b.slot)
    .map((shard, i) => ({ name: `shard-${i}`, ...shard }))
  for (const shard of shards) await shard.replica.waitLinkUp(shard.master.port)
  return shards
}

/**
 * The config of a Sentinel on `port` monitoring each shard's master under the shard's name (the
 * docs/operations/cluster.md's failover set-up writes these lines: test/docs/cluster-examples.test.ts).
 */
export function shardSentinelLines(
  port: number,
  dir: string,
  shards: readonly { name: string; masterPort: number }[],
): string[] {
  const { quorum, downAfterMs, failoverTimeoutMs } = SENTINEL_SETTINGS
  return [
    `port ${port}`,
    'bind 127.0.0.1',
    `dir ${dir}`,
    ...shards.flatMap(({ name, masterPort }) => [
      `sentinel monitor ${name} 127.0.0.1 ${masterPort} ${quorum}`,
      `sentinel down-after-milliseconds ${name} ${downAfterMs}`,
      `sentinel failover-timeout ${name} ${failoverTimeoutMs}`,
    ]),
  ]
}

/** Starts `count` Sentinels monitoring every shard; waits until each sees each shard's master, replica and the other Sentinels. */
export async function startShardSentinels(cluster: Cluster, shards: readonly Shard[], count = 3): Promise<Sentinel[]> {
  const monitored = shards.map((shard) => ({ name: shard.name, masterPort: shard.master.port }))
  const sentinels: Sentinel[] = []
  for (let i = 1; i <= count; i++) {
    sentinels.push(
      await startOnFreePort(async (port) => {
        const dir = path.join(cluster.dir, `sentinel${i}`)
        mkdirSync(dir, { recursive: true })
        const configFile = path.join(dir, 'sentinel.conf')
        writeFileSync(configFile, shardSentinelLines(port, dir, monitored).join('\n') + '\n')
        return new Sentinel(cluster, `sentinel${i}`, port, configFile)
      }),
    )
  }
  await waitUntil(
    `every Sentinel sees every shard's master with 1 replica and ${count - 1} other Sentinels`,
    async () => {
      for (const sentinel of sentinels) {
        for (const shard of shards) {
          const master = await sentinel.master(shard.name)
          if (master.get('port') !== String(shard.master.port) || master.get('flags') !== 'master') return false
          if (master.get('num-slaves') !== '1' || master.get('num-other-sentinels') !== String(count - 1)) return false
        }
      }
      return true
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  )
  return sentinels
}
