/**
 * Cluster-aware clients against bfs in cluster mode (issue 20, "Routing"): 3 shards of a master
 * and a replica. ioredis `Cluster` with the package's bloomCluster helper (ioredis 5 and 6),
 * node-redis `createCluster` and `redis-cli -c` each add 100,000 items to filters whose keys fall
 * in every shard's slot range, then find every one of them. Redirects are counted as Redis counts
 * them (INFO errorstats `errorstat_MOVED` on every node): none with the helper or node-redis (both
 * send each command to its key's master first time), some without the helper. Reads go to the
 * replicas on READONLY connections (ioredis `scaleReads: 'slave'` with the helper's read-only
 * flag, node-redis `useReplicas: true`), once the replicas have caught up with their masters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Cluster as IoCluster5, Command as Command5, Redis } from 'ioredis'
import { Cluster as IoCluster6, Command as Command6 } from 'ioredis6'
import { createCluster } from 'redis'
import { bloomCluster } from '../../src/index.js'
import { slotOf } from '../../src/core/key-slot.js'
import { type ClusterNode, parseInfo, waitUntil } from '../helpers/cluster-nodes.js'
import { ModeCluster } from '../helpers/cluster-mode.js'
import { allNodes, startShards, type Shard } from '../helpers/cluster-clients-setup.js'
import { hasTool, runTool } from '../helpers/tools.js'

const ITEMS = 100_000
const FILTERS = 48
const BATCH = 500

/** The filters of one client: `FILTERS` keys, every shard's range holding some (checked), one with ioredis's wrong slot ('{}' hashes whole). */
function filterKeys(prefix: string): string[] {
  return Array.from({ length: FILTERS }, (_, i) => (i === 0 ? `{}${prefix}:f0` : `${prefix}:f${i}`))
}

/** The items of one client, as [filter, items][] in batches of BATCH. */
function batches(prefix: string): [string, string[]][] {
  const keys = filterKeys(prefix)
  const perFilter = keys.map((): string[] => [])
  for (let n = 0; n < ITEMS; n++) perFilter[n % FILTERS]!.push(`${prefix}-item-${n}`)
  const out: [string, string[]][] = []
  keys.forEach((key, i) => {
    const list = perFilter[i]!
    for (let at = 0; at < list.length; at += BATCH) out.push([key, list.slice(at, at + BATCH)])
  })
  return out
}

/** A field of every node's INFO section, summed (a missing field counts 0). */
async function sumInfo(
  nodes: readonly ClusterNode[],
  section: string,
  field: string,
  part = /calls=(\d+)/,
): Promise<number> {
  let total = 0
  for (const node of nodes) {
    const value = (await node.info(section)).get(field)
    if (value !== undefined) total += Number((part.exec(value) ?? /count=(\d+)/.exec(value))?.[1] ?? 0)
  }
  return total
}

const moved = (nodes: readonly ClusterNode[]) => sumInfo(nodes, 'errorstats', 'errorstat_MOVED', /count=(\d+)/)

/** Waits until every replica's replication offset is its master's (what was written can be read there). */
async function replicasCaughtUp(shards: readonly Shard[]): Promise<void> {
  for (const shard of shards) {
    await waitUntil(`the replicas of ${shard.master.port} have its offset`, async () => {
      const master = Number((await shard.master.info()).get('master_repl_offset'))
      for (const replica of shard.replicas)
        if (Number((await replica.info()).get('slave_repl_offset')) !== master) return false
      return true
    })
  }
}

/** Every item added, every item found: the adds answered one 0 or 1 per item, the checks 1 for every item. */
async function addAndCheck(
  add: (key: string, items: string[]) => Promise<unknown[]>,
  check: (key: string, items: string[]) => Promise<unknown[]>,
  prefix: string,
  shards: readonly Shard[],
): Promise<void> {
  const work = batches(prefix)
  const added = await Promise.all(work.map(([key, list]) => add(key, list)))
  expect(added.reduce((sum, replies) => sum + replies.length, 0)).toBe(ITEMS)
  await replicasCaughtUp(shards)
  const found = await Promise.all(work.map(([key, list]) => check(key, list)))
  const missing = found.flatMap((replies, i) =>
    replies.flatMap((reply, j) => (reply === 1 || reply === true ? [] : [work[i]![1][j]])),
  )
  expect(missing).toEqual([])
}

describe('cluster-aware clients route BF.* to the shard of the key (3 masters, 3 replicas)', () => {
  const cluster = new ModeCluster()
  let shards: Shard[]
  let nodes: ClusterNode[]

  beforeAll(async () => {
    shards = await startShards(cluster, 3, 1)
    nodes = allNodes(shards)
  })
  afterAll(() => cluster.stopAll())

  const resetStats = () => Promise.all(nodes.map((node) => node.command('CONFIG', 'RESETSTAT')))
  const replicas = () => shards.flatMap((shard) => shard.replicas)
  const masters = () => shards.map((shard) => shard.master)

  it("the filters of every client fall in every shard's slot range", () => {
    for (const prefix of ['io5', 'io6', 'nr', 'cli']) {
      const perShard = shards.map(
        (shard) => filterKeys(prefix).filter((key) => slotOf(key) >= shard.first && slotOf(key) <= shard.last).length,
      )
      expect(
        perShard.every((count) => count >= 5),
        `${prefix}: ${perShard}`,
      ).toBe(true)
    }
  })

  /** An ioredis Cluster reading from replicas, and the helper over it. */
  const IOREDIS = {
    '5': (port: number) => {
      const io = new IoCluster5([{ host: '127.0.0.1', port }], { scaleReads: 'slave' })
      return { io, bf: bloomCluster(io, Command5) }
    },
    '6': (port: number) => {
      const io = new IoCluster6([{ host: '127.0.0.1', port }], { scaleReads: 'slave' })
      return { io, bf: bloomCluster(io, Command6) }
    },
  }

  for (const version of ['5', '6'] as const) {
    it(`ioredis ${version} Cluster with bloomCluster: 100,000 items added and found, 0 MOVED, the reads served by the replicas`, async () => {
      const { io, bf } = IOREDIS[version](shards[0]!.master.port)
      try {
        await resetStats()
        await addAndCheck(
          (key, list) => bf.madd(key, ...list),
          (key, list) => bf.mexists(key, ...list),
          `io${version}`,
          shards,
        )
        expect(await moved(nodes)).toBe(0)
        expect(await sumInfo(masters(), 'commandstats', 'cmdstat_bf.madd')).toBe(batches('x').length)
        expect(await sumInfo(masters(), 'commandstats', 'cmdstat_bf.mexists')).toBe(0)
        expect(await sumInfo(replicas(), 'commandstats', 'cmdstat_bf.mexists')).toBe(batches('x').length)
      } finally {
        io.disconnect()
      }
    })
  }

  it('ioredis Cluster without the helper (cluster.call): every BF.* lands, but through MOVED, the count the helper saves', async () => {
    const io = new IoCluster5([{ host: '127.0.0.1', port: shards[0]!.master.port }])
    try {
      await resetStats()
      const keys = filterKeys('plain')
      expect(await Promise.all(keys.map((key) => io.call('BF.ADD', key, 'x')))).toEqual(keys.map(() => 1))
      expect(await moved(nodes)).toBeGreaterThan(0)
      const bf = bloomCluster(io, Command5)
      expect(await Promise.all(keys.map((key) => bf.exists(key, 'x')))).toEqual(keys.map(() => 1))
    } finally {
      io.disconnect()
    }
  })

  it('node-redis createCluster (useReplicas): 100,000 items added and found, 0 MOVED, replicas serve reads', async () => {
    const nr = createCluster({ rootNodes: [{ url: `redis://127.0.0.1:${shards[0]!.master.port}` }], useReplicas: true })
    nr.on('error', () => {})
    await nr.connect()
    try {
      await resetStats()
      await addAndCheck(
        (key, list) => nr.bf.mAdd(key, list),
        (key, list) => nr.bf.mExists(key, list),
        'nr',
        shards,
      )
      expect(await moved(nodes)).toBe(0)
      expect(await sumInfo(replicas(), 'commandstats', 'cmdstat_bf.mexists')).toBeGreaterThan(0)
    } finally {
      await nr.close()
    }
  })

  it.skipIf(!hasTool('redis-cli'))(
    'redis-cli -c: 100,000 items from its standard input, every one found, following MOVED',
    async () => {
      const work = batches('cli')
      const port = String(shards[0]!.master.port)
      const add = await runTool(
        'redis-cli',
        ['-c', '-p', port],
        work.map(([key, list]) => `BF.MADD ${key} ${list.join(' ')}`).join('\n') + '\n',
      )
      expect(add.code, add.stderr).toBe(0)
      const replies = (text: string) =>
        text.split('\n').filter((line) => line !== '' && !line.startsWith('-> Redirected'))
      expect(replies(add.stdout).filter((line) => line !== '0' && line !== '1')).toEqual([])
      expect(replies(add.stdout).length).toBe(ITEMS)
      const check = await runTool(
        'redis-cli',
        ['-c', '-p', port],
        work.map(([key, list]) => `BF.MEXISTS ${key} ${list.join(' ')}`).join('\n') + '\n',
      )
      expect(check.code, check.stderr).toBe(0)
      expect(replies(check.stdout).length).toBe(ITEMS)
      expect(replies(check.stdout).filter((line) => line !== '1')).toEqual([])
      expect(check.stdout).toContain('-> Redirected to slot')
    },
  )

  it("bloomCluster follows ASK while its key's slot migrates and MOVED once it has moved (it never pins a node)", async () => {
    const [from, to] = [shards[0]!, shards[1]!]
    let tag = ''
    for (let n = 0; tag === ''; n++) {
      const slot = slotOf(`mv${n}`)
      if (
        slot >= from.first &&
        slot <= from.last &&
        Number(await from.master.command('CLUSTER', 'COUNTKEYSINSLOT', slot)) === 0
      )
        tag = `mv${n}`
    }
    const [slot, key] = [slotOf(tag), `{${tag}}:moving`]
    const io = new IoCluster5([{ host: '127.0.0.1', port: from.master.port }])
    try {
      const bf = bloomCluster(io, Command5)
      expect(await bf.exists(`{${tag}}:absent`, 'x')).toBe(0) // the slot map loaded, the slot on `from`
      await to.master.command('CLUSTER', 'SETSLOT', slot, 'IMPORTING', from.masterId)
      await from.master.command(
        'CLUSTER',
        'SETSLOT',
        slot,
        'MIGRATING',
        String(await to.master.command('CLUSTER', 'MYID')),
      )
      await resetStats()
      expect(await bf.add(key, 'x')).toBe(1) // not on `from`: -ASK, then ASKING + BF.ADD on `to`
      expect(await bf.exists(key, 'x')).toBe(1)
      expect(await sumInfo([from.master], 'errorstats', 'errorstat_ASK', /count=(\d+)/)).toBe(2)
      const toId = String(await to.master.command('CLUSTER', 'MYID'))
      for (const master of [to.master, from.master, shards[2]!.master])
        await master.command('CLUSTER', 'SETSLOT', slot, 'NODE', toId)
      // Every node's map says so before the client asks (ioredis refreshes its map after a MOVED
      // from a node of its choice: one that had not pulled the change yet would give back the old).
      await waitUntil('every node maps the slot to its new master', async () => {
        for (const node of nodes) {
          const ranges = (await node.command('CLUSTER', 'SLOTS')) as [number, number, [string, number]][]
          if (!ranges.some(([first, last, master]) => first <= slot && slot <= last && master[1] === to.master.port))
            return false
        }
        return true
      })
      expect(await bf.exists(key, 'x')).toBe(1) // the client's map still says `from`: -MOVED, followed
      expect(await moved([from.master])).toBe(1)
      expect(await bf.exists(key, 'x')).toBe(1) // ioredis took the new owner from the MOVED: no second one
      expect(await moved([from.master])).toBe(1)
    } finally {
      io.disconnect()
    }
  })

  it("READONLY: a replica answers reads of its master's slots on a READONLY connection only, and MOVEs writes", async () => {
    const shard = shards[1]!
    const key = filterKeys('ro').find((name) => slotOf(name) >= shard.first && slotOf(name) <= shard.last)!
    const item = 'written on the master'
    expect(await shard.master.command('BF.ADD', key, item)).toBe(1)
    await replicasCaughtUp(shards)
    const replica = new Redis({ port: shard.replicas[0]!.port, lazyConnect: true })
    await replica.connect()
    try {
      await expect(replica.call('BF.EXISTS', key, item)).rejects.toThrow(
        `MOVED ${slotOf(key)} 127.0.0.1:${shard.master.port}`,
      )
      expect(await replica.call('READONLY')).toBe('OK')
      expect(await replica.call('BF.EXISTS', key, item)).toBe(1)
      await expect(replica.call('BF.ADD', key, 'new')).rejects.toThrow(
        `MOVED ${slotOf(key)} 127.0.0.1:${shard.master.port}`,
      )
      expect(await replica.call('READWRITE')).toBe('OK')
      await expect(replica.call('BF.EXISTS', key, item)).rejects.toThrow('MOVED')
    } finally {
      replica.disconnect()
    }
  })

  it('CLUSTER INFO on every node says ok after all of it (node timeout 5 s)', async () => {
    for (const node of nodes) {
      expect(parseInfo(String(await node.command('CLUSTER', 'INFO'))).get('cluster_state')).toBe('ok')
      expect(await node.command('CONFIG', 'GET', 'cluster-node-timeout')).toEqual(['cluster-node-timeout', '5000'])
    }
  })
})
