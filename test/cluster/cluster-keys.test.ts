/**
 * CLUSTER COUNTKEYSINSLOT / GETKEYSINSLOT on a bfs node in cluster mode (the per-slot key index,
 * store/slot-index.ts) beside a real redis-server 7.0.15 node in cluster mode, both owning every
 * slot: the same counts and keys for the same key names (hash tags, binary names), kept through
 * DEL, RENAME, expiry and FLUSHALL, and redis's errors word for word; and MEMORY USAGE's part for
 * the key, which in cluster mode counts the dictEntry's slot metadata as redis 7.0 does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { startRedisClusterNode } from '../helpers/cluster-mode.js'
import { replyOrError } from '../helpers/reply-or-error.js'
import { slotOf } from '../../src/core/key-slot.js'
import { until } from '../helpers/replication-info.js'

let bfs: RunningServer
let redis: { readonly port: number; stop(): Promise<void> }
let ours: Redis
let theirs: Redis

beforeAll(async () => {
  ;[bfs, redis] = await Promise.all([startServer({ 'cluster-enabled': true }), startRedisClusterNode()])
  ours = new Redis({ port: bfs.port, host: '127.0.0.1' })
  theirs = new Redis({ port: redis.port, host: '127.0.0.1' })
  for (const client of [ours, theirs]) {
    await client.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383')
    await until(
      async () => String(await client.call('CLUSTER', 'INFO')).includes('cluster_state:ok'),
      'cluster_state:ok',
    )
  }
})
afterAll(async () => {
  ours?.disconnect()
  theirs?.disconnect()
  await Promise.all([bfs?.stop(), redis?.stop()])
})

/** Writes the same key on both: a filter here, a string there. */
async function write(key: string | Buffer): Promise<void> {
  await ours.call('BF.ADD', key, 'x')
  await theirs.call('SET', key, 'x')
}

async function keysIn(client: Redis, slot: number, count = 100): Promise<string[]> {
  return ((await client.callBuffer('CLUSTER', 'GETKEYSINSLOT', String(slot), String(count))) as Buffer[])
    .map((key) => key.toString('hex'))
    .sort()
}

describe('CLUSTER COUNTKEYSINSLOT and GETKEYSINSLOT', () => {
  it('count and list the keys of a slot as redis, through DEL, RENAME, expiry and FLUSHALL', async () => {
    const binary = Buffer.from([0xff, 0x00, 0x7b, 0x61, 0x7d]) // "\xff\0{a}": the tag is "a"
    for (const key of ['{a}1', '{a}2', 'a', binary, '{}a', 'foo']) await write(key)
    for (const slot of [slotOf('a'), slotOf('{}a'), slotOf('foo')]) {
      expect(await ours.call('CLUSTER', 'COUNTKEYSINSLOT', String(slot))).toBe(
        await theirs.call('CLUSTER', 'COUNTKEYSINSLOT', String(slot)),
      )
      expect(await keysIn(ours, slot)).toEqual(await keysIn(theirs, slot))
    }
    expect(await ours.call('CLUSTER', 'COUNTKEYSINSLOT', String(slotOf('a')))).toBe(4)
    expect(await keysIn(ours, slotOf('a'), 2)).toHaveLength(2)
    for (const client of [ours, theirs]) {
      await client.del('{a}1')
      await client.rename('{a}2', '{a}renamed')
      await client.call('PEXPIRE', 'a', '1')
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
    for (const client of [ours, theirs]) await client.exists('a') // deleted as expired on access
    expect(await keysIn(ours, slotOf('a'))).toEqual(await keysIn(theirs, slotOf('a')))
    expect(await ours.call('CLUSTER', 'COUNTKEYSINSLOT', String(slotOf('a')))).toBe(2) // the binary key and {a}renamed
    for (const client of [ours, theirs]) await client.flushall()
    expect(await ours.call('CLUSTER', 'COUNTKEYSINSLOT', String(slotOf('foo')))).toBe(0)
  })

  it('refuse as redis does', async () => {
    for (const args of [
      ['COUNTKEYSINSLOT', '16384'],
      ['COUNTKEYSINSLOT', '-1'],
      ['COUNTKEYSINSLOT', 'x'],
      ['COUNTKEYSINSLOT'],
      ['COUNTKEYSINSLOT', '1', '2'],
      ['GETKEYSINSLOT', '0', '-1'],
      ['GETKEYSINSLOT', '16384', '1'],
      ['GETKEYSINSLOT', 'x', '1'],
      ['GETKEYSINSLOT', '0', 'x'],
      ['GETKEYSINSLOT', '0'],
      ['GETKEYSINSLOT', '0', '99999999999'],
    ]) {
      expect(await replyOrError(ours, ['CLUSTER', ...args]), args.join(' ')).toEqual(
        await replyOrError(theirs, ['CLUSTER', ...args]),
      )
    }
  })
})

describe('MEMORY USAGE in cluster mode', () => {
  it("the key's part in cluster mode is redis's, dictEntry metadata included (16 bytes more than without)", async () => {
    await theirs.set('k', 'v')
    const redisBase = Number(await theirs.call('MEMORY', 'USAGE', 'k'))
    for (const length of [1, 6, 7, 31, 32, 42, 253]) {
      const key = 'k'.repeat(length)
      await ours.call('BF.ADD', key, 'x')
      await theirs.set(key, 'v')
      const size = ((await ours.call('BF.INFO', key, 'SIZE')) as number[])[0]!
      const redisPart = Number(await theirs.call('MEMORY', 'USAGE', key)) - redisBase
      // Without cluster mode, a 1-byte key's part is 8 (its sds) + 24 (the dictEntry).
      expect(Number(await ours.call('MEMORY', 'USAGE', key)) - size, `key of ${length} bytes`).toBe(
        8 + 24 + 16 + redisPart,
      )
    }
  })
})
