/**
 * Cluster mode over TLS (tls-cluster yes, TLS-only nodes): six bfs processes created into a
 * cluster by the unmodified `redis-cli --tls --cluster create` (7.0.15), items routed by ioredis'
 * cluster client over TLS, CLUSTER SLOTS and SHARDS giving the TLS ports, and `--cluster
 * reshard` of slots holding filters (MIGRATE over TLS) with every item still found; certificates
 * made by openssl at test time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Cluster as ClusterClient } from 'ioredis'
import { slotOf } from '../../src/core/key-slot.js'
import { Cluster, ManagedProcess, waitUntil } from '../helpers/cluster-nodes.js'
import { BFS_MAIN, testIoThreadsLines } from '../helpers/child-server.js'
import { freePortBelow50000, redisCli, type CliRun } from '../helpers/cluster-mode.js'
import { makeTestCerts, clientTlsOptions, type TestCerts } from '../helpers/tls-certs.js'

let certs: TestCerts
const processes = new Cluster()
const ports: number[] = []

/** redis-cli's TLS options, with the client certificate. */
const cliTls = (): string[] => ['--tls', '--cacert', certs.caCert, '--cert', certs.clientCert, '--key', certs.clientKey]
const cli = (args: readonly string[], timeoutMs = 60_000): Promise<CliRun> =>
  redisCli([...cliTls(), ...args], { timeoutMs })

/** A TLS-only cluster node on `port` (its TLS port), started from its config file; resolves once it answers PING over TLS. */
async function startNode(port: number): Promise<void> {
  const dir = path.join(processes.dir, `node-${port}`)
  mkdirSync(dir, { recursive: true })
  const lines = [
    ...testIoThreadsLines(),
    'port 0',
    `tls-port ${port}`,
    'bind 127.0.0.1',
    `dir ${dir}`,
    'save ""',
    'appendonly yes',
    'repl-diskless-sync-delay 1',
    'cluster-enabled yes',
    'cluster-node-timeout 2000',
    'tls-cluster yes',
    'tls-replication yes',
    `tls-cert-file ${certs.genericCert}`,
    `tls-key-file ${certs.genericKey}`,
    `tls-ca-cert-file ${certs.caCert}`,
  ]
  const configFile = path.join(dir, 'node.conf')
  writeFileSync(configFile, lines.join('\n') + '\n')
  const managed = ManagedProcess.spawn(processes, process.execPath, [BFS_MAIN, configFile], path.join(dir, 'node.log'))
  await waitUntil(
    `node ${port} answers PING over TLS`,
    async () => (await cli(['-p', String(port), 'PING'], 5000)).output.trim() === 'PONG',
    { process: managed },
  )
}

/** `count` key names whose hash slots lie in [from, to]. */
function keysInSlots(from: number, to: number, count: number): string[] {
  const keys: string[] = []
  for (let i = 0; keys.length < count; i++) {
    const slot = slotOf(`filter:${i}`)
    if (slot >= from && slot <= to) keys.push(`filter:${i}`)
  }
  return keys
}

/** Runs `redis-cli --tls --cluster check` until it passes. */
function waitCheckPasses(): Promise<CliRun> {
  let last: CliRun | undefined
  return waitUntil(
    () => `redis-cli --tls --cluster check passes; last:\n${last?.output ?? ''}`,
    async () => {
      last = await cli(['--cluster', 'check', `127.0.0.1:${ports[0]}`], 15_000)
      return last.code === 0 && !last.output.includes('[ERR]') && !last.output.includes('[WARNING]') ? last : undefined
    },
    { timeoutMs: 30_000, intervalMs: 300 },
  )
}

beforeAll(async () => {
  certs = await makeTestCerts()
  for (let i = 0; i < 6; i++) ports.push(await freePortBelow50000())
  await Promise.all(ports.map(startNode))
}, 120_000)

afterAll(async () => {
  await processes.stopAll()
  certs?.remove()
})

describe('tls-cluster yes', () => {
  let client: ClusterClient

  afterAll(() => client?.disconnect())

  it('redis-cli --tls --cluster create of 6 nodes with one replica each; check passes', async () => {
    const created = await cli(
      ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '1', '--cluster-yes'],
      120_000,
    )
    expect(created.output).toContain('[OK] All 16384 slots covered.')
    await waitCheckPasses()
    const slots = (await cli(['-p', String(ports[0]), 'CLUSTER', 'SLOTS'])).output
    for (const line of slots.split('\n').filter((text) => /^\d{4,5}$/.test(text.trim()) && Number(text) > 16383))
      expect(ports).toContain(Number(line))
    const shards = (await cli(['-p', String(ports[0]), 'CLUSTER', 'SHARDS'])).output
    expect(shards).toContain('tls-port')
  }, 180_000)

  it('a cluster client over TLS routes items; reshard moves slots holding filters and every item is still found', async () => {
    const tls = clientTlsOptions(certs)
    client = new ClusterClient([{ host: '127.0.0.1', port: ports[0]! }], {
      redisOptions: { tls },
      enableReadyCheck: true,
    })
    const keys = keysInSlots(0, 999, 40)
    for (const key of keys) expect(await client.call('BF.ADD', key, 'item')).toBe(1)
    // The master of slot 0 and another master.
    const nodes = (await cli(['-p', String(ports[0]), 'CLUSTER', 'NODES'])).output
      .split('\n')
      .filter((line) => line.includes('master'))
    const from = nodes.find((line) => / 0-\d+/.test(line))!.split(' ')[0]!
    const to = nodes.find((line) => !/ 0-\d+/.test(line))!.split(' ')[0]!
    const moved = await cli(
      [
        '--cluster',
        'reshard',
        `127.0.0.1:${ports[0]}`,
        '--cluster-from',
        from,
        '--cluster-to',
        to,
        '--cluster-slots',
        '1000',
        '--cluster-yes',
      ],
      120_000,
    )
    expect(moved.code, moved.output).toBe(0)
    await waitCheckPasses()
    for (const key of keys) expect(await client.call('BF.EXISTS', key, 'item')).toBe(1)
    const owner = (await cli(['-p', String(ports[0]), 'CLUSTER', 'NODES'])).output
      .split('\n')
      .find((line) => line.startsWith(to))!
    expect(owner).toMatch(/ 0-/)
  }, 180_000)
})
