/**
 * CLUSTER NODES' text and nodes.conf, which is the same lines plus `vars currentEpoch N
 * lastVoteEpoch M` (redis 7.0 cluster.c clusterGenNodesDescription, clusterSaveConfig,
 * clusterLoadConfig). A restarted node reads back its id, its epochs, every node and the slot map.
 * Written against {@link NodesView}, what these lines read and set of the cluster's state:
 * `ClusterState` (cluster-state.ts) is one, and saves and loads itself through this file.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { replaceFileSync, TEMP_SUFFIX } from '../store/durable-file.js'
import { ClusterNode, isNodeId } from './cluster-node.js'
import { parseNodeLine, type NodeLine } from './nodes-line.js'
import { rangeToken, slotRanges } from './slot-ranges.js'

/** What CLUSTER NODES' lines and nodes.conf read and set of the cluster's state (ClusterState is one). */
export interface NodesView {
  readonly nodes: Map<string, ClusterNode>
  myself: ClusterNode
  currentEpoch: number
  lastVoteEpoch: number
  /** The open slots: to the node a slot moves to, from the node it comes from. */
  readonly migratingTo: Map<number, ClusterNode>
  readonly importingFrom: Map<number, ClusterNode>
  clientPort(node: ClusterNode, tlsClient: boolean): number
  printedEpoch(node: ClusterNode): number
  owns(node: ClusterNode, slot: number): boolean
  setSlotOwner(slot: number, node: ClusterNode | undefined): void
}

/** One node's line (redis clusterGenNodeDescription), without its newline. */
export function describeNode(state: NodesView, node: ClusterNode, tlsClient = true): string {
  const myself = node === state.myself
  const link = myself || node.linkConnected ? 'connected' : 'disconnected'
  let line =
    `${node.id} ${node.ip}:${state.clientPort(node, tlsClient)}@${node.cport} ${node.flags(myself)} ${node.masterId ?? '-'} ` +
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
export function describeNodes(state: NodesView, tlsClient = true): string {
  let text = ''
  for (const node of state.nodes.values()) text += describeNode(state, node, tlsClient) + '\n'
  return text
}

/**
 * Writes nodes.conf atomically (a temp file renamed over it); `durable` also fsyncs the file and
 * its directory, as redis clusterSaveConfig(do_fsync) does for epoch changes and SAVECONFIG (a
 * reshard changes it 5 times a slot: an fsync each would make it crawl). The temp file is this
 * node's own and is opened truncated, not exclusively: one left by a kill between its write and
 * its rename is simply written over, never a reason to fail a save or a start.
 */
export function saveNodesConf(file: string, state: NodesView, durable: boolean): void {
  let text = ''
  for (const node of state.nodes.values()) {
    const line = describeNode(state, node)
    // nodes.conf keeps no live failure flags of peers: they are found again after a restart.
    text += (node === state.myself ? line : line.replace(/,fail\?|,fail/g, '')) + '\n'
  }
  text += `vars currentEpoch ${state.currentEpoch} lastVoteEpoch ${state.lastVoteEpoch}\n`
  if (durable) {
    replaceFileSync(file, [Buffer.from(text, 'utf8')], file + TEMP_SUFFIX, 'w')
    return
  }
  writeFileSync(file + TEMP_SUFFIX, text)
  renameSync(file + TEMP_SUFFIX, file)
}

/** A nodes.conf that is there and not empty, but that no node could have written whole. */
export class CorruptNodesConfError extends Error {
  constructor(file: string, reason: string) {
    // redis clusterLoadConfig's words, then where and why.
    super(`Unrecoverable error: corrupted cluster config file. ${file}: ${reason}`)
  }
}

/** The flags redis 7.0 writes to or accepts from nodes.conf (clusterLoadConfig). */
const NODE_FLAGS = new Set([
  'myself',
  'master',
  'slave',
  'fail?',
  'fail',
  'handshake',
  'noaddr',
  'nofailover',
  'noflags',
])

/** Why one line of nodes.conf is no node line, or undefined when it is one. */
function nodeLineFault(text: string): string | undefined {
  const fields = text.trim().split(/\s+/)
  if (fields.length < 8) return `${fields.length} fields where a node line has at least 8`
  const unknown = fields[2]!.split(',').find((flag) => !NODE_FLAGS.has(flag))
  if (unknown !== undefined) return `unknown flag '${unknown}'`
  if (fields[3] !== '-' && !isNodeId(fields[3]!)) return `'${fields[3]}' is no master id`
  if (!fields.slice(4, 7).every((field) => /^\d+$/.test(field))) return 'a ping, pong or epoch field is no number'
  if (fields[7] !== 'connected' && fields[7] !== 'disconnected') return `link state '${fields[7]}'`
  return parseNodeLine(text) === undefined ? 'a bad node id, address or slot' : undefined
}

/**
 * The node lines and the epochs of nodes.conf's text. Every line must be one redis 7.0 would load
 * (clusterLoadConfig: any line it cannot parse, or no `myself`, is "corrupted cluster config
 * file"); blank lines are skipped.
 * @throws CorruptNodesConfError naming the line and what is wrong with it
 */
function parseNodesConf(file: string, text: string): { lines: NodeLine[]; vars: Map<string, number> } {
  const lines: NodeLine[] = []
  const vars = new Map<string, number>()
  const rows = text.split('\n')
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!.trim()
    if (row === '') continue
    const fault = (reason: string): CorruptNodesConfError => new CorruptNodesConfError(file, `line ${i + 1}: ${reason}`)
    const fields = row.split(/\s+/)
    if (fields[0] === 'vars') {
      // A cut line leaves a name without its value.
      if (fields.length % 2 === 0) throw fault('a vars line with a name and no value')
      for (let j = 1; j < fields.length; j += 2) {
        if (!/^\d+$/.test(fields[j + 1]!)) throw fault(`vars ${fields[j]} '${fields[j + 1]}' is no number`)
        vars.set(fields[j]!, Number(fields[j + 1]))
      }
      continue
    }
    const reason = nodeLineFault(row)
    if (reason !== undefined) throw fault(reason)
    const line = parseNodeLine(row)!
    if (line.myself && lines.some((seen) => seen.myself)) throw fault('a second myself line')
    lines.push(line)
  }
  if (!lines.some((line) => line.myself)) throw new CorruptNodesConfError(file, 'no myself line')
  return { lines, vars }
}

/**
 * Reads nodes.conf into `state` (nodes, myself, slot owners, open slots, epochs). Returns false
 * when there is no file or it is empty (a new node, as in redis 7.0).
 * @throws CorruptNodesConfError on a file not empty that is not whole (torn, cut, overwritten):
 *   the node must not start as a new one and write over it (redis refuses to start)
 * @throws Error on a file that cannot be read
 */
export function loadNodesConf(file: string, state: NodesView): boolean {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
  if (text.length === 0) return false
  const { lines, vars } = parseNodesConf(file, text)
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
        if (peer !== undefined)
          (token.kind === 'migrating' ? state.migratingTo : state.importingFrom).set(token.slot, peer)
      }
    }
  }
  // A replica's printed epoch is its master's: its own is not in the file (redis neither keeps it).
  for (const node of state.nodes.values()) if (!node.isMaster) node.configEpoch = 0
  // redis: a currentEpoch below a node's epoch (a hand edit) is raised to it.
  state.currentEpoch = Math.max(
    vars.get('currentEpoch') ?? 0,
    ...[...state.nodes.values()].map((node) => node.configEpoch),
  )
  state.lastVoteEpoch = vars.get('lastVoteEpoch') ?? 0
  return true
}
