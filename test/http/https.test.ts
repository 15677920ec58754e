/**
 * The HTTP port over HTTPS (http-tls yes): /healthz and the original API through TLS with no
 * client certificate, plaintext HTTP refused, the certificate reloaded by CONFIG SET of the TLS
 * keys; certificates made by openssl at test time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { copyFileSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import path from 'node:path'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { makeTempDir } from '../helpers/temp-dir.js'
import { makeTestCerts, type TestCerts } from '../helpers/tls-certs.js'

let certs: TestCerts

beforeAll(async () => {
  certs = await makeTestCerts()
}, 60_000)

afterAll(() => certs?.remove())

/** GET over HTTPS, trusting the test CA: status, body and the server certificate's common name. */
function getHttps(port: number, target: string): Promise<{ status: number; body: string; cn: string }> {
  return new Promise((resolve, reject) => {
    const request = https.get(
      { host: '127.0.0.1', port, path: target, ca: readFileSync(certs.caCert), agent: false },
      (response) => {
        const cn = String((response.socket as import('node:tls').TLSSocket).getPeerCertificate().subject.CN)
        let body = ''
        response.on('data', (chunk: Buffer) => (body += chunk.toString()))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body, cn }))
      },
    )
    request.on('error', reject)
  })
}

describe('http-tls yes', () => {
  let bfs: RunningServer
  let redis: Redis
  let dir: string
  let cert: string
  let key: string

  beforeAll(async () => {
    dir = makeTempDir()
    cert = path.join(dir, 'http.crt')
    key = path.join(dir, 'http.key')
    copyFileSync(certs.serverCert, cert)
    copyFileSync(certs.serverKey, key)
    bfs = await startServer({ dir, 'http-port': -1, 'http-tls': true, 'tls-cert-file': cert, 'tls-key-file': key })
    redis = new Redis({ host: '127.0.0.1', port: bfs.port, maxRetriesPerRequest: 0 })
  })
  afterAll(async () => {
    redis?.disconnect()
    await bfs?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('serves /healthz and the original API over HTTPS, without a client certificate', async () => {
    expect(bfs.logs.join('\n')).toContain(`HTTPS listening on 127.0.0.1:${bfs.server.httpPort}`)
    expect((await getHttps(bfs.server.httpPort, '/healthz')).status).toBe(200)
    expect((await getHttps(bfs.server.httpPort, '/add=apple')).status).toBe(200)
    expect(await redis.call('BF.EXISTS', 'bfs', 'apple')).toBe(1)
  })

  it('refuses plaintext HTTP on the HTTPS port', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const request = http.get(
        { host: '127.0.0.1', port: bfs.server.httpPort, path: '/healthz', agent: false },
        (response) => resolve(`status ${response.statusCode}`),
      )
      request.on('error', (error) => resolve(`error ${error.message}`))
    })
    expect(outcome).toMatch(/^error|^status 400/)
  })

  it('takes a renewed certificate on CONFIG SET, and refuses a bad one', async () => {
    await certs.renewServer(cert, key, 'Renewed-http')
    expect(await redis.call('CONFIG', 'SET', 'tls-cert-file', cert, 'tls-key-file', key)).toBe('OK')
    expect((await getHttps(bfs.server.httpPort, '/healthz')).cn).toBe('Renewed-http')
    await expect(redis.call('CONFIG', 'SET', 'tls-key-file', certs.clientKey)).rejects.toThrow(
      'Unable to update TLS configuration',
    )
    expect((await getHttps(bfs.server.httpPort, '/healthz')).cn).toBe('Renewed-http')
  })

  it('refuses to start without a certificate', async () => {
    await expect(startServer({ 'http-port': -1, 'http-tls': true })).rejects.toThrow(
      'Failed to configure HTTPS: No tls-cert-file configured!',
    )
  })
})
