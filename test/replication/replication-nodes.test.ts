/**
 * Replication between real bfs nodes (in this process): a replica gets the master's data and
 * stream, refuses client writes, is counted by WAIT and listed by ROLE; after REPLICAOF NO ONE
 * on one replica the other continues from it (+CONTINUE, no full sync). Chained replicas, cut
 * links, restarts and kill -9 are in test/distributed/replication.test.ts.
 *
 * Needs both sides: the master side (PSYNC, the backlog, WAIT, INFO's sync_* counters) and the
 * full-sync payload come from other branches of the same issue.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import type { Config } from '../../src/runtime/config.js'
import { infoFields, until } from '../helpers/replication-info.js'

const cleanups: (() => Promise<unknown> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function node(config: Partial<Config> = {}): Promise<{ running: RunningServer; client: Redis }> {
  const running = await startServer({ 'repl-diskless-sync-delay': 0, ...config })
  cleanups.push(() => running.stop())
  const client = new Redis({ port: running.port, host: '127.0.0.1' })
  cleanups.push(() => client.disconnect())
  return { running, client }
}

const info = infoFields

const stat = async (client: Redis, field: string): Promise<number> => Number((await info(client, 'stats')).get(field))

async function replicate(replica: Redis, masterPort: number): Promise<void> {
  await replica.call('REPLICAOF', '127.0.0.1', String(masterPort))
  await until(
    async () => (await info(replica, 'replication')).get('master_link_status') === 'up',
    'master_link_status:up',
  )
}

/** Waits until the replica has applied everything the master streamed so far. */
async function caughtUp(master: Redis, replica: Redis): Promise<void> {
  const offset = (await info(master, 'replication')).get('master_repl_offset')
  await until(
    async () => (await info(replica, 'replication')).get('slave_repl_offset') === offset,
    `slave_repl_offset ${offset}`,
  )
}

const items = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}${i}`)

describe('bfs replicating bfs', () => {
  it('copies the data, applies the stream, refuses client writes, and WAIT counts the replica', async () => {
    const master = await node()
    const replica = await node()
    await master.client.call('BF.MADD', 'seen', ...items('before-', 2000))
    await replicate(replica.client, master.running.port)
    await master.client.call('BF.MADD', 'seen', ...items('after-', 2000))
    expect(await master.client.call('WAIT', '1', '10000')).toBe(1)
    const found = (await replica.client.call(
      'BF.MEXISTS',
      'seen',
      ...items('before-', 2000),
      ...items('after-', 2000),
    )) as number[]
    expect(found.every((one) => one === 1)).toBe(true)
    expect(await replica.client.call('BF.CARD', 'seen')).toBe(await master.client.call('BF.CARD', 'seen'))
    await expect(replica.client.call('BF.ADD', 'seen', 'mine')).rejects.toThrow(
      "READONLY You can't write against a read only replica.",
    )
    expect(await master.client.call('ROLE')).toEqual([
      'master',
      expect.any(Number),
      [['127.0.0.1', String(replica.running.port), expect.any(String)]],
    ])
  })

  it('after REPLICAOF NO ONE on one replica, the other continues from it with +CONTINUE', async () => {
    const master = await node()
    const promoted = await node()
    const other = await node()
    await replicate(promoted.client, master.running.port)
    await replicate(other.client, master.running.port)
    await master.client.call('BF.MADD', 'f', ...items('a', 300))
    await caughtUp(master.client, promoted.client)
    await caughtUp(master.client, other.client)
    expect(await promoted.client.call('REPLICAOF', 'NO', 'ONE')).toBe('OK')
    expect((await info(promoted.client, 'replication')).get('role')).toBe('master')
    const partialBefore = await stat(promoted.client, 'sync_partial_ok')
    await replicate(other.client, promoted.running.port)
    expect(await stat(promoted.client, 'sync_partial_ok')).toBe(partialBefore + 1)
    expect(await stat(promoted.client, 'sync_full')).toBe(0)
    await promoted.client.call('BF.ADD', 'f', 'after-promotion')
    await caughtUp(promoted.client, other.client)
    expect(await other.client.call('BF.MEXISTS', 'f', 'a0', 'a299', 'after-promotion')).toEqual([1, 1, 1])
  })
})
