/**
 * Failure detection and the cluster's state, from what the pulls saw (redis 7.0 cluster.c
 * clusterCron, markNodeAsFailingIfNeeded, clusterUpdateState): a peer that has not answered for
 * cluster-node-timeout is `fail?`; it is `fail` once a majority of the masters that own slots
 * report it so (their CLUSTER NODES lines); the state is `fail` when a slot is unowned or owned by
 * a `fail` node (with cluster-require-full-coverage) or when this node reaches fewer than a
 * majority of those masters.
 */
import { CLUSTER_SLOTS } from '../core/key-slot.js'
import type { ClusterNode } from './cluster-node.js'
import type { ClusterState } from './cluster-state.js'

/** redis CLUSTER_FAIL_REPORT_VALIDITY_MULT: a failure report counts for twice the node timeout. */
const REPORT_VALIDITY_MULT = 2

/** Failure reports about `node` still valid at `nowMs` (redis clusterNodeFailureReportsCount). */
export function failureReportCount(state: ClusterState, node: ClusterNode, nowMs = Date.now()): number {
  const validity = state.host.config['cluster-node-timeout'] * REPORT_VALIDITY_MULT
  let count = 0
  for (const [reporter, atMs] of node.failReports) {
    if (nowMs - atMs > validity || !state.nodes.has(reporter)) node.failReports.delete(reporter)
    else count++
  }
  return count
}

/** Marks peers silent for the node timeout `fail?`, and `fail` when a majority agrees. */
export function markFailures(state: ClusterState, nowMs: number): void {
  const timeout = state.host.config['cluster-node-timeout']
  for (const node of state.nodes.values()) {
    if (node === state.myself) continue
    const lastHeard = Math.max(node.pongReceivedMs, node.addedMs)
    if (!node.pfail && !node.fail && nowMs - lastHeard > timeout) {
      node.pfail = true
      state.host.log.notice(`*** NODE ${node.id} possibly failing`)
    }
    if (node.pfail && !node.fail) markFailingIfNeeded(state, node, nowMs)
  }
}

/** redis markNodeAsFailingIfNeeded: reports of masters, myself included when a master, reach the quorum. */
function markFailingIfNeeded(state: ClusterState, node: ClusterNode, nowMs: number): void {
  const quorum = Math.floor(state.size / 2) + 1
  const failures = failureReportCount(state, node, nowMs) + (state.myself.isMaster ? 1 : 0)
  if (failures < quorum) return
  node.pfail = false
  node.fail = true
  node.failSinceMs = nowMs
  state.host.log.notice(`Marking node ${node.id} as failing (quorum reached).`)
  state.changed()
}

/** redis clusterUpdateState, without its rejoin delays: cluster_size, then ok or fail. */
export function updateState(state: ClusterState): void {
  let failed = false
  if (state.host.config['cluster-require-full-coverage']) {
    for (let slot = 0; slot < CLUSTER_SLOTS && !failed; slot++) {
      const owner = state.slotOwner(slot)
      failed = owner === undefined || owner.fail
    }
  }
  let size = 0
  let reachable = 0
  for (const node of state.nodes.values()) {
    if (!node.isMaster || node.slotCount === 0) continue
    size++
    if (!node.fail && !node.pfail) reachable++
  }
  state.size = size
  if (reachable < Math.floor(size / 2) + 1) failed = true
  const next = failed ? 'fail' : 'ok'
  if (next !== state.state) {
    state.host.log.warning(`Cluster state changed: ${next}`)
    state.state = next
    state.servingChanged?.()
  }
}
