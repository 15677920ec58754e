/**
 * One replica as its master sees it (redis client fields slave_*, repl_*): what it announced with
 * REPLCONF, where it is in its sync (redis replstate), the offset it acknowledged, and its share
 * of the replication stream: held while its full-sync payload is made and sent, then written to
 * its socket once per event-loop turn. The replica class of client-output-buffer-limit bounds
 * what it may leave unsent (redis checkClientOutputBufferLimits): past it, it is dropped, and it
 * will resync.
 */
import type { ReplyWriter } from '../protocol/reply-writer.js'
import type { Logger } from '../runtime/logger.js'
import type { OutputBufferLimit } from '../runtime/config.js'

/**
 * The connection of a client, as the master side needs it (server/client.ts implements it): raw
 * writes for the stream and the payload, its reply buffer, blocking for WAIT.
 */
export interface PeerConnection {
  readonly id: number
  /** "ip:port" of the peer. */
  readonly addr: string
  readonly name: string
  kind: 'normal' | 'replica' | 'master'
  readonly reply: ReplyWriter
  readonly state: 'open' | 'closing' | 'closed'
  /** The replication offset right after its last command (redis woff): what its WAIT waits for. */
  readonly replOffset: number
  /** Unsent bytes: pending replies plus what the socket has not sent yet. */
  outputBytes(): number
  /** Bytes straight to the socket, in order; false when the socket is past its high-water mark. */
  writeRaw(bytes: Buffer): boolean
  /** Calls back once, when the socket has drained (or closed). */
  onceDrained(callback: () => void): void
  /** No further command of this client runs until {@link unblock} (its reads pause). */
  block(): void
  /** Runs what it read while blocked and sends its replies. */
  unblock(): void
  closeAfterReply(): void
  /** Sends what is pending; ends the connection when closing. */
  flush(): void
  kill(): void
}

const EMPTY = Buffer.alloc(0)
/** The least room a replica's held stream bytes get, and the most a hand-over's size asks for. */
const MIN_HELD_BYTES = 16 * 1024
const MAX_HELD_ROOM_BYTES = 1024 * 1024

/** redis replstateToString: INFO's state= of a replica. */
export type SyncState = 'wait_bgsave' | 'send_bulk' | 'online'

export class AttachedReplica {
  /** Before its full sync starts: true (redis SLAVE_STATE_WAIT_BGSAVE_START). */
  waitingStart = true
  state: SyncState = 'wait_bgsave'
  /** REPLCONF listening-port / ip-address. */
  listeningPort = 0
  announcedIp = ''
  capaEof = false
  capaPsync2 = false
  /** REPLCONF rdb-only 1: the payload and nothing after it. */
  rdbOnly = false
  /** REPLCONF rdb-filter-only "": a payload without filters (redis-cli --replica asks so). */
  excludeData = false
  /** SYNC instead of PSYNC (redis CLIENT_PRE_PSYNC): no +FULLRESYNC line, no ACKs expected. */
  preSync = false
  ackOffset = 0
  ackTimeSeconds = nowSeconds()
  /** When it asked for a sync (redis lastinteraction, for repl-diskless-sync-delay). */
  askedAtSeconds = nowSeconds()
  /** A diskless replica gets its stream after its first ACK (redis repl_start_cmd_stream_on_ack). */
  streamOnAck = false
  /** Whether stream bytes go to its socket (false: held until its payload is sent). */
  private streaming = false
  /**
   * Its stream bytes not yet handed to the socket: `held[0, pendingBytes)`. Copied in as they
   * come (what the stream feeds is a view of a buffer its source reuses), handed over whole.
   */
  private held: Buffer = EMPTY
  private pendingBytes = 0
  /** How much the last hand-over held: the next buffer's room. */
  private lastHandedBytes = 0
  private flushScheduled = false
  /** Since when (unix seconds) it has been over the soft limit (0: it is not). */
  private softSinceSeconds = 0
  private detachSink: (() => void) | undefined
  private lastUnsent = 0
  private lastProgressSeconds = nowSeconds()

  constructor(
    readonly peer: PeerConnection,
    private readonly limit: () => OutputBufferLimit,
    private readonly log: Logger,
  ) {}

  /** The address INFO and ROLE show: the announced ip, else the peer's (IPv4-mapped form dropped). */
  get ip(): string {
    if (this.announcedIp !== '') return this.announcedIp
    const peerIp = this.peer.addr.slice(0, this.peer.addr.lastIndexOf(':'))
    return peerIp.startsWith('::ffff:') ? peerIp.slice(7) : peerIp
  }

  /** redis replicationGetSlaveName. */
  get label(): string {
    return this.listeningPort !== 0 ? `${this.ip}:${this.listeningPort}` : `${this.ip}:<unknown-replica-port>`
  }

  /** Starts taking the stream (attach returns the detach); held until {@link startStreaming}. */
  follow(attach: (sink: (bytes: Buffer) => void) => () => void): void {
    this.detachSink?.()
    this.detachSink = attach((bytes) => this.take(bytes))
  }

  /** What was held, then everything after it, goes to the socket. */
  startStreaming(): void {
    this.streaming = true
    this.streamOnAck = false
    this.scheduleFlush()
  }

  private take(bytes: Buffer): void {
    if (this.peer.state === 'closed') return
    const needed = this.pendingBytes + bytes.length
    if (needed > this.held.length) this.grow(needed)
    bytes.copy(this.held, this.pendingBytes)
    this.pendingBytes = needed
    if (this.checkLimit()) return
    if (this.streaming) this.scheduleFlush()
  }

  private grow(needed: number): void {
    const held = Buffer.allocUnsafe(Math.max(needed, this.held.length * 2, this.lastHandedBytes, MIN_HELD_BYTES))
    this.held.copy(held, 0, 0, this.pendingBytes)
    this.held = held
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return
    this.flushScheduled = true
    setImmediate(() => this.flush())
  }

  private flush(): void {
    this.flushScheduled = false
    if (!this.streaming || this.pendingBytes === 0 || this.peer.state !== 'open') return
    const out = this.held.subarray(0, this.pendingBytes)
    this.lastHandedBytes = Math.min(this.pendingBytes, MAX_HELD_ROOM_BYTES)
    this.held = EMPTY
    this.pendingBytes = 0
    this.peer.writeRaw(out)
  }

  /** Unsent stream bytes (held, queued and in the socket): what the output limit counts. */
  unsentBytes(): number {
    return this.pendingBytes + this.peer.outputBytes()
  }

  /**
   * The replica class of client-output-buffer-limit (redis checkClientOutputBufferLimits): closes
   * the replica past the hard limit, or past the soft one for longer than its seconds. True if it did.
   */
  checkLimit(): boolean {
    const { hard, soft, softSeconds } = this.limit()
    if (hard === 0 && soft === 0) return false
    const used = this.unsentBytes()
    let over = hard > 0 && used > hard
    if (soft > 0 && used > soft) {
      const now = nowSeconds()
      if (this.softSinceSeconds === 0) this.softSinceSeconds = now
      else if (now - this.softSinceSeconds > softSeconds) over = true
    } else {
      this.softSinceSeconds = 0
    }
    if (!over) return false
    this.log.warning(
      `Client id=${this.peer.id} addr=${this.peer.addr} name=${this.peer.name} omem=${used} scheduled to be closed ASAP for overcoming of output buffer limits.`,
    )
    this.close()
    return true
  }

  /** Seconds since its unsent bytes last changed while there were some (0: none unsent). */
  payloadStalled(now: number): number {
    const unsent = this.peer.outputBytes()
    if (unsent === 0 || unsent !== this.lastUnsent) {
      this.lastUnsent = unsent
      this.lastProgressSeconds = now
    }
    return now - this.lastProgressSeconds
  }

  /** Drops the replica's connection and its share of the stream. */
  close(): void {
    this.detach()
    this.peer.kill()
  }

  /** Stops taking the stream (its connection closed). */
  detach(): void {
    this.detachSink?.()
    this.detachSink = undefined
    this.held = EMPTY
    this.pendingBytes = 0
  }
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000)
}
