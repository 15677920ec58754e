/**
 * Issue 16, replication between real bfs processes: a master and two replicas started from config
 * files (`replicaof`), 200,000 items written by BF.MADD and found on both replicas after WAIT 2,
 * writes refused on a replica, a chained replica, the three ways a replica comes back (a cut
 * link and a clean restart continue with a partial resync, a kill -9 takes a full one), and a
 * full sync in the disk form.
 * The tests of this file run in order on one set of processes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Redis } from 'ioredis'
import { Cluster, ClusterNode, items, waitUntil } from '../helpers/cluster-nodes.js'

const ITEMS = 200_000
const BATCH = 1000

let cluster: Cluster
let master: ClusterNode
let replica1: ClusterNode
let replica2: ClusterNode
let written = 0 // items item:0 .. item:<written - 1> are on the master

/** Writes items [from, to) in BF.MADD batches on one connection, then WAIT `replicas`; returns WAIT's answer. */
async function writeItems(client: Redis, from: number, to: number, replicas: number): Promise<number> {
  const pipeline = client.pipeline()
  for (let start = from; start < to; start += BATCH) {
    const list = range(start, Math.min(to, start + BATCH))
    const [command, ...args] = items.addMany(list)
    pipeline.call(command!, ...args)
  }
  for (const [error] of (await pipeline.exec()) ?? []) expect(error).toBeNull()
  written = Math.max(written, to)
  return Number(await client.call('WAIT', String(replicas), '60000'))
}

function range(from: number, to: number): string[] {
  return Array.from({ length: to - from }, (_, i) => `item:${from + i}`)
}

/**
 * Asserts that `node` has every item written so far (BF.MEXISTS in batches) and the master's
 * item count (BF.CARD: not `written`, since an item that was a false positive when added is not
 * counted, on the master as on its replicas).
 */
async function expectAllItems(node: ClusterNode): Promise<void> {
  const client = cluster.client(node.port)
  let missing = 0
  for (let start = 0; start < written; start += BATCH) {
    const present = await items.present(client, range(start, Math.min(written, start + BATCH)))
    missing += present.filter((p) => !p).length
  }
  expect({ node: node.name, missing }).toEqual({ node: node.name, missing: 0 })
  expect(await items.count(client)).toBe(await masterCount())
  client.disconnect()
}

async function masterCount(): Promise<number> {
  const client = cluster.client(master.port)
  try {
    return await items.count(client)
  } finally {
    client.disconnect()
  }
}

/** Waits until the replica has processed the master's whole stream (equal offsets). */
async function waitCaughtUp(replica: ClusterNode, top: ClusterNode = master): Promise<void> {
  await waitUntil(`${replica.name} reaches ${top.name}'s offset`, async () => {
    const [masterOffset, replicaInfo] = await Promise.all([
      top.infoNumber('replication', 'master_repl_offset'),
      replica.info(),
    ])
    return (
      replicaInfo.get('master_link_status') === 'up' && Number(replicaInfo.get('slave_repl_offset')) === masterOffset
    )
  })
}

beforeAll(async () => {
  cluster = new Cluster()
  master = await cluster.node('master')
  replica1 = await cluster.node('replica1', { replicaOf: master.port })
  replica2 = await cluster.node('replica2', { replicaOf: master.port })
  await Promise.all([replica1.waitLinkUp(master.port), replica2.waitLinkUp(master.port)])
  expect(await master.waitOnlineReplicas(2)).toEqual([replica1.port, replica2.port].sort((a, b) => a - b))
})

afterAll(async () => {
  await cluster?.stopAll()
})

describe('replication between bfs processes', () => {
  it('copies 200,000 items written by BF.MADD to both replicas, acknowledged by WAIT 2', async () => {
    const client = cluster.client(master.port)
    expect(await writeItems(client, 0, ITEMS, 2)).toBe(2)
    await expectAllItems(replica1)
    await expectAllItems(replica2)
  })

  it('refuses writes on a replica with -READONLY and still serves reads there', async () => {
    const client = cluster.client(replica1.port)
    const [command, ...args] = items.add('written-on-a-replica')
    await expect(client.call(command!, ...args)).rejects.toThrow(
      "READONLY You can't write against a read only replica.",
    )
    expect(await items.present(client, ['item:0', 'item:199999'])).toEqual([true, true])
    expect(await items.count(client)).toBe(await masterCount())
  })

  it('feeds a chained replica (a replica of a replica) the top master stream, offsets included', async () => {
    const chained = await cluster.node('chained', { replicaOf: replica1.port })
    await chained.waitLinkUp(replica1.port)
    await writeItems(cluster.client(master.port), written, written + 5000, 2)
    await waitCaughtUp(chained)
    await expectAllItems(chained)
    await chained.kill()
  })

  it('continues with a partial resync after the link is cut (CLIENT KILL TYPE master on the replica)', async () => {
    const [partial, full] = [
      await master.infoNumber('stats', 'sync_partial_ok'),
      await master.infoNumber('stats', 'sync_full'),
    ]
    expect(Number(await replica1.command('CLIENT', 'KILL', 'TYPE', 'master'))).toBe(1)
    await waitUntil(
      'the master counts one more partial resync',
      async () => (await master.infoNumber('stats', 'sync_partial_ok')) === partial + 1,
    )
    await replica1.waitLinkUp(master.port)
    expect(await master.infoNumber('stats', 'sync_full')).toBe(full)
    expect(await writeItems(cluster.client(master.port), written, written + 5000, 2)).toBe(2)
    await expectAllItems(replica1)
  })

  it('continues with a partial resync after a clean restart of the replica (SHUTDOWN SAVE)', async () => {
    const [partial, full] = [
      await master.infoNumber('stats', 'sync_partial_ok'),
      await master.infoNumber('stats', 'sync_full'),
    ]
    await replica2.shutdown()
    await writeItems(cluster.client(master.port), written, written + 5000, 1) // written while it is down
    await replica2.start()
    await replica2.waitLinkUp(master.port)
    expect(await master.infoNumber('stats', 'sync_partial_ok')).toBe(partial + 1)
    expect(await master.infoNumber('stats', 'sync_full')).toBe(full)
    await waitCaughtUp(replica2)
    await expectAllItems(replica2)
  })

  it('takes a full resync after the replica is killed -9, and has every item again', async () => {
    const full = await master.infoNumber('stats', 'sync_full')
    await replica2.kill()
    await writeItems(cluster.client(master.port), written, written + 5000, 1)
    await replica2.start()
    await replica2.waitLinkUp(master.port)
    expect(await master.infoNumber('stats', 'sync_full')).toBe(full + 1)
    expect(await writeItems(cluster.client(master.port), written, written + 1000, 2)).toBe(2)
    await expectAllItems(replica2)
  })

  it('copies every item by a full sync in the disk form too (repl-diskless-sync no)', async () => {
    const full = await master.infoNumber('stats', 'sync_full')
    expect(await master.command('CONFIG', 'SET', 'repl-diskless-sync', 'no')).toBe('OK')
    const diskReplica = await cluster.node('disk-replica', { replicaOf: master.port })
    await diskReplica.waitLinkUp(master.port)
    expect(await master.infoNumber('stats', 'sync_full')).toBe(full + 1)
    expect(await writeItems(cluster.client(master.port), written, written + 1000, 3)).toBe(3)
    await expectAllItems(diskReplica)
    await diskReplica.kill()
    expect(await master.command('CONFIG', 'SET', 'repl-diskless-sync', 'yes')).toBe('OK')
  })
})
