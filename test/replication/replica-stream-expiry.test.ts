/**
 * A replica that lags its master past a key's expiry: the replica process is stopped (SIGSTOP)
 * while the master persists, renames, extends, adds to and merges from keys before they expire,
 * and resumed once the clock has passed their expiry. Applying the master's stream, the replica
 * sees every key as it is (redis 7.0 expireIfNeeded answers "not expired" for its master's
 * client; only the master's DEL removes a key), so after WAIT it holds what the master holds.
 * Real processes (dist/main.js), the link between them a real TCP connection.
 */
import { rmSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import type { Redis } from 'ioredis'
import { makeTempDir } from '../helpers/temp-dir.js'
import { childClient, startChildServer } from '../helpers/child-server.js'
import { infoFields, until } from '../helpers/replication-info.js'

const cleanups: (() => Promise<unknown> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function node(
  ...extra: string[]
): Promise<{ client: Redis; port: number; output: () => string; signal: (name: NodeJS.Signals) => void }> {
  const dir = makeTempDir('bfs-replica-expiry-')
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const { bfs, port } = await startChildServer([
    '--port',
    '0',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
    ...extra,
  ])
  cleanups.push(async () => {
    bfs.kill() // SIGKILL: ends a stopped process too
    await bfs.waitExit()
  })
  const client = childClient(port)
  cleanups.push(() => client.disconnect())
  return { client, port, output: () => bfs.stdout + bfs.stderr, signal: (name) => bfs.child.kill(name) }
}

/** What a client sees of a key: its existence, its TTL's kind, its count and two items. */
async function stateOf(client: Redis, key: string): Promise<unknown[]> {
  const exists = await client.exists(key)
  const ttl = await client.ttl(key)
  if (exists === 0) return [key, 0, ttl]
  return [
    key,
    1,
    ttl === -1 ? -1 : ttl > 0 ? 'positive' : ttl,
    await client.call('BF.CARD', key),
    await client.call('BF.MEXISTS', key, 'a', 'b'),
  ]
}

const KEYS = ['p', 'r', 'r2', 'add', 'ext', 'tx', 'dst', 'src', 'gone']

describe("a replica behind its master past a key's expiry", () => {
  it('applies PERSIST, RENAME, BF.ADD, PEXPIRE, BF.MERGE and a MULTI/EXEC of the stream to the key as it is, and ends as the master', async () => {
    const master = await node()
    const replica = await node('--replicaof', '127.0.0.1', String(master.port), '--enable-debug-command', 'local')
    await until(
      async () => (await infoFields(replica.client, 'replication')).get('master_link_status') === 'up',
      "the replica's link",
    )
    for (const key of ['p', 'r', 'add', 'ext', 'tx', 'src', 'gone']) await master.client.call('BF.ADD', key, 'a')
    expect(await master.client.call('WAIT', '1', '20000')).toBe(1)

    replica.signal('SIGSTOP')
    // Every key expires at `at`; the master changes them well before it, in one write.
    const at = Date.now() + 3_000
    const pipeline = master.client.pipeline()
    for (const key of ['p', 'r', 'add', 'ext', 'tx', 'src', 'gone']) pipeline.call('PEXPIREAT', key, String(at))
    pipeline.call('PERSIST', 'p')
    pipeline.call('RENAME', 'r', 'r2')
    pipeline.call('PERSIST', 'r2')
    pipeline.call('BF.ADD', 'add', 'b')
    pipeline.call('PERSIST', 'add')
    pipeline.call('PEXPIRE', 'ext', '600000')
    pipeline.call('BF.MERGE', 'dst', 'src')
    pipeline.call('MULTI')
    pipeline.call('BF.ADD', 'tx', 'b')
    pipeline.call('PERSIST', 'tx')
    pipeline.call('EXEC')
    const replies = (await pipeline.exec())!.map(([error, reply]) => error?.message ?? reply)
    expect(replies).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 'OK', 1, 1, 1, 1, 'OK', 'OK', 'QUEUED', 'QUEUED', [1, 1]])
    // The master's own clock past the expiry: it deletes `gone` (and propagates its DEL).
    await until(async () => (await master.client.exists('gone')) === 0, "the master's clock past the expiry")
    expect(Date.now()).toBeGreaterThan(at)

    replica.signal('SIGCONT')
    expect(await master.client.call('WAIT', '1', '20000')).toBe(1)
    const onMaster = await Promise.all(KEYS.map((key) => stateOf(master.client, key)))
    expect.soft(await Promise.all(KEYS.map((key) => stateOf(replica.client, key)))).toEqual(onMaster)
    expect.soft(await stateOf(replica.client, 'add')).toEqual(['add', 1, -1, 2, [1, 1]])
    expect.soft(await stateOf(replica.client, 'ext')).toEqual(['ext', 1, 'positive', 1, [1, 0]])
    expect
      .soft(((await replica.client.keys('*')) as string[]).sort())
      .toEqual(((await master.client.keys('*')) as string[]).sort())
    expect.soft(await replica.client.dbsize()).toBe(await master.client.dbsize())
    // The master's DEL removed `gone` here too, though this node's clock had it expired already
    // (DEBUG OBJECT finds a key held past its expiry, as redis's does).
    await expect.soft(replica.client.call('DEBUG', 'OBJECT', 'gone')).rejects.toThrow('ERR no such key')
    expect.soft(replica.output()).not.toContain('A command from the master answered an error')
  })
})
