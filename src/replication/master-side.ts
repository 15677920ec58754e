/**
 * The master's side of replication (redis replication.c, master half): the replicas attached to
 * this node and their handshakes, PSYNC's choice between +CONTINUE and a full sync, the backlog,
 * the stream of propagated writes (`SELECT 0` first after a full sync or a new backlog), the
 * periodic `ping`, timeouts, keep-alives and the backlog's ttl (redis replicationCron), and WAIT.
 *
 * It is fed by persistence's propagate ({@link MasterSide.feedRecord}, only on a master: a
 * replica's stream is its master's bytes, fed verbatim by the replica side), and its commands
 * (REPLCONF, PSYNC, SYNC, WAIT: commands/replication/replication.ts) call it with the client's connection.
 */
import type { Databases } from '../store/databases.js'
import type { Logger } from '../runtime/logger.js'
import type { OutputBufferLimits } from '../runtime/config.js'
import { CommandArgs } from '../protocol/command-args.js'
import { commandSize, encodeCommand, writeCommand } from '../protocol/command-encoder.js'
import { newReplid, type ReplicationState } from './replication-state.js'
import { Backlog } from './backlog.js'
import { AttachedReplica, nowSeconds, type PeerConnection } from './replica-peer.js'
import { FullSync, captureFor, type RegistryCapture } from './full-sync.js'
import { WaitList } from './wait-list.js'
import { ERR } from '../protocol/error-texts.js'

/** `SELECT db` as a client sends it (redis replicationFeedSlaves' selectcmd). */
function selectRecord(db: number): Buffer {
  return encodeCommand(['SELECT', db])
}
/** The room kept for encoding a record of the stream, and the most kept after a larger one. */
const SCRATCH_BYTES = 4096
const SCRATCH_KEEP_BYTES = 64 * 1024
/** redis shared.ping as replicationCron feeds it: lower case, 14 bytes. */
const PING = encodeCommand(['ping'])

/** The configuration keys the master side reads (the server's Config, read live). */
export interface MasterConfig {
  readonly dir: string
  readonly 'client-output-buffer-limit': OutputBufferLimits
  readonly 'repl-backlog-size': number
  readonly 'repl-backlog-ttl': number
  readonly 'repl-diskless-sync': boolean
  readonly 'repl-diskless-sync-delay': number
  readonly 'repl-ping-replica-period': number
  readonly 'repl-timeout': number
  readonly 'min-replicas-to-write': number
  readonly 'min-replicas-max-lag': number
}

/** INFO stats' sync counters (runtime/stats.ts). */
export interface SyncCounters {
  syncFull: number
  syncPartialOk: number
  syncPartialErr: number
}

export interface MasterSideOptions {
  readonly replication: ReplicationState
  readonly databases: Databases
  readonly config: MasterConfig
  readonly log: Logger
  readonly stats: SyncCounters
}

/** What PSYNC asked for (SYNC asks for nothing: always a full sync). */
export interface PsyncRequest {
  readonly replid: string
  readonly offset: number
}

export class MasterSide {
  /** redis repl_backlog: created when the first replica attaches, freed after repl-backlog-ttl without any. */
  private heldBacklog: Backlog | undefined
  /** The replicas, in the order they attached (redis server.slaves). */
  private readonly replicas = new Map<PeerConnection, AttachedReplica>()
  /** What clients said with REPLCONF before they asked for a sync. */
  private readonly handshakes = new WeakMap<PeerConnection, AttachedReplica>()
  /**
   * redis server.slaveseldb: the database of the last record the stream carried; -1 (a new
   * stream, a full sync, SLAVEOF NO ONE): the next record of a database goes after its SELECT.
   */
  private selectedDb = -1
  private fullSync: FullSync | undefined
  /** Full-sync captures taken: each a point the replicas' stream restarts from (restore-part.ts reads it). */
  syncCaptures = 0
  /**
   * Whether a full sync must wait (the cron asks again each second): set by commands/migration/restore-part.ts
   * at its first staging, true while a transfer in parts is staging here, so that the payload is
   * taken once it committed.
   */
  holdSync: (() => boolean) | undefined = undefined
  private detachBacklog: (() => void) | undefined
  private cronLoops = 0
  private scratch = Buffer.allocUnsafe(SCRATCH_BYTES)
  private noReplicasSinceSeconds = nowSeconds()
  readonly waits: WaitList
  /**
   * Why this node cannot serve a SYNC now (the replica side sets it: `-NOMASTERLINK ...` while
   * its own link is down), or undefined.
   */
  syncRefusal: () => string | undefined = () => undefined
  /** REPLCONF GETACK from our master's link (`client`): the replica side sets it to send its ACK at once. */
  onGetack: (client: unknown) => void = () => {}

  constructor(private readonly options: MasterSideOptions) {
    this.waits = new WaitList({
      count: (offset) => this.countAcks(offset),
      requestAcks: () => this.feedGetack(),
    })
  }

  /** The backlog, holding every byte of the stream so far (what was staged this turn included). */
  get backlog(): Backlog | undefined {
    this.replication.drain()
    return this.heldBacklog
  }

  private get replication(): ReplicationState {
    return this.options.replication
  }

  /** Whether propagated records go into the stream: on a master, once a backlog exists. */
  get wantsRecords(): boolean {
    return this.heldBacklog !== undefined && this.replication.role === 'master'
  }

  /**
   * One propagated record of database `db` (persistence's propagate; -1: of none),
   * encoded as the RESP array a client sends, after a `SELECT db` when the stream's last
   * database was another (redis replicationFeedSlaves).
   */
  feedRecord(argv: CommandArgs | readonly Uint8Array[], db: number, encoded?: Buffer, start = 0, end = 0): void {
    if (db >= 0 && db !== this.selectedDb) {
      this.selectedDb = db
      this.replication.stage(selectRecord(db))
    }
    if (encoded !== undefined) this.replication.stage(encoded, start, end)
    else this.stageEncoded(argv)
  }

  /** Stages a record encoded in {@link scratch}, reused (staging copies it). */
  private stageEncoded(argv: CommandArgs | readonly Uint8Array[]): void {
    const args = argv instanceof CommandArgs ? argv : CommandArgs.of(argv)
    const size = commandSize(args)
    if (size > this.scratch.length) this.scratch = Buffer.allocUnsafe(Math.max(size, this.scratch.length * 2))
    writeCommand(args, this.scratch, 0)
    this.replication.stage(this.scratch, 0, size)
    // A large record's room is not kept.
    if (this.scratch.length > SCRATCH_KEEP_BYTES) this.scratch = Buffer.allocUnsafe(SCRATCH_BYTES)
  }

  /** redis slaveseldb = -1 (SLAVEOF NO ONE, a full sync): the next record of a database is preceded by its SELECT. */
  requestSelect(): void {
    this.selectedDb = -1
  }

  /** The REPLCONF state of a client, made on first use. */
  handshake(peer: PeerConnection): AttachedReplica {
    let replica = this.replicas.get(peer) ?? this.handshakes.get(peer)
    if (replica === undefined) {
      replica = new AttachedReplica(
        peer,
        () => this.options.config['client-output-buffer-limit'].replica,
        this.options.log,
      )
      this.handshakes.set(peer, replica)
    }
    return replica
  }

  /** The replica attached on this connection, if it is one. */
  replicaOf(peer: PeerConnection): AttachedReplica | undefined {
    return this.replicas.get(peer)
  }

  /**
   * SYNC / PSYNC (redis syncCommand) once the command's own checks passed: +CONTINUE and the
   * backlog when the history matches, a full sync otherwise.
   */
  sync(peer: PeerConnection, request: PsyncRequest | undefined): void {
    const replica = this.handshake(peer)
    this.options.log.notice(`Replica ${replica.label} asks for synchronization`)
    const stats = this.options.stats
    if (request !== undefined) {
      replica.preSync = false
      if (this.tryContinue(replica, request)) {
        stats.syncPartialOk++
        return
      }
      if (request.replid !== '?') stats.syncPartialErr++
    } else {
      replica.preSync = true
    }
    stats.syncFull++
    this.attach(replica)
    replica.waitingStart = true
    replica.askedAtSeconds = nowSeconds()
    if (this.replicas.size === 1 && this.backlog === undefined) {
      this.replication.replid = newReplid()
      this.replication.clearId2()
      this.createBacklog()
      this.options.log.notice(
        `Replication backlog created, my new replication IDs are '${this.replication.replid}' and '${this.replication.replid2}'`,
      )
    }
    const config = this.options.config
    if (this.fullSync !== undefined) {
      this.options.log.notice('Current BGSAVE has socket target. Waiting for next BGSAVE for SYNC')
    } else if (config['repl-diskless-sync'] && replica.capaEof && config['repl-diskless-sync-delay'] > 0) {
      this.options.log.notice('Delay next BGSAVE for diskless SYNC')
    } else {
      this.startPendingSync(true)
    }
  }

  private attach(replica: AttachedReplica): void {
    replica.peer.kind = 'replica'
    this.handshakes.delete(replica.peer)
    this.replicas.set(replica.peer, replica)
  }

  /** redis masterTryPartialResynchronization. */
  private tryContinue(replica: AttachedReplica, request: PsyncRequest): boolean {
    const state = this.replication
    const log = this.options.log
    const { replid, offset } = request
    if (replid !== state.replid && (replid !== state.replid2 || offset > state.secondReplOffset)) {
      if (replid === '?') log.notice(`Full resync requested by replica ${replica.label}`)
      else if (replid !== state.replid && replid !== state.replid2) {
        log.notice(
          `Partial resynchronization not accepted: Replication ID mismatch (Replica asked for '${replid}', my replication IDs are '${state.replid}' and '${state.replid2}')`,
        )
      } else {
        log.notice(
          `Partial resynchronization not accepted: Requested offset for second ID was ${offset}, but I can reply up to ${state.secondReplOffset}`,
        )
      }
      return false
    }
    const backlog = this.backlog
    if (backlog === undefined || !backlog.holds(offset)) {
      log.notice(
        `Unable to partial resync with replica ${replica.label} for lack of backlog (Replica request was: ${offset}).`,
      )
      if (offset > state.masterReplOffset)
        log.warning(
          `Warning: replica ${replica.label} tried to PSYNC with an offset that is greater than the master replication offset.`,
        )
      return false
    }
    this.attach(replica)
    replica.waitingStart = false
    replica.state = 'online'
    replica.ackTimeSeconds = nowSeconds()
    replica.peer.writeRaw(Buffer.from(replica.capaPsync2 ? `+CONTINUE ${state.replid}\r\n` : '+CONTINUE\r\n'))
    const history = backlog.from(offset)
    replica.peer.writeRaw(history)
    replica.follow((sink) => this.replication.attach(sink))
    replica.startStreaming()
    log.notice(
      `Partial resynchronization request from ${replica.label} accepted. Sending ${history.length} bytes of backlog starting from offset ${offset}.`,
    )
    return true
  }

  /**
   * redis shouldStartChildReplication + startBgsaveForReplication: starts a full sync for the
   * replicas waiting for one (those asking alike), when none runs and, diskless, once the first
   * has waited repl-diskless-sync-delay seconds (`now`: at once).
   */
  private startPendingSync(now: boolean): void {
    if (this.fullSync !== undefined || this.holdSync?.() === true) return
    const waiting = [...this.replicas.values()].filter(
      (replica) => replica.waitingStart && replica.peer.state === 'open',
    )
    if (waiting.length === 0) return
    const excludeData = waiting[0]!.excludeData
    const group = waiting.filter((replica) => replica.excludeData === excludeData)
    const config = this.options.config
    const maxIdle = Math.max(...group.map((replica) => nowSeconds() - replica.askedAtSeconds))
    if (!now && config['repl-diskless-sync'] && maxIdle < config['repl-diskless-sync-delay']) return
    const diskless = (config['repl-diskless-sync'] || excludeData) && group.every((replica) => replica.capaEof)
    this.options.log.notice(`Starting BGSAVE for SYNC with target: ${diskless ? 'replicas sockets' : 'disk'}`)
    let capture: RegistryCapture
    try {
      capture = captureFor(this.options.databases, excludeData)
    } catch (error) {
      this.refuseSync(group, error)
      return
    }
    this.syncCaptures++
    const offset = this.replication.masterReplOffset
    this.selectedDb = -1
    for (const replica of group) {
      replica.waitingStart = false
      if (!replica.preSync) replica.peer.writeRaw(Buffer.from(`+FULLRESYNC ${this.replication.replid} ${offset}\r\n`))
      if (!replica.rdbOnly) replica.follow((sink) => this.replication.attach(sink))
    }
    this.fullSync = new FullSync({
      replicas: group,
      diskless,
      capture,
      dir: config.dir,
      log: this.options.log,
      onSent: (replica, streamed) => this.putOnline(replica, streamed),
      onFinished: () => {
        this.fullSync = undefined
        this.startPendingSync(false)
      },
    })
    this.fullSync.start()
  }

  /**
   * redis startBgsaveForReplication when the save cannot start: the waiting replicas get an error
   * and are closed after it (a filter the payload cannot carry: they retry, and fail alike until
   * it is gone).
   */
  private refuseSync(group: AttachedReplica[], error: unknown): void {
    this.options.log.warning(`BGSAVE for replication failed: ${(error as Error).message}`)
    for (const replica of group) {
      this.replicas.delete(replica.peer)
      replica.detach()
      replica.peer.kind = 'normal'
      replica.peer.reply.error(ERR.BGSAVE_FAILED_FOR_REPLICATION)
      replica.peer.closeAfterReply()
      replica.peer.flush()
    }
    if (this.replicas.size === 0) this.noReplicasSinceSeconds = nowSeconds()
  }

  /** redis replicaPutOnline (+ replicaStartCommandStream for a disk sync). */
  private putOnline(replica: AttachedReplica, diskless: boolean): void {
    if (replica.rdbOnly) {
      this.options.log.notice(`RDB transfer completed, rdb only replica (${replica.label}) should be disconnected asap`)
      replica.peer.closeAfterReply()
      replica.peer.flush()
      return
    }
    replica.state = 'online'
    replica.ackTimeSeconds = nowSeconds()
    this.options.log.notice(`Synchronization with replica ${replica.label} succeeded`)
    if (diskless) replica.streamOnAck = true
    else replica.startStreaming()
  }

  /** REPLCONF ACK <offset> from a replica (no reply); ignored from anyone else. */
  ack(peer: PeerConnection, offset: number): void {
    const replica = this.replicas.get(peer)
    if (replica === undefined) return
    if (offset > replica.ackOffset) replica.ackOffset = offset
    replica.ackTimeSeconds = nowSeconds()
    if (replica.streamOnAck && replica.state === 'online') replica.startStreaming()
    this.waits.process()
  }

  /** redis replicationCountAcksByOffset: online replicas whose ACK reached `offset`. */
  countAcks(offset: number): number {
    let count = 0
    for (const replica of this.replicas.values()) if (replica.state === 'online' && replica.ackOffset >= offset) count++
    return count
  }

  /** redis sendGetackToReplicas (beforeSleep): one `REPLCONF GETACK *` for every WAIT blocked this turn. */
  private feedGetack(): void {
    if (this.wantsRecords) this.replication.feed(GETACK)
  }

  /** A connection closed: a replica stops taking the stream, a blocked WAIT is forgotten. */
  peerGone(peer: PeerConnection): void {
    this.waits.forget(peer)
    const replica = this.replicas.get(peer)
    if (replica === undefined) return
    replica.detach()
    this.replicas.delete(peer)
    this.options.log.notice(`Connection with replica ${replica.label} lost.`)
    if (this.replicas.size === 0) this.noReplicasSinceSeconds = nowSeconds()
  }

  /** Closes every replica's connection (redis disconnectSlaves: they reconnect and resync). */
  disconnectReplicas(): void {
    for (const replica of [...this.replicas.values()]) replica.close()
  }

  /** A backlog from the current offset on (redis createReplicationBacklog); the replica side calls it after a full sync. */
  createBacklog(): void {
    this.freeBacklog()
    const backlog = new Backlog(this.options.config['repl-backlog-size'], this.replication.masterReplOffset + 1)
    this.heldBacklog = backlog
    this.detachBacklog = this.replication.attach((bytes) => backlog.append(bytes))
    this.selectedDb = -1
  }

  /** redis freeReplicationBacklog. */
  freeBacklog(): void {
    this.detachBacklog?.()
    this.detachBacklog = undefined
    this.heldBacklog = undefined
  }

  /** The replicas, in order (INFO's slaveN lines, ROLE). */
  attached(): Iterable<AttachedReplica> {
    return this.replicas.values()
  }

  /** ROLE's replica list on a master (redis roleCommand): the online replicas' address, listening port and acknowledged offset. */
  onlineReplicas(): { ip: string; port: number; offset: number }[] {
    const list: { ip: string; port: number; offset: number }[] = []
    for (const replica of this.replicas.values()) {
      if (replica.state === 'online')
        list.push({ ip: replica.ip, port: replica.listeningPort, offset: replica.ackOffset })
    }
    return list
  }

  get replicaCount(): number {
    return this.replicas.size
  }

  /** redis repl_good_slaves_count: online replicas whose last ACK is at most min-replicas-max-lag seconds old. */
  goodReplicaCount(): number {
    const maxLag = this.options.config['min-replicas-max-lag']
    const now = nowSeconds()
    let count = 0
    for (const replica of this.replicas.values())
      if (replica.state === 'online' && now - replica.ackTimeSeconds <= maxLag) count++
    return count
  }

  /** Once a second (the server's cron): redis replicationCron's master half. */
  cron(): void {
    const config = this.options.config
    const now = nowSeconds()
    if (
      this.replication.role === 'master' &&
      this.replicas.size > 0 &&
      this.wantsRecords &&
      this.cronLoops % config['repl-ping-replica-period'] === 0
    ) {
      this.replication.feed(PING)
    }
    for (const replica of [...this.replicas.values()]) this.cronReplica(replica, now)
    this.cronBacklog(now)
    this.startPendingSync(false)
    this.cronLoops++
  }

  /** Keep-alives before the payload, the ACK timeout, the output limit's soft seconds. */
  private cronReplica(replica: AttachedReplica, now: number): void {
    const presync =
      replica.waitingStart ||
      (replica.state === 'wait_bgsave' &&
        this.fullSync !== undefined &&
        !this.fullSync.diskless &&
        this.fullSync.has(replica))
    if (presync) replica.peer.writeRaw(NEWLINE)
    const timeout = this.options.config['repl-timeout']
    if (replica.state === 'online' && !replica.preSync && now - replica.ackTimeSeconds > timeout) {
      this.options.log.warning(`Disconnecting timedout replica (streaming sync): ${replica.label}`)
      replica.close()
      return
    }
    // A diskless payload no byte of which left for repl-timeout: the replica is stuck, and the
    // others of its sync wait for it (redis repl_last_partial_write).
    if (this.fullSync?.diskless === true && this.fullSync.has(replica) && replica.payloadStalled(now) > timeout) {
      this.options.log.warning(`Disconnecting timedout replica (full sync): ${replica.label}`)
      replica.close()
      return
    }
    replica.checkLimit()
  }

  /** The backlog follows repl-backlog-size, and is freed after repl-backlog-ttl seconds without replicas (on a master). */
  private cronBacklog(now: number): void {
    const backlog = this.backlog
    if (backlog === undefined) return
    const config = this.options.config
    if (backlog.size !== config['repl-backlog-size']) backlog.resize(config['repl-backlog-size'])
    const ttl = config['repl-backlog-ttl']
    if (this.replicas.size > 0 || ttl === 0 || this.replication.role !== 'master') return
    if (now - this.noReplicasSinceSeconds > ttl) {
      this.replication.replid = newReplid()
      this.replication.clearId2()
      this.freeBacklog()
      this.options.log.notice(`Replication backlog freed after ${ttl} seconds without connected replicas.`)
    }
  }

  /**
   * Unblocks every client blocked in WAIT with the error `text` and closes it after the reply
   * (redis disconnectAllBlockedClients, when this node becomes a replica): {@link UNBLOCKED_TEXT}.
   */
  unblockAll(text: string): void {
    this.waits.failAll(text)
  }
}

const GETACK = encodeCommand(['REPLCONF', 'GETACK', '*'])
const NEWLINE = Buffer.from('\n')
