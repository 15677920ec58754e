/**
 * Membership by pull (docs/CLUSTER.md): every {@link PULL_INTERVAL_MS} this node asks every known
 * peer, and every address met but not yet identified, for its CLUSTER NODES over ordinary RESP
 * (one request in flight per peer, each with a timeout), merges the reply (cluster-merge.ts), and
 * sends `CLUSTER MEET <self>` to a peer whose reply does not list it. Then failures are marked and
 * the cluster's state updated (cluster-health.ts). No bus, no election.
 */
import type { ClusterState } from './cluster-state.js'
import { PeerLink } from './peer-link.js'
import { clusterLinkTls } from '../runtime/tls-context.js'
import { mergeNodes } from './cluster-merge.js'
import { parseNodeLines } from './nodes-line.js'
import { markFailures, updateState } from './cluster-health.js'

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
      const config = this.state.host.config
      link = new PeerLink(
        host,
        port,
        () => {
          if (config.masterauth === '') return undefined
          return config.masteruser === '' ? [config.masterauth] : [config.masteruser, config.masterauth]
        },
        () => clusterLinkTls(config),
      )
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
    link.request(['CLUSTER', 'NODES'], REQUEST_TIMEOUT_MS).then((reply) => {
      if (typeof reply !== 'string') throw new Error(`CLUSTER NODES: ${JSON.stringify(reply)}`)
      state.learnMyIp(link.localAddress)
      const result = mergeNodes(state, host, port, parseNodeLines(reply))
      if (result.sender === undefined) state.pendingMeets.delete(`${host}:${port}`)
      else if (!result.listsMe) this.meetBack(link)
      updateState(state)
    }).catch(() => {
      const node = state.nodeByAddress(host, port)
      if (node !== undefined) node.linkConnected = false
    })
    return `${host}:${port}`
  }

  /** Asks a peer that does not know this node to meet it (it then pulls this node too). */
  private meetBack(link: PeerLink): void {
    const myself = this.state.myself
    const ip = myself.ip || link.localAddress
    link.request(['CLUSTER', 'MEET', ip, String(myself.port), String(myself.cport)], REQUEST_TIMEOUT_MS).catch(() => {})
  }
}
