/**
 * Cluster mode over TLS with a plaintext port beside (tls-cluster yes, port and tls-port): three
 * bfs processes created by the unmodified `redis-cli --tls --cluster create` (7.0.15). As Redis
 * 7.0, the links between nodes and nodes.conf use the TLS ports, each node learns its peers'
 * plaintext ports, and TLS clients get TLS ports while plaintext ones get plaintext ports in
 * CLUSTER SLOTS/NODES and -MOVED/-ASK; CLUSTER SHARDS gives both. ioredis' cluster client routes
 * items over either kind of connection; a replica added by `redis-cli --tls --cluster add-node`
 * is listed the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Redis, Cluster as ClusterClient } from 'ioredis'
import { slotOf } from '../../src/core/key-slot.js'
import { Cluster, ManagedProcess, waitUntil } from '../helpers/cluster-nodes.js'
import { BFS_MAIN, testIoThreadsLines } from '../helpers/child-server.js'
import { freePortBelow50000, redisCli, type CliRun } from '../helpers/cluster-mode.js'
import { makeTestCerts, clientTlsOptions, type TestCerts } from '../helpers/tls-certs.js'

interface Node {
  readonly port: number
  readonly tlsPort: number
  readonly dir: string
  id: string
}

let certs: TestCerts
const processes = new Cluster()
const nodes: Node[] = []
const clients: (Redis | ClusterClient)[] = []

const cliTls = (): string[] => ['--tls', '--cacert', certs.caCert, '--cert', certs.clientCert, '--key', certs.clientKey]
const cli = (args: readonly string[], timeoutMs = 60_000): Promise<CliRun> =>
  redisCli([...cliTls(), ...args], { timeoutMs })
const tlsOptions = () => clientTlsOptions(certs)

/** A standalone connection to `node`: over TLS to its TLS port, or plaintext to its port. */
function connect(node: Node, secure: boolean): Redis {
  const client = secure
    ? new Redis({ host: '127.0.0.1', port: node.tlsPort, tls: tlsOptions(), maxRetriesPerRequest: 1 })
    : new Redis({ host: '127.0.0.1', port: node.port, maxRetriesPerRequest: 1 })
  clients.push(client)
  return client
}

async function startNode(node: Node): Promise<void> {
  mkdirSync(node.dir, { recursive: true })
  const lines = [
    ...testIoThreadsLines(),
    `port ${node.port}`,
    `tls-port ${node.tlsPort}`,
    'bind 127.0.0.1',
    `dir ${node.dir}`,
    'save ""',
    'appendonly no',
    'cluster-enabled yes',
    'cluster-node-timeout 2000',
    'tls-cluster yes',
    'tls-replication yes',
    `tls-cert-file ${certs.genericCert}`,
    `tls-key-file ${certs.genericKey}`,
    `tls-ca-cert-file ${certs.caCert}`,
  ]
  const configFile = path.join(node.dir, 'node.conf')
  writeFileSync(configFile, lines.join('\n') + '\n')
  const managed = ManagedProcess.spawn(
    processes,
    process.execPath,
    [BFS_MAIN, configFile],
    path.join(node.dir, 'node.log'),
  )
  await waitUntil(
    `node ${node.tlsPort} answers PING over TLS`,
    async () => (await cli(['-p', String(node.tlsPort), 'PING'], 5000)).output.trim() === 'PONG',
    { process: managed },
  )
}

/** CLUSTER SLOTS as [start, end, ...[port, id]] rows. */
async function slotsOf(client: Redis): Promise<[number, number, ...[number, string][]][]> {
  const reply = (await client.call('CLUSTER', 'SLOTS')) as [number, number, ...[string, number, string][]][]
  return reply.map(([start, end, ...owners]) => [
    start,
    end,
    ...owners.map(([, port, id]) => [port, id] as [number, string]),
  ])
}

/** CLUSTER NODES as id → port. */
async function nodePorts(client: Redis): Promise<Map<string, number>> {
  const text = (await client.call('CLUSTER', 'NODES')) as string
  return new Map(
    text
      .trim()
      .split('\n')
      .map((line) => {
        const [id, address] = line.split(' ')
        return [id!, Number(address!.slice(address!.lastIndexOf(':') + 1, address!.indexOf('@')))]
      }),
  )
}

const byId = (id: string): Node => nodes.find((node) => node.id === id)!

/** A key whose slot `owner` serves (per its CLUSTER SLOTS), and that slot. */
async function keyServedBy(owner: Node): Promise<{ key: string; slot: number }> {
  const slots = await slotsOf(connect(owner, true))
  for (let i = 0; ; i++) {
    const slot = slotOf(`item:${i}`)
    const row = slots.find(([start, end]) => slot >= start && slot <= end)!
    if ((row[2] as [number, string])[1] === owner.id) return { key: `item:${i}`, slot }
  }
}

beforeAll(async () => {
  certs = await makeTestCerts()
  for (let i = 0; i < 3; i++) {
    const port = await freePortBelow50000()
    const tlsPort = await freePortBelow50000()
    nodes.push({ port, tlsPort, dir: path.join(processes.dir, `node-${tlsPort}`), id: '' })
  }
  await Promise.all(nodes.map(startNode))
}, 120_000)

afterAll(async () => {
  for (const client of clients) client.disconnect()
  await processes.stopAll()
  certs?.remove()
})

describe('tls-cluster yes with a plaintext port beside the TLS one', () => {
  it('redis-cli --tls --cluster create of 3 nodes; every node learns the plaintext ports of its peers', async () => {
    const created = await cli(
      ['--cluster', 'create', ...nodes.map((node) => `127.0.0.1:${node.tlsPort}`), '--cluster-yes'],
      120_000,
    )
    expect(created.output).toContain('[OK] All 16384 slots covered.')
    for (const node of nodes) node.id = (await connect(node, true).call('CLUSTER', 'MYID')) as string
    const plainPorts = nodes.map((node) => node.port).sort()
    for (const node of nodes) {
      const plain = connect(node, false)
      await waitUntil(
        `node ${node.port} gives plaintext clients every node's plaintext port`,
        async () => {
          const ports = (await slotsOf(plain)).map((row) => (row[2] as [number, string])[0]).sort()
          return ports.length === 3 && ports.every((port, i) => port === plainPorts[i])
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      )
    }
  }, 180_000)

  it('CLUSTER SLOTS and NODES give TLS ports over TLS and plaintext ports over plaintext; SHARDS gives both; nodes.conf keeps TLS ports', async () => {
    for (const node of nodes) {
      const secure = connect(node, true)
      const plain = connect(node, false)
      const overTls = await slotsOf(secure)
      const overPlain = await slotsOf(plain)
      expect(overTls.map(([start, end, owner]) => [start, end, (owner as [number, string])[1]])).toEqual(
        overPlain.map(([start, end, owner]) => [start, end, (owner as [number, string])[1]]),
      )
      for (const [, , owner] of overTls)
        expect((owner as [number, string])[0]).toBe(byId((owner as [number, string])[1]).tlsPort)
      for (const [, , owner] of overPlain)
        expect((owner as [number, string])[0]).toBe(byId((owner as [number, string])[1]).port)

      for (const [id, port] of await nodePorts(secure)) expect(port).toBe(byId(id).tlsPort)
      for (const [id, port] of await nodePorts(plain)) expect(port).toBe(byId(id).port)

      const shards = await secure.call('CLUSTER', 'SHARDS')
      expect(await plain.call('CLUSTER', 'SHARDS')).toEqual(shards)
      for (const shard of shards as unknown[][]) {
        for (const entry of shard[3] as unknown[][]) {
          const fields = new Map<unknown, unknown>()
          for (let i = 0; i < entry.length; i += 2) fields.set(entry[i], entry[i + 1])
          const described = byId(fields.get('id') as string)
          expect(fields.get('port')).toBe(described.port)
          expect(fields.get('tls-port')).toBe(described.tlsPort)
        }
      }
      const saved = readFileSync(path.join(node.dir, 'nodes.conf'), 'utf8')
      for (const other of nodes) {
        expect(saved).toContain(`127.0.0.1:${other.tlsPort}@${other.tlsPort + 10000}`)
        expect(saved).not.toContain(`127.0.0.1:${other.port}@`)
      }
    }
  }, 60_000)

  it('-MOVED and -ASK name the TLS port to a TLS client and the plaintext port to a plaintext one', async () => {
    const [first, second] = [nodes[0]!, nodes[1]!]
    const { key, slot } = await keyServedBy(second)
    await expect(connect(first, true).call('BF.ADD', key, 'x')).rejects.toThrow(
      `MOVED ${slot} 127.0.0.1:${second.tlsPort}`,
    )
    await expect(connect(first, false).call('BF.ADD', key, 'x')).rejects.toThrow(
      `MOVED ${slot} 127.0.0.1:${second.port}`,
    )

    const served = await keyServedBy(first)
    const owner = connect(first, true)
    expect(await owner.call('CLUSTER', 'SETSLOT', String(served.slot), 'MIGRATING', second.id)).toBe('OK')
    try {
      await expect(connect(first, true).call('BF.EXISTS', served.key, 'x')).rejects.toThrow(
        `ASK ${served.slot} 127.0.0.1:${second.tlsPort}`,
      )
      await expect(connect(first, false).call('BF.EXISTS', served.key, 'x')).rejects.toThrow(
        `ASK ${served.slot} 127.0.0.1:${second.port}`,
      )
    } finally {
      expect(await owner.call('CLUSTER', 'SETSLOT', String(served.slot), 'STABLE')).toBe('OK')
    }
  }, 60_000)

  it('ioredis cluster clients, one plaintext and one over TLS, route items to the right ports', async () => {
    const plain = new ClusterClient([{ host: '127.0.0.1', port: nodes[0]!.port }], { enableReadyCheck: true })
    const secure = new ClusterClient([{ host: '127.0.0.1', port: nodes[0]!.tlsPort }], {
      redisOptions: { tls: tlsOptions() },
      enableReadyCheck: true,
    })
    clients.push(plain, secure)
    const keys = Array.from({ length: 60 }, (_, i) => `routed:${i}`)
    for (const key of keys) expect(await plain.call('BF.ADD', key, 'plain')).toBe(1)
    for (const key of keys) expect(await secure.call('BF.ADD', key, 'tls')).toBe(1)
    for (const key of keys) {
      expect(await secure.call('BF.EXISTS', key, 'plain')).toBe(1)
      expect(await plain.call('BF.EXISTS', key, 'tls')).toBe(1)
    }
    expect(new Set(plain.nodes('master').map((node) => node.options.port))).toEqual(
      new Set(nodes.map((node) => node.port)),
    )
    expect(new Set(secure.nodes('master').map((node) => node.options.port))).toEqual(
      new Set(nodes.map((node) => node.tlsPort)),
    )
  }, 60_000)

  it('a replica added by redis-cli --tls --cluster add-node: CLUSTER REPLICAS and SLOTS give its port as the connection asks', async () => {
    const master = nodes[0]!
    const port = await freePortBelow50000()
    const tlsPort = await freePortBelow50000()
    const replica: Node = { port, tlsPort, dir: path.join(processes.dir, `node-${tlsPort}`), id: '' }
    nodes.push(replica)
    await startNode(replica)
    replica.id = (await connect(replica, true).call('CLUSTER', 'MYID')) as string
    const added = await cli(
      [
        '--cluster',
        'add-node',
        `127.0.0.1:${tlsPort}`,
        `127.0.0.1:${master.tlsPort}`,
        '--cluster-slave',
        '--cluster-master-id',
        master.id,
      ],
      120_000,
    )
    expect(added.code, added.output).toBe(0)
    const plain = connect(master, false)
    const secure = connect(master, true)
    const replicaPort = async (client: Redis): Promise<number | undefined> => {
      const lines = (await client.call('CLUSTER', 'REPLICAS', master.id)) as string[]
      const line = lines.find((text) => text.startsWith(replica.id))
      return line === undefined ? undefined : Number(line.split(' ')[1]!.split('@')[0]!.split(':')[1])
    }
    await waitUntil(
      'the master lists the replica with its plaintext port to a plaintext client',
      async () => (await replicaPort(plain)) === port,
      { timeoutMs: 30_000, intervalMs: 200 },
    )
    expect(await replicaPort(secure)).toBe(tlsPort)
    const servedBy = (rows: [number, number, ...[number, string][]][]) =>
      rows.find((row) => (row[2] as [number, string])[1] === master.id)!
    await waitUntil('CLUSTER SLOTS lists the replica', async () => servedBy(await slotsOf(plain)).length === 4, {
      timeoutMs: 30_000,
      intervalMs: 200,
    })
    expect(servedBy(await slotsOf(plain))[3]).toEqual([port, replica.id])
    expect(servedBy(await slotsOf(secure))[3]).toEqual([tlsPort, replica.id])
  }, 180_000)
})
