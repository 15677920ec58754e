/**
 * The TLS keys (redis 7.0's names, defaults and meanings: redis.conf and tls.c of 7.0.15): the
 * TLS port, the server's certificate and key, the CA that client certificates are checked
 * against, whether clients must present one, and the protocol, cipher and session settings.
 * Their rows are spread into config.ts's table after `bind`; runtime/tls-context.ts turns them
 * into Node's TLS options, and CONFIG SET of any of them (but the port) builds a new context
 * for new connections, or is refused with the old one kept.
 */
import type { ConfigRow } from './config-row.js'

/** tls-auth-clients: whether a client must present a certificate the CA signed. */
export type TlsAuthClients = 'yes' | 'no' | 'optional'

/** The TLS keys of Config. */
export interface TlsConfig {
  /** The TLS port (0: no TLS listener; -1: any free port). With it set, `port 0` means no plaintext listener, as in Redis. */
  'tls-port': number
  'tls-cert-file': string
  'tls-key-file': string
  'tls-key-file-pass': string
  /** The certificate and key bfs presents when it is the client (none: tls-cert-file's). */
  'tls-client-cert-file': string
  'tls-client-key-file': string
  'tls-client-key-file-pass': string
  'tls-dh-params-file': string
  /** The CA certificates peers' certificates are checked against (a file, a directory, or both); system CAs are never used. */
  'tls-ca-cert-file': string
  'tls-ca-cert-dir': string
  'tls-auth-clients': TlsAuthClients
  /** "TLSv1.2 TLSv1.3" by default (''). */
  'tls-protocols': string
  'tls-ciphers': string
  'tls-ciphersuites': string
  'tls-prefer-server-ciphers': boolean
  'tls-session-caching': boolean
  'tls-session-cache-size': number
  'tls-session-cache-timeout': number
  /** A replica connects to its master over TLS, and announces its TLS port. */
  'tls-replication': boolean
  /** The links between cluster nodes, and MIGRATE, use TLS (nodes known by their TLS port; a plaintext port may stand beside it). */
  'tls-cluster': boolean
}

type TlsKey = keyof TlsConfig

/** redis config.c: the session cache's size and timeout are 0..INT_MAX. */
const INT_MAX = 2_147_483_647

const file = (description: string) =>
  ({ kind: { type: 'string', emptyIsNone: true }, default: '', mutable: true, description }) as const

/** Their rows, in bfs.conf.example's order. */
export const TLS_CONFIG_ROWS = {
  'tls-port': {
    kind: { type: 'integer', min: -1, max: 65535 },
    default: 0,
    mutable: false,
    description:
      'TLS port on the bind addresses, 0 = no TLS, -1 = any free port; with it set, port 0 = no plaintext TCP listener (as Redis)',
  },
  'tls-cert-file': file(
    "the server's certificate (PEM), used by the TLS port and, without tls-client-cert-file, as the client certificate",
  ),
  'tls-key-file': file('the private key of tls-cert-file (PEM)'),
  'tls-key-file-pass': file('passphrase of tls-key-file, "" for none'),
  'tls-client-cert-file': file('certificate (PEM) bfs presents when it connects as a client, "" = tls-cert-file'),
  'tls-client-key-file': file('private key of tls-client-cert-file (PEM)'),
  'tls-client-key-file-pass': file('passphrase of tls-client-key-file, "" for none'),
  'tls-dh-params-file': file('DH parameters (PEM) for the DHE ciphers, "" = OpenSSL\'s automatic ones'),
  'tls-ca-cert-file': file(
    "CA certificate(s) (PEM) that peers' certificates must chain to; this or tls-ca-cert-dir is required unless tls-auth-clients is no (system CAs are never used)",
  ),
  'tls-ca-cert-dir': file('directory of CA certificates (PEM files), read as tls-ca-cert-file'),
  'tls-auth-clients': {
    kind: { type: 'enum', values: ['yes', 'no', 'optional'] },
    default: 'yes',
    mutable: true,
    description:
      'clients of the TLS port must present a certificate the CA signed (yes), may (optional: one presented must be valid) or need not (no); new connections',
  },
  'tls-protocols': {
    kind: { type: 'string', emptyIsNone: true, words: true },
    default: '',
    mutable: true,
    description: 'TLS versions allowed, among TLSv1 TLSv1.1 TLSv1.2 TLSv1.3, "" = "TLSv1.2 TLSv1.3"',
  },
  'tls-ciphers': file('TLSv1.2 and older cipher list (OpenSSL syntax), "" = Node\'s default'),
  'tls-ciphersuites': file('TLSv1.3 cipher suites (OpenSSL syntax), "" = Node\'s default'),
  'tls-prefer-server-ciphers': {
    kind: { type: 'boolean' },
    default: false,
    mutable: true,
    description: "the server's cipher order wins over the client's",
  },
  'tls-session-caching': {
    kind: { type: 'boolean' },
    default: true,
    mutable: true,
    description: 'TLS session resumption (through session tickets, as Node resumes sessions)',
  },
  'tls-session-cache-size': {
    kind: { type: 'integer', min: 0, max: INT_MAX },
    default: 20480,
    mutable: true,
    description: 'accepted for redis.conf; Node resumes sessions through tickets, which need no server-side cache',
  },
  'tls-session-cache-timeout': {
    kind: { type: 'integer', min: 0, max: INT_MAX },
    default: 300,
    unit: 'seconds',
    mutable: true,
    description: 'seconds a TLS session may be resumed for',
  },
  'tls-replication': {
    kind: { type: 'boolean' },
    default: false,
    mutable: true,
    description:
      "a replica connects to its master's TLS port over TLS (certificate: tls-client-cert-file, else tls-cert-file) and announces its own tls-port (REPLCONF listening-port); new links",
  },
  'tls-cluster': {
    kind: { type: 'boolean' },
    default: false,
    mutable: false,
    description:
      'the links between cluster nodes (the pull of CLUSTER NODES, CLUSTER MEET, manual failover) and MIGRATE use TLS; a cluster node with it has tls-replication yes and is known to its peers and nodes.conf by its TLS port; a plaintext port beside it is given to plaintext clients',
  },
} satisfies { readonly [K in TlsKey]: ConfigRow<TlsConfig[K]> }
