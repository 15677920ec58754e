/**
 * `redis-cli --cluster reshard` of a slot holding a filter above `proto-max-bulk-len` (streamed in
 * BFS.RESTORE-PART parts) and 50 small ones, between two bfs nodes in cluster mode, while an ioredis
 * Cluster client keeps adding items to them: every acknowledged item is found through the cluster
 * afterwards, the keys and CLUSTER COUNTKEYSINSLOT moved with the slot, and `check` passes.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Cluster as RedisCluster } from 'ioredis'
import { address, clusterCli, ModeCluster, waitCheckPasses, waitJoined } from '../helpers/cluster-mode.js'
import { slotOf } from '../../src/core/key-slot.js'

const modes = new ModeCluster()
afterAll(() => modes.stopAll())

describe('reshard of filters while a client writes', () => {
  it('moves a large filter in parts and small ones, losing no acknowledged item', async () => {
    const [source, target] = await modes.nodes(2, ['proto-max-bulk-len 1mb'])
    await source!.command('CLUSTER', 'ADDSLOTSRANGE', 0, 16383)
    await source!.command('CLUSTER', 'SET-CONFIG-EPOCH', 1)
    await target!.command('CLUSTER', 'MEET', '127.0.0.1', source!.port)
    await waitJoined([source!, target!])
    // A hash tag in one of the first slots: the reshard then moves slots 0 .. slot only.
    let tag = 0
    while (slotOf(String(tag)) >= 40) tag++
    const slot = slotOf(String(tag))
    const big = `big{${tag}}`
    const smalls = Array.from({ length: 50 }, (_, i) => `small{${tag}}:${i}`)
    await source!.command('BF.RESERVE', big, '0.01', '3000000') // about 3.4 MiB of bitmap
    for (const key of smalls) await source!.command('BF.ADD', key, 'first')
    expect(await source!.command('CLUSTER', 'COUNTKEYSINSLOT', slot)).toBe(51)

    const client = new RedisCluster([{ host: '127.0.0.1', port: source!.port }], {
      redisOptions: { maxRetriesPerRequest: 20 },
    })
    const acknowledged: [string, string][] = []
    let writing = true
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const key = i % 2 === 0 ? big : smalls[i % smalls.length]!
        const item = `item:${i}`
        expect(await client.call('BF.ADD', key, item)).toBe(1)
        acknowledged.push([key, item])
      }
    })()
    try {
      const [sourceId, targetId] = [
        String(await source!.command('CLUSTER', 'MYID')),
        String(await target!.command('CLUSTER', 'MYID')),
      ]
      const moved = await clusterCli(
        'reshard',
        [
          address(source!),
          '--cluster-from',
          sourceId,
          '--cluster-to',
          targetId,
          '--cluster-slots',
          String(slot + 1),
          '--cluster-yes',
        ],
        { timeoutMs: 90_000 },
      )
      expect(moved.code, moved.output).toBe(0)
    } finally {
      writing = false
      await writer
    }
    expect(acknowledged.length).toBeGreaterThan(10)
    await waitCheckPasses(source!)
    expect(await source!.command('CLUSTER', 'COUNTKEYSINSLOT', slot)).toBe(0)
    expect(await target!.command('CLUSTER', 'COUNTKEYSINSLOT', slot)).toBe(51)
    expect((await target!.command('CLUSTER', 'GETKEYSINSLOT', slot, 100)) as string[]).toContain(big)
    for (const [key, item] of acknowledged) expect(await client.call('BF.EXISTS', key, item), `${key} ${item}`).toBe(1)
    for (const key of smalls) expect(await client.call('BF.EXISTS', key, 'first')).toBe(1)
    client.disconnect()
  })
})
