/**
 * The unmodified `redis-cli --cluster` (7.0.15) against bfs nodes in cluster mode (issue 20):
 * create with 3 masters and with --cluster-replicas 1, check, info, add-node (master and
 * --cluster-slave), reshard of slots holding filters while a client writes, rebalance, del-node, fix of an open slot and of an uncovered slot,
 * with `check` passing after each; a restarted node keeps its id and slots; a master killed with
 * no replica is marked fail by the others and the cluster's state turns fail.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Cluster } from 'ioredis'
import { slotOf } from '../../src/core/key-slot.js'
import type { ClusterNode } from '../helpers/cluster-nodes.js'
import { waitUntil } from '../helpers/cluster-nodes.js'
import {
  address,
  clusterCli,
  clusterInfo,
  clusterNodes,
  ModeCluster,
  waitCheckPasses,
  waitJoined,
} from '../helpers/cluster-mode.js'

const modes = new ModeCluster()
afterAll(() => modes.stopAll())

/** `count` key names whose hash slots lie in [from, to]. */
function keysInSlots(from: number, to: number, count: number): string[] {
  const keys: string[] = []
  for (let i = 0; keys.length < count; i++) {
    const slot = slotOf(`filter:${i}`)
    if (slot >= from && slot <= to) keys.push(`filter:${i}`)
  }
  return keys
}

/** The id of a node (CLUSTER MYID). */
async function idOf(node: ClusterNode): Promise<string> {
  return String(await node.command('CLUSTER', 'MYID'))
}

/** The `myself` line of a node's CLUSTER NODES. */
async function myselfLine(node: ClusterNode): Promise<string> {
  return (await clusterNodes(node)).split('\n').find((line) => line.includes('myself'))!
}

describe('redis-cli --cluster against bfs nodes', () => {
  let three: ClusterNode[] = []
  let six: ClusterNode[] = []

  it('create with 3 masters: all nodes agree, every slot covered; info and check pass', async () => {
    three = await modes.nodes(3)
    const created = await clusterCli('create', [...three.map(address), '--cluster-yes'], { timeoutMs: 60_000 })
    expect(created.code, created.output).toBe(0)
    expect(created.output).toContain('[OK] All nodes agree about slots configuration.')
    expect(created.output).toContain('[OK] All 16384 slots covered.')
    await waitCheckPasses(three[0]!)
    const info = await clusterCli('info', [address(three[1]!)], { timeoutMs: 15_000 })
    expect(info.code, info.output).toBe(0)
    expect(info.output).toMatch(/0 keys \| 5461 slots \| 0 slaves/)
    for (const node of three) expect((await clusterInfo(node)).get('cluster_state')).toBe('ok')
  })

  it('create with 6 nodes and --cluster-replicas 1: three masters with one replica each', async () => {
    six = await modes.nodes(6)
    const created = await clusterCli('create', [...six.map(address), '--cluster-replicas', '1', '--cluster-yes'], {
      timeoutMs: 60_000,
    })
    expect(created.code, created.output).toBe(0)
    const check = await waitCheckPasses(six[0]!)
    expect(check.output).toMatch(/\[OK\] 0 keys in 3 masters\./)
    const roles = await Promise.all(six.map(async (node) => (await myselfLine(node)).split(' ')[2]))
    expect(roles.filter((flags) => flags === 'myself,slave')).toHaveLength(3)
    expect(await clusterCli('info', [address(six[0]!)], { timeoutMs: 15_000 })).toMatchObject({ code: 0 })
  })

  it('add-node adds an empty master, and with --cluster-slave a replica', async () => {
    const [master, replica] = await modes.nodes(2)
    const added = await clusterCli('add-node', [address(master!), address(three[0]!)], { timeoutMs: 60_000 })
    expect(added.code, added.output).toBe(0)
    expect(added.output).toContain('[OK] New node added correctly.')
    const masterId = await idOf(master!)
    await waitJoined([...three, master!])
    const slave = await clusterCli(
      'add-node',
      [address(replica!), address(three[0]!), '--cluster-slave', '--cluster-master-id', masterId],
      { timeoutMs: 60_000 },
    )
    expect(slave.code, slave.output).toBe(0)
    await waitUntil('the new replica replicates the new master', async () =>
      (await myselfLine(replica!)).includes(`slave ${masterId}`),
    )
    three.push(master!, replica!)
    await waitJoined(three)
  })

  it('reshard moves slots holding filters to the new master (largest epoch) while a client writes; nothing acknowledged is lost', async () => {
    // From the master with 5462 slots: rebalancing back then takes one move (redis-cli's rounding).
    const [, source, , target] = three
    const keys = keysInSlots(5461, 5560, 20)
    const client = new Cluster([{ host: '127.0.0.1', port: source!.port }], {
      redisOptions: { maxRetriesPerRequest: 3 },
    })
    client.on('error', () => {})
    try {
      for (const key of keys) await client.call('BF.ADD', key, 'first')
      const acked: [string, string][] = []
      let writing = true
      const writer = (async () => {
        for (let n = 0; writing; n++) {
          const key = keys[n % keys.length]!
          await client.call('BF.ADD', key, `item${n}`)
          acked.push([key, `item${n}`])
        }
      })()
      const moved = await clusterCli(
        'reshard',
        [
          address(source!),
          '--cluster-from',
          await idOf(source!),
          '--cluster-to',
          await idOf(target!),
          '--cluster-slots',
          '100',
          '--cluster-yes',
        ],
        { timeoutMs: 60_000 },
      )
      writing = false
      await writer
      expect(moved.code, moved.output).toBe(0)
      expect(acked.length).toBeGreaterThan(0)
      for (const [key, item] of acked) expect(await client.call('BF.EXISTS', key, item), `${key} ${item}`).toBe(1)
      let held = 0
      for (let slot = 5461; slot <= 5560; slot++)
        held += Number(await target!.command('CLUSTER', 'COUNTKEYSINSLOT', slot))
      expect(held).toBe(keys.length)
    } finally {
      client.disconnect()
    }
    await waitCheckPasses(source!)
    expect(await myselfLine(target!)).toMatch(/ connected 5461-5560$/)
    // SETSLOT NODE on the importing node leaves it the largest epoch (bumped unless it had it), so its claim wins everywhere.
    const targetInfo = await clusterInfo(target!)
    expect(targetInfo.get('cluster_my_epoch')).toBe(targetInfo.get('cluster_current_epoch'))
    expect(Number(targetInfo.get('cluster_my_epoch'))).toBeGreaterThan(
      Number((await clusterInfo(source!)).get('cluster_my_epoch')),
    )
    // Every node, the replica of the target included, has the new owner.
    for (const node of three)
      expect(await clusterNodes(node)).toMatch(new RegExp(`${await idOf(target!)} .* 5461-5560\\n`))
  })

  it('rebalance with weight 0 moves the slots and their filters off the new master (it becomes a replica), and del-node removes it', async () => {
    const target = three[3]!
    const targetId = await idOf(target)
    const balanced = await clusterCli('rebalance', [address(three[0]!), '--cluster-weight', `${targetId}=0`], {
      timeoutMs: 60_000,
    })
    expect(balanced.code, balanced.output).toBe(0)
    await waitCheckPasses(three[0]!)
    expect(await myselfLine(target)).not.toMatch(/ \d+(-\d+)?$/)
    // Its replica first (it replicates a node about to go), then the node itself.
    for (const node of [three[4]!, target]) {
      const removed = await clusterCli('del-node', [address(three[0]!), await idOf(node)], { timeoutMs: 30_000 })
      expect(removed.code, removed.output).toBe(0)
    }
    // The 20 filters of the resharded slots went back with them.
    expect((await waitCheckPasses(three[0]!)).output).toContain('[OK] 20 keys in 3 masters.')
    for (const node of three.slice(0, 3)) expect((await clusterInfo(node)).get('cluster_known_nodes')).toBe('3')
    three = three.slice(0, 3)
  })

  it('fix closes an open slot (migrating on its owner only)', async () => {
    const [owner, other] = three
    const slot = Number(/ connected (\d+)/.exec(await myselfLine(owner!))![1])
    expect(await owner!.command('CLUSTER', 'SETSLOT', slot, 'MIGRATING', await idOf(other!))).toBe('OK')
    const before = await clusterCli('check', [address(owner!)], { timeoutMs: 15_000 })
    expect(before.output).toContain('[WARNING] Node')
    const fixed = await clusterCli('fix', [address(owner!)], { stdin: 'yes\n', timeoutMs: 60_000 })
    expect(fixed.code, fixed.output).toBe(0)
    expect(fixed.output).toContain(`Case 4: Closing slot ${slot}`)
    await waitCheckPasses(owner!)
  })

  it('fix covers a slot that no node owns any more', async () => {
    for (const node of three) expect(await node.command('CLUSTER', 'DELSLOTS', 4000)).toBe('OK')
    const before = await clusterCli('check', [address(three[0]!)], { timeoutMs: 15_000 })
    expect(before.output).toContain('[ERR] Not all 16384 slots are covered by nodes.')
    const fixed = await clusterCli('fix', [address(three[0]!)], { stdin: 'yes\n', timeoutMs: 60_000 })
    expect(fixed.code, fixed.output).toBe(0)
    expect(fixed.output).toContain('Covering slot 4000')
    await waitCheckPasses(three[0]!)
  })

  it('a restarted node keeps its id, epoch and slots (nodes.conf)', async () => {
    const node = six[1]!
    const before = await myselfLine(node)
    await node.shutdown()
    await node.start()
    const after = await myselfLine(node)
    const fields = (line: string): string[] => [
      ...line.split(' ').slice(0, 4),
      line.split(' ')[6]!,
      ...line.split(' ').slice(8),
    ]
    expect(fields(after)).toEqual(fields(before))
    await waitCheckPasses(six[0]!)
  })

  it('a master killed with no replica is marked fail by the others, and the cluster state turns fail', async () => {
    const [alive1, alive2, dead] = three
    const deadId = await idOf(dead!)
    await dead!.kill()
    for (const node of [alive1!, alive2!]) {
      await waitUntil(
        'the killed master is flagged fail',
        async () =>
          (await clusterNodes(node)).split('\n').some((line) => line.startsWith(deadId) && /master,fail /.test(line)),
        { timeoutMs: 20_000 },
      )
      expect((await clusterInfo(node)).get('cluster_state')).toBe('fail')
    }
    expect(Number(await alive1!.command('CLUSTER', 'COUNT-FAILURE-REPORTS', deadId))).toBeGreaterThanOrEqual(1)
    await expect(alive1!.command('BF.ADD', 'k', 'x')).rejects.toThrow(/CLUSTERDOWN The cluster is down/)
  })
})
