/**
 * Cluster routing's rules for ASKING and MIGRATE follow the commands themselves, as redis 7.0
 * compares a command's function (askingCommand, migrateCommand), not its name: with
 * rename-command, the renamed ASKING still serves the next command on an importing slot, and the
 * renamed MIGRATE still runs on a migrating slot (its key missing: NOKEY, not -ASK).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { slotOf } from '../../src/core/key-slot.js'
import { waitUntil } from '../helpers/cluster-nodes.js'

let a: RunningServer
let b: RunningServer
const clients: Redis[] = []

function client(server: RunningServer): Redis {
  const made = new Redis({ port: server.port, host: '127.0.0.1', maxRetriesPerRequest: 0, retryStrategy: () => null })
  made.on('error', () => {})
  clients.push(made)
  return made
}

/** A key whose slot is owned by `a` (below 8192) or `b`. */
function keyOn(owner: 'a' | 'b', prefix: string): string {
  for (let i = 0; ; i++) if (slotOf(`${prefix}${i}`) < 8192 === (owner === 'a')) return `${prefix}${i}`
}

async function answer(promise: Promise<unknown>): Promise<unknown> {
  return promise.catch((error: Error) => error.message)
}

beforeAll(async () => {
  const config = { 'cluster-enabled': true, 'cluster-node-timeout': 5000 } as const
  const renames = [
    { from: 'ASKING', to: 'MYASKING' },
    { from: 'MIGRATE', to: 'MYMIGRATE' },
  ]
  ;[a, b] = await Promise.all([startServer({ ...config, 'rename-command': renames }), startServer(config)])
  await client(a).call('CLUSTER', 'ADDSLOTSRANGE', '0', '8191')
  await client(b).call('CLUSTER', 'ADDSLOTSRANGE', '8192', '16383')
  await client(b).call('CLUSTER', 'MEET', '127.0.0.1', String(a.port))
  for (const server of [a, b]) {
    await waitUntil(
      'each node knows the other and the state is ok',
      async () => {
        const info = String(await client(server).call('CLUSTER', 'INFO'))
        return info.includes('cluster_known_nodes:2') && info.includes('cluster_state:ok')
      },
      { timeoutMs: 20_000 },
    )
  }
})
afterAll(async () => {
  for (const made of clients) made.disconnect()
  await Promise.all([a?.stop(), b?.stop()])
})

describe('rename-command in cluster mode', () => {
  it('a renamed ASKING serves the next command on an importing slot; a renamed MIGRATE runs on a migrating slot', async () => {
    const bId = await client(b).call('CLUSTER', 'MYID')
    // b's slot imported by a: MYASKING then a command for it is served by a.
    const incoming = keyOn('b', 'in')
    const inSlot = String(slotOf(incoming))
    expect(await client(a).call('CLUSTER', 'SETSLOT', inSlot, 'IMPORTING', String(bId))).toBe('OK')
    const importer = client(a)
    expect(await answer(importer.call('BF.ADD', incoming, 'x'))).toBe(`MOVED ${inSlot} 127.0.0.1:${b.port}`)
    expect(await importer.call('MYASKING')).toBe('OK')
    expect(await importer.call('BF.ADD', incoming, 'x')).toBe(1)
    // a's slot migrating to b: MYMIGRATE of a missing key runs on a (NOKEY), as MIGRATE would.
    const outgoing = keyOn('a', 'out')
    const outSlot = String(slotOf(outgoing))
    expect(await client(a).call('CLUSTER', 'SETSLOT', outSlot, 'MIGRATING', String(bId))).toBe('OK')
    expect(await answer(client(a).call('BF.EXISTS', outgoing, 'x'))).toBe(`ASK ${outSlot} 127.0.0.1:${b.port}`)
    expect(await client(a).call('MYMIGRATE', '127.0.0.1', String(b.port), outgoing, '0', '1000')).toBe('NOKEY')
    for (const slot of [inSlot, outSlot]) expect(await client(a).call('CLUSTER', 'SETSLOT', slot, 'STABLE')).toBe('OK')
  })
})
