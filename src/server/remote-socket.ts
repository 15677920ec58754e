/**
 * A connection served by an I/O thread, as the main thread's Client sees it: the part of a socket
 * a Client uses (client.ts ClientSocket), each call becoming a record to that thread
 * (thread-wire.ts) and each record from it an event. The Client, dispatch and everything after
 * them run on the main thread exactly as for a socket of its own.
 */
import { EventEmitter } from 'node:events'
import type { ConnectionReader } from './accept-connections.js'
import type { ClientSocket } from './client.js'
import { BYTES, CLOSED, DESTROY, KEEPALIVE, PAUSE, RESUME } from './thread-wire.js'

/** Node's default high-water mark of a socket's writable side: write() answers false from there. */
const HIGH_WATER_BYTES = 16 * 1024

/** The thread a connection lives on: where its records go. */
export interface ThreadOutbox {
  put(type: number, connection: number, payload?: Uint8Array): void
  putNumber(type: number, connection: number, value: number): void
  /** Forgets a connection that will deliver nothing more. */
  forget(connection: number): void
}

export class RemoteSocket extends EventEmitter implements ClientSocket {
  readonly threaded = true
  /** Where its reads go, once the server accepted it. */
  reader: ConnectionReader | undefined = undefined
  /** What its I/O thread holds unsent (reported by that thread). */
  private unsent = 0
  private needDrain = false
  private paused = false
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
  ) {
    super()
  }

  get writableLength(): number {
    return this.unsent
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
    this.outbox.put(BYTES, this.connection, typeof data === 'string' ? Buffer.from(data) : data)
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

  /** Bytes read from the connection, a view valid during the call. */
  received(bytes: Buffer): void {
    if (this.destroyed) return
    if (this.paused || this.held.length > 0) this.held.push(Buffer.from(bytes))
    else this.reader?.onData(bytes, bytes.length)
  }

  /** Its thread reported what its socket holds unsent. */
  unsentReported(bytes: number): void {
    this.unsent = bytes
    if (bytes >= HIGH_WATER_BYTES) this.needDrain = true
    else if (bytes === 0 && this.needDrain) {
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
      const bytes = this.held.shift()!
      this.reader?.onData(bytes, bytes.length)
    }
  }
}
