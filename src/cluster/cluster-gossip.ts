/**
 * Membership by pull (docs/CLUSTER.md): every {@link PULL_INTERVAL_MS} this node asks every known
 * peer, and every address met but not yet identified, for its CLUSTER NODES over ordinary RESP
 * (one request in flight per peer, each with a timeout), merges the reply (cluster-merge.ts), and
 * sends `CLUSTER MEET <self>` to a peer whose reply does not list it. Then failures are marked and
 * the cluster's state updated (cluster-health.ts). No bus, no election. Under tls-cluster the
 * links are TLS, so CLUSTER NODES gives TLS ports; the peer's plaintext port (redis 7.0 pport,
 * which redis's bus pings carry) is then read from its CLUSTER SHARDS entry for itself.
 */
import type { ClusterState } from './cluster-state.js'
import { clusterPeerLink, type PeerLink } from './peer-link.js'
import { mergeNodes } from './cluster-merge.js'
import { parseNodeLines } from './nodes-line.js'
import { markFailures, updateState } from './cluster-health.js'
import type { ClusterNode } from './cluster-node.js'
import type { RespValue } from '../protocol/reply-reader.js'

/** How often the peers are pulled (redis's bus pings a few nodes every 100 ms). */
export const PULL_INTERVAL_MS = 200
/** The longest a peer may take to answer one request. */
export const REQUEST_TIMEOUT_MS = 1000

export class ClusterGossip {
  private timer: NodeJS.Timeout | undefined
  private readonly links = new Map<string, PeerLink>()

  constructor(private readonly state: ClusterState) {}

  start(): void {
    updateState(this.state)
    this.timer = setInterval(() => this.round(Date.now()), PULL_INTERVAL_MS)
    this.timer.unref()
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
    for (const link of this.links.values()) link.close()
    this.links.clear()
  }

  /** One round: pull every peer and pending address, then failures and state. */
  round(nowMs: number): void {
    const state = this.state
    for (const [id, untilMs] of state.blacklist) if (untilMs <= nowMs) state.blacklist.delete(id)
    const wanted = new Set<string>()
    for (const node of state.nodes.values()) {
      if (node === state.myself || node.port === 0 || node.ip === '') continue
      wanted.add(this.pull(node.ip, node.port, nowMs))
    }
    const pendingLimit = Math.max(state.host.config['cluster-node-timeout'], REQUEST_TIMEOUT_MS)
    for (const [address, meet] of state.pendingMeets) {
      if (nowMs - meet.sinceMs > pendingLimit) state.pendingMeets.delete(address)
      else wanted.add(this.pull(meet.host, meet.port, nowMs))
    }
    for (const [address, link] of this.links) {
      if (wanted.has(address)) continue
      link.close()
      this.links.delete(address)
    }
    markFailures(state, nowMs)
    updateState(state)
  }

  private linkTo(host: string, port: number): PeerLink {
    const address = `${host}:${port}`
    let link = this.links.get(address)
    if (link === undefined) {
      link = clusterPeerLink(host, port, this.state.host.config)
      this.links.set(address, link)
    }
    return link
  }

  /** Sends CLUSTER NODES to host:port unless a request is under way; returns the address. */
  private pull(host: string, port: number, nowMs: number): string {
    const link = this.linkTo(host, port)
    if (link.busy) return `${host}:${port}`
    const state = this.state
    const known = state.nodeByAddress(host, port)
    if (known !== undefined && known.pingSentMs === 0) known.pingSentMs = nowMs
    link
      .request(['CLUSTER', 'NODES'], REQUEST_TIMEOUT_MS)
      .then((reply) => {
        if (typeof reply !== 'string') throw new Error(`CLUSTER NODES: ${JSON.stringify(reply)}`)
        state.learnMyIp(link.localAddress)
        const result = mergeNodes(state, host, port, parseNodeLines(reply))
        if (result.sender === undefined) state.pendingMeets.delete(`${host}:${port}`)
        else if (!result.listsMe) this.meetBack(link)
        updateState(state)
        if (result.sender !== undefined && state.host.config['tls-cluster'])
          return this.pullPlaintextPort(link, result.sender)
      })
      .catch(() => {
        const node = state.nodeByAddress(host, port)
        if (node !== undefined) node.linkConnected = false
      })
    return `${host}:${port}`
  }

  /** Under tls-cluster: the peer's plaintext port, from its own entry in its CLUSTER SHARDS (0: none). */
  private async pullPlaintextPort(link: PeerLink, sender: ClusterNode): Promise<void> {
    const reply = await link.requestValue(['CLUSTER', 'SHARDS'], REQUEST_TIMEOUT_MS)
    const entry = shardEntries(reply).find((fields) => fields.get('id') === sender.id)
    if (entry === undefined) return
    const pport = Number(entry.get('port') ?? 0)
    if (Number.isInteger(pport) && pport >= 0 && pport <= 65535) sender.pport = pport
  }

  /** Asks a peer that does not know this node to meet it (it then pulls this node too). */
  private meetBack(link: PeerLink): void {
    const myself = this.state.myself
    const ip = myself.ip || link.localAddress
    link.request(['CLUSTER', 'MEET', ip, String(myself.port), String(myself.cport)], REQUEST_TIMEOUT_MS).catch(() => {})
  }
}

/** The nodes of a CLUSTER SHARDS reply (RESP2: maps as flat arrays), each as its fields' text. */
function shardEntries(reply: RespValue): Map<string, string>[] {
  const entries: Map<string, string>[] = []
  if (!Array.isArray(reply)) return entries
  for (const shard of reply) {
    const nodes = Array.isArray(shard) ? fieldOf(shard, 'nodes') : undefined
    if (!Array.isArray(nodes)) continue
    for (const node of nodes) {
      if (!Array.isArray(node)) continue
      const fields = new Map<string, string>()
      for (let i = 0; i + 1 < node.length; i += 2) fields.set(String(node[i]), String(node[i + 1]))
      entries.push(fields)
    }
  }
  return entries
}

function fieldOf(map: RespValue[], name: string): RespValue | undefined {
  for (let i = 0; i + 1 < map.length; i += 2) if (String(map[i]) === name) return map[i + 1]
  return undefined
}
