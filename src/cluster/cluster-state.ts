/**
 * What this node knows of the cluster (redis 7.0 cluster.h clusterState): the nodes by id, the
 * owner of each of the 16384 hash slots, the slots this node is migrating or importing, the
 * current epoch, the FORGET blacklist and the addresses met but not yet identified. Every change
 * is saved to nodes.conf (nodes-conf.ts) before the replies of the turn go out, as redis's
 * clusterBeforeSleep does. Peers are learned and failures marked by pulling CLUSTER NODES
 * (cluster-gossip.ts, cluster-merge.ts, cluster-health.ts): docs/CLUSTER.md.
 */
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { CLUSTER_SLOTS } from '../core/key-slot.js'
import type { Config } from '../runtime/config.js'
import type { Logger } from '../runtime/logger.js'
import type { ReplicaLink } from '../replication/replica-link.js'
import type { ReplicationState } from '../replication/replication-state.js'
import { ClusterNode } from './cluster-node.js'
import { loadNodesConf, saveNodesConf, type NodesView } from './nodes-conf.js'
import { ERR, unknownNodeText } from '../protocol/error-texts.js'

/** redis CLUSTER_BLACKLIST_TTL: a forgotten node is not re-added for 60 s. */
export const BLACKLIST_TTL_MS = 60_000

/** What the cluster state needs of the server it runs in. */
export interface ClusterHost {
  readonly config: Config
  readonly log: Logger
  readonly replicaLink: ReplicaLink
  readonly replication: ReplicationState
  /** Keys held in database 0 (REPLICATE and RESET refuse a master that holds any). */
  keyCount(): number
  /** Keys of database 0 in `slot` (SETSLOT NODE refuses to give away a slot that has some). */
  countKeysInSlot(slot: number): number
  /** The port clients and peers reach this node at (the bound one; the TLS one under tls-cluster). */
  listeningPort(): number
  /** Under tls-cluster, the plaintext port beside the TLS one (0: none). */
  plaintextPort?(): number
  /** Empties the data (CLUSTER RESET of a replica, redis emptyData). */
  emptyData(): void
  /** A slot this node's shard served went to another (or none): its shard channels' subscribers are let go. */
  shardSlotLeft?(slot: number): void
}

/** An address met (CLUSTER MEET) whose node is not identified yet (redis's handshake node). */
export interface PendingMeet {
  readonly host: string
  readonly port: number
  readonly cport: number
  readonly sinceMs: number
}

/** A new random node id (redis getRandomHexChars over CLUSTER_NAMELEN). */
export function newNodeId(): string {
  return randomBytes(20).toString('hex')
}

/** Slots and the node each is migrating to or importing from: every change is told (see {@link ClusterState.servingChanged}). */
class OpenSlots extends Map<number, ClusterNode> {
  constructor(private readonly changed: () => void) {
    super()
  }

  override set(slot: number, node: ClusterNode): this {
    super.set(slot, node)
    this.changed()
    return this
  }

  override delete(slot: number): boolean {
    if (!super.delete(slot)) return false
    this.changed()
    return true
  }

  override clear(): void {
    if (this.size === 0) return
    super.clear()
    this.changed()
  }
}

export class ClusterState implements NodesView {
  readonly nodes = new Map<string, ClusterNode>()
  myself!: ClusterNode
  currentEpoch = 0
  lastVoteEpoch = 0
  /**
   * Told, before the change can show in a reply, whenever the slots this node serves at once
   * ({@link servesAtOnce}, {@link servesReadsAtOnce}) may have changed: an owner, a migration or an
   * import, the master it replicates, the state. The I/O threads answer keys of those slots only
   * (server/thread-plane.ts).
   */
  servingChanged: (() => void) | undefined = undefined
  /** Slots this node (their owner) is giving to another master (SETSLOT MIGRATING). */
  readonly migratingTo: Map<number, ClusterNode> = new OpenSlots(() => this.servingChanged?.())
  /** Slots this node is receiving from their owner (SETSLOT IMPORTING). */
  readonly importingFrom: Map<number, ClusterNode> = new OpenSlots(() => this.servingChanged?.())
  /** Forgotten node ids, with when they may come back; ms. */
  readonly blacklist = new Map<string, number>()
  /** Addresses met by CLUSTER MEET whose node id is not known yet, by "host:port". */
  readonly pendingMeets = new Map<string, PendingMeet>()
  /** redis cluster->state: 'ok' serves keys; 'fail' answers -CLUSTERDOWN. */
  state: 'ok' | 'fail' = 'fail'
  /** Masters that own at least one slot (CLUSTER INFO cluster_size). */
  size = 0
  private readonly owners: (ClusterNode | undefined)[] = new Array<ClusterNode | undefined>(CLUSTER_SLOTS).fill(
    undefined,
  )
  private saveScheduled = false
  private saveDurably = false
  readonly file: string

  constructor(readonly host: ClusterHost) {
    this.file = path.resolve(host.config.dir, host.config['cluster-config-file'])
    const loaded = loadNodesConf(this.file, this)
    if (loaded) host.log.notice(`Node configuration loaded, I'm ${this.myself!.id}`)
    else {
      this.myself = new ClusterNode(newNodeId(), '', 0, 0)
      this.nodes.set(this.myself.id, this.myself)
      host.log.notice(`No cluster configuration found, I'm ${this.myself.id}`)
    }
    this.refreshMyAddress()
    this.saveConfig()
  }

  /**
   * Myself's announced address (redis 7.0 deriveAnnouncedPorts): the bound port (the TLS one under
   * tls-cluster, the plaintext one then its pport) unless cluster-announce-tls-port (under
   * tls-cluster: it and cluster-announce-port as the pport) or cluster-announce-port says
   * otherwise; cluster-announce-bus-port, else the port + 10000.
   */
  refreshMyAddress(): void {
    const config = this.host.config
    const tlsCluster = config['tls-cluster']
    let port = this.host.listeningPort() || this.myself.port
    let pport = tlsCluster ? (this.host.plaintextPort?.() ?? 0) : 0
    if (tlsCluster && config['cluster-announce-tls-port'] !== 0) {
      port = config['cluster-announce-tls-port']
      pport = config['cluster-announce-port']
    } else if (config['cluster-announce-port'] !== 0) {
      port = config['cluster-announce-port']
    }
    if (config['cluster-announce-ip'] !== '') this.myself.ip = config['cluster-announce-ip']
    this.myself.port = port
    this.myself.pport = pport
    this.myself.cport = config['cluster-announce-bus-port'] || (port === 0 ? 0 : port + 10000)
  }

  /** Takes `ip` as myself's address when none is known yet (the address a peer reached us at). */
  learnMyIp(ip: string): void {
    if (this.myself.ip !== '' || ip === '') return
    this.myself.ip = ip.startsWith('::ffff:') ? ip.slice(7) : ip
    this.changed()
  }

  /**
   * The port to give a client for `node` (redis 7.0 use_pport): under tls-cluster a plaintext
   * client gets the node's plaintext port when it has one, a TLS client (and any other) its TLS port.
   */
  clientPort(node: ClusterNode, tlsClient: boolean): number {
    return this.host.config['tls-cluster'] && !tlsClient && node.pport !== 0 ? node.pport : node.port
  }

  nodeById(id: string): ClusterNode | undefined {
    return this.nodes.get(id)
  }

  nodeByAddress(host: string, port: number): ClusterNode | undefined {
    for (const node of this.nodes.values()) if (node.ip === host && node.port === port) return node
    return undefined
  }

  masters(): ClusterNode[] {
    return [...this.nodes.values()].filter((node) => node.isMaster)
  }

  /** The replicas of `master`, as this node knows them. */
  replicasOf(master: ClusterNode): ClusterNode[] {
    return [...this.nodes.values()].filter((node) => !node.isMaster && node.masterId === master.id)
  }

  /** The master this node replicates, when it is a replica of a known node. */
  myMaster(): ClusterNode | undefined {
    return this.myself.masterId === undefined ? undefined : this.nodes.get(this.myself.masterId)
  }

  slotOwner(slot: number): ClusterNode | undefined {
    return this.owners[slot]
  }

  /**
   * Gives `slot` to `node` (undefined: unassigned), keeping each node's slot count. A slot taken
   * from this node's shard (itself or the master it replicates) lets its shard channels'
   * subscribers go (redis clusterDelSlot).
   */
  setSlotOwner(slot: number, node: ClusterNode | undefined): void {
    const previous = this.owners[slot]
    if (previous === node) return
    if (previous !== undefined) previous.slotCount--
    if (node !== undefined) node.slotCount++
    this.owners[slot] = node
    if (previous !== undefined && (previous === this.myself || previous.id === this.myself.masterId))
      this.host.shardSlotLeft?.(slot)
    const master = this.myself.masterId
    if (
      previous === this.myself ||
      node === this.myself ||
      (master !== undefined && (previous?.id === master || node?.id === master))
    )
      this.servingChanged?.()
  }

  /** Whether `node` owns `slot`. */
  owns(node: ClusterNode, slot: number): boolean {
    return this.owners[slot] === node
  }

  /**
   * Whether a command of one key in `slot` is served here whoever sends it (no MOVED, ASK,
   * TRYAGAIN or CLUSTERDOWN whatever the key and the client): the cluster is ok and myself owns the
   * slot, neither migrating nor importing it.
   */
  servesAtOnce(slot: number): boolean {
    return (
      this.state === 'ok' &&
      this.owners[slot] === this.myself &&
      (this.migratingTo.size === 0 || !this.migratingTo.has(slot)) &&
      (this.importingFrom.size === 0 || !this.importingFrom.has(slot))
    )
  }

  /**
   * Whether a read of one key in `slot` from a READONLY connection is served here at once: myself
   * is a replica of the slot's owner and the cluster is ok (cluster-routing.ts redirection).
   */
  servesReadsAtOnce(slot: number): boolean {
    const master = this.myself.masterId
    return this.state === 'ok' && !this.myself.isMaster && master !== undefined && this.owners[slot]?.id === master
  }

  /** The node's config epoch as CLUSTER NODES prints it: a replica's is its master's. */
  printedEpoch(node: ClusterNode): number {
    const master = node.isMaster || node.masterId === undefined ? undefined : this.nodes.get(node.masterId)
    return master?.configEpoch ?? node.configEpoch
  }

  /** Adds a node learned from a peer, unless it is blacklisted; returns it (or the one already known). */
  addNode(id: string, ip: string, port: number, cport: number, nowMs = Date.now()): ClusterNode | undefined {
    const known = this.nodes.get(id)
    if (known !== undefined) return known
    if ((this.blacklist.get(id) ?? 0) > nowMs) return undefined
    const node = new ClusterNode(id, ip, port, cport, nowMs)
    this.nodes.set(id, node)
    this.changed()
    return node
  }

  /** CLUSTER FORGET (redis clusterBlacklistAddNode + clusterDelNode). */
  forget(node: ClusterNode, nowMs = Date.now()): void {
    this.blacklist.set(node.id, nowMs + BLACKLIST_TTL_MS)
    this.deleteNode(node)
  }

  /** redis clusterDelNode: its slots unassigned, open slots towards it closed, its reports dropped. */
  deleteNode(node: ClusterNode): void {
    for (let slot = 0; slot < CLUSTER_SLOTS; slot++) if (this.owners[slot] === node) this.setSlotOwner(slot, undefined)
    for (const [slot, peer] of this.migratingTo) if (peer === node) this.migratingTo.delete(slot)
    for (const [slot, peer] of this.importingFrom) if (peer === node) this.importingFrom.delete(slot)
    for (const other of this.nodes.values()) other.failReports.delete(node.id)
    this.nodes.delete(node.id)
    this.changed()
  }

  /** The largest config epoch known (redis clusterGetMaxEpoch), the current epoch included. */
  maxEpoch(): number {
    let max = this.currentEpoch
    for (const node of this.nodes.values()) max = Math.max(max, node.configEpoch)
    return max
  }

  /**
   * redis clusterBumpConfigEpochWithoutConsensus: a new epoch for myself unless it already has the
   * largest one. Returns whether it bumped.
   */
  bumpEpochWithoutConsensus(): boolean {
    if (this.myself.configEpoch !== 0 && this.myself.configEpoch === this.maxEpoch()) return false
    this.currentEpoch++
    this.myself.configEpoch = this.currentEpoch
    this.host.log.warning(`New configEpoch set to ${this.myself.configEpoch}`)
    this.changed(true)
    return true
  }

  /**
   * redis clusterSetMaster: myself (with no slots) becomes a replica of `master`, and the
   * replication link follows it.
   */
  setMaster(master: ClusterNode): void {
    if (this.myself.isMaster) {
      this.myself.role = 'replica'
      this.migratingTo.clear()
      this.importingFrom.clear()
    }
    this.myself.masterId = master.id
    this.servingChanged?.()
    this.host.replicaLink.setMaster(master.ip, master.port)
    this.changed(true)
  }

  /**
   * CLUSTER REPLICATE's checks and change (redis 7.0 cluster.c): undefined when myself now
   * replicates `nodeId`, else redis's error text.
   */
  replicate(nodeId: string): string | undefined {
    const node = this.nodes.get(nodeId)
    if (node === undefined) return unknownNodeText(nodeId)
    if (node === this.myself) return ERR.REPLICATE_MYSELF
    if (!node.isMaster) return ERR.REPLICATE_A_REPLICA
    if (this.myself.isMaster && (this.myself.slotCount !== 0 || this.host.keyCount() !== 0)) {
      return ERR.REPLICATE_NOT_EMPTY
    }
    this.setMaster(node)
    return undefined
  }

  /**
   * redis clusterFailoverReplaceYourMaster: myself, a replica, becomes a master with a new config
   * epoch and claims every slot of its former master. Returns false when myself is a master.
   */
  takeOver(): boolean {
    const master = this.myMaster()
    if (this.myself.isMaster) return false
    this.myself.role = 'master'
    this.myself.masterId = undefined
    this.host.replicaLink.unsetMaster()
    this.currentEpoch = Math.max(this.currentEpoch, this.maxEpoch()) + 1
    this.myself.configEpoch = this.currentEpoch
    if (master !== undefined) {
      for (let slot = 0; slot < CLUSTER_SLOTS; slot++)
        if (this.owners[slot] === master) this.setSlotOwner(slot, this.myself)
    }
    this.host.log.warning(
      `Took over the slots of ${master?.id ?? 'my unknown master'}, configEpoch ${this.myself.configEpoch}`,
    )
    this.changed(true)
    return true
  }

  /** A master that lost every slot to `winner` becomes its replica (redis clusterUpdateSlotsConfigWith). */
  followWinner(winner: ClusterNode): void {
    this.host.log.warning(`Configuration change detected. Reconfiguring myself as a replica of ${winner.id}`)
    this.setMaster(winner)
  }

  /**
   * CLUSTER RESET (redis clusterReset): a replica becomes an empty master; every slot and every
   * other node forgotten; HARD also zeroes the epochs and takes a new id.
   */
  reset(hard: boolean): void {
    if (!this.myself.isMaster) {
      this.myself.role = 'master'
      this.myself.masterId = undefined
      this.host.replicaLink.unsetMaster()
      this.host.emptyData()
    }
    this.migratingTo.clear()
    this.importingFrom.clear()
    for (let slot = 0; slot < CLUSTER_SLOTS; slot++) this.setSlotOwner(slot, undefined)
    for (const node of [...this.nodes.values()]) if (node !== this.myself) this.deleteNode(node)
    this.pendingMeets.clear()
    if (hard) {
      this.currentEpoch = 0
      this.lastVoteEpoch = 0
      this.myself.configEpoch = 0
      this.nodes.delete(this.myself.id)
      this.myself.id = newNodeId()
      this.nodes.set(this.myself.id, this.myself)
      this.host.log.notice(`Node hard reset, now I'm ${this.myself.id}`)
    }
    this.changed()
  }

  /**
   * A change to save: nodes.conf is written once, before this turn's replies (redis
   * CLUSTER_TODO_SAVE_CONFIG); fsynced too when `durable` (a new epoch: CLUSTER_TODO_FSYNC_CONFIG).
   */
  changed(durable = false): void {
    this.saveDurably ||= durable
    if (this.saveScheduled) return
    this.saveScheduled = true
    process.nextTick(() => {
      this.saveScheduled = false
      const fsync = this.saveDurably
      this.saveDurably = false
      try {
        saveNodesConf(this.file, this, fsync)
      } catch (error) {
        this.host.log.warning(`Could not save the cluster configuration: ${(error as Error).message}`)
      }
    })
  }

  /** Writes nodes.conf now, atomically and durably (CLUSTER SAVECONFIG). @throws on a failed write */
  saveConfig(): void {
    saveNodesConf(this.file, this, true)
  }

  /** Every slot owned by `node`, in order. */
  slotsOf(node: ClusterNode): number[] {
    const slots: number[] = []
    for (let slot = 0; slot < CLUSTER_SLOTS; slot++) if (this.owners[slot] === node) slots.push(slot)
    return slots
  }
}
