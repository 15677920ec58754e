/**
 * One node of the cluster as this node knows it (redis 7.0 cluster.h clusterNode): its id, the
 * address clients and peers reach it at, its role and master, its config epoch, and what this node
 * saw of it (pings, replies, failure flags, other masters' failure reports).
 */

/** redis CLUSTER_NAMELEN: a node id is 40 hex characters. */
export const NODE_ID_LENGTH = 40

export type NodeRole = 'master' | 'replica'

export class ClusterNode {
  ip: string
  port: number
  /**
   * Its plaintext client port under tls-cluster, where `port` is its TLS port (redis 7.0 pport);
   * 0 when it has none or it is not known yet. Learned from the node itself (cluster-gossip.ts),
   * never saved: redis 7.0's nodes.conf has no field for it either.
   */
  pport = 0
  /** The bus port it announces (bfs has no bus: printed for the tools, never connected to). */
  cport: number
  role: NodeRole = 'master'
  /** Its master's id, while it is a replica. */
  masterId: string | undefined
  configEpoch = 0
  /** Hash slots it owns, kept by ClusterState (redis numslots). */
  slotCount = 0
  /** When this node's last request to it went out unanswered (0: none pending); ms. */
  pingSentMs = 0
  /** When it last answered; ms (redis pong_received). */
  pongReceivedMs = 0
  /** Whether the last request reached it (CLUSTER NODES' link state). */
  linkConnected = false
  /** Unreachable from here for cluster-node-timeout (redis PFAIL, printed `fail?`). */
  pfail = false
  /** Agreed unreachable by a majority of masters (redis FAIL, printed `fail`). */
  fail = false
  /** When it was marked `fail`; ms. */
  failSinceMs = 0
  /** Masters that reported it `fail?`/`fail` in their CLUSTER NODES, with when; ms. */
  readonly failReports = new Map<string, number>()

  constructor(
    public id: string,
    ip: string,
    port: number,
    cport: number,
    /** When it became known; ms (the grace before a first reply is due). */
    readonly addedMs = Date.now(),
  ) {
    this.ip = ip
    this.port = port
    this.cport = cport
  }

  get isMaster(): boolean {
    return this.role === 'master'
  }

  /** redis representClusterNodeFlags order: myself, master|slave, fail?, fail. */
  flags(myself: boolean): string {
    const flags: string[] = []
    if (myself) flags.push('myself')
    flags.push(this.isMaster ? 'master' : 'slave')
    if (this.pfail) flags.push('fail?')
    if (this.fail) flags.push('fail')
    return flags.join(',')
  }
}

/** Whether `text` is a node id: 40 lower-case hex characters. */
export function isNodeId(text: string): boolean {
  return text.length === NODE_ID_LENGTH && /^[0-9a-f]+$/.test(text)
}
