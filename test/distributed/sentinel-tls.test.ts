/**
 * Replication and Sentinel over TLS: a bfs master and replica (real processes) whose replication
 * link is TLS (tls-replication yes), watched by three real redis-sentinel 7.0 processes that talk
 * TLS to them and to each other, with certificates made by openssl at test time. The master is
 * killed (kill -9); the Sentinels promote the replica, found at the TLS port it announced, and
 * every write acknowledged by WAIT is on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Redis } from 'ioredis'
import { Cluster, ClusterNode, items } from '../helpers/cluster-nodes.js'
import {
  MASTER_NAME,
  Sentinel,
  sentinelConfigLines,
  waitNewMaster,
  waitSentinelsConverged,
  waitSentinelsSeeReplica,
} from '../helpers/cluster-sentinels.js'
import { makeTestCerts, clientTlsOptions, type TestCerts } from '../helpers/tls-certs.js'
import { freePort } from '../helpers/tools.js'

let certs: TestCerts
let cluster: Cluster
let master: ClusterNode
let replica: ClusterNode
let masterTls: number
let replicaTls: number
const sentinels: Sentinel[] = []

/** The TLS lines every process has: its TLS port, the certificate it serves and connects with, the CA, TLS to its master. */
function tlsLines(port: number): string[] {
  return [
    `tls-port ${port}`,
    `tls-cert-file ${certs.genericCert}`,
    `tls-key-file ${certs.genericKey}`,
    `tls-ca-cert-file ${certs.caCert}`,
    'tls-replication yes',
  ]
}

/** A TLS client of a node's TLS port. */
function tlsClient(port: number): Redis {
  const tls = clientTlsOptions(certs)
  const client = new Redis({ host: '127.0.0.1', port, tls, retryStrategy: () => null, maxRetriesPerRequest: 0 })
  client.on('error', () => {})
  return client
}

beforeAll(async () => {
  certs = await makeTestCerts()
  cluster = new Cluster()
  masterTls = await freePort()
  master = await cluster.node('master', { extra: tlsLines(masterTls) })
  replicaTls = await freePort()
  replica = await cluster.node('replica', { extra: [...tlsLines(replicaTls), `replicaof 127.0.0.1 ${masterTls}`] })
  await replica.waitLinkUp(masterTls)
  for (let i = 1; i <= 3; i++) {
    const [port, tlsPort] = [await freePort(), await freePort()]
    const dir = path.join(cluster.dir, `sentinel${i}`)
    mkdirSync(dir, { recursive: true })
    const configFile = path.join(dir, 'sentinel.conf')
    writeFileSync(configFile, [...sentinelConfigLines(port, dir, masterTls), ...tlsLines(tlsPort)].join('\n') + '\n')
    const sentinel = new Sentinel(cluster, `sentinel${i}`, port, configFile)
    await sentinel.start()
    sentinels.push(sentinel)
  }
}, 120_000)

afterAll(async () => {
  await cluster?.stopAll()
  certs?.remove()
})

describe('Sentinel over TLS', () => {
  it('the Sentinels find the replica at the TLS port it announced', async () => {
    await waitSentinelsConverged(sentinels, masterTls, 1)
    await waitSentinelsSeeReplica(sentinels, replicaTls)
    expect((await sentinels[0]!.replicas(MASTER_NAME)).map((r) => r.get('port'))).toEqual([String(replicaTls)])
  }, 90_000)

  it('kill -9 of the master: the replica is promoted with every WAIT-acknowledged write', async () => {
    const writer = tlsClient(masterTls)
    const acked: string[] = []
    for (let batch = 0; batch < 20; batch++) {
      const list = Array.from({ length: 50 }, (_, i) => `tls:${batch}:${i}`)
      const [command, ...args] = items.addMany(list)
      await writer.call(command!, ...args)
      if (Number(await writer.call('WAIT', '1', '10000')) === 1) acked.push(...list)
    }
    writer.disconnect()
    expect(acked.length).toBeGreaterThan(0)
    await master.kill()
    expect(await waitNewMaster(sentinels, masterTls, 90_000)).toBe(replicaTls)
    const promoted = tlsClient(replicaTls)
    try {
      expect(((await promoted.call('ROLE')) as unknown[])[0]).toBe('master')
      const present = await items.present(promoted, acked)
      expect(present.filter((p) => !p).length).toBe(0)
    } finally {
      promoted.disconnect()
    }
  }, 120_000)
})
