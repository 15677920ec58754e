/**
 * Cluster mode's configuration keys (redis 7.0's names, defaults and units), their rows spread
 * into config.ts's table: docs/reference/configuration.md and bfs.conf.example list them there.
 */
import type { ConfigRow } from './config-row.js'

/** Cluster mode's keys of Config. */
export interface ClusterConfig {
  /** Cluster mode (redis `cluster-enabled`; start-time only): slots, MOVED/ASK, CLUSTER, database 0 only. */
  'cluster-enabled': boolean
  /** The cluster state file, relative to `dir` (redis nodes.conf format). */
  'cluster-config-file': string
  /** Milliseconds a peer may stay silent before it is `fail?` (redis `cluster-node-timeout`). */
  'cluster-node-timeout': number
  /** The address and ports this node gives its peers and clients; ''/0 = found / its own. */
  'cluster-announce-ip': string
  'cluster-announce-port': number
  /** Under tls-cluster: the TLS port announced (then cluster-announce-port is the plaintext one). */
  'cluster-announce-tls-port': number
  'cluster-announce-bus-port': number
  /** The cluster is down (-CLUSTERDOWN) while any slot is unowned or owned by a failed node. */
  'cluster-require-full-coverage': boolean
  /** While the cluster is down, read commands are still served. */
  'cluster-allow-reads-when-down': boolean
}

type ClusterKey = keyof ClusterConfig

/** Their rows, in bfs.conf.example's order. */
export const CLUSTER_CONFIG_ROWS = {
  'cluster-enabled': {
    kind: { type: 'boolean' },
    default: false,
    mutable: false,
    description:
      'cluster mode: hash slots, MOVED/ASK redirections, the CLUSTER commands, database 0 only (docs/CLUSTER.md)',
  },
  'cluster-config-file': {
    kind: { type: 'string' },
    default: 'nodes.conf',
    mutable: false,
    description: "file in dir where a cluster node keeps its id, epochs and slot map (Redis's nodes.conf format)",
  },
  'cluster-node-timeout': {
    kind: { type: 'integer', min: 1, max: Number.MAX_SAFE_INTEGER },
    default: 15000,
    unit: 'milliseconds',
    mutable: true,
    description: 'milliseconds a cluster peer may not answer before it is flagged fail?',
  },
  'cluster-announce-ip': {
    kind: { type: 'string', emptyIsNone: true },
    default: '',
    mutable: true,
    description: 'address a cluster node gives its peers and clients, "" = the one they reach it at',
  },
  'cluster-announce-port': {
    kind: { type: 'integer', min: 0, max: 65535 },
    default: 0,
    mutable: true,
    description: 'port a cluster node gives its peers and clients, 0 = its own port',
  },
  'cluster-announce-tls-port': {
    kind: { type: 'integer', min: 0, max: 65535 },
    default: 0,
    mutable: true,
    description:
      'under tls-cluster, the TLS port a cluster node gives its peers and clients (cluster-announce-port is then the plaintext one), 0 = its own',
  },
  'cluster-announce-bus-port': {
    kind: { type: 'integer', min: 0, max: 65535 },
    default: 0,
    mutable: true,
    description: 'bus port a cluster node prints in CLUSTER NODES (bfs has no bus), 0 = port + 10000',
  },
  'cluster-require-full-coverage': {
    kind: { type: 'boolean' },
    default: true,
    mutable: true,
    description: 'the cluster refuses keys (-CLUSTERDOWN) while a slot is unowned or its owner failed',
  },
  'cluster-allow-reads-when-down': {
    kind: { type: 'boolean' },
    default: false,
    mutable: true,
    description: 'while the cluster is down, read commands are still served',
  },
} satisfies { readonly [K in ClusterKey]: ConfigRow<ClusterConfig[K]> }
