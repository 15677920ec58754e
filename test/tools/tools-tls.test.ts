/**
 * bfs-import and bfs-copy over TLS (--tls, --cacert, --cert, --key, as redis-cli's), against a
 * bfs whose TLS port asks for client certificates; certificates made by openssl at test time.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { makeTestCerts, serverTlsConfig, type TestCerts } from '../helpers/tls-certs.js'
import { freePort, runTool } from '../helpers/tools.js'

const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/tools')

let certs: TestCerts
let source: RunningServer
let target: RunningServer
let plainSource: Redis
let plainTarget: Redis

beforeAll(async () => {
  certs = await makeTestCerts()
  const tls = serverTlsConfig(certs)
  source = await startServer({ ...tls, port: await freePort() })
  target = await startServer({ ...tls, port: await freePort() })
  plainSource = new Redis({ host: '127.0.0.1', port: source.port, maxRetriesPerRequest: 0 })
  plainTarget = new Redis({ host: '127.0.0.1', port: target.port, maxRetriesPerRequest: 0 })
}, 60_000)

afterAll(async () => {
  plainSource?.disconnect()
  plainTarget?.disconnect()
  await source?.stop()
  await target?.stop()
  certs?.remove()
})

const tlsFlags = () => ['--cacert', certs.caCert, '--cert', certs.clientCert, '--key', certs.clientKey]

describe('the tools over TLS', () => {
  it('bfs-import --tls adds the items through the TLS port', async () => {
    const args = [
      '--port',
      String(source.server.tlsPort),
      '--tls',
      ...tlsFlags(),
      '-f',
      'imported',
      '--progress',
      'none',
    ]
    const result = await runTool(process.execPath, [path.join(DIST, 'bfs-import.js'), ...args], 'a\nb\nc\n')
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(await plainSource.call('BF.MEXISTS', 'imported', 'a', 'b', 'c', 'zzz')).toEqual([1, 1, 1, 0])
  })

  it('bfs-import without a client certificate is refused by tls-auth-clients yes, and without --tls by the TLS port', async () => {
    const base = ['--port', String(source.server.tlsPort), '-f', 'refused', '--progress', 'none']
    const noCert = await runTool(
      process.execPath,
      [path.join(DIST, 'bfs-import.js'), ...base, '--tls', '--cacert', certs.caCert],
      'a\n',
    )
    expect(noCert.code).toBe(2)
    const plain = await runTool(process.execPath, [path.join(DIST, 'bfs-import.js'), ...base], 'a\n')
    expect(plain.code).toBe(2)
    const stray = await runTool(
      process.execPath,
      [path.join(DIST, 'bfs-import.js'), ...base, '--cacert', certs.caCert],
      'a\n',
    )
    expect(stray.stderr).toContain('--cacert, --cert and --key need --tls')
    expect(await plainSource.call('EXISTS', 'refused')).toBe(0)
  })

  it('bfs-copy --tls copies between two TLS ports, --from-tls from a TLS port to a plaintext one', async () => {
    await plainSource.call('BF.MADD', 'copied', 'x', 'y')
    const copy = (args: string[]) =>
      runTool(process.execPath, [path.join(DIST, 'bfs-copy.js'), ...args, ...tlsFlags(), 'copied'])
    const both = await copy([
      '--from',
      `127.0.0.1:${source.server.tlsPort}`,
      '--to',
      `127.0.0.1:${target.server.tlsPort}`,
      '--tls',
    ])
    expect(both.code, both.stderr).toBe(0)
    expect(await plainTarget.call('BF.MEXISTS', 'copied', 'x', 'y', 'q')).toEqual([1, 1, 0])
    const oneSide = await copy([
      '--from',
      `127.0.0.1:${source.server.tlsPort}`,
      '--to',
      `127.0.0.1:${target.port}`,
      '--from-tls',
      '--replace',
    ])
    expect(oneSide.code, oneSide.stderr).toBe(0)
  })
})
