/**
 * The replica's side of replication (redis replication.c, the replica's half): the link to its
 * master, from REPLICAOF (or config `replicaof`) to the applied write stream.
 *
 * States, as redis repl_state: 'none' (a master), 'connect' (to connect at the next cron),
 * 'connecting', 'handshake' (PING, AUTH, REPLCONF, PSYNC: handshake.ts), 'transfer' (a full
 * sync's payload: sync-transfer.ts), 'connected' (the write stream, applied command by command
 * through the server's dispatch in a session of kind 'master', each read's commands as a client's
 * read, each command's bytes then fed verbatim to this node's own stream: its backlog and
 * sub-replicas see the top master's bytes and offsets). `REPLCONF ACK <offset>` goes every second
 * and at once on `REPLCONF GETACK *`.
 * A link that drops is retried about every second, with `PSYNC <replid> <offset+1>` first.
 */
import net from 'node:net'
import tls from 'node:tls'
import { tlsClientOptions } from '../runtime/tls-context.js'
import { Handshake, type HandshakeOutcome } from './handshake.js'
import { SyncTransfer } from './sync-transfer.js'
import { MasterStreamReader, type StreamCommand } from './master-stream.js'
import type { MasterSession, ReplicaLinkHost, PayloadDecoder } from './replica-host.js'
import { encodeCommand } from '../protocol/command-encoder.js'
import { ERR } from '../protocol/error-texts.js'

export type LinkState = 'none' | 'connect' | 'connecting' | 'handshake' | 'transfer' | 'connected'

export class ReplicaLink {
  state: LinkState = 'none'
  masterHost = ''
  masterPort = 0
  /** When the master last sent anything (redis master->lastinteraction), ms. */
  lastIoMs = 0
  /** Since when the link is down (redis repl_down_since), ms; 0: not down or never up. */
  downSinceMs = 0
  /**
   * Whether this node's replid and offset are a history a master may continue (redis: a cached
   * master): after a full sync, when a master became a replica, or from the snapshot at start.
   * Without it the handshake asks `PSYNC ? -1`.
   */
  hasHistory = false
  /** The master link's client (CLIENT LIST flag M), while connected. */
  session: MasterSession | undefined
  /** The full sync under way, for INFO's master_sync_* fields. */
  transfer: SyncTransfer | undefined
  private socket: net.Socket | undefined
  private handshake: Handshake | undefined
  private decoder: PayloadDecoder | undefined
  private fullSync: { replid: string; offset: number } | undefined
  private readonly stream = new MasterStreamReader()

  constructor(private readonly host: ReplicaLinkHost) {}

  /** The offset applied so far (redis master->reploff): our stream's, fed command by command. */
  get appliedOffset(): number {
    return this.host.replication.masterReplOffset
  }

  /** Bytes read from the master (redis read_reploff): the applied offset plus a command not yet whole. */
  get readOffset(): number {
    return this.host.replication.masterReplOffset + (this.state === 'connected' ? this.stream.bufferedBytes : 0)
  }

  /**
   * REPLICAOF host port (redis replicationSetMaster): drops the current link, closes blocked
   * clients, and, when this node was a master, keeps its own id and offset as the history to
   * continue from (redis replicationCacheMasterUsingMyself), then connects at once.
   */
  setMaster(host: string, port: number, options: { atStart?: boolean } = {}): void {
    const wasMaster = this.host.replication.role === 'master'
    if (this.state === 'connected') this.downSinceMs = Date.now()
    this.closeLink()
    this.host.unblockAll(ERR.UNBLOCKED_ROLE_CHANGE)
    // At start (config replicaof) only a history the snapshot recorded is continued.
    if (wasMaster && options.atStart !== true) this.hasHistory = true
    this.masterHost = host
    this.masterPort = port
    this.host.replication.role = 'replica'
    this.host.config.replicaof = `${host} ${port}`
    this.state = 'connect'
    this.host.log.notice(`Connecting to MASTER ${host}:${port}`)
    this.connect()
  }

  /**
   * REPLICAOF NO ONE (redis replicationUnsetMaster): a writable master at once, with the data it
   * has; its id moves to replid2 so the other replicas continue (+CONTINUE); its replicas are
   * disconnected so that they learn the new id.
   */
  unsetMaster(): void {
    if (this.host.replication.role !== 'replica') return
    if (this.state === 'connected') this.host.log.notice('Connection with master lost.')
    this.closeLink()
    this.masterHost = ''
    this.masterPort = 0
    this.host.config.replicaof = ''
    this.hasHistory = false
    this.host.replication.shiftIds()
    this.host.replication.role = 'master'
    this.host.disconnectReplicas()
    this.host.becameMaster()
    this.state = 'none'
    this.downSinceMs = 0
    // Restart the log if a full sync had stopped it (redis restartAOFAfterSYNC).
    if (this.host.config.appendonly && !this.host.persistence.appendLog.isOpen)
      this.host.persistence.setAppendOnly(true)
  }

  /** The master link's client was killed (CLIENT KILL TYPE master): reconnect, PSYNC from here. */
  dropLink(reason: string): void {
    if (this.state === 'none' || this.state === 'connect') return
    this.fail(reason)
  }

  /** Once a second (redis replicationCron): connect, time out a silent link, send the periodic ACK. */
  cron(nowMs: number): void {
    if (this.state === 'connect') {
      this.connect()
      return
    }
    if (this.state === 'none') return
    const timeoutMs = this.host.config['repl-timeout'] * 1000
    if (nowMs - this.lastIoMs > timeoutMs) {
      this.fail(
        this.state === 'connected'
          ? 'MASTER timeout: no data nor PING received...'
          : 'Timeout connecting to the MASTER...',
      )
      return
    }
    if (this.state === 'connected') this.sendAck()
  }

  /** At shutdown: the link closes without reconnecting. */
  close(): void {
    this.closeLink()
    if (this.state !== 'none') this.state = 'connect'
  }

  private connect(): void {
    this.closeLink()
    this.state = 'connecting'
    this.lastIoMs = Date.now()
    let socket: net.Socket
    try {
      socket = this.openSocket()
    } catch (error) {
      // tls-replication with files that do not load: tried again at the next cron.
      this.state = 'connect'
      this.host.log.warning(`Unable to connect to MASTER: ${(error as Error).message}`)
      return
    }
    this.socket = socket
    socket.setNoDelay(true)
    // Over TLS the handshake with the master starts once the TLS one is done.
    socket.on(socket instanceof tls.TLSSocket ? 'secureConnect' : 'connect', () => {
      if (socket !== this.socket) return
      this.host.log.notice('MASTER <-> REPLICA sync started')
      this.state = 'handshake'
      this.lastIoMs = Date.now()
      this.handshake = new Handshake(this.host, this.psyncArgs(), (bytes) => socket.write(bytes))
    })
    socket.on('data', (chunk: Buffer) => {
      if (socket === this.socket) this.onData(chunk)
    })
    socket.on('error', (error) => {
      if (socket === this.socket) this.fail(`Error condition on socket for SYNC: ${error.message}`)
    })
    socket.on('close', () => {
      if (socket === this.socket)
        this.fail(this.state === 'connected' ? 'Connection with master lost.' : 'Master closed the connection')
    })
  }

  /** The connection to the master: TLS under tls-replication (redis connCreateTLS), with the client certificate. @throws TlsConfigError */
  private openSocket(): net.Socket {
    const target = { host: this.masterHost, port: this.masterPort }
    return this.host.config['tls-replication']
      ? tls.connect({ ...target, ...tlsClientOptions(this.host.config) })
      : net.connect(target)
  }

  /** `PSYNC <replid> <offset+1>` to continue this node's history, `PSYNC ? -1` without one. */
  private psyncArgs(): [string, string] {
    const replication = this.host.replication
    return this.hasHistory ? [replication.replid, String(replication.masterReplOffset + 1)] : ['?', '-1']
  }

  private onData(chunk: Buffer): void {
    this.lastIoMs = Date.now()
    try {
      let rest: Buffer | undefined = chunk
      if (this.state === 'handshake') rest = this.handshakeData(chunk)
      if (rest !== undefined && this.state === 'transfer') rest = this.transferData(rest)
      if (rest !== undefined && rest.length > 0 && this.state === 'connected') this.streamData(rest)
    } catch (error) {
      this.fail((error as Error).message)
    }
  }

  /** Handshake replies; once PSYNC is answered, the bytes after that reply. */
  private handshakeData(chunk: Buffer): Buffer | undefined {
    const outcome = this.handshake!.push(chunk)
    if (outcome === undefined) return undefined
    this.handshake = undefined
    return this.afterPsync(outcome)
  }

  private afterPsync(outcome: HandshakeOutcome): Buffer | undefined {
    if (outcome.kind === 'retry') {
      this.fail(outcome.reason)
      return undefined
    }
    if (outcome.kind === 'full') {
      this.host.log.notice(`Full resync from master: ${outcome.replid}:${outcome.offset}`)
      this.fullSync = { replid: outcome.replid, offset: outcome.offset }
      this.decoder = this.host.newPayloadDecoder()
      this.transfer = new SyncTransfer(this.decoder)
      this.state = 'transfer'
      return outcome.rest
    }
    this.continueHistory(outcome.replid)
    return outcome.rest
  }

  /**
   * +CONTINUE (redis replicationResurrectCachedMaster): the stream goes on from our offset. A new
   * replid (the master was promoted) becomes ours, the old one replid2, and our own replicas are
   * disconnected to learn it (redis: "the replicas will be able to partially resync with us").
   */
  private continueHistory(replid: string | undefined): void {
    const replication = this.host.replication
    this.host.log.notice('Successful partial resynchronization with master.')
    if (replid !== undefined && replid !== replication.replid) {
      this.host.log.notice(`Master replication ID changed to ${replid}`)
      replication.replid2 = replication.replid
      replication.secondReplOffset = replication.masterReplOffset + 1
      replication.replid = replid
      this.host.disconnectReplicas()
    }
    this.host.ensureBacklog()
    this.linkUp()
    this.host.log.notice('MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.')
  }

  /** Payload bytes; once it ended and is loaded, the bytes after it (the stream's start). */
  private transferData(chunk: Buffer): Buffer | undefined {
    const rest = this.transfer!.push(chunk)
    if (rest === undefined) return undefined
    this.loadPayload()
    return rest
  }

  /**
   * The payload is all here (redis readSyncBulkPayload's end): the dataset is replaced in this
   * turn, the master's id and offset become ours, sub-replicas resync from us, our own log
   * restarts on the new dataset (a fresh segment and a rewrite, redis restartAOFAfterSYNC).
   */
  private loadPayload(): void {
    const { host, decoder, fullSync } = this
    host.log.notice(`MASTER <-> REPLICA sync: received ${this.transfer!.readBytes} bytes of payload`)
    host.disconnectReplicas()
    host.replaceDataset(decoder!.filters())
    host.replication.adopt(fullSync!.replid, fullSync!.offset)
    host.newHistory()
    this.hasHistory = true
    this.decoder = undefined
    this.transfer = undefined
    if (host.config.appendonly) {
      host.persistence.setAppendOnly(false)
      host.persistence.setAppendOnly(true)
    }
    this.linkUp()
    host.log.notice('MASTER <-> REPLICA sync: Finished with success')
    // A diskless master puts this replica online on its first ACK (redis sends it at once too).
    this.sendAck()
  }

  private linkUp(): void {
    this.state = 'connected'
    this.downSinceMs = 0
    this.stream.reset()
    const socket = this.socket!
    this.session = this.host.openMasterSession({
      addr: `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`,
      laddr: `${socket.localAddress ?? '?'}:${socket.localPort ?? 0}`,
      kill: () => this.dropLink('Master link killed (CLIENT KILL)'),
    })
  }

  /** The write stream: each command applied, then its bytes fed to our own stream. */
  private streamData(chunk: Buffer): void {
    const socket = this.socket
    const session = this.session!
    const replication = this.host.replication
    // Every key as it is while the master's commands run, settled batches included: no expiry by
    // this node's clock (redis expireIfNeeded for the master's client).
    replication.applyingMasterStream = true
    try {
      session.read(() => {
        this.stream.push(chunk, (command) => {
          this.apply(session, command)
          return this.socket === socket && this.state === 'connected'
        })
      })
    } finally {
      replication.applyingMasterStream = false
    }
  }

  private apply(session: MasterSession, command: StreamCommand): void {
    const argv = command.argv
    if (argv.length === 0) {
      // `*0`: no command (redis skips it); its bytes still count.
    } else if (argv.length >= 2 && argv.isKeyword(0, 'REPLCONF') && argv.isKeyword(1, 'GETACK')) {
      // The ACK covers what came before the GETACK; its own bytes count after (redis replconfCommand).
      session.settle()
      this.sendAck()
    } else {
      const error = session.run(argv)
      if (error !== undefined)
        this.host.log.warning(`A command from the master answered an error here: ${argv.latin1(0)}: ${error}`)
    }
    this.host.replication.stage(command.source, command.start, command.end)
  }

  private sendAck(): void {
    const socket = this.socket
    if (socket === undefined || this.state !== 'connected') return
    socket.write(encodeCommand(['REPLCONF', 'ACK', String(this.host.replication.masterReplOffset)]))
  }

  /** The link failed or dropped: logged, closed, retried at the next cron with PSYNC from where we are. */
  private fail(reason: string): void {
    const wasConnected = this.state === 'connected'
    this.host.log.warning(reason)
    this.closeLink()
    if (this.state === 'none') return
    this.state = 'connect'
    // redis replicationHandleMasterDisconnection: down since the loss of a link that was up.
    if (wasConnected) this.downSinceMs = Date.now()
  }

  /** Closes the socket and forgets the handshake, transfer and session (the dataset is untouched). */
  private closeLink(): void {
    const socket = this.socket
    this.socket = undefined
    socket?.destroy()
    this.handshake = undefined
    this.transfer = undefined
    this.decoder = undefined
    this.fullSync = undefined
    this.stream.reset()
    const session = this.session
    this.session = undefined
    session?.close()
  }
}
