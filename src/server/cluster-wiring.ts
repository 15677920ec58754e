/**
 * Cluster mode's part of the server (cluster-enabled yes): the state loaded from nodes.conf (or a
 * new node id) before the data, the slot index of database 0 on, and, once listening, myself's
 * address, the replication link of a replica (nodes.conf says whom it replicates) and the pull.
 */
import { ClusterState, type ClusterHost } from '../cluster/cluster-state.js'
import { ClusterGossip } from '../cluster/cluster-gossip.js'

export type { ClusterState, ClusterGossip }
import type { FilterRegistry } from '../store/registry.js'
import type { PubSubHub } from '../commands/state/pubsub-hub.js'

/** The state of a node in cluster mode; database 0's keys indexed by slot from now on. */
export function openClusterState(
  host: Pick<ClusterHost, 'config' | 'log' | 'replicaLink' | 'replication'> & {
    readonly port: number
    readonly tlsPort: number
    readonly pubsub: PubSubHub
  },
  registry: FilterRegistry,
): ClusterState {
  registry.indexSlots()
  return new ClusterState({
    config: host.config,
    log: host.log,
    replicaLink: host.replicaLink,
    replication: host.replication,
    // tls-cluster: peers and nodes.conf know a node by its TLS port; its plaintext port (if any) is its pport.
    listeningPort: () => (host.config['tls-cluster'] ? host.tlsPort : host.port),
    plaintextPort: () => (host.config['tls-cluster'] ? host.port : 0),
    keyCount: () => registry.size,
    countKeysInSlot: (slot) => registry.countKeysInSlot(slot),
    emptyData: () => void registry.clear(),
    shardSlotLeft: (slot) => host.pubsub.unsubscribeSlot(slot),
  })
}

/** Once listening: myself's port known, a replica's link to its master up, the pull started. */
export function startClusterGossip(state: ClusterState): ClusterGossip {
  state.refreshMyAddress()
  const master = state.myMaster()
  if (!state.myself.isMaster && master !== undefined)
    state.host.replicaLink.setMaster(master.ip, master.port, { atStart: true })
  state.changed()
  const gossip = new ClusterGossip(state)
  gossip.start()
  return gossip
}
