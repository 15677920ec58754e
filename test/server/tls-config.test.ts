/**
 * The TLS keys: a renewed certificate taken by CONFIG SET without a restart, a bad file refused
 * with the old context kept, the start refused as redis tls.c refuses it, BF.SAVE kept off the
 * TLS files, and TLS between nodes still refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import tls from 'node:tls'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { makeTempDir } from '../helpers/temp-dir.js'
import { makeTestCerts, serverTlsConfig, clientTlsOptions, type TestCerts } from '../helpers/tls-certs.js'
import { RawClient, encodeCommand, exchange } from '../helpers/resp.js'
import { freePort } from '../helpers/tools.js'
import type { Config } from '../../src/runtime/config.js'
import { readConfig } from '../../src/runtime/config-load.js'

let certs: TestCerts

beforeAll(async () => {
  certs = await makeTestCerts()
}, 60_000)

afterAll(() => certs?.remove())

const tlsConfig = (extra: Partial<Config> = {}): Partial<Config> => serverTlsConfig(certs, extra)

const clientTls = (): tls.ConnectionOptions => clientTlsOptions(certs)

/** The common name of the certificate a new TLS connection is shown, and the connection. */
async function serverName(port: number): Promise<{ cn: string; client: RawClient }> {
  const client = await RawClient.connectTls(port, clientTls())
  const cn = (client.socket as tls.TLSSocket).getPeerCertificate().subject.CN
  return { cn: String(cn), client }
}

describe('CONFIG SET of the TLS keys', () => {
  let bfs: RunningServer
  let redis: Redis
  let liveCert: string
  let liveKey: string
  let dir: string

  beforeAll(async () => {
    // In dir, where BF.SAVE's paths are.
    dir = makeTempDir()
    liveCert = path.join(dir, 'live.crt')
    liveKey = path.join(dir, 'live.key')
    copyFileSync(certs.serverCert, liveCert)
    copyFileSync(certs.serverKey, liveKey)
    copyFileSync(certs.caCert, path.join(dir, 'ca.crt'))
    bfs = await startServer(
      tlsConfig({
        dir,
        port: await freePort(),
        'tls-cert-file': liveCert,
        'tls-key-file': liveKey,
        'tls-ca-cert-file': path.join(dir, 'ca.crt'),
      }),
    )
    redis = new Redis({ port: bfs.port, host: '127.0.0.1', maxRetriesPerRequest: 0 })
  })
  afterAll(async () => {
    redis?.disconnect()
    await bfs?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('a renewed certificate is seen by a new connection after CONFIG SET, the open ones keep going', async () => {
    const before = await serverName(bfs.server.tlsPort)
    expect(before.cn).toBe('Server-only')
    await certs.renewServer(liveCert, liveKey, 'Renewed')
    // Same paths, set again: the files are read anew (redis: VOLATILE_CONFIG).
    expect(await redis.call('CONFIG', 'SET', 'tls-cert-file', liveCert, 'tls-key-file', liveKey)).toBe('OK')
    const after = await serverName(bfs.server.tlsPort)
    try {
      expect(after.cn).toBe('Renewed')
      expect(await exchange(before.client, [['PING']], '+PONG\r\n')).toBe('+PONG\r\n')
      expect(await exchange(after.client, [['PING']], '+PONG\r\n')).toBe('+PONG\r\n')
    } finally {
      before.client.close()
      after.client.close()
    }
  })

  it('a bad file is refused, its reason logged, and the old context and value kept', async () => {
    const missing = path.join(certs.dir, 'missing.crt')
    await expect(redis.call('CONFIG', 'SET', 'tls-cert-file', missing)).rejects.toThrow(
      "ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update TLS configuration. Check server logs.",
    )
    expect(bfs.logs.join('\n')).toContain(`Failed to load certificate: ${missing}`)
    // A key that is not the certificate's.
    await expect(redis.call('CONFIG', 'SET', 'tls-key-file', certs.clientKey)).rejects.toThrow(
      'Unable to update TLS configuration',
    )
    expect(bfs.logs.join('\n')).toContain(`Failed to load private key: ${certs.clientKey}`)
    await expect(redis.call('CONFIG', 'SET', 'tls-protocols', 'TLSv9')).rejects.toThrow(
      'Unable to update TLS configuration',
    )
    expect(bfs.logs.join('\n')).toContain(
      "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.",
    )
    expect(await redis.call('CONFIG', 'GET', 'tls-cert-file')).toEqual(['tls-cert-file', liveCert])
    expect(await redis.call('CONFIG', 'GET', 'tls-key-file')).toEqual(['tls-key-file', liveKey])
    const { client } = await serverName(bfs.server.tlsPort)
    try {
      expect(await exchange(client, [['PING']], '+PONG\r\n')).toBe('+PONG\r\n')
    } finally {
      client.close()
    }
  })

  it('tls-protocols TLSv1.3 alone refuses a TLSv1.2 client', async () => {
    expect(await redis.call('CONFIG', 'SET', 'tls-protocols', 'TLSv1.3')).toBe('OK')
    await expect(RawClient.connectTls(bfs.server.tlsPort, { ...clientTls(), maxVersion: 'TLSv1.2' })).rejects.toThrow()
    const { client } = await serverName(bfs.server.tlsPort)
    client.write(encodeCommand(['PING']))
    expect((await client.read(7)).toString()).toBe('+PONG\r\n')
    client.close()
    expect(await redis.call('CONFIG', 'SET', 'tls-protocols', '')).toBe('OK')
  })

  it('tls-port is a start-time key', async () => {
    await expect(redis.call('CONFIG', 'SET', 'tls-port', '7000')).rejects.toThrow("can't set immutable config")
  })

  it('BF.SAVE refuses the TLS files', async () => {
    await redis.call('BF.ADD', 'f', 'x')
    await expect(redis.call('BF.SAVE', 'f', 'live.crt')).rejects.toThrow("ERR path is bfs's own TLS certificate")
    await expect(redis.call('BF.SAVE', 'f', 'ca.crt')).rejects.toThrow("ERR path is bfs's own TLS CA certificate")
    await expect(redis.call('BF.SAVE', 'f', 'live.key')).rejects.toThrow("ERR path is bfs's own TLS key")
    // Every file of tls-ca-cert-dir is read as a CA certificate at the next reload.
    mkdirSync(path.join(dir, 'cas'))
    copyFileSync(certs.caCert, path.join(dir, 'cas', 'ca.pem'))
    expect(await redis.call('CONFIG', 'SET', 'tls-ca-cert-dir', path.join(dir, 'cas'))).toBe('OK')
    await expect(redis.call('BF.SAVE', 'f', 'cas/new.pem')).rejects.toThrow(
      "ERR path is inside bfs's own 'cas' directory",
    )
    expect(await redis.call('CONFIG', 'SET', 'tls-ca-cert-dir', '')).toBe('OK')
  })
})

describe('the start, as redis tls.c tlsConfigure', () => {
  it('refuses a TLS port without a certificate, a key, or a CA while client certificates are asked for', async () => {
    await expect(startServer(tlsConfig({ 'tls-cert-file': '' }))).rejects.toThrow(
      'Failed to configure TLS: No tls-cert-file configured!',
    )
    await expect(startServer(tlsConfig({ 'tls-key-file': '' }))).rejects.toThrow(
      'Failed to configure TLS: No tls-key-file configured!',
    )
    await expect(startServer(tlsConfig({ 'tls-ca-cert-file': '' }))).rejects.toThrow(
      'Failed to configure TLS: Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!',
    )
    await expect(startServer(tlsConfig({ 'tls-key-file': certs.clientKey }))).rejects.toThrow(
      `Failed to load private key: ${certs.clientKey}`,
    )
  })

  it('takes tls-ca-cert-dir instead of a file, and no CA with tls-auth-clients no', async () => {
    const byDir = await startServer(
      tlsConfig({ 'tls-ca-cert-file': '', 'tls-ca-cert-dir': path.dirname(certs.caCert) }),
    )
    const noCa = await startServer(tlsConfig({ 'tls-ca-cert-file': '', 'tls-auth-clients': 'no' }))
    try {
      const { client } = await serverName(byDir.server.tlsPort)
      expect(await exchange(client, [['PING']], '+PONG\r\n')).toBe('+PONG\r\n')
      client.close()
      const plain = await RawClient.connectTls(noCa.server.tlsPort, { ca: readFileSync(certs.caCert) })
      expect(await exchange(plain, [['PING']], '+PONG\r\n')).toBe('+PONG\r\n')
      plain.close()
    } finally {
      await byDir.stop()
      await noCa.stop()
    }
  })

  it('a cluster node needs its plaintext port, or under tls-cluster a TLS port (a plaintext one beside it is allowed) and tls-replication', async () => {
    const cluster = { 'cluster-enabled': true, 'tls-replication': true }
    const both = await startServer(tlsConfig({ ...cluster, 'tls-cluster': true, port: await freePort() }))
    await both.stop()
    await expect(startServer(tlsConfig({ ...cluster, 'tls-cluster': true, 'tls-replication': false }))).rejects.toThrow(
      'tls-cluster yes needs tls-replication yes',
    )
    await expect(startServer(tlsConfig(cluster))).rejects.toThrow(
      'cluster mode without tls-cluster needs the plaintext port',
    )
  })

  it('closing the server ends a connection still in its TLS handshake (Node would wait 120 s for it)', async () => {
    const bfs = await startServer(tlsConfig())
    const silent = await RawClient.connect(bfs.server.tlsPort)
    await bfs.stop()
    await silent.waitClosed()
  }, 30_000)

  it('connections still in their handshake count against maxclients, as in Redis', async () => {
    const bfs = await startServer(tlsConfig({ maxclients: 2, port: await freePort() }))
    const silent = [await RawClient.connect(bfs.server.tlsPort), await RawClient.connect(bfs.server.tlsPort)]
    const handshakes = async (count: number): Promise<void> => {
      for (let i = 0; i < 500 && bfs.server.tlsHandshakes !== count; i++)
        await new Promise((resolve) => setTimeout(resolve, 10))
      expect(bfs.server.tlsHandshakes).toBe(count)
    }
    let info: Redis | undefined
    try {
      // Both seen by the server (with I/O threads, each connection's own thread counts it).
      await handshakes(2)
      // The third is dropped before its handshake; the plaintext port still counts clients only.
      const third = await RawClient.connect(bfs.server.tlsPort)
      await third.waitClosed()
      info = new Redis({ host: '127.0.0.1', port: bfs.port, maxRetriesPerRequest: 0 })
      const clients = String(await info.info('clients'))
      expect(clients).toMatch(/bfs_tls_handshakes:2\r\n/)
      expect(String(await info.info('stats'))).toMatch(/rejected_connections:1\r\n/)
      for (const client of silent) client.close()
      await handshakes(0)
    } finally {
      info?.disconnect()
      for (const client of silent) client.close()
      await bfs.stop()
    }
  })

  it('reads the TLS keys from a config file, tls-replication and tls-cluster included', () => {
    const text = `tls-port 6390\ntls-cert-file "${certs.serverCert}"\ntls-auth-clients optional\ntls-protocols "TLSv1.2 TLSv1.3"\ntls-session-cache-timeout 60\n`
    const { config, ignored } = readConfig(text)
    expect(config['tls-port']).toBe(6390)
    expect(config['tls-auth-clients']).toBe('optional')
    expect(config['tls-protocols']).toBe('TLSv1.2 TLSv1.3')
    expect(ignored).toEqual([])
    expect(readConfig('tls-replication yes\n').config['tls-replication']).toBe(true)
    expect(readConfig('tls-cluster yes\n').config['tls-cluster']).toBe(true)
    expect(() => readConfig('tls-auth-clients maybe\n')).toThrow(
      'argument(s) must be one of the following: yes, no, optional',
    )
  })
})
