/**
 * The CLUSTER subcommands, READONLY/READWRITE/ASKING and the cluster-mode refusals of a bfs node
 * answer byte for byte as a real redis-server 7.0.15 node in cluster mode (both fresh, alone):
 * replies and error texts (redis cluster.c clusterCommand, db.c), node ids and ports aside.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { startRedisServer, type ReferenceServer } from '../helpers/redis-server.js'
import { startRedisClusterNode } from '../helpers/cluster-mode.js'
import { askRaw, RawClient } from '../helpers/resp.js'

let bfs: RunningServer
let redis: { readonly port: number; stop(): Promise<void> }
let bfsClient: RawClient
let redisClient: RawClient
let bfsId = ''
let redisId = ''

beforeAll(async () => {
  ;[bfs, redis] = await Promise.all([startServer({ 'cluster-enabled': true }), startRedisClusterNode()])
  ;[bfsClient, redisClient] = await Promise.all([RawClient.connect(bfs.port), RawClient.connect(redis.port)])
  bfsId = (await askRaw(bfsClient, 'CLUSTER', 'MYID')).toString().split('\r\n')[1]!
  redisId = (await askRaw(redisClient, 'CLUSTER', 'MYID')).toString().split('\r\n')[1]!
})
afterAll(async () => {
  bfsClient?.close()
  redisClient?.close()
  await Promise.all([bfs?.stop(), redis?.stop()])
})

/** The reply of each, with each node's own id and ports written as placeholders. */
async function both(...args: string[]): Promise<[string, string]> {
  const mine = (client: RawClient, id: string, port: number) => async () => {
    const text = (await askRaw(client, ...args.map((arg) => arg.replace('$ID', id)))).toString('latin1')
    return text
      .replaceAll(id, '<id>')
      .replaceAll(String(port + 10000), '<cport>')
      .replaceAll(String(port), '<port>')
  }
  return Promise.all([mine(bfsClient, bfsId, bfs.port)(), mine(redisClient, redisId, redis.port)()])
}

/** Sends the command to both and expects the same bytes back. */
async function same(...args: string[]): Promise<string> {
  const [fromBfs, fromRedis] = await both(...args)
  expect(fromBfs, args.join(' ')).toBe(fromRedis)
  return fromBfs
}

/**
 * CLUSTER INFO of each, the same but for cluster_size: redis starts with 1 and, while its state is
 * fail, does not recount it in its first 2 s (clusterUpdateState's CLUSTER_WRITABLE_DELAY). Returns bfs's.
 */
async function sameInfo(): Promise<string> {
  const [fromBfs, fromRedis] = await both('CLUSTER', 'INFO')
  const size = /cluster_size:\d+/
  expect(fromBfs.replace(size, ''), 'CLUSTER INFO').toBe(fromRedis.replace(size, ''))
  return fromBfs
}

describe('CLUSTER subcommands on a fresh node, beside redis-server --cluster-enabled yes', () => {
  it('MYID is 40 hex digits; KEYSLOT; INFO of a node alone; INFO cluster says cluster_enabled:1', async () => {
    expect(bfsId).toMatch(/^[0-9a-f]{40}$/)
    expect(await same('CLUSTER', 'KEYSLOT', '{user1000}.following')).toBe(':3443\r\n')
    expect(await sameInfo()).toContain('cluster_size:0\r\n')
    await same('INFO', 'cluster')
    await same('CLUSTER', 'LINKS')
    await same('CLUSTER', 'HELP')
  })

  it('ADDSLOTS, ADDSLOTSRANGE, DELSLOTS, DELSLOTSRANGE: replies and errors', async () => {
    await same('CLUSTER', 'ADDSLOTS', '0', '1', '2')
    await same('CLUSTER', 'ADDSLOTS', '1')
    await same('CLUSTER', 'ADDSLOTS', '16384')
    await same('CLUSTER', 'ADDSLOTS', 'x')
    await same('CLUSTER', 'ADDSLOTS', '7', '7')
    await same('CLUSTER', 'ADDSLOTSRANGE', '10', '20', '22', '30')
    await same('CLUSTER', 'ADDSLOTSRANGE', '40', '35')
    await same('CLUSTER', 'ADDSLOTSRANGE', '40', '41', '42')
    await same('CLUSTER', 'ADDSLOTSRANGE', '40')
    await same('CLUSTER', 'DELSLOTS', '100')
    await same('CLUSTER', 'DELSLOTSRANGE', '22', '25')
    await same('CLUSTER', 'DELSLOTS', '2')
    await same('CLUSTER', 'NODES')
    await same('CLUSTER', 'SLOTS')
    await same('CLUSTER', 'SHARDS')
    await sameInfo()
  })

  it('SETSLOT: its errors, and STABLE', async () => {
    await same('CLUSTER', 'SETSLOT', '5000', 'MIGRATING', 'f'.repeat(40))
    await same('CLUSTER', 'SETSLOT', '10', 'MIGRATING', 'f'.repeat(40))
    await same('CLUSTER', 'SETSLOT', '10', 'IMPORTING', '$ID')
    await same('CLUSTER', 'SETSLOT', '5000', 'IMPORTING', 'f'.repeat(40))
    await same('CLUSTER', 'SETSLOT', '10', 'NODE', 'f'.repeat(40))
    await same('CLUSTER', 'SETSLOT', '10', 'BOGUS')
    await same('CLUSTER', 'SETSLOT', '99999', 'STABLE')
    await same('CLUSTER', 'SETSLOT', '10', 'STABLE')
    await same('CLUSTER', 'SETSLOT', '10', 'MIGRATING', '$ID')
    await same('CLUSTER', 'NODES')
    await same('CLUSTER', 'SETSLOT', '10', 'STABLE')
  })

  it('SET-CONFIG-EPOCH and BUMPEPOCH', async () => {
    await same('CLUSTER', 'SET-CONFIG-EPOCH', 'x')
    await same('CLUSTER', 'SET-CONFIG-EPOCH', '-1')
    await same('CLUSTER', 'SET-CONFIG-EPOCH', '5')
    await same('CLUSTER', 'SET-CONFIG-EPOCH', '6')
    await same('CLUSTER', 'BUMPEPOCH')
    await sameInfo()
  })

  it('MEET, FORGET, REPLICATE, REPLICAS, COUNT-FAILURE-REPORTS, COUNTKEYSINSLOT: their errors', async () => {
    await same('CLUSTER', 'MEET', '127.0.0.1', 'notaport')
    await same('CLUSTER', 'MEET', '127.0.0.1', '7000', 'x')
    await same('CLUSTER', 'MEET', 'no.such.host', '7000')
    await same('CLUSTER', 'MEET', '127.0.0.1', '0')
    await same('CLUSTER', 'MEET', '1', '2', '3', '4')
    await same('CLUSTER', 'FORGET', '$ID')
    await same('CLUSTER', 'FORGET', 'nosuchnode')
    await same('CLUSTER', 'REPLICATE', '$ID')
    await same('CLUSTER', 'REPLICATE', 'nosuchnode')
    await same('CLUSTER', 'REPLICAS', '$ID')
    await same('CLUSTER', 'SLAVES', 'nosuchnode')
    await same('CLUSTER', 'COUNT-FAILURE-REPORTS', '$ID')
    await same('CLUSTER', 'COUNTKEYSINSLOT', '16384')
    await same('CLUSTER', 'GETKEYSINSLOT', '1', '-1')
    await same('CLUSTER', 'NOSUCH')
    await same('CLUSTER', 'SAVECONFIG')
  })

  it('READONLY, READWRITE, ASKING; SELECT, MOVE and SWAPDB refused; keys routed', async () => {
    await same('READONLY')
    await same('READWRITE')
    await same('ASKING')
    await same('SELECT', '1')
    await same('SELECT', '0')
    await same('MOVE', 'k', '1')
    await same('SWAPDB', '0', '1')
    // Slot 0 is owned here: the state is fail (not every slot is covered).
    await same('EXISTS', 'foo')
    await same('DEL', 'foo', 'bar')
    await same('EXISTS', '{a}1', '{a}2')
  })

  it('RESET refuses a bad argument, then forgets the slots', async () => {
    await same('CLUSTER', 'RESET', 'MEDIUM')
    await same('CLUSTER', 'RESET', 'SOFT', 'MORE')
    await same('CLUSTER', 'RESET', 'HARD')
    // A hard reset takes a new id.
    const [oldBfs, oldRedis] = [bfsId, redisId]
    bfsId = (await askRaw(bfsClient, 'CLUSTER', 'MYID')).toString().split('\r\n')[1]!
    redisId = (await askRaw(redisClient, 'CLUSTER', 'MYID')).toString().split('\r\n')[1]!
    expect(bfsId).not.toBe(oldBfs)
    expect(redisId).not.toBe(oldRedis)
    await sameInfo()
  })

  it('under RESP3, NODES and INFO are verbatim strings', async () => {
    // HELLO's replies differ in the connection id and the module list only.
    const [helloBfs, helloRedis] = await both('HELLO', '3')
    for (const hello of [helloBfs, helloRedis]) expect(hello).toContain('$4\r\nmode\r\n$7\r\ncluster\r\n')
    await sameInfo()
    await same('CLUSTER', 'NODES')
    await same('CLUSTER', 'SLOTS')
    await both('HELLO', '2')
  })
})

describe('outside cluster mode, beside a plain redis-server', () => {
  let plain: RunningServer
  let reference: ReferenceServer
  beforeAll(async () => {
    ;[plain, reference] = await Promise.all([startServer(), startRedisServer()])
  })
  afterAll(async () => {
    await Promise.all([plain?.stop(), reference?.stop()])
  })

  it('CLUSTER and READONLY answer that cluster support is disabled; INFO says cluster_enabled:0', async () => {
    const [a, b] = await Promise.all([RawClient.connect(plain.port), RawClient.connect(reference.port)])
    try {
      for (const command of [
        ['CLUSTER', 'INFO'],
        ['CLUSTER', 'KEYSLOT', 'x'],
        ['READONLY'],
        ['ASKING'],
        ['INFO', 'cluster'],
        ['SELECT', '1'],
      ]) {
        expect((await askRaw(a, ...command)).toString(), command.join(' ')).toBe(
          (await askRaw(b, ...command)).toString(),
        )
      }
    } finally {
      a.close()
      b.close()
    }
  })
})
