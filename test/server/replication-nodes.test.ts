/**
 * Replication between real bfs nodes (two and three servers, in this process and as child
 * processes): a replica gets the master's data and stream and refuses writes, a chained replica
 * follows its replica's master, REPLICAOF NO ONE lets the other replica continue (+CONTINUE), a
 * cut link and a clean restart resync partially, a kill -9 resyncs in full.
 *
 * Needs both sides: the master side (PSYNC, the backlog, WAIT, INFO's sync_* counters) and the
 * full-sync payload come from other branches of the same issue.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Redis } from 'ioredis'
import { makeTempDir, startServer, type RunningServer } from '../helpers/start-server.js'
import { childClient, killChildServer, startChildServer } from '../helpers/child-server.js'
import type { Config } from '../../src/runtime/config.js'

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

async function info(client: Redis, section: string): Promise<Map<string, string>> {
  const text = (await client.info(section)) as string
  return new Map(text.split('\r\n').filter((line) => line.includes(':')).map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)]))
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const stat = async (client: Redis, field: string): Promise<number> => Number((await info(client, 'stats')).get(field))

async function replicate(replica: Redis, masterPort: number): Promise<void> {
  await replica.call('REPLICAOF', '127.0.0.1', String(masterPort))
  await until(async () => (await info(replica, 'replication')).get('master_link_status') === 'up', 'master_link_status:up')
}

/** Waits until the replica has applied everything the master streamed so far. */
async function caughtUp(master: Redis, replica: Redis): Promise<void> {
  const offset = (await info(master, 'replication')).get('master_repl_offset')
  await until(async () => (await info(replica, 'replication')).get('slave_repl_offset') === offset, `slave_repl_offset ${offset}`)
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
    const found = (await replica.client.call('BF.MEXISTS', 'seen', ...items('before-', 2000), ...items('after-', 2000))) as number[]
    expect(found.every((one) => one === 1)).toBe(true)
    expect(await replica.client.call('BF.CARD', 'seen')).toBe(await master.client.call('BF.CARD', 'seen'))
    await expect(replica.client.call('BF.ADD', 'seen', 'mine')).rejects.toThrow("READONLY You can't write against a read only replica.")
    expect(await master.client.call('ROLE')).toEqual(['master', expect.any(Number), [['127.0.0.1', String(replica.running.port), expect.any(String)]]])
  })

  it('chains: a replica of a replica gets the top master\'s stream and offsets', async () => {
    const top = await node()
    const middle = await node()
    const bottom = await node()
    await replicate(middle.client, top.running.port)
    await replicate(bottom.client, middle.running.port)
    await top.client.call('BF.MADD', 'chain', ...items('x', 500))
    await caughtUp(top.client, middle.client)
    await caughtUp(top.client, bottom.client)
    expect(await bottom.client.call('BF.EXISTS', 'chain', 'x499')).toBe(1)
    expect((await info(bottom.client, 'replication')).get('master_replid')).toBe((await info(top.client, 'replication')).get('master_replid'))
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

  it('a cut link (CLIENT KILL TYPE master) resyncs partially', async () => {
    const master = await node()
    const replica = await node()
    await replicate(replica.client, master.running.port)
    const partialBefore = await stat(master.client, 'sync_partial_ok')
    expect(await replica.client.call('CLIENT', 'KILL', 'TYPE', 'master')).toBe(1)
    await master.client.call('BF.ADD', 'f', 'during')
    await until(async () => (await stat(master.client, 'sync_partial_ok')) === partialBefore + 1, 'sync_partial_ok + 1')
    await caughtUp(master.client, replica.client)
    expect(await replica.client.call('BF.EXISTS', 'f', 'during')).toBe(1)
  })

  it('a replica restarted cleanly continues (+CONTINUE); killed -9, it resyncs in full', async () => {
    const master = await node()
    const dir = makeTempDir()
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const conf = path.join(dir, 'bfs.conf')
    writeFileSync(conf, `appendonly yes\nsave ""\nreplicaof 127.0.0.1 ${master.running.port}\n`)
    let child = await startChildServer([conf, '--port', '0', '--dir', dir])
    cleanups.push(() => child.bfs.kill())
    let replica = childClient(child.port)
    await until(async () => (await info(replica, 'replication')).get('master_link_status') === 'up', 'link up')
    await master.client.call('BF.MADD', 'f', ...items('r', 100))
    await caughtUp(master.client, replica)
    const fullBefore = await stat(master.client, 'sync_full')
    const partialBefore = await stat(master.client, 'sync_partial_ok')
    await replica.call('SHUTDOWN').catch(() => {})
    await child.bfs.waitExit()
    replica.disconnect()
    child = await startChildServer([conf, '--port', '0', '--dir', dir])
    replica = childClient(child.port)
    await until(async () => (await stat(master.client, 'sync_partial_ok')) === partialBefore + 1, 'sync_partial_ok + 1')
    expect(await stat(master.client, 'sync_full')).toBe(fullBefore)
    expect(await replica.call('BF.EXISTS', 'f', 'r99')).toBe(1)

    await master.client.call('BF.ADD', 'f', 'before-kill')
    await caughtUp(master.client, replica)
    await killChildServer(child.bfs)
    replica.disconnect()
    child = await startChildServer([conf, '--port', '0', '--dir', dir])
    replica = childClient(child.port)
    cleanups.push(() => replica.disconnect())
    await until(async () => (await stat(master.client, 'sync_full')) === fullBefore + 1, 'sync_full + 1')
    await until(async () => (await info(replica, 'replication')).get('master_link_status') === 'up', 'link up again')
    expect(await replica.call('BF.MEXISTS', 'f', 'r0', 'before-kill')).toEqual([1, 1])
  })
})
