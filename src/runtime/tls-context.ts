/**
 * The TLS keys (config-tls.ts) as Node's TLS options, checked as redis 7.0 tls.c tlsConfigure
 * checks them: a certificate and key are required, a CA too unless tls-auth-clients is no, the
 * protocols must be known words, and every file must load. Each file is read and tried on its
 * own, so that the error names the file and what is wrong with it; nothing is kept from a
 * configuration that fails (the caller keeps its old context). System CAs are never used: only
 * tls-ca-cert-file and the files of tls-ca-cert-dir are trusted.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import tls from 'node:tls'
import { constants } from 'node:crypto'
import type { Config } from './config.js'

/** A TLS configuration that cannot be used; the message is the log line (tls.c's words where it has them). */
export class TlsConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TlsConfigError'
  }
}

/** What a TLS listener is made and reconfigured with. */
export interface TlsServerSetup {
  readonly options: tls.TlsOptions
  /** tls-auth-clients optional: a certificate that was presented must be valid (checked after the handshake). */
  readonly optionalClientCert: boolean
}

const PROTOCOLS = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const
/** The OpenSSL option that turns each of {@link PROTOCOLS} off. */
const NO_PROTOCOL = [
  constants.SSL_OP_NO_TLSv1,
  constants.SSL_OP_NO_TLSv1_1,
  constants.SSL_OP_NO_TLSv1_2,
  constants.SSL_OP_NO_TLSv1_3,
]

/** Whether TLS is in use at all (redis: tls_port || tls_replication || tls_cluster). */
export function tlsEnabled(config: Config): boolean {
  return config['tls-port'] !== 0 || config['tls-replication'] || config['tls-cluster']
}

/** The TLS options of a link to another node under tls-cluster (gossip, MIGRATE), undefined without it. @throws TlsConfigError */
export function clusterLinkTls(config: Config): tls.ConnectionOptions | undefined {
  return config['tls-cluster'] ? tlsClientOptions(config) : undefined
}

/**
 * Checks every TLS setting `config` uses: the listener's (with a TLS port) and the client's (with
 * tls-replication), as redis tlsConfigure makes both contexts. @throws TlsConfigError
 */
export function checkTlsConfig(config: Config): TlsServerSetup | undefined {
  requireOwnCertificate(config)
  const setup = config['tls-port'] !== 0 ? tlsServerSetup(config) : undefined
  if (config['tls-replication'] || config['tls-cluster']) tlsClientOptions(config)
  return setup
}

/**
 * tls-protocols as Node's minimum and maximum version, and the versions between them that are
 * off (redis parseProtocolsConfig: any of the four words, any case; "" = TLSv1.2 and TLSv1.3).
 */
function protocolOptions(
  value: string,
): Pick<tls.SecureContextOptions, 'minVersion' | 'maxVersion'> & { secureOptions: number } {
  const words =
    value.trim() === ''
      ? ['tlsv1.2', 'tlsv1.3']
      : value
          .split(' ')
          .filter((word) => word !== '')
          .map((word) => word.toLowerCase())
  const wanted = new Set<number>()
  for (const word of words) {
    const index = PROTOCOLS.findIndex((name) => name.toLowerCase() === word)
    if (index < 0)
      throw new TlsConfigError(
        "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.",
      )
    wanted.add(index)
  }
  const low = Math.min(...wanted)
  const high = Math.max(...wanted)
  let secureOptions = 0
  for (let i = low; i <= high; i++) if (!wanted.has(i)) secureOptions |= NO_PROTOCOL[i]!
  return { minVersion: PROTOCOLS[low], maxVersion: PROTOCOLS[high], secureOptions }
}

/**
 * tls-ciphers and tls-ciphersuites as Node's one `ciphers` string. Node takes the TLSv1.3 suites
 * (TLS_*) and the older list from the same string and turns TLSv1.3 off when it holds none, so
 * the one not configured keeps Node's default part.
 */
function cipherString(ciphers: string, suites: string): string {
  const defaults = tls.DEFAULT_CIPHERS.split(':')
  const defaultSuites = defaults.filter((name) => name.startsWith('TLS_')).join(':')
  const defaultList = defaults.filter((name) => !name.startsWith('TLS_')).join(':')
  return `${suites === '' ? defaultSuites : suites}:${ciphers === '' ? defaultList : ciphers}`
}

function readPem(file: string, what: string): Buffer {
  try {
    return readFileSync(file)
  } catch (error) {
    throw new TlsConfigError(`Failed to load ${what}: ${file}: ${(error as Error).message}`)
  }
}

/** Tries one part of a context alone, so that a failure names its file. */
function tryContext(options: tls.SecureContextOptions, failure: string): void {
  try {
    tls.createSecureContext(options)
  } catch (error) {
    throw new TlsConfigError(`${failure}: ${(error as Error).message}`)
  }
}

/** The trusted CAs: tls-ca-cert-file, then each file of tls-ca-cert-dir (OpenSSL's CApath holds one certificate per file). */
function caCertificates(config: Config): Buffer[] | undefined {
  const ca: Buffer[] = []
  const file = config['tls-ca-cert-file']
  if (file !== '') ca.push(readPem(file, 'CA certificate(s) file'))
  const dir = config['tls-ca-cert-dir']
  if (dir !== '') {
    let names: string[]
    try {
      names = readdirSync(dir).sort()
    } catch (error) {
      throw new TlsConfigError(
        `Failed to configure CA certificate(s) file/directory: ${dir}: ${(error as Error).message}`,
      )
    }
    for (const name of names) {
      const at = path.join(dir, name)
      if (statSync(at, { throwIfNoEntry: false })?.isFile() === true) ca.push(readPem(at, 'CA certificate'))
    }
  }
  if (ca.length === 0) return undefined
  tryContext(
    { ca },
    `Failed to configure CA certificate(s) file/directory: ${[file, dir].filter((name) => name !== '').join(', ')}`,
  )
  return ca
}

/** A certificate and its key, each tried, then the pair (a key that is not the certificate's). */
function certificateAndKey(
  certFile: string,
  keyFile: string,
  passphrase: string,
): Pick<tls.SecureContextOptions, 'cert' | 'key' | 'passphrase'> {
  const cert = readPem(certFile, 'certificate')
  tryContext({ cert }, `Failed to load certificate: ${certFile}`)
  const key = readPem(keyFile, 'private key')
  const pass = passphrase === '' ? undefined : passphrase
  tryContext({ key, passphrase: pass }, `Failed to load private key: ${keyFile}`)
  tryContext({ cert, key, passphrase: pass }, `Failed to load private key: ${keyFile} (for ${certFile})`)
  return { cert, key, passphrase: pass }
}

/** The options both ends share: protocols, ciphers, the CA. */
function commonOptions(config: Config): tls.SecureContextOptions {
  const ca = caCertificates(config)
  const protocols = protocolOptions(config['tls-protocols'])
  const ciphers = cipherString(config['tls-ciphers'], config['tls-ciphersuites'])
  tryContext(
    { ciphers, minVersion: protocols.minVersion, maxVersion: protocols.maxVersion },
    'Failed to configure ciphers',
  )
  return { ...protocols, ciphers, ca }
}

/** redis tlsConfigure: a certificate and key are required whenever TLS is used, even by a replica alone. */
function requireOwnCertificate(config: Config): void {
  if (config['tls-cert-file'] === '') throw new TlsConfigError('No tls-cert-file configured!')
  if (config['tls-key-file'] === '') throw new TlsConfigError('No tls-key-file configured!')
}

/**
 * The TLS listener's options for `config`, every file read now.
 * @throws TlsConfigError
 */
export function tlsServerSetup(config: Config): TlsServerSetup {
  requireOwnCertificate(config)
  const auth = config['tls-auth-clients']
  if (
    (auth !== 'no' || config['tls-replication'] || config['tls-cluster']) &&
    config['tls-ca-cert-file'] === '' &&
    config['tls-ca-cert-dir'] === ''
  ) {
    throw new TlsConfigError(
      'Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!',
    )
  }
  const common = commonOptions(config)
  const own = certificateAndKey(config['tls-cert-file'], config['tls-key-file'], config['tls-key-file-pass'])
  const dhFile = config['tls-dh-params-file']
  const dhparam = dhFile === '' ? undefined : readPem(dhFile, 'DH params file')
  if (dhparam !== undefined) tryContext({ dhparam }, `Failed to load DH params file: ${dhFile}`)
  // Sessions resume through tickets (Node keeps no server-side session cache): off, no tickets.
  const secureOptions = common.secureOptions! | (config['tls-session-caching'] ? 0 : constants.SSL_OP_NO_TICKET)
  const options: tls.TlsOptions = {
    ...common,
    ...own,
    dhparam,
    secureOptions,
    honorCipherOrder: config['tls-prefer-server-ciphers'],
    sessionTimeout: config['tls-session-cache-timeout'],
    requestCert: auth !== 'no',
    rejectUnauthorized: auth === 'yes',
  }
  tryContext(options, 'Failed to configure TLS')
  return { options, optionalClientCert: auth === 'optional' }
}

/**
 * The HTTPS listener's options (http-tls): the server's certificate and key, the protocols and
 * ciphers; no client certificate is asked for (HTTP Basic authenticates, and a load balancer's
 * /healthz has none). @throws TlsConfigError
 */
export function tlsHttpsOptions(config: Config): tls.TlsOptions {
  requireOwnCertificate(config)
  const { ca: _ca, ...common } = commonOptions(config)
  const options = {
    ...common,
    ...certificateAndKey(config['tls-cert-file'], config['tls-key-file'], config['tls-key-file-pass']),
    honorCipherOrder: config['tls-prefer-server-ciphers'],
  }
  tryContext(options, 'Failed to configure TLS')
  return options
}

/**
 * The options bfs connects with as a TLS client (tls-client-cert-file, else tls-cert-file): the
 * peer's certificate must chain to the CA; its name is not checked, as redis does not.
 * @throws TlsConfigError
 */
export function tlsClientOptions(config: Config): tls.ConnectionOptions {
  requireOwnCertificate(config)
  if (config['tls-ca-cert-file'] === '' && config['tls-ca-cert-dir'] === '') {
    throw new TlsConfigError(
      'Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!',
    )
  }
  const common = commonOptions(config)
  const client = config['tls-client-cert-file'] !== '' && config['tls-client-key-file'] !== ''
  const own = client
    ? certificateAndKey(
        config['tls-client-cert-file'],
        config['tls-client-key-file'],
        config['tls-client-key-file-pass'],
      )
    : certificateAndKey(config['tls-cert-file'], config['tls-key-file'], config['tls-key-file-pass'])
  return { ...common, ...own, rejectUnauthorized: true, checkServerIdentity: () => undefined }
}
