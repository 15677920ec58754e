/**
 * Failover in cluster mode on real bfs nodes (in this process, over real sockets): SLAVEOF host
 * port as CLUSTER REPLICATE of the node at that address, SLAVEOF NO ONE (alone and in Sentinel's
 * MULTI block) as a takeover with a new config epoch, and CLUSTER FAILOVER in its three modes with
 * redis 7.0.15's errors. The old master always learns the new claim by pull gossip and follows.
 * Sentinel itself, with kill -9, is test/distributed/cluster-failover.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { rmSync } from 'node:fs'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { makeTempDir } from '../helpers/temp-dir.js'
import type { Config } from '../../src/runtime/config.js'
import { until } from '../helpers/replication-info.js'
import { parseNodes, type NodesLine } from '../helpers/cluster-shards.js'

const cleanups: (() => Promise<unknown> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

interface Node {
  running: RunningServer
  client: Redis
  port: number
  id: string
}

async function clusterNode(config: Partial<Config> = {}): Promise<Node> {
  const running = await startServer({
    'cluster-enabled': true,
    'cluster-node-timeout': 2000,
    'repl-diskless-sync-delay': 0,
    ...config,
  })
  let stopped = false
  cleanups.push(() => (stopped ? undefined : running.stop()))
  const client = new Redis({
    port: running.port,
    host: '127.0.0.1',
    ...(config.requirepass ? { password: config.requirepass } : {}),
  })
  client.on('error', () => {})
  cleanups.push(() => client.disconnect())
  const id = String(await client.call('CLUSTER', 'MYID'))
  const node = { running, client, port: running.port, id }
  // A node stopped by the test is not stopped again.
  const stop = running.stop.bind(running)
  running.stop = async () => {
    stopped = true
    await stop()
  }
  return node
}

async function nodesOf(node: Node): Promise<NodesLine[]> {
  return parseNodes(String(await node.client.call('CLUSTER', 'NODES')))
}

async function lineOf(viewer: Node, subject: Node): Promise<NodesLine | undefined> {
  return (await nodesOf(viewer)).find((line) => line.id === subject.id)
}

/** `count` nodes that all know each other, the first owning every slot (node i made with `configs[i]`). */
async function cluster(count: number, configs: readonly Partial<Config>[] = []): Promise<Node[]> {
  const nodes: Node[] = []
  for (let i = 0; i < count; i++) nodes.push(await clusterNode(configs[i]))
  await nodes[0]!.client.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383')
  for (const node of nodes.slice(1)) await node.client.call('CLUSTER', 'MEET', '127.0.0.1', String(nodes[0]!.port))
  // Settled: every node knows every other, with the config epoch that node gives itself (the
  // masters' first epochs come from collisions: a takeover computed from an older view could
  // tie with its master's new epoch and lose the tie).
  await until(async () => {
    const views = await Promise.all(nodes.map(nodesOf))
    const own = new Map(
      views
        .map((view) => view.find((line) => line.flags.includes('myself'))!)
        .map((line) => [line.id, line.configEpoch]),
    )
    return views.every((view) => view.length === count && view.every((line) => own.get(line.id) === line.configEpoch))
  }, `${count} nodes know each other and each other's config epochs`)
  return nodes
}

/** Waits until `replica`'s replication link to `master` is up. */
async function linkUp(replica: Node, master: Node): Promise<void> {
  await until(async () => {
    const info = String(await replica.client.call('INFO', 'replication'))
    return info.includes(`master_port:${master.port}\r\n`) && info.includes('master_link_status:up')
  }, `${replica.port} replicates ${master.port}`)
}

/** A master owning every slot and its replica (made by CLUSTER REPLICATE; node i made with `configs[i]`), with `items` in filter f. */
async function shard(items: number, extra = 0, configs: readonly Partial<Config>[] = []): Promise<Node[]> {
  const nodes = await cluster(2 + extra, configs)
  const [master, replica] = nodes as [Node, Node]
  expect(await replica.client.call('CLUSTER', 'REPLICATE', master.id)).toBe('OK')
  await linkUp(replica, master)
  if (items > 0) await master.client.call('BF.MADD', 'f', ...names('before', items))
  expect(await master.client.call('WAIT', '1', '5000')).toBe(1)
  return nodes
}

const names = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}-${i}`)

/** Waits until `viewer`'s CLUSTER NODES shows `subject` as a replica of `master`. */
async function seenAsReplica(viewer: Node, subject: Node, master: Node): Promise<void> {
  await until(async () => {
    const line = await lineOf(viewer, subject)
    return line !== undefined && line.flags.includes('slave') && line.masterId === master.id
  }, `${viewer.port} sees ${subject.port} as a replica of ${master.port}`)
}

/** Expects `node` a master owning every slot with the largest config epoch its view has. */
async function expectOwnsAll(node: Node): Promise<void> {
  const view = await nodesOf(node)
  const myself = view.find((line) => line.flags.includes('myself'))!
  expect(myself.flags).toContain('master')
  expect(myself.slots).toEqual(['0-16383'])
  expect(myself.configEpoch).toBe(Math.max(...view.map((line) => line.configEpoch)))
}

/** The items of `list` that `node` does not have in filter f (READONLY: it may be a replica). */
async function missingOn(node: Node, list: readonly string[]): Promise<string[]> {
  await node.client.call('READONLY')
  const found = (await node.client.call('BF.MEXISTS', 'f', ...list)) as number[]
  return list.filter((_, i) => found[i] !== 1)
}

describe('SLAVEOF / REPLICAOF in cluster mode', () => {
  it('SLAVEOF host port is CLUSTER REPLICATE of the node at that address; again: Already connected', async () => {
    const [master, other] = (await cluster(2)) as [Node, Node]
    await master.client.call('BF.MADD', 'f', ...names('x', 100))
    expect(await other.client.call('SLAVEOF', '127.0.0.1', String(master.port))).toBe('OK')
    await seenAsReplica(other, other, master)
    await seenAsReplica(master, other, master)
    await linkUp(other, master)
    expect(await master.client.call('WAIT', '1', '5000')).toBe(1)
    expect(await missingOn(other, names('x', 100))).toEqual([])
    expect(await other.client.call('REPLICAOF', '127.0.0.1', String(master.port))).toBe(
      'OK Already connected to specified master',
    )
    const role = (await other.client.call('ROLE')) as unknown[]
    expect(role.slice(0, 3)).toEqual(['slave', '127.0.0.1', master.port])
  })

  it('refuses an address that is no known node, its own address, a replica, and a master holding slots', async () => {
    const [master, replica, third] = (await shard(0, 1)) as [Node, Node, Node]
    await expect(third.client.call('SLAVEOF', '127.0.0.1', '1')).rejects.toThrow('ERR Unknown node 127.0.0.1:1')
    await expect(third.client.call('SLAVEOF', '127.0.0.1', String(third.port))).rejects.toThrow(
      "ERR Can't replicate myself",
    )
    await seenAsReplica(third, replica, master)
    await expect(third.client.call('SLAVEOF', '127.0.0.1', String(replica.port))).rejects.toThrow(
      'ERR I can only replicate a master, not a replica.',
    )
    await expect(master.client.call('SLAVEOF', '127.0.0.1', String(third.port))).rejects.toThrow(
      'ERR To set a master the node must be empty and without assigned slots.',
    )
    await expect(replica.client.call('SLAVEOF', '127.0.0.1', 'x')).rejects.toThrow('ERR Invalid master port')
    // NO ONE on a master changes nothing.
    expect(await master.client.call('SLAVEOF', 'NO', 'ONE')).toBe('OK')
    const myself = (await nodesOf(master)).find((line) => line.flags.includes('myself'))!
    expect([myself.flags, myself.slots]).toEqual([['myself', 'master'], ['0-16383']])
  })

  it("Sentinel's promotion block (MULTI, SLAVEOF NO ONE, CONFIG REWRITE, CLIENT KILL, EXEC) takes the slots over with a new epoch; the old master and a third node follow", async () => {
    const [master, replica, third] = (await shard(500, 1)) as [Node, Node, Node]
    const epochBefore = (await lineOf(third, master))!.configEpoch
    const replies = (await replica.client
      .multi()
      .call('SLAVEOF', 'NO', 'ONE')
      .call('CONFIG', 'REWRITE')
      .call('CLIENT', 'KILL', 'TYPE', 'normal')
      .call('CLIENT', 'KILL', 'TYPE', 'pubsub')
      .exec())!
    expect(replies[0]).toEqual([null, 'OK'])
    // No config file here: CONFIG REWRITE fails when it runs, which leaves the rest of EXEC alone.
    expect(String(replies[1]![0])).toMatch(/ERR The server is running without a config file/)
    expect(replies[2]![0]).toBeNull()
    await expectOwnsAll(replica)
    expect((await lineOf(replica, replica))!.configEpoch).toBeGreaterThan(epochBefore)
    expect(((await replica.client.call('ROLE')) as unknown[])[0]).toBe('master')
    await seenAsReplica(master, master, replica)
    await seenAsReplica(third, master, replica)
    await until(async () => {
      const slots = (await third.client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][]
      return slots.length === 1 && slots[0]![2][1] === replica.port
    }, 'the third node names the new master in CLUSTER SLOTS')
    await linkUp(master, replica)
    expect(await missingOn(replica, names('before', 500))).toEqual([])
    await expect(master.client.call('BF.ADD', 'f', 'late')).rejects.toThrow(
      new RegExp(`^MOVED \\d+ 127\\.0\\.0\\.1:${replica.port}$`),
    )
  })
})

describe('CLUSTER FAILOVER', () => {
  it("answers redis 7.0.15's errors: on a master, a bad mode, too many arguments, the master down", async () => {
    const [master, replica] = (await shard(0)) as [Node, Node]
    await expect(master.client.call('CLUSTER', 'FAILOVER')).rejects.toThrow(
      'ERR You should send CLUSTER FAILOVER to a replica',
    )
    await expect(master.client.call('CLUSTER', 'FAILOVER', 'TAKEOVER')).rejects.toThrow(
      'ERR You should send CLUSTER FAILOVER to a replica',
    )
    await expect(replica.client.call('CLUSTER', 'FAILOVER', 'NOW')).rejects.toThrow('ERR syntax error')
    await expect(replica.client.call('CLUSTER', 'FAILOVER', 'FORCE', 'x')).rejects.toThrow(
      "ERR unknown subcommand or wrong number of arguments for 'FAILOVER'. Try CLUSTER HELP.",
    )
    await master.running.stop()
    await until(
      async () => !String(await replica.client.call('INFO', 'replication')).includes('master_link_status:up'),
      'the link is down',
    )
    await expect(replica.client.call('CLUSTER', 'FAILOVER')).rejects.toThrow(
      'ERR Master is down or failed, please use CLUSTER FAILOVER FORCE',
    )
    expect(await replica.client.call('CLUSTER', 'FAILOVER', 'FORCE')).toBe('OK')
    await expectOwnsAll(replica)
    expect(await replica.client.call('BF.ADD', 'f', 'after')).toBe(1)
  })

  it('default: the master pauses its writes, the replica catches up and takes over, the master follows; every write the master answered is on the new master', async () => {
    const [master, replica] = (await shard(200)) as [Node, Node]
    const writer = new Redis({ port: master.port, host: '127.0.0.1', maxRetriesPerRequest: 0 })
    writer.on('error', () => {})
    cleanups.push(() => writer.disconnect())
    const answered: string[] = []
    const refused: string[] = []
    let stop = false
    const loop = (async () => {
      for (let i = 0; !stop; i++) {
        // Pipelined bursts: writes are under way when the pause begins.
        const burst = names(`w${i}`, 20)
        const results = await Promise.allSettled(burst.map((item) => writer.call('BF.ADD', 'f', item)))
        results.forEach((result, j) =>
          (result.status === 'fulfilled' ? answered : refused).push(
            result.status === 'fulfilled' ? burst[j]! : String(result.reason),
          ),
        )
      }
    })()
    await until(async () => answered.length > 200, 'writes answered before the failover')
    expect(await replica.client.call('CLUSTER', 'FAILOVER')).toBe('OK')
    await until(async () => (await lineOf(replica, replica))!.flags.includes('master'), 'the replica is a master')
    await seenAsReplica(master, master, replica)
    await until(async () => refused.length > 0, 'the old master refuses writes')
    stop = true
    await loop
    await expectOwnsAll(replica)
    expect(refused.every((error) => error.includes(`MOVED`) && error.includes(`:${replica.port}`))).toBe(true)
    expect(await missingOn(replica, [...names('before', 200), ...answered])).toEqual([])
    await linkUp(master, replica)
    // The pause ended once the old master was a replica (CLIENT UNPAUSE), not at its 10 s end.
    expect(
      replica.running.logs.some((line) => line.includes('the old master is a replica now, its writes unpaused')),
    ).toBe(true)
    expect(String(await master.client.call('INFO', 'clients'))).toMatch(/blocked_clients:0\r\n/)
  })

  it('TAKEOVER with the master alive: at once; the master follows by gossip and resyncs', async () => {
    const [master, replica, third] = (await shard(300, 1)) as [Node, Node, Node]
    expect(await replica.client.call('CLUSTER', 'FAILOVER', 'TAKEOVER')).toBe('OK')
    await expectOwnsAll(replica)
    await seenAsReplica(master, master, replica)
    await seenAsReplica(third, master, replica)
    await linkUp(master, replica)
    await replica.client.call('BF.ADD', 'f', 'on-the-new-master')
    expect(await replica.client.call('WAIT', '1', '5000')).toBe(1)
    expect(await missingOn(master, [...names('before', 300), 'on-the-new-master'])).toEqual([])
  })

  it('default, with requirepass on both: the replica authenticates to its master with masterauth', async () => {
    const secured = { requirepass: 'shard-secret', masterauth: 'shard-secret' }
    const [master, replica] = (await shard(100, 0, [secured, secured])) as [Node, Node]
    expect(await replica.client.call('CLUSTER', 'FAILOVER')).toBe('OK')
    await until(async () => (await lineOf(replica, replica))!.flags.includes('master'), 'the replica is a master')
    await expectOwnsAll(replica)
    await seenAsReplica(master, master, replica)
    expect(await missingOn(replica, names('before', 100))).toEqual([])
  })

  it('default, against a master that refuses CLIENT PAUSE: abandoned, nothing changes', async () => {
    const [master, replica] = (await shard(10, 0, [{ 'rename-command': [{ from: 'CLIENT', to: '' }] }])) as [Node, Node]
    expect(await replica.client.call('CLUSTER', 'FAILOVER')).toBe('OK')
    await until(
      async () => replica.running.logs.some((line) => line.includes('Manual failover aborted')),
      'the failover is abandoned',
    )
    expect((await lineOf(replica, replica))!.flags).toEqual(['myself', 'slave'])
    expect(await master.client.call('BF.ADD', 'f', 'still-the-master')).toBe(1)
    expect(await master.client.call('WAIT', '1', '5000')).toBe(1)
  })

  it('FORCE with the master alive takes over at once too', async () => {
    const [master, replica] = (await shard(10)) as [Node, Node]
    expect(await replica.client.call('CLUSTER', 'FAILOVER', 'FORCE')).toBe('OK')
    await expectOwnsAll(replica)
    await seenAsReplica(master, master, replica)
  })
})

describe('restart after a failover', () => {
  // Sentinel sends CONFIG REWRITE after each SLAVEOF, so a node's config file can name a master
  // (replicaof) that a later takeover made its replica. In cluster mode nodes.conf says whom a
  // node replicates: the stale line must not turn a master that owns slots into a replica.
  it('a master whose config file still has a replicaof line starts as the master nodes.conf says it is', async () => {
    // The replica's directory outlives its first run.
    const dir = makeTempDir()
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const [master, replica] = (await shard(50, 0, [{}, { dir, appendonly: true }])) as [Node, Node]
    expect(await replica.client.call('CLUSTER', 'FAILOVER', 'TAKEOVER')).toBe('OK')
    await seenAsReplica(master, master, replica)
    await linkUp(master, replica)
    const { port } = replica.running
    await replica.running.stop()
    const restarted = await startServer({
      'cluster-enabled': true,
      'cluster-node-timeout': 2000,
      port,
      dir,
      appendonly: true,
      replicaof: `127.0.0.1 ${master.port}`,
    })
    cleanups.push(() => restarted.stop())
    const client = new Redis({ port, host: '127.0.0.1' })
    cleanups.push(() => client.disconnect())
    const node = { running: restarted, client, port, id: replica.id }
    await expectOwnsAll(node)
    expect(((await client.call('ROLE')) as unknown[])[0]).toBe('master')
    expect(await client.call('BF.ADD', 'f', 'after-restart')).toBe(1)
    expect(await missingOn(node, names('before', 50))).toEqual([])
  })
})
