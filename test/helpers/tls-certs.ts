/**
 * Test certificates made with `openssl` at test time, as redis's utils/gen-test-certs.sh makes
 * them: a CA, a server certificate and a client certificate it signed, and a client certificate
 * signed by another CA (untrusted). EC keys (P-256): quick to make on a loaded machine.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import type tls from 'node:tls'
import path from 'node:path'
import { runTool } from './tools.js'
import type { Config } from '../../src/runtime/config.js'
import { makeTempDir, removeTempDir } from './temp-dir.js'

/** The files made, by path. */
export interface TestCerts {
  readonly dir: string
  readonly caCert: string
  readonly serverCert: string
  readonly serverKey: string
  readonly clientCert: string
  readonly clientKey: string
  /** With no usage restriction (redis's redis.crt): a node's certificate as server and as client. */
  readonly genericCert: string
  readonly genericKey: string
  /** Signed by a CA the server does not trust. */
  readonly untrustedCert: string
  readonly untrustedKey: string
  /** Makes a new server certificate (new key, new serial, common name `cn`) at `cert`/`key`. */
  renewServer(cert: string, key: string, cn: string): Promise<void>
  remove(): void
}

async function openssl(args: readonly string[]): Promise<void> {
  const result = await runTool('openssl', args)
  if (result.code !== 0) throw new Error(`openssl ${args.join(' ')}: ${result.stderr}`)
}

const newKey = (file: string) =>
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file])

async function selfSigned(dir: string, name: string, cn: string): Promise<void> {
  await newKey(path.join(dir, `${name}.key`))
  await openssl([
    'req',
    '-x509',
    '-new',
    '-sha256',
    '-key',
    path.join(dir, `${name}.key`),
    '-days',
    '3650',
    '-subj',
    `/O=bfs Test/CN=${cn}`,
    '-out',
    path.join(dir, `${name}.crt`),
  ])
}

/** A certificate for `key` (made first) signed by the CA `ca` (ca.crt/ca.key in dir), with the usage `extensions` of openssl.cnf. */
async function signed(
  dir: string,
  ca: string,
  cert: string,
  key: string,
  cn: string,
  extensions: string,
): Promise<void> {
  await newKey(key)
  const csr = `${cert}.csr`
  await openssl(['req', '-new', '-sha256', '-subj', `/O=bfs Test/CN=${cn}`, '-key', key, '-out', csr])
  await openssl([
    'x509',
    '-req',
    '-sha256',
    '-in',
    csr,
    '-CA',
    path.join(dir, `${ca}.crt`),
    '-CAkey',
    path.join(dir, `${ca}.key`),
    '-CAcreateserial',
    '-CAserial',
    path.join(dir, `${ca}.srl`),
    '-days',
    '365',
    '-extfile',
    path.join(dir, 'openssl.cnf'),
    '-extensions',
    extensions,
    '-out',
    cert,
  ])
}

/** Makes every certificate in a new temporary directory. */
export async function makeTestCerts(): Promise<TestCerts> {
  const dir = makeTempDir('bfs-tls-')
  writeFileSync(
    path.join(dir, 'openssl.cnf'),
    '[ server_cert ]\nkeyUsage = digitalSignature, keyEncipherment\nextendedKeyUsage = serverAuth\nsubjectAltName = IP:127.0.0.1, DNS:localhost\n' +
      '[ client_cert ]\nkeyUsage = digitalSignature, keyEncipherment\nextendedKeyUsage = clientAuth\n' +
      '[ generic_cert ]\nsubjectAltName = IP:127.0.0.1, DNS:localhost\n',
  )
  const at = (name: string) => path.join(dir, name)
  await selfSigned(dir, 'ca', 'Certificate Authority')
  await selfSigned(dir, 'other-ca', 'Untrusted Authority')
  await signed(dir, 'ca', at('server.crt'), at('server.key'), 'Server-only', 'server_cert')
  await signed(dir, 'ca', at('client.crt'), at('client.key'), 'Client-only', 'client_cert')
  await signed(dir, 'ca', at('generic.crt'), at('generic.key'), 'Generic-cert', 'generic_cert')
  await signed(dir, 'other-ca', at('untrusted.crt'), at('untrusted.key'), 'Untrusted', 'client_cert')
  return {
    dir,
    caCert: at('ca.crt'),
    serverCert: at('server.crt'),
    serverKey: at('server.key'),
    clientCert: at('client.crt'),
    clientKey: at('client.key'),
    genericCert: at('generic.crt'),
    genericKey: at('generic.key'),
    untrustedCert: at('untrusted.crt'),
    untrustedKey: at('untrusted.key'),
    renewServer: (cert, key, cn) => signed(dir, 'ca', cert, key, cn, 'server_cert'),
    remove: () => removeTempDir(dir),
  }
}

/** A server's TLS keys with these certificates, and a TLS port on a free port. */
export function serverTlsConfig(certs: TestCerts, extra: Partial<Config> = {}): Partial<Config> {
  return {
    'tls-port': -1,
    'tls-cert-file': certs.serverCert,
    'tls-key-file': certs.serverKey,
    'tls-ca-cert-file': certs.caCert,
    ...extra,
  }
}

/** A client's TLS options: trusts the test CA, shows the client certificate. */
export function clientTlsOptions(certs: TestCerts): tls.ConnectionOptions {
  return { ca: readFileSync(certs.caCert), cert: readFileSync(certs.clientCert), key: readFileSync(certs.clientKey) }
}
