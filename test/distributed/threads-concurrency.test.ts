/**
 * Concurrency with `io-threads 4` (worker threads accept and serve the connections, the main
 * thread executes every command in one order), against real processes:
 * - 8 ioredis clients pipeline adds of shared and per-client items into growing filters while
 *   other keys are deleted and re-reserved, database 1 is filled and flushed (FLUSHDB: FLUSHALL
 *   would empty database 0 too), BGSAVE runs every 2 s and a replica attaches mid-load. Then
 *   nothing acknowledged is missing, and master, replica and the master restarted from its
 *   snapshot and log hold the same filters (BF.CARD and BF.INFO of every key of both databases).
 * - kill -9 under pipelined adds with `appendfsync always`, twice on one directory: every
 *   acknowledged add is there after the restart.
 * A Bloom filter may answer 1 for an item never added, never 0 for one added: the assertions
 * are "no acknowledged item answers 0" and equal state between servers. BF.CARD counts the adds
 * that answered 1, so it is compared between servers, and with the count of acknowledged adds
 * only as a lower bound.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { Cluster, type ClusterNode, sleep, waitUntil, withTimeout } from '../helpers/cluster-nodes.js'
import { killChildServer, startChildServer, childClient, type ChildServer } from '../helpers/child-server.js'
import { loadUntilDeath, lostItems } from '../helpers/crash-load.js'
import { freePort } from '../helpers/tools.js'
import { tempDirsRemovedAfterAll } from '../helpers/temp-dir.js'

const IO_THREADS = 4
const CLIENTS = 8
/** The load runs at least this long, and until the replica is online. */
const LOAD_MS = 15_000
/** Items per BF.MADD. */
const BATCH = 16
/** Filters that are only added to: everything acknowledged in them must stay. */
const STABLE = ['grow:0', 'grow:1', 'grow:2']
/** Filters that are also deleted and re-reserved during the load. */
const CHURN = ['churn:0', 'churn:1']
/** Small and growing by 2: the load gives each stable filter many layers. */
const RESERVE_ARGS = ['0.01', '1000', 'EXPANSION', '2']

const cluster = new Cluster()
afterAll(() => cluster.stopAll())

function client(port: number, db = 0): Redis {
  const redis = cluster.client(port)
  if (db !== 0) void redis.select(db)
  return redis
}

function names(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}:${i}`)
}

/** What the load clients were told, shared by all of them. */
class LoadRecord {
  /** Per stable key, every item whose add was answered 0 or 1. */
  readonly acked = new Map<string, Set<string>>(STABLE.map((key) => [key, new Set()]))
  /** Errors on stable keys (there must be none), and reads that missed an add of the same pipeline. */
  readonly errors: string[] = []
  readonly missedOwnWrites: string[] = []
  rounds = 0

  ack(key: string, items: readonly string[], reply: unknown): void {
    const answers = Array.isArray(reply) ? reply : [reply]
    items.forEach((item, i) => {
      if (answers[i] === 0 || answers[i] === 1) this.acked.get(key)!.add(item)
    })
  }

  error(what: string, error: Error | null): void {
    if (error !== null && this.errors.length < 20) this.errors.push(`${what}: ${error.message}`)
  }
}

/**
 * One client's rounds until `stop()`: one pipeline of BF.MADD of items every client adds, BF.MADD
 * and BF.ADD of its own items, an add to a churn key, and BF.MEXISTS of what it just added,
 * which the same connection must see.
 */
async function loadClient(redis: Redis, index: number, record: LoadRecord, stop: () => boolean): Promise<void> {
  for (let round = 0; !stop() && redis.status !== 'end'; round++) {
    const sharedKey = STABLE[round % STABLE.length]!
    const ownKey = STABLE[(round + index) % STABLE.length]!
    const shared = names(`shared:${round}`, BATCH)
    const own = [...names(`c${index}:${round}`, BATCH - 1), `c${index}:${round}:one`]
    const replies = (await redis
      .pipeline()
      .call('BF.MADD', sharedKey, ...shared)
      .call('BF.MADD', ownKey, ...own.slice(0, -1))
      .call('BF.ADD', ownKey, own.at(-1)!)
      .call('BF.ADD', CHURN[(round + index) % CHURN.length]!, `c${index}:${round}:churn`)
      .call('BF.MEXISTS', sharedKey, ...shared)
      .call('BF.MEXISTS', ownKey, ...own)
      .exec())!
    const [[sharedError, sharedAdded], [ownError, ownAdded], [oneError, oneAdded], , sharedSeen, ownSeen] = replies
    record.error(`BF.MADD ${sharedKey}`, sharedError!)
    record.error(`BF.MADD ${ownKey}`, ownError!)
    record.error(`BF.ADD ${ownKey}`, oneError!)
    record.ack(sharedKey, shared, sharedAdded)
    record.ack(ownKey, own.slice(0, -1), ownAdded)
    record.ack(ownKey, own.slice(-1), oneAdded)
    for (const [key, list, seen] of [
      [sharedKey, shared, sharedSeen!],
      [ownKey, own, ownSeen!],
    ] as const) {
      record.error(`BF.MEXISTS ${key}`, seen[0])
      const missed = list.filter((_, i) => (seen[1] as number[] | undefined)?.[i] !== 1)
      if (missed.length > 0) record.missedOwnWrites.push(`${key}: ${missed.join(' ')}`)
    }
    record.rounds++
  }
}

/** DEL and BF.RESERVE of the churn keys in turn (the reserve fails when an add re-created the key first). */
async function churnKeys(redis: Redis, stop: () => boolean): Promise<void> {
  for (let n = 0; !stop(); n++) {
    const key = CHURN[n % CHURN.length]!
    await redis.del(key)
    await redis.call('BF.RESERVE', key, ...RESERVE_ARGS).catch(() => {})
    await sleep(50)
  }
}

/** Adds to a few keys of database 1 and empties it with FLUSHDB every tenth time. */
async function churnDatabase1(redis: Redis, stop: () => boolean): Promise<void> {
  for (let n = 0; !stop(); n++) {
    await redis.call('BF.MADD', `db1:${n % 4}`, ...names(`db1:${n}`, BATCH))
    if (n % 10 === 9) await redis.flushdb()
    await sleep(20)
  }
}

/** BGSAVE every 2 s (one still running answers an error, which is fine); returns how many started. */
async function saveEvery2s(redis: Redis, stop: () => boolean): Promise<number> {
  let started = 0
  while (!stop()) {
    const reply = await redis.bgsave().catch(() => '')
    if (reply.startsWith('Background saving started')) started++
    for (let waited = 0; waited < 2000 && !stop(); waited += 100) await sleep(100)
  }
  return started
}

/** Every key of databases 0 and 1 with its BF.CARD and BF.INFO, by database. */
async function stateOf(port: number): Promise<Record<string, [string, unknown, unknown][]>> {
  const state: Record<string, [string, unknown, unknown][]> = {}
  for (const db of [0, 1]) {
    const redis = client(port, db)
    const keys = (await redis.keys('*')).sort()
    state[`db${db}`] = await Promise.all(
      keys.map(async (key) => [key, await redis.call('BF.CARD', key), await redis.call('BF.INFO', key)] as const),
    ).then((rows) => rows.map(([key, card, info]) => [key, card, info]))
    redis.disconnect()
  }
  return state
}

/** How many of `items` the server on `port` answers 0 for, and the first few (a failure names them, not all). */
async function lostOf(port: number, key: string, items: readonly string[]): Promise<{ lost: number; first: string[] }> {
  const lost = await lostItems(port, key, items)
  return { lost: lost.length, first: lost.slice(0, 10) }
}

/** The acknowledged items of each stable key that the server on `port` answers 0 for. */
async function lostOn(port: number, record: LoadRecord): Promise<Record<string, { lost: number; first: string[] }>> {
  const lost: Record<string, { lost: number; first: string[] }> = {}
  for (const [key, items] of record.acked) lost[key] = await lostOf(port, key, [...items])
  return lost
}

const NOTHING_LOST = Object.fromEntries(STABLE.map((key) => [key, { lost: 0, first: [] }]))

/** Waits until the replica is linked and has processed the master's whole stream. */
async function waitCaughtUp(master: ClusterNode, replica: ClusterNode): Promise<void> {
  await waitUntil('the replica reaches the master offset', async () => {
    const [masterInfo, replicaInfo] = await Promise.all([master.info(), replica.info()])
    return (
      replicaInfo.get('master_link_status') === 'up' &&
      replicaInfo.get('slave_repl_offset') === masterInfo.get('master_repl_offset')
    )
  })
}

describe(`io-threads ${IO_THREADS}: load with churn, BGSAVE and a replica`, () => {
  it('loses no acknowledged add; master, replica and the restarted master hold the same filters', async () => {
    const extra = [`io-threads ${IO_THREADS}`]
    const master = await cluster.node('master', { extra })
    const setup = client(master.port)
    for (const key of [...STABLE, ...CHURN]) expect(await setup.call('BF.RESERVE', key, ...RESERVE_ARGS)).toBe('OK')

    const record = new LoadRecord()
    const startedAt = Date.now()
    let replicaOnline = false
    // At least LOAD_MS, and until the replica attached mid-load is online; at most 4 × LOAD_MS.
    const stop = (): boolean =>
      Date.now() - startedAt >= 4 * LOAD_MS || (Date.now() - startedAt >= LOAD_MS && replicaOnline)
    const loaders = Array.from({ length: CLIENTS }, () => client(master.port))
    const load = Promise.all([
      ...loaders.map((redis, index) => loadClient(redis, index, record, stop)),
      churnKeys(client(master.port), stop),
      churnDatabase1(client(master.port, 1), stop),
    ])
    const saves = saveEvery2s(client(master.port), stop)
    await waitUntil('a quarter of the load', () => Date.now() - startedAt >= LOAD_MS / 4 || stop(), {
      intervalMs: 50,
    })
    const replica = await cluster.node('replica', { replicaOf: master.port, extra })
    // Past the load's cap: a sync that cannot finish under load finishes once the load stops.
    await master.waitOnlineReplicas(1, 4 * LOAD_MS + 60_000)
    replicaOnline = true
    const onlineAfter = Date.now() - startedAt
    await withTimeout(load, 60_000, 'the load clients stop')
    const savesStarted = await saves
    console.log(
      `io-threads load: ${record.rounds} rounds in ${Date.now() - startedAt} ms, ` +
        `${[...record.acked.values()].reduce((sum, set) => sum + set.size, 0)} distinct items acknowledged, ` +
        `${savesStarted} BGSAVEs, the replica online after ${onlineAfter} ms`,
    )
    expect(record.errors).toEqual([])
    expect(record.missedOwnWrites).toEqual([])
    expect(record.rounds).toBeGreaterThan(0)
    expect(savesStarted).toBeGreaterThan(0)
    const layers = Number(((await setup.call('BF.INFO', STABLE[0]!, 'FILTERS')) as number[])[0])
    expect(layers).toBeGreaterThan(1)

    // (a) the master answers 1 for every acknowledged item.
    expect(await lostOn(master.port, record)).toEqual(NOTHING_LOST)

    // (b) each load connection's writes reach the replica (WAIT), which then holds what the master holds.
    for (const redis of loaders) {
      await waitUntil('WAIT 1 5000 answers 1', async () => Number(await redis.call('WAIT', '1', '5000')) >= 1)
    }
    await waitCaughtUp(master, replica)
    const before = await stateOf(master.port)
    expect(before.db0!.map(([key]) => key)).toEqual(expect.arrayContaining(STABLE))
    expect(await stateOf(replica.port)).toEqual(before)
    expect(await lostOn(replica.port, record)).toEqual(NOTHING_LOST)

    // (c) a clean restart (no final snapshot: the last BGSAVE's snapshot and the log after it).
    await master.command('SHUTDOWN', 'NOSAVE').catch(() => {}) // the connection closes without a reply
    await withTimeout(master.process!.exited, 30_000, 'the master exits after SHUTDOWN NOSAVE')
    await master.start()
    expect(await stateOf(master.port)).toEqual(before)
    expect(await lostOn(master.port, record)).toEqual(NOTHING_LOST)
  })
})

describe(`io-threads ${IO_THREADS}: kill -9 under load with appendfsync always`, () => {
  const tempDir = tempDirsRemovedAfterAll('bfs-threads-crash-')
  const KEYS = ['crash:0', 'crash:1']

  it('every acknowledged add is there after each of two restarts; BF.CARD is at least the adds answered 1', async () => {
    const dir = tempDir()
    const port = await freePort()
    const args = ['--port', String(port), '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always']
    args.push('--save', '', '--io-threads', String(IO_THREADS))
    const acked = new Map<string, string[]>(KEYS.map((key) => [key, []]))
    const added = new Map<string, number>(KEYS.map((key) => [key, 0]))
    let server: ChildServer = await startChildServer(args)
    try {
      const setup = childClient(port)
      for (const key of KEYS) expect(await setup.call('BF.RESERVE', key, ...RESERVE_ARGS)).toBe('OK')
      setup.disconnect()
      for (const [cycle, killAfter] of [
        [0, 3000],
        [1, 20_000],
      ] as const) {
        let ackedNow = 0
        const loaders = Array.from({ length: CLIENTS }, (_, i) => {
          const key = KEYS[i % KEYS.length]!
          // Client indexes differ between cycles, so every item is new.
          return loadUntilDeath(port, key, cycle * CLIENTS + i, (item, wasAdded) => {
            acked.get(key)!.push(item)
            if (wasAdded) added.set(key, added.get(key)! + 1)
            ackedNow++
          })
        })
        await waitUntil(`${killAfter} adds acknowledged`, () => ackedNow >= killAfter, { intervalMs: 10 })
        await killChildServer(server.bfs)
        await Promise.all(loaders)
        server = await startChildServer(args)
        const check = childClient(port)
        for (const key of KEYS) {
          expect({ key, ...(await lostOf(port, key, acked.get(key)!)) }).toEqual({ key, lost: 0, first: [] })
          expect(Number(await check.call('BF.CARD', key))).toBeGreaterThanOrEqual(added.get(key)!)
        }
        check.disconnect()
      }
      console.log(
        `io-threads kill -9: ${[...acked.values()].reduce((sum, list) => sum + list.length, 0)} adds acknowledged`,
      )
    } finally {
      await killChildServer(server.bfs)
    }
  })
})
