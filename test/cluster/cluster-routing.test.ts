/**
 * Routing in cluster mode between real bfs nodes met by CLUSTER MEET (redis 7.0 getNodeByQuery):
 * -MOVED to the owner, -CROSSSLOT, -ASK while a slot migrates and the key is gone, ASKING for one
 * command on the importing node, -TRYAGAIN for several keys of an open slot with some missing,
 * replicas serving reads on READONLY connections only, -CLUSTERDOWN while a slot is unowned (and
 * reads with cluster-allow-reads-when-down) and on a master cut off from the majority of masters,
 * a refused command inside MULTI failing the EXEC; shard channels (SPUBLISH, SSUBSCRIBE,
 * SUNSUBSCRIBE) routed as keys, with redis 7.0.15's replies in the same cases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { slotOf } from '../../src/core/key-slot.js'
import { waitUntil } from '../helpers/cluster-nodes.js'
import { RawClient, ask, encodeCommand } from '../helpers/resp.js'
import { replyEnd } from '../helpers/tools.js'

let a: RunningServer
let b: RunningServer
let replica: RunningServer
const clients: Redis[] = []

function client(server: RunningServer): Redis {
  const made = new Redis({ port: server.port, host: '127.0.0.1', maxRetriesPerRequest: 0, retryStrategy: () => null })
  made.on('error', () => {})
  clients.push(made)
  return made
}

/** A key whose slot is owned by `a` (below 8192) or `b`. */
function keyOn(owner: 'a' | 'b', prefix = 'k'): string {
  for (let i = 0; ; i++) if (slotOf(`${prefix}${i}`) < 8192 === (owner === 'a')) return `${prefix}${i}`
}

/** The reply, or the error's text. */
async function answer(promise: Promise<unknown>): Promise<unknown> {
  return promise.catch((error: Error) => error.message)
}

beforeAll(async () => {
  const config = { 'cluster-enabled': true, 'cluster-node-timeout': 5000 } as const
  ;[a, b, replica] = await Promise.all([startServer(config), startServer(config), startServer(config)])
  await client(a).call('CLUSTER', 'ADDSLOTSRANGE', '0', '8191')
  await client(b).call('CLUSTER', 'ADDSLOTSRANGE', '8192', '16383')
  await client(b).call('CLUSTER', 'MEET', '127.0.0.1', String(a.port))
  await client(replica).call('CLUSTER', 'MEET', '127.0.0.1', String(a.port))
  for (const server of [a, b, replica]) {
    await waitUntil(
      'every node knows the 3 nodes and the state is ok',
      async () => {
        const info = String(await client(server).call('CLUSTER', 'INFO'))
        return info.includes('cluster_known_nodes:3') && info.includes('cluster_state:ok')
      },
      { timeoutMs: 20_000 },
    )
  }
  const aId = String(await client(a).call('CLUSTER', 'MYID'))
  expect(await client(replica).call('CLUSTER', 'REPLICATE', aId)).toBe('OK')
})
afterAll(async () => {
  for (const made of clients) made.disconnect()
  await Promise.all([a?.stop(), b?.stop(), replica?.stop()])
})

describe('routing between bfs nodes in cluster mode', () => {
  it('a key of another node is MOVED to its owner; keys of two slots are CROSSSLOT', async () => {
    const key = keyOn('b')
    expect(await answer(client(a).call('BF.ADD', key, 'x'))).toBe(`MOVED ${slotOf(key)} 127.0.0.1:${b.port}`)
    expect(await client(b).call('BF.ADD', key, 'x')).toBe(1)
    expect(await answer(client(a).call('DEL', keyOn('a'), keyOn('b')))).toBe(
      "CROSSSLOT Keys in request don't hash to the same slot",
    )
    expect(await client(a).call('DEL', `{${keyOn('a')}}1`, `{${keyOn('a')}}2`)).toBe(0)
    // The keys COMMAND GETKEYS names, past the first argument too: a subcommand's, MIGRATE's KEYS, BF.MERGE's sources.
    expect(await answer(client(a).call('MEMORY', 'USAGE', key))).toBe(`MOVED ${slotOf(key)} 127.0.0.1:${b.port}`)
    const crossSlot = "CROSSSLOT Keys in request don't hash to the same slot"
    expect(await answer(client(a).call('MIGRATE', '127.0.0.1', '1', '', '0', '100', 'KEYS', keyOn('a'), key))).toBe(
      crossSlot,
    )
    expect(await answer(client(a).call('BF.MERGE', keyOn('a'), keyOn('a'), key))).toBe(crossSlot)
    expect(await answer(client(a).call('RENAME', keyOn('a'), key))).toBe(crossSlot)
  })

  it('while a slot migrates: present keys are served, missing ones ASKed; ASKING serves one command on the importer', async () => {
    const [aId, bId] = await Promise.all([client(a).call('CLUSTER', 'MYID'), client(b).call('CLUSTER', 'MYID')])
    const present = keyOn('a', 'm')
    const slot = slotOf(present)
    const missing = `{${present}}other`
    await client(a).call('BF.ADD', present, 'x')
    expect(await client(b).call('CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', String(aId))).toBe('OK')
    expect(await client(a).call('CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', String(bId))).toBe('OK')
    expect(await client(a).call('BF.EXISTS', present, 'x')).toBe(1)
    expect(await answer(client(a).call('BF.EXISTS', missing, 'x'))).toBe(`ASK ${slot} 127.0.0.1:${b.port}`)
    expect(await client(a).call('BF.MEXISTS', present, 'x')).toEqual([1])
    expect(await answer(client(a).call('DEL', present, missing))).toBe(
      'TRYAGAIN Multiple keys request during rehashing of slot',
    )
    const importer = client(b)
    expect(await answer(importer.call('BF.ADD', missing, 'x'))).toBe(`MOVED ${slot} 127.0.0.1:${a.port}`)
    expect(await importer.call('ASKING')).toBe('OK')
    expect(await importer.call('BF.ADD', missing, 'x')).toBe(1)
    // ASKING lasted one command.
    expect(await answer(importer.call('BF.EXISTS', missing, 'x'))).toBe(`MOVED ${slot} 127.0.0.1:${a.port}`)
    for (const server of [a, b])
      expect(await client(server).call('CLUSTER', 'SETSLOT', String(slot), 'STABLE')).toBe('OK')
  })

  it("a replica serves reads of its master's slots on READONLY connections only, never writes", async () => {
    const key = keyOn('a', 'r')
    await client(a).call('BF.ADD', key, 'x')
    const reader = client(replica)
    expect(await reader.call('READONLY')).toBe('OK')
    await waitUntil(
      'the replica has the filter',
      async () => (await answer(reader.call('BF.EXISTS', key, 'x'))) === 1,
      { timeoutMs: 20_000 },
    )
    expect(await answer(reader.call('BF.ADD', key, 'y'))).toBe(`MOVED ${slotOf(key)} 127.0.0.1:${a.port}`)
    expect(await reader.call('READWRITE')).toBe('OK')
    expect(await answer(reader.call('BF.EXISTS', key, 'x'))).toBe(`MOVED ${slotOf(key)} 127.0.0.1:${a.port}`)
    const otherKey = keyOn('b', 'r')
    expect(await reader.call('READONLY')).toBe('OK')
    expect(await answer(reader.call('BF.EXISTS', otherKey, 'x'))).toBe(`MOVED ${slotOf(otherKey)} 127.0.0.1:${b.port}`)
    // RESET ends READONLY (redis clearClientConnectionState).
    expect(await reader.call('BF.EXISTS', key, 'x')).toBe(1)
    expect(await reader.call('RESET')).toBe('RESET')
    expect(await answer(reader.call('BF.EXISTS', key, 'x'))).toBe(`MOVED ${slotOf(key)} 127.0.0.1:${a.port}`)
  })

  it('a refused command inside MULTI fails the EXEC', async () => {
    const raw = client(a)
    await raw.call('MULTI')
    expect(await answer(raw.call('BF.ADD', keyOn('b', 'x'), 'v'))).toMatch(/^MOVED /)
    expect(await answer(raw.call('EXEC'))).toMatch(/^EXECABORT/)
  })

  it('a shard channel is routed as a key: MOVED off its owner, CROSSSLOT across slots, served on a replica of the owner', async () => {
    const channel = keyOn('b', 'ch')
    const moved = `-MOVED ${slotOf(channel)} 127.0.0.1:${b.port}\r\n`
    // Each reply read whole before the next command (redis 7.0.15 answers the same in each case).
    const onA = await RawClient.connect(a.port)
    const onB = await RawClient.connect(b.port)
    const onReplica = await RawClient.connect(replica.port)
    try {
      expect(await ask(onA, 'SPUBLISH', channel, 'lost')).toBe(moved)
      expect(await ask(onA, 'SSUBSCRIBE', channel)).toBe(moved)
      expect(await ask(onA, 'SUNSUBSCRIBE', channel)).toBe(moved)
      // No channel, no slot: served anywhere.
      expect(await ask(onA, 'SUNSUBSCRIBE')).toBe('*3\r\n$12\r\nsunsubscribe\r\n$-1\r\n:0\r\n')
      // On the owner the subscriber gets what is published there.
      expect(await ask(onB, 'SSUBSCRIBE', channel)).toBe(
        `*3\r\n$10\r\nssubscribe\r\n$${channel.length}\r\n${channel}\r\n:1\r\n`,
      )
      expect(await client(b).call('SPUBLISH', channel, 'hello')).toBe(1)
      expect((await onB.readUntil((bytes) => replyEnd(bytes) === bytes.length)).toString('latin1')).toBe(
        `*3\r\n$8\r\nsmessage\r\n$${channel.length}\r\n${channel}\r\n$5\r\nhello\r\n`,
      )
      // Channels of two slots in one SSUBSCRIBE; two of one slot (a hash tag) are fine.
      const other = keyOn('b', 'other')
      expect(slotOf(other)).not.toBe(slotOf(channel))
      expect(await answer(client(b).call('SSUBSCRIBE', channel, other))).toBe(
        "CROSSSLOT Keys in request don't hash to the same slot",
      )
      expect(await ask(onB, 'SUNSUBSCRIBE', channel)).toBe(
        `*3\r\n$12\r\nsunsubscribe\r\n$${channel.length}\r\n${channel}\r\n:0\r\n`,
      )
      // A replica serves its master's shard channels without READONLY, and MOVEs the others.
      const mine = keyOn('a', 'ch')
      expect(await ask(onReplica, 'SPUBLISH', mine, 'x')).toBe(':0\r\n')
      expect(await ask(onReplica, 'SSUBSCRIBE', mine)).toBe(
        `*3\r\n$10\r\nssubscribe\r\n$${mine.length}\r\n${mine}\r\n:1\r\n`,
      )
      expect(await ask(onReplica, 'SSUBSCRIBE', channel)).toBe(moved)
    } finally {
      for (const raw of [onA, onB, onReplica]) raw.close()
    }
  })

  it('while a slot migrates a shard channel stays on its owner (no ASK); the importer serves it after ASKING only', async () => {
    const [aId, bId] = await Promise.all([client(a).call('CLUSTER', 'MYID'), client(b).call('CLUSTER', 'MYID')])
    const channel = keyOn('a', 'mch')
    const slot = slotOf(channel)
    expect(await client(b).call('CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', String(aId))).toBe('OK')
    expect(await client(a).call('CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', String(bId))).toBe('OK')
    try {
      expect(await client(a).call('SPUBLISH', channel, 'x')).toBe(0)
      const importer = client(b)
      expect(await answer(importer.call('SPUBLISH', channel, 'x'))).toBe(`MOVED ${slot} 127.0.0.1:${a.port}`)
      expect(await importer.call('ASKING')).toBe('OK')
      expect(await importer.call('SPUBLISH', channel, 'x')).toBe(0)
    } finally {
      for (const server of [a, b]) await client(server).call('CLUSTER', 'SETSLOT', String(slot), 'STABLE')
    }
  })

  it("a slot moved away lets its shard channels' subscribers go, on the old owner and its replica, with a sunsubscribe message", async () => {
    const [aId, bId] = (await Promise.all([client(a).call('CLUSTER', 'MYID'), client(b).call('CLUSTER', 'MYID')])).map(
      String,
    ) as [string, string]
    const channel = keyOn('a', 'gone')
    const slot = String(slotOf(channel))
    const confirmed = `*3\r\n$10\r\nssubscribe\r\n$${channel.length}\r\n${channel}\r\n:1\r\n`
    const released = `*3\r\n$12\r\nsunsubscribe\r\n$${channel.length}\r\n${channel}\r\n:0\r\n`
    const whole = (bytes: Buffer): boolean => replyEnd(bytes) === bytes.length
    /** The slot moved from `from` to `to` as a reshard moves it (the importer's SETSLOT NODE first: a new epoch). */
    const move = async (from: RunningServer, fromId: string, to: RunningServer, toId: string): Promise<void> => {
      await client(to).call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', fromId)
      await client(from).call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', toId)
      await client(to).call('CLUSTER', 'SETSLOT', slot, 'NODE', toId)
      await client(from).call('CLUSTER', 'SETSLOT', slot, 'NODE', toId)
    }
    const subscribers = await Promise.all([RawClient.connect(a.port), RawClient.connect(replica.port)])
    try {
      for (const raw of subscribers) {
        raw.write(encodeCommand(['SSUBSCRIBE', channel]))
        expect((await raw.readUntil(whole)).toString('latin1')).toBe(confirmed)
      }
      await move(a, aId, b, bId)
      // The replica learns the new owner by the pull.
      for (const raw of subscribers) expect((await raw.readUntil(whole, 20_000)).toString('latin1')).toBe(released)
      expect(await client(a).call('PUBSUB', 'SHARDNUMSUB', channel)).toEqual([channel, 0])
      expect(await answer(client(a).call('SPUBLISH', channel, 'x'))).toBe(`MOVED ${slot} 127.0.0.1:${b.port}`)
    } finally {
      for (const raw of subscribers) raw.close()
      await move(b, bId, a, aId)
      await waitUntil(
        'every node has the slot back on a',
        async () => {
          for (const server of [a, b, replica])
            if ((await answer(client(server).call('SPUBLISH', channel, 'x'))) === `MOVED ${slot} 127.0.0.1:${b.port}`)
              return false
          return true
        },
        { timeoutMs: 20_000 },
      )
    }
  })

  it('with a slot unowned the cluster is down: keys refused, reads served with cluster-allow-reads-when-down', async () => {
    const key = keyOn('a', 'd')
    await client(a).call('BF.ADD', key, 'x')
    const free = slotOf(key) === 0 ? '1' : '0'
    expect(await client(a).call('CLUSTER', 'DELSLOTS', free)).toBe('OK')
    const owner = client(a)
    await waitUntil('the state is fail', async () =>
      String(await owner.call('CLUSTER', 'INFO')).startsWith('cluster_state:fail'),
    )
    expect(await answer(owner.call('BF.EXISTS', key, 'x'))).toBe('CLUSTERDOWN The cluster is down')
    // Shard channels are served while down (cluster-allow-pubsubshard-when-down yes, as in redis).
    expect(await owner.call('SPUBLISH', key, 'x')).toBe(0)
    await owner.call('CONFIG', 'SET', 'cluster-allow-reads-when-down', 'yes')
    expect(await owner.call('BF.EXISTS', key, 'x')).toBe(1)
    expect(await answer(owner.call('BF.ADD', key, 'y'))).toBe(
      'CLUSTERDOWN The cluster is down and only accepts read commands',
    )
    await owner.call('CONFIG', 'SET', 'cluster-allow-reads-when-down', 'no')
    expect(await client(a).call('CLUSTER', 'ADDSLOTS', free)).toBe('OK')
    await waitUntil('the state is ok again', async () =>
      String(await owner.call('CLUSTER', 'INFO')).startsWith('cluster_state:ok'),
    )
  })

  it('a master that cannot reach a majority of the masters for the node timeout refuses keys (redis clusterUpdateState)', async () => {
    const owner = client(a)
    const key = keyOn('a', 'p')
    expect(await owner.call('BF.ADD', key, 'x')).toBe(1)
    await owner.call('CONFIG', 'SET', 'cluster-node-timeout', '500')
    await b.stop()
    // b is only `fail?` (no majority of masters reports it), but a reaches 1 master of 2.
    await waitUntil(
      'b is flagged fail? and the state is fail',
      async () => {
        const nodes = String(await owner.call('CLUSTER', 'NODES'))
        return (
          nodes.includes(`:${b.port}@`) &&
          /master,fail\? /.test(nodes) &&
          String(await owner.call('CLUSTER', 'INFO')).startsWith('cluster_state:fail')
        )
      },
      { timeoutMs: 20_000 },
    )
    expect(await answer(owner.call('BF.ADD', key, 'y'))).toBe('CLUSTERDOWN The cluster is down')
  })
})
