/**
 * The Sentinel failover scenarios, shared by the test files of test/distributed: three nodes (a
 * master and two replicas from their config files), three real Sentinels (quorum 2,
 * down-after-milliseconds 3000), and a Sentinel-mode client that writes BF.ADD + WAIT 1 all along.
 */
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { AckedWrite, AckedWriter } from './acked-writer.js'
import { Cluster, ClusterNode, items, NODE_KIND, waitUntil } from './cluster-nodes.js'
import {
  SENTINEL_SETTINGS,
  startSentinels,
  waitNewMaster,
  waitSentinelsConverged,
  waitSentinelsSeeReplica,
  type Sentinel,
} from './cluster-sentinels.js'

/** Issue 16: a replica is promoted within 10 s of the master's death (measured on redis 7.0: 4.5 s). */
export const PROMOTION_LIMIT_MS = 10_000

/**
 * How long Sentinel itself waits before it tries again after a split vote (two Sentinels asked for
 * votes in the same instant and none got a majority: `-failover-abort-not-elected`): twice the
 * failover-timeout, plus up to SENTINEL_MAX_DESYNC (1 s) of random delay (sentinel.c
 * sentinelStartFailoverIfNeeded). Nothing the monitored server does can shorten it, so the limit
 * grows by that much only when a Sentinel logged the split vote.
 */
function splitVoteAllowanceMs(sentinels: readonly Sentinel[]): number {
  const splitVote = sentinels.some((sentinel) => {
    const log = path.join(path.dirname(sentinel.configFile), 'sentinel.log')
    return existsSync(log) && readFileSync(log, 'latin1').includes('-failover-abort-not-elected')
  })
  return splitVote ? 2 * SENTINEL_SETTINGS.failoverTimeoutMs + 1000 : 0
}

export interface MonitoredCluster {
  cluster: Cluster
  /** The first master, then its two replicas. */
  nodes: [ClusterNode, ClusterNode, ClusterNode]
  sentinels: Sentinel[]
}

/** Starts the three nodes and the three Sentinels and waits until all of them agree. */
export async function startMonitoredCluster(): Promise<MonitoredCluster> {
  const cluster = new Cluster()
  const master = await cluster.node('node1')
  const replicas = [
    await cluster.node('node2', { replicaOf: master.port }),
    await cluster.node('node3', { replicaOf: master.port }),
  ]
  await Promise.all(replicas.map((replica) => replica.waitLinkUp(master.port)))
  await master.waitOnlineReplicas(2)
  const sentinels = await startSentinels(cluster, master.port)
  await waitSentinelsConverged(sentinels, master.port, 2)
  return { cluster, nodes: [master, replicas[0]!, replicas[1]!], sentinels }
}

/** Waits until every write of `writes` is on `node` (a replica may still be catching up). */
export async function expectWritesOn(node: ClusterNode, writes: readonly AckedWrite[]): Promise<void> {
  expect(writes.length).toBeGreaterThan(0)
  const list = writes.map((w) => w.item)
  let missing: string[] = []
  await waitUntil(
    `${node.name} has all ${list.length} acknowledged writes`,
    async () => {
      const client = node.cluster.client(node.port)
      try {
        const present = await items.present(client, list)
        missing = list.filter((_, i) => !present[i])
        return missing.length === 0
      } finally {
        client.disconnect()
      }
    },
    { timeoutMs: 30_000 },
  ).catch((error: Error) => {
    throw new Error(`${error.message}; missing: ${missing.slice(0, 10).join(' ')}`)
  })
}

/** The node of `nodes` listening on `port`. */
export function nodeOn(nodes: readonly ClusterNode[], port: number): ClusterNode {
  const node = nodes.find((n) => n.port === port)
  if (node === undefined) throw new Error(`no node on port ${port}`)
  return node
}

/**
 * Registers the hooks of a failover file: before all, the monitored cluster and a started writer
 * (the returned object's fields); after all, both stopped and `figures` printed (the timeline, for
 * comparison with redis-server's).
 */
export function withMonitoredCluster(
  makeWriter: (sentinels: readonly Sentinel[]) => Promise<AckedWriter>,
  label: string,
  figures: Record<string, number>,
): { setup: MonitoredCluster; writer: AckedWriter } {
  const run = {} as { setup: MonitoredCluster; writer: AckedWriter }
  beforeAll(async () => {
    run.setup = await startMonitoredCluster()
    run.writer = await makeWriter(run.setup.sentinels)
    run.writer.start()
  })
  afterAll(async () => {
    await run.writer?.stop()
    await run.setup?.cluster.stopAll()
    console.info(`${label} figures (${NODE_KIND}): ${JSON.stringify(figures)}`)
  })
  return run
}

/**
 * kill -9 of the master under a stream of acknowledged writes: the tests of one file, in order.
 * `makeWriter` builds (and connects) the Sentinel-mode client.
 */
export function killMasterScenario(makeWriter: (sentinels: readonly Sentinel[]) => Promise<AckedWriter>): void {
  const figures: Record<string, number> = {}
  const run = withMonitoredCluster(makeWriter, 'failover', figures)
  let killedAt = 0
  let newMaster: ClusterNode

  it('promotes a replica within 10 s of a kill -9 of the master, while the client writes', async () => {
    const [master] = run.setup.nodes
    await run.writer.waitAcked(20, 0, { port: master.port })
    killedAt = Date.now()
    await master.kill()
    const port = await waitNewMaster(run.setup.sentinels, master.port, 60_000)
    const promotionMs = Date.now() - killedAt
    figures.promotionMs = promotionMs
    const allowance = splitVoteAllowanceMs(run.setup.sentinels)
    if (allowance > 0) figures.sentinelSplitVote = 1
    expect(promotionMs).toBeLessThanOrEqual(PROMOTION_LIMIT_MS + allowance)
    newMaster = nodeOn(run.setup.nodes, port)
    await waitUntil(`${newMaster.name} says role:master`, async () => (await newMaster.info()).get('role') === 'master')
  })

  it('the client keeps writing, acknowledged through the new master', async () => {
    const after = await run.writer.waitAcked(20, killedAt, { port: newMaster.port })
    figures.firstAckedAfterKillMs = after[0]!.at - killedAt
  })

  it('every acknowledged write is on the new master and on the other replica, now its replica', async () => {
    const other = run.setup.nodes.find((n) => n !== run.setup.nodes[0] && n !== newMaster)!
    await other.waitLinkUp(newMaster.port)
    const acked = [...run.writer.acked]
    await expectWritesOn(newMaster, acked)
    await expectWritesOn(other, acked)
  })

  it('the old master, restarted with its old config, becomes a synced replica of the new master', async () => {
    const [oldMaster] = run.setup.nodes
    const restartedAt = Date.now()
    await oldMaster.start()
    await oldMaster.waitLinkUp(newMaster.port, 90_000)
    figures.rejoinMs = Date.now() - restartedAt
    await waitSentinelsSeeReplica(run.setup.sentinels, oldMaster.port)
    await run.writer.stop()
    const acked = [...run.writer.acked]
    Object.assign(figures, { acked: acked.length, notAcked: run.writer.notAcked })
    for (const node of run.setup.nodes) await expectWritesOn(node, acked)
  })
}
