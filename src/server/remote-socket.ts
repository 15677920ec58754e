/**
 * A connection served by an I/O thread, as the main thread's Client sees it: the part of a socket
 * a Client uses (client.ts ClientSocket), each call becoming a record to that thread
 * (thread-wire.ts) and each record from it an event. The Client, dispatch and everything after
 * them run on the main thread exactly as for a socket of its own.
 */
import { EventEmitter } from 'node:events'
import type { ConnectionReader } from './accept-connections.js'
import type { ClientSocket } from './client.js'
import {
  BYTES,
  BYTES_THEN_REPORT,
  CLOSED,
  CONSUMED,
  CONSUMED_EVERY_BYTES,
  DESTROY,
  KEEPALIVE,
  PAUSE,
  RESUME,
  SETTLED,
} from './thread-wire.js'

/** Output not known to be sent past which write() answers false (the server stops reading the client). */
const HIGH_WATER_BYTES = 64 * 1024
/** Below this, a connection that answered false is drained again ('drain'). */
const LOW_WATER_BYTES = 16 * 1024
/** Output sent after which the thread is asked how much of it went (an UNSENT report). */
const REPORT_EVERY_BYTES = 32 * 1024

/** The thread a connection lives on: where its records go. */
export interface ThreadOutbox {
  /** The thread's number among the I/O threads (0 on). */
  readonly thread: number
  put(type: number, connection: number, payload?: Uint8Array): void
  putNumber(type: number, connection: number, value: number): void
  /** Forgets a connection that will deliver nothing more. */
  forget(connection: number): void
}

export class RemoteSocket extends EventEmitter implements ClientSocket {
  readonly threaded = true
  /** Where its reads go, once the server accepted it. */
  reader: ConnectionReader | undefined = undefined
  /**
   * Its output as the main thread knows it: bytes written to the thread (modulo 2^32), of them
   * how many the thread took by its last report, what its socket held unsent then, and where the
   * last report was asked for. Output not known to be sent, `written - taken + unsent`, is what
   * stops the reading of a client that does not read its replies.
   */
  private written = 0
  private taken = 0
  private unsent = 0
  private askedAt = 0
  private needDrain = false
  /** Bytes read given to the reader so far, modulo 2^32, and as last reported to the thread. */
  private consumed = 0
  private consumedReported = 0
  private paused = false
  /** {@link consumed} when the thread was last told the connection is settled (-1: never). */
  private settledAt = -1
  private readonly settledRecord = Buffer.alloc(12)
  /** Reads that arrived while paused: delivered, in order, on resume. */
  private held: Buffer[] = []
  private ended = false
  private destroyed = false

  constructor(
    private readonly outbox: ThreadOutbox,
    readonly connection: number,
    readonly remoteAddress: string,
    readonly remotePort: number,
    readonly localAddress: string,
    readonly localPort: number,
    /** Whether it came to the TLS port (its thread did the handshake): as a TLSSocket's `encrypted`. */
    readonly encrypted = false,
  ) {
    super()
  }

  /**
   * Output not known to be sent: a socket's writableLength (output limits, CLIENT LIST omem,
   * "pending output", the pacing of a full sync). What the client sent after reading a reply tells
   * that the reply was taken: each read comes with the count.
   */
  /** The I/O thread's number (thread-plane.ts: where a key's layout goes). */
  get thread(): number {
    return this.outbox.thread
  }

  get writableLength(): number {
    return ((this.written - this.taken) >>> 0) + this.unsent
  }

  get writableNeedDrain(): boolean {
    return this.needDrain
  }

  setNoDelay(): this {
    // The I/O thread sets it on every connection it accepts.
    return this
  }

  setKeepAlive(enable = false, initialDelayMs = 0): this {
    if (enable && !this.destroyed) this.outbox.putNumber(KEEPALIVE, this.connection, initialDelayMs)
    return this
  }

  write(data: Uint8Array | string): boolean {
    if (this.ended || this.destroyed) return false
    const bytes = typeof data === 'string' ? Buffer.from(data) : data
    this.written = (this.written + bytes.length) >>> 0
    if (this.writableLength >= HIGH_WATER_BYTES) this.needDrain = true
    // While it must drain every write asks for a report, so that the report that drains it comes.
    const report = this.needDrain || (this.written - this.askedAt) >>> 0 >= REPORT_EVERY_BYTES
    if (report) this.askedAt = this.written
    this.outbox.put(report ? BYTES_THEN_REPORT : BYTES, this.connection, bytes)
    return !this.needDrain
  }

  end(data?: Uint8Array | string): this {
    if (this.ended || this.destroyed) return this
    if (data !== undefined) this.write(data)
    this.ended = true
    this.outbox.put(CLOSED, this.connection)
    return this
  }

  destroy(): this {
    if (this.destroyed) return this
    this.destroyed = true
    this.held = []
    this.outbox.put(DESTROY, this.connection)
    this.outbox.forget(this.connection)
    // As a socket's: 'close' comes after destroy() returned.
    setImmediate(() => this.emit('close', false))
    return this
  }

  pause(): this {
    if (this.paused || this.destroyed) return this
    this.paused = true
    this.outbox.put(PAUSE, this.connection)
    return this
  }

  resume(): this {
    if (!this.paused || this.destroyed) return this
    this.paused = false
    this.outbox.put(RESUME, this.connection)
    // As a socket's: what was read comes after resume() returned.
    if (this.held.length > 0) setImmediate(() => this.deliverHeld())
    return this
  }

  isPaused(): boolean {
    return this.paused
  }

  /** Bytes read from the connection, a view valid during the call, and how many bytes its thread had taken then. */
  received(taken: number, bytes: Buffer): void {
    if (this.destroyed) return
    this.taken = taken
    if (this.paused || this.held.length > 0) this.held.push(Buffer.from(bytes))
    else this.deliver(bytes)
  }

  private deliver(bytes: Buffer): void {
    this.consumed = (this.consumed + bytes.length) >>> 0
    if ((this.consumed - this.consumedReported) >>> 0 >= CONSUMED_EVERY_BYTES) {
      this.consumedReported = this.consumed
      this.outbox.putNumber(CONSUMED, this.connection, this.consumed)
    }
    this.reader?.onData(bytes, bytes.length)
  }

  /**
   * The server ran all it read and holds none of it (thread-plane.ts settle): the thread may answer
   * the connection's checks itself from what it reads next, unless it read more meanwhile.
   */
  settle(db: number, generation: number): void {
    if (this.paused || this.held.length > 0 || this.ended || this.destroyed || this.settledAt === this.consumed) return
    this.settledAt = this.consumed
    this.settledRecord.writeUInt32LE(this.consumed, 0)
    this.settledRecord.writeUInt32LE(db, 4)
    this.settledRecord.writeUInt32LE(generation >>> 0, 8)
    this.outbox.put(SETTLED, this.connection, this.settledRecord)
  }

  /** Its thread reported how much of the output it took, and what its socket holds unsent. */
  unsentReported(taken: number, unsent: number): void {
    this.taken = taken
    this.unsent = unsent
    if (this.needDrain && this.writableLength < LOW_WATER_BYTES) {
      this.needDrain = false
      this.emit('drain')
    }
  }

  /** Its thread reported the connection closed. */
  closed(): void {
    if (this.destroyed) return
    this.destroyed = true
    this.held = []
    this.outbox.forget(this.connection)
    this.emit('close', false)
  }

  private deliverHeld(): void {
    while (this.held.length > 0 && !this.paused && !this.destroyed) {
      this.deliver(this.held.shift()!)
    }
  }
}
