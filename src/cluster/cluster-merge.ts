/**
 * Merging a peer's CLUSTER NODES into this node's view: what redis's bus carries in a PING/PONG
 * header (the sender's own address, role, master, config epoch and slot bitmap) is read from the
 * peer's `myself` line only; its other lines are gossip: unknown ids are added, failure flags
 * count as failure reports. Slot claims follow redis 7.0 cluster.c clusterUpdateSlotsConfigWith:
 * a claim wins over an owner with a smaller config epoch (or none); equal epochs of two masters
 * are broken by the smaller id taking a new epoch (clusterHandleConfigEpochCollision).
 */
import { CLUSTER_SLOTS } from '../core/key-slot.js'
import type { ClusterNode } from './cluster-node.js'
import type { ClusterState } from './cluster-state.js'
import type { NodeLine } from './nodes-line.js'

/** What a merge found out about the reply. */
export interface MergeResult {
  /** The node that answered (its `myself` line), if the reply had one that is not blacklisted. */
  readonly sender: ClusterNode | undefined
  /** Whether the reply lists this node (if not, the puller sends it CLUSTER MEET). */
  readonly listsMe: boolean
}

/**
 * Merges `lines`, pulled from the peer reached at host:port, into `state`. The address the peer
 * was reached at stands in for its own when its line has none (a node that has not learned its ip).
 */
export function mergeNodes(
  state: ClusterState,
  host: string,
  port: number,
  lines: readonly NodeLine[],
  nowMs = Date.now(),
): MergeResult {
  const own = lines.find((line) => line.myself)
  if (own === undefined || own.id === state.myself.id) return { sender: undefined, listsMe: false }
  const sender = state.addNode(own.id, own.ip || host, own.port || port, own.cport, nowMs)
  state.pendingMeets.delete(`${host}:${port}`)
  if (sender === undefined) return { sender: undefined, listsMe: true }
  sender.pongReceivedMs = nowMs
  sender.pingSentMs = 0
  sender.linkConnected = true
  sender.pfail = false
  if (sender.fail) clearFailure(state, sender)
  applySenderLine(state, sender, own, host)
  for (const line of lines) if (!line.myself) mergeGossipLine(state, sender, line, nowMs)
  return { sender, listsMe: lines.some((line) => line.id === state.myself.id) }
}

/** A node answering again: its `fail` is cleared (redis clearNodeFailureIfNeeded, without its delay for masters). */
function clearFailure(state: ClusterState, node: ClusterNode): void {
  node.fail = false
  node.failSinceMs = 0
  node.failReports.clear()
  state.host.log.notice(`Clear FAIL state for node ${node.id}: is reachable again.`)
  state.changed()
}

/** The sender's own line: its address, role, master, epoch, and (a master's) slot claims. */
function applySenderLine(state: ClusterState, sender: ClusterNode, own: NodeLine, host: string): void {
  const ip = own.ip || host
  if (sender.ip !== ip || sender.port !== own.port || sender.cport !== own.cport) {
    sender.ip = ip
    sender.port = own.port
    sender.cport = own.cport
    state.changed()
  }
  if (own.role !== sender.role || own.masterId !== sender.masterId) {
    sender.role = own.role
    sender.masterId = own.role === 'replica' ? own.masterId : undefined
    state.changed()
  }
  if (own.role === 'replica') return
  if (own.configEpoch !== sender.configEpoch) {
    sender.configEpoch = own.configEpoch
    state.changed()
  }
  if (own.configEpoch > state.currentEpoch) {
    state.currentEpoch = own.configEpoch
    state.changed()
  }
  handleEpochCollision(state, sender)
  applyClaims(state, sender, own)
}

/** redis clusterHandleConfigEpochCollision: of two masters with one epoch, the smaller id takes a new one. */
function handleEpochCollision(state: ClusterState, sender: ClusterNode): void {
  const myself = state.myself
  if (sender.configEpoch !== myself.configEpoch || !sender.isMaster || !myself.isMaster) return
  if (sender.id <= myself.id) return
  state.currentEpoch++
  myself.configEpoch = state.currentEpoch
  state.host.log.verbose(
    `WARNING: configEpoch collision with node ${sender.id}. configEpoch set to ${myself.configEpoch}`,
  )
  state.changed(true)
}

/** The slots a `myself` line claims, as a bitmap. */
function claimedSlots(own: NodeLine): Uint8Array {
  const claimed = new Uint8Array(CLUSTER_SLOTS)
  for (const token of own.slots) if (token.kind === 'range') claimed.fill(1, token.start, token.end + 1)
  return claimed
}

/**
 * redis clusterUpdateSlotsConfigWith: each claimed slot goes to the sender when its owner has a
 * smaller epoch (or there is none) and this node is not importing it. A master (or the master of
 * a replica) left without slots follows the sender.
 */
function applyClaims(state: ClusterState, sender: ClusterNode, own: NodeLine): void {
  const myself = state.myself
  const current = myself.isMaster ? myself : state.myMaster()
  const claimed = claimedSlots(own)
  let lostOurs = false
  for (let slot = 0; slot < CLUSTER_SLOTS; slot++) {
    if (claimed[slot] === 0 || state.importingFrom.has(slot)) continue
    const owner = state.slotOwner(slot)
    if (owner === sender) continue
    if (owner !== undefined && owner.configEpoch >= sender.configEpoch) continue
    if (owner !== undefined && owner === current) lostOurs = true
    state.setSlotOwner(slot, sender)
    state.migratingTo.delete(slot)
    state.changed()
  }
  if (lostOurs && current !== undefined && current.slotCount === 0) {
    if (current === myself || !myself.isMaster) state.followWinner(sender)
  }
}

/**
 * Another line of the sender's reply: an unknown id is added (unless blacklisted); its failure
 * flags are the sender's failure report about it (a master's only, as redis counts them).
 */
function mergeGossipLine(state: ClusterState, sender: ClusterNode, line: NodeLine, nowMs: number): void {
  if (line.id === state.myself.id || line.handshake || line.noaddr) return
  let node = state.nodeById(line.id)
  if (node === undefined) {
    node = state.addNode(line.id, line.ip, line.port, line.cport, nowMs)
    if (node === undefined) return
    node.role = line.role
    node.masterId = line.masterId
    if (line.role === 'master') node.configEpoch = line.configEpoch
  }
  if (!sender.isMaster) return
  if (line.pfail || line.fail) node.failReports.set(sender.id, nowMs)
  else node.failReports.delete(sender.id)
  // redis's FAIL message: a master that says `fail` makes this node agree, unless it reaches the node itself.
  if (line.fail && !node.fail && node.pfail) {
    node.pfail = false
    node.fail = true
    node.failSinceMs = nowMs
    state.host.log.notice(`FAIL message received from ${sender.id} about ${node.id}`)
    state.changed()
  }
}
