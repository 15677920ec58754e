/**
 * Replication over TLS (tls-replication yes): a real master and replica, the replica connecting to
 * the master's TLS port with its certificate, announcing its own TLS port, the full sync, the
 * stream, WAIT, and a PSYNC that continues after the link drops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { makeTestCerts, clientTlsOptions, type TestCerts } from '../helpers/tls-certs.js'
import { freePort } from '../helpers/tools.js'
import { infoFields, until } from '../helpers/replication-info.js'
import type { Config } from '../../src/runtime/config.js'

let certs: TestCerts

beforeAll(async () => {
  certs = await makeTestCerts()
}, 60_000)

afterAll(() => certs?.remove())

/** A node with a TLS port beside a plaintext one, its certificate good as server and as client. */
async function node(extra: Partial<Config> = {}): Promise<RunningServer> {
  return startServer({
    port: await freePort(),
    'tls-port': -1,
    'tls-cert-file': certs.genericCert,
    'tls-key-file': certs.genericKey,
    'tls-ca-cert-file': certs.caCert,
    'repl-diskless-sync-delay': 0,
    ...extra,
  })
}

describe('tls-replication yes', () => {
  let master: RunningServer
  let replica: RunningServer
  let overTls: Redis
  let replicaClient: Redis

  beforeAll(async () => {
    master = await node()
    replica = await node({ 'tls-replication': true })
    const tls = clientTlsOptions(certs)
    overTls = new Redis({ host: '127.0.0.1', port: master.server.tlsPort, tls, maxRetriesPerRequest: 0 })
    replicaClient = new Redis({ host: '127.0.0.1', port: replica.port, maxRetriesPerRequest: 0 })
  })
  afterAll(async () => {
    overTls?.disconnect()
    replicaClient?.disconnect()
    await replica?.stop()
    await master?.stop()
  })

  it("syncs from the master's TLS port, announces its own TLS port, and acknowledges WAIT", async () => {
    expect(await overTls.call('BF.ADD', 'before', 'x')).toBe(1)
    expect(await replicaClient.call('REPLICAOF', '127.0.0.1', String(master.server.tlsPort))).toBe('OK')
    await until(
      async () => (await infoFields(replicaClient, 'replication')).get('master_link_status') === 'up',
      'the link over TLS',
    )
    expect(await overTls.call('BF.ADD', 'after', 'y')).toBe(1)
    expect(await overTls.call('WAIT', '1', '10000')).toBe(1)
    expect(await replicaClient.call('BF.EXISTS', 'before', 'x')).toBe(1)
    expect(await replicaClient.call('BF.EXISTS', 'after', 'y')).toBe(1)
    const masterInfo = await infoFields(overTls, 'replication')
    expect(masterInfo.get('slave0')).toContain(`port=${replica.server.tlsPort},`)
    // The replica's link is a client of the master's TLS port.
    const list = (await overTls.call('CLIENT', 'LIST', 'TYPE', 'replica')) as string
    expect(list).toContain(`laddr=127.0.0.1:${master.server.tlsPort} `)
    expect(replica.logs.join('\n')).toContain('MASTER <-> REPLICA sync started')
  })

  it('a dropped link continues with PSYNC over TLS', async () => {
    const partialBefore = Number((await infoFields(overTls, 'stats')).get('sync_partial_ok'))
    await replicaClient.call('CLIENT', 'KILL', 'TYPE', 'master')
    await until(
      async () => Number((await infoFields(overTls, 'stats')).get('sync_partial_ok')) > partialBefore,
      'a partial resync',
    )
    await until(
      async () => (await infoFields(replicaClient, 'replication')).get('master_link_status') === 'up',
      'the link again',
    )
    expect(await overTls.call('BF.ADD', 'later', 'z')).toBe(1)
    expect(await overTls.call('WAIT', '1', '10000')).toBe(1)
    expect(await replicaClient.call('BF.EXISTS', 'later', 'z')).toBe(1)
  })
})

describe('tls-replication: its configuration', () => {
  it("refuses a start, or CONFIG SET, without what the replica's TLS needs", async () => {
    await expect(startServer({ 'tls-replication': true })).rejects.toThrow(
      'Failed to configure TLS: No tls-cert-file configured!',
    )
    await expect(
      startServer({ 'tls-replication': true, 'tls-cert-file': certs.genericCert, 'tls-key-file': certs.genericKey }),
    ).rejects.toThrow('Failed to configure TLS: Either tls-ca-cert-file or tls-ca-cert-dir must be specified')
    const plain = await startServer({})
    const client = new Redis({ host: '127.0.0.1', port: plain.port, maxRetriesPerRequest: 0 })
    try {
      await expect(client.call('CONFIG', 'SET', 'tls-replication', 'yes')).rejects.toThrow(
        "ERR CONFIG SET failed (possibly related to argument 'tls-replication') - Unable to update TLS configuration. Check server logs.",
      )
      expect(await client.call('CONFIG', 'GET', 'tls-replication')).toEqual(['tls-replication', 'no'])
    } finally {
      client.disconnect()
      await plain.stop()
    }
  })
})
