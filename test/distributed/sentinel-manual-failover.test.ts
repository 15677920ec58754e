/**
 * Issue 16, SENTINEL FAILOVER: a failover with the master alive. Sentinel promotes a replica with
 * MULTI / SLAVEOF NO ONE / CONFIG REWRITE / CLIENT KILL TYPE normal|pubsub / EXEC, then demotes
 * the old master the same way (SLAVEOF <new master>): its clients are closed (CLIENT KILL TYPE
 * normal), so the ioredis client finds the new master through the Sentinels and goes on writing.
 */
import { describe, expect, it } from 'vitest'
import { IoredisWriter } from '../helpers/acked-writer.js'
import { waitNewMaster } from '../helpers/cluster-sentinels.js'
import { items, type ClusterNode } from '../helpers/cluster-nodes.js'
import { hasTool } from '../helpers/tools.js'
import { expectWritesOn, nodeOn, withMonitoredCluster } from '../helpers/failover-scenario.js'

describe.skipIf(!hasTool('redis-sentinel'))('SENTINEL FAILOVER with the master alive', () => {
  const figures: Record<string, number> = {}
  const run = withMonitoredCluster(async (sentinels) => new IoredisWriter(sentinels), 'manual failover', figures)
  let failoverAt = 0
  let newMaster: ClusterNode

  let blockedWait: Promise<unknown>

  it('promotes a replica', async () => {
    const [master] = run.setup.nodes
    await run.writer.waitAcked(20, 0, { port: master.port })
    // A client blocked in WAIT (5 replicas, no timeout) on the master when it is demoted.
    blockedWait = run.setup.cluster
      .client(master.port)
      .call('WAIT', '5', '0')
      .catch((error: Error) => error)
    failoverAt = Date.now()
    expect(await run.setup.sentinels[0]!.command('SENTINEL', 'FAILOVER', 'mymaster')).toBe('OK')
    newMaster = nodeOn(run.setup.nodes, await waitNewMaster(run.setup.sentinels, master.port, 60_000))
    figures.promotionMs = Date.now() - failoverAt
    expect((await newMaster.info()).get('role')).toBe('master')
  })

  it('demotes the old master, alive, to a synced replica of the new one (its blocked and normal clients closed, writes refused); the other replica follows', async () => {
    const [oldMaster] = run.setup.nodes
    const other = run.setup.nodes.find((n) => n !== oldMaster && n !== newMaster)!
    await Promise.all([oldMaster.waitLinkUp(newMaster.port, 90_000), other.waitLinkUp(newMaster.port, 90_000)])
    figures.demotedMs = Date.now() - failoverAt
    // The blocked WAIT is released: SLAVEOF answers it -UNBLOCKED and closes it (redis blocked.c
    // disconnectAllBlockedClients), but the CLIENT KILL TYPE normal of the same EXEC closes it
    // before that reply is written (so redis-server: the connection just closes).
    expect(String(await blockedWait)).toMatch(/UNBLOCKED force unblock from blocking operation|Connection is closed/)
    const [command, ...args] = items.add('written-on-the-demoted-master')
    await expect(oldMaster.command(command!, ...args)).rejects.toThrow(
      "READONLY You can't write against a read only replica.",
    )
  })

  it('the client is moved off the demoted master and keeps writing on the new one', async () => {
    const after = await run.writer.waitAcked(20, failoverAt, { port: newMaster.port })
    figures.firstAckedOnNewMasterMs = after[0]!.at - failoverAt
  })

  // Sentinel does not pause the old master's writes: between SLAVEOF NO ONE on the promoted
  // replica and the other replica's move, a write on the old master can be acknowledged by the
  // other replica alone and then be lost with its resync (redis-server does the same). So the
  // writes that must survive are those acknowledged before the failover began and those
  // acknowledged by the new master.
  it('every write acknowledged before the failover or by the new master is on all three nodes', async () => {
    await run.writer.stop()
    const acked = run.writer.acked.filter((w) => w.at < failoverAt || w.port === newMaster.port)
    Object.assign(figures, {
      acked: acked.length,
      ackedByOldMasterAfterFailover: run.writer.acked.length - acked.length,
      notAcked: run.writer.notAcked,
    })
    for (const node of run.setup.nodes) await expectWritesOn(node, acked)
  })
})
