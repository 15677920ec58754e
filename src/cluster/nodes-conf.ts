/**
 * CLUSTER NODES' text and nodes.conf, which is the same lines plus `vars currentEpoch N
 * lastVoteEpoch M` (redis 7.0 cluster.c clusterGenNodesDescription, clusterSaveConfig,
 * clusterLoadConfig). A restarted node reads back its id, its epochs, every node and the slot map.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { replaceFileSync, TEMP_SUFFIX } from '../store/durable-file.js'
import { ClusterNode } from './cluster-node.js'
import type { ClusterState } from './cluster-state.js'
import { parseNodeLines } from './nodes-line.js'
import { rangeToken, slotRanges } from './slot-ranges.js'

/** One node's line (redis clusterGenNodeDescription), without its newline. */
export function describeNode(state: ClusterState, node: ClusterNode): string {
  const myself = node === state.myself
  const link = myself || node.linkConnected ? 'connected' : 'disconnected'
  let line = `${node.id} ${node.ip}:${node.port}@${node.cport} ${node.flags(myself)} ${node.masterId ?? '-'} ` +
    `${node.pingSentMs} ${node.pongReceivedMs} ${state.printedEpoch(node)} ${link}`
  if (node.slotCount > 0) {
    for (const range of slotRanges((slot) => state.owns(node, slot))) line += ` ${rangeToken(range)}`
  }
  if (myself) {
    const open = [...state.migratingTo.keys(), ...state.importingFrom.keys()].sort((a, b) => a - b)
    for (const slot of open) {
      const to = state.migratingTo.get(slot)
      line += to !== undefined ? ` [${slot}->-${to.id}]` : ` [${slot}-<-${state.importingFrom.get(slot)!.id}]`
    }
  }
  return line
}

/** CLUSTER NODES: every node's line, each ended by "\n". */
export function describeNodes(state: ClusterState): string {
  let text = ''
  for (const node of state.nodes.values()) text += describeNode(state, node) + '\n'
  return text
}

/**
 * Writes nodes.conf atomically (a temp file renamed over it); `durable` also fsyncs the file and
 * its directory, as redis clusterSaveConfig(do_fsync) does for epoch changes and SAVECONFIG (a
 * reshard changes it 5 times a slot: an fsync each would make it crawl).
 */
export function saveNodesConf(file: string, state: ClusterState, durable: boolean): void {
  let text = ''
  for (const node of state.nodes.values()) {
    const line = describeNode(state, node)
    // nodes.conf keeps no live failure flags of peers: they are found again after a restart.
    text += (node === state.myself ? line : line.replace(/,fail\?|,fail/g, '')) + '\n'
  }
  text += `vars currentEpoch ${state.currentEpoch} lastVoteEpoch ${state.lastVoteEpoch}\n`
  if (durable) {
    replaceFileSync(file, [Buffer.from(text, 'utf8')], file + TEMP_SUFFIX)
    return
  }
  writeFileSync(file + TEMP_SUFFIX, text)
  renameSync(file + TEMP_SUFFIX, file)
}

/**
 * Reads nodes.conf into `state` (nodes, myself, slot owners, open slots, epochs). Returns false
 * when there is no file or it names no `myself`.
 * @throws Error on a file that cannot be read
 */
export function loadNodesConf(file: string, state: ClusterState): boolean {
  if (!existsSync(file)) return false
  const text = readFileSync(file, 'utf8')
  const lines = parseNodeLines(text)
  const mine = lines.find((line) => line.myself)
  if (mine === undefined) return false
  for (const line of lines) {
    const node = new ClusterNode(line.id, line.ip, line.port, line.cport)
    node.role = line.role
    node.masterId = line.masterId
    node.configEpoch = line.configEpoch
    state.nodes.set(node.id, node)
    if (line.myself) state.myself = node
  }
  for (const line of lines) {
    const node = state.nodes.get(line.id)!
    for (const token of line.slots) {
      if (token.kind === 'range') for (let slot = token.start; slot <= token.end; slot++) state.setSlotOwner(slot, node)
      else if (line.myself) {
        const peer = state.nodes.get(token.nodeId)
        if (peer !== undefined) (token.kind === 'migrating' ? state.migratingTo : state.importingFrom).set(token.slot, peer)
      }
    }
  }
  // A replica's printed epoch is its master's: its own is not in the file (redis neither keeps it).
  for (const node of state.nodes.values()) if (!node.isMaster) node.configEpoch = 0
  const vars = /^vars (.*)$/m.exec(text)?.[1]?.split(' ') ?? []
  for (let i = 0; i + 1 < vars.length; i += 2) {
    if (vars[i] === 'currentEpoch') state.currentEpoch = Number(vars[i + 1]) || 0
    if (vars[i] === 'lastVoteEpoch') state.lastVoteEpoch = Number(vars[i + 1]) || 0
  }
  return true
}
