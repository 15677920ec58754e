/**
 * An I/O thread (io-threads > 1): a worker thread with its own event loop and its own listening
 * sockets on the server's port (`reusePort`: the kernel spreads new connections over the threads'
 * sockets). It accepts connections, reads them and writes to them, and answers the Bloom commands
 * it may itself (thread-answers.ts); it runs no other command. Reads go
 * to the main thread as records through a shared ring (thread-ring.ts, thread-wire.ts), replies
 * come back through another. Every connection's bytes keep their order both ways.
 *
 * Started by io-threads.ts with the addresses and port to listen on and the two rings in
 * `workerData`.
 */
import net from 'node:net'
import { parentPort, workerData, type MessagePort } from 'node:worker_threads'
import { acceptConnections, type ConnectionReader } from './accept-connections.js'
import { listenTcp, type BindAddress } from './listeners.js'
import type { TlsListeners } from './tls-listeners.js'
import type { TlsServerSetup } from '../runtime/tls-context.js'
import type { Logger } from '../runtime/logger.js'
import {
  BYTES,
  BYTES_THEN_REPORT,
  CLOSED,
  CONSUMED,
  READ,
  READ_AHEAD_BYTES,
  DESTROY,
  FAILED,
  KEEPALIVE,
  OPENED,
  PAUSE,
  RESUME,
  SETTLED,
  SLOW,
  ACTIVE,
  UNSENT,
  JOURNALED,
} from './thread-wire.js'
import { RingChannel } from './thread-ring.js'
import type { PlaneMessage } from './thread-plane.js'
import { MAX_COMMAND_BYTES, ThreadAnswers, type PlaneMemory } from './thread-answers.js'

/** What the main thread gives an I/O thread. */
export interface IoThreadData {
  readonly addresses: readonly BindAddress[]
  /** The plaintext port (0: a free one), or undefined for none (port 0 beside a tls-port). */
  readonly port: number | undefined
  /** The TLS port (0: a free one) and its setup, if any (runtime/tls-context.ts). */
  readonly tls: { readonly port: number; readonly setup: TlsServerSetup } | undefined
  /** The ring this thread writes (to the main thread) and the one it reads. */
  readonly toMain: SharedArrayBuffer
  readonly toThread: SharedArrayBuffer
  /** Where wake-ups come from and go to (thread-ring.ts). */
  readonly wakeups: MessagePort
  /** This thread's number among the I/O threads. */
  readonly thread: number
  /** The memories of the checks this thread answers itself (thread-plane.ts); none: it answers none. */
  readonly plane: PlaneMemory | undefined
}

/** Messages that are not record batches, both ways. */
export type IoThreadControl =
  | {
      readonly type: 'listening'
      readonly port: number
      readonly hosts: string[]
      readonly tlsPort: number
      readonly tlsHosts: string[]
    }
  | { readonly type: 'listen-failed'; readonly message: string; readonly code?: string }
  | { readonly type: 'log'; readonly level: keyof Logger; readonly message: string }
  | { readonly type: 'stop-listening' }
  | { readonly type: 'stopped-listening' }
  | { readonly type: 'durable' }
  | { readonly type: 'tls-setup'; readonly setup: TlsServerSetup }
  | PlaneMessage

/** One accepted connection, by its number on this thread. */
interface Connection {
  readonly id: number
  readonly socket: net.Socket
  /** Bytes taken for it from the main thread so far, modulo 2^32 (its {@link UNSENT} reports). */
  taken: number
  /**
   * The bytes whose flush is reported (a report found output unsent): once they are flushed, so is
   * everything written before them. Not the socket's 'drain': that comes only after a write found
   * the socket past its high-water mark (16 KiB before Node 22, 64 KiB since), and a report may
   * find less unsent than that, which would never be reported sent.
   */
  flushReported: Buffer | undefined
  /** Whether the main thread paused its reading (a client that does not read its replies, a blocked one). */
  pausedByMain: boolean
  /** Bytes read from it, and of them taken by the server (its {@link CONSUMED} reports), modulo 2^32. */
  read: number
  consumed: number
  /** Whether it is not read for being {@link READ_AHEAD_BYTES} ahead of the server. */
  ahead: boolean
  /** Whether the server ended it: what it sends is dropped, and it is read only to see it close. */
  ending: boolean
  /**
   * Whether this thread answers its checks itself (thread-answers.ts): the server said it settled
   * (thread-wire.ts SETTLED) and nothing was sent to the server since. Its database then.
   */
  local: boolean
  db: number
  /** The settling generation it was settled in (thread-wire.ts PLANE_GENERATION). */
  generation: number
  /** While local: the start of a command not whole yet (a copy). */
  pending: Buffer | undefined
  /** While local: not read until its socket sent what this thread answered (a write found it full). */
  outputFull: boolean
  /**
   * What waits to be written, in order, while an answer waits for the writes it may show to be
   * durable (thread-answers.ts need): that answer, and everything for the connection after it.
   */
  held: Held[] | undefined
  heldBytes: number
}

/** Something a connection's socket gets once the answers before it were written. */
interface Held {
  /** {@link ANSWER}, or the main thread's record: BYTES, BYTES_THEN_REPORT, CLOSED. */
  readonly type: number
  readonly bytes: Buffer | undefined
  /** For an answer: what must be durable first (undefined: nothing more than before it). */
  readonly need: Int32Array | undefined
  /** For an answer: its last command's index (thread-wire.ts THREAD_COMMANDS). */
  readonly last: number
}

/** A {@link Held} answer of this thread's. */
const ANSWER = 0

/** How often the server hears which connections this thread answered (their idle time). */
const ACTIVE_EVERY_MS = 100

class IoThread {
  private readonly connections = new Map<number, Connection>()
  private nextConnection = 1
  /**
   * While the main thread is behind (the ring to it full), no connection is read: what is read
   * would wait in this thread's memory, without bound.
   */
  private mainBehind = false
  private readonly out: RingChannel
  private readonly unsentReport = Buffer.alloc(8)
  private listeners: net.Server[] = []
  private tls: TlsListeners | undefined
  private readonly answers: ThreadAnswers | undefined
  /** Connections whose answers wait for durable writes. */
  private readonly holding = new Set<Connection>()
  /** Connections answered here since the last ACTIVE records, with the last command's index. */
  private readonly answered = new Map<Connection, number>()
  private activeTimer: NodeJS.Timeout | undefined

  constructor(
    private readonly port: NonNullable<typeof parentPort>,
    data: IoThreadData,
  ) {
    // The main thread is woken after every read of this turn (the poll phase), before this loop
    // sleeps: once per turn at most, and not at all while it is busy taking records.
    this.out = new RingChannel(
      data.toMain,
      data.toThread,
      {
        wake: () => data.wakeups.postMessage(0),
        defer: setImmediate,
        full: () => this.setMainBehind(true),
        room: () => this.setMainBehind(false),
      },
      (type, id, payload) => this.apply(type, id, payload),
    )
    data.wakeups.on('message', () => this.out.woken())
    this.answers = data.plane === undefined ? undefined : new ThreadAnswers(data.plane, data.thread)
    port.on('message', (message: IoThreadControl) => {
      if (message.type === 'stop-listening') this.stopListening()
      else if (message.type === 'durable') this.release()
      else if (message.type === 'tls-setup') this.tls?.reconfigure(withBuffers(message.setup))
      else if (message.type === 'publish' || message.type === 'forget') this.answers?.received(message)
    })
    this.listen(data).then(
      (listening) => this.post(listening),
      (error: NodeJS.ErrnoException) => this.post({ type: 'listen-failed', message: error.message, code: error.code }),
    )
  }

  /** Whether the TLS port takes one more connection into its handshake (`handshaking` here already). */
  private admitsHandshake(handshaking: number): boolean {
    return this.answers === undefined || this.answers.admitsHandshake(handshaking)
  }

  /** The plaintext port's listeners and the TLS port's, as the main thread asked for. */
  private async listen(data: IoThreadData): Promise<IoThreadControl> {
    const log = logTo(this.post)
    let port = 0
    let hosts: string[] = []
    if (data.port !== undefined) {
      const accept = (socket: net.Socket): ConnectionReader => this.accept(socket, false)
      const tcp = await listenTcp(
        data.addresses,
        data.port,
        (listener) => acceptConnections(listener, accept),
        log,
        true,
      )
      this.listeners = tcp.listeners
      port = tcp.port
      hosts = tcp.hosts
    }
    if (data.tls === undefined) return { type: 'listening', port, hosts, tlsPort: 0, tlsHosts: [] }
    // Loaded only with a TLS port: node:tls costs each thread memory for nothing otherwise.
    const { TlsListeners } = await import('./tls-listeners.js')
    // A connection in its handshake counts against maxclients from its accept, as in redis: the
    // main thread's clients and every thread's handshakes (thread-answers.ts admitsHandshake).
    const secure = new TlsListeners(
      withBuffers(data.tls.setup),
      log,
      (handshaking) => this.admitsHandshake(handshaking),
      (handshaking) => this.answers?.countHandshakes(handshaking),
    )
    try {
      await secure.listen(data.addresses, data.tls.port, (socket) => this.accept(socket, true), true)
    } catch (error) {
      for (const listener of this.listeners) listener.close()
      throw error
    }
    this.tls = secure
    return { type: 'listening', port, hosts, tlsPort: secure.port, tlsHosts: secure.hosts }
  }

  private readonly post = (message: IoThreadControl): void => this.port.postMessage(message)

  private accept(socket: net.Socket, encrypted: boolean): ConnectionReader {
    const id = this.nextConnection
    this.nextConnection = id === 0xffffffff ? 1 : id + 1
    const connection: Connection = {
      id,
      socket,
      taken: 0,
      flushReported: undefined,
      pausedByMain: false,
      read: 0,
      consumed: 0,
      ahead: false,
      ending: false,
      local: false,
      generation: 0,
      db: 0,
      pending: undefined,
      outputFull: false,
      held: undefined,
      heldBytes: 0,
    }
    this.connections.set(id, connection)
    socket.setNoDelay(true)
    this.updateReading(connection)
    const address = `${socket.remoteAddress ?? '?'}\n${socket.remotePort ?? 0}\n${socket.localAddress ?? '?'}\n${socket.localPort ?? 0}\n${encrypted ? 1 : 0}`
    this.out.put(OPENED, id, Buffer.from(address, 'latin1'))
    socket.on('error', (error) => this.out.put(FAILED, id, Buffer.from(error.message)))
    socket.on('close', () => {
      this.connections.delete(id)
      this.answered.delete(connection)
      this.holding.delete(connection)
      connection.held = undefined
      this.out.put(CLOSED, id)
    })
    return { onData: (chunk, length) => this.received(connection, chunk, length) }
  }

  private received(connection: Connection, chunk: Buffer, length: number): void {
    if (connection.ending) return
    let bytes = chunk
    let end = length
    const pending = connection.pending
    if (pending !== undefined) {
      bytes = Buffer.concat([pending, chunk.subarray(0, length)])
      end = bytes.length
      connection.pending = undefined
    }
    const answers = this.answers
    if (!connection.local || answers === undefined || !answers.open || connection.generation !== answers.generation)
      return this.forward(connection, bytes, 0, end)
    const answered = answers.answer(bytes, end, connection.db, connection.id)
    if (answered.journaled) this.out.put(JOURNALED, connection.id)
    if (answered.reply !== undefined) {
      if (answered.need === undefined && connection.held === undefined)
        this.writeAnswers(connection, answered.reply, answered.last)
      else this.hold(connection, { type: ANSWER, bytes: answered.reply, need: answered.need, last: answered.last })
    }
    if (answered.slow !== undefined) this.out.put(SLOW, connection.id, answered.slow)
    const rest = answered.used
    if (rest === end) return
    // What follows is not whole yet: kept while it may still be a command answered here.
    if (end - rest < MAX_COMMAND_BYTES && answers.scan(bytes, rest, end) === 0) {
      connection.pending = Buffer.from(bytes.subarray(rest, end))
      return
    }
    this.forward(connection, bytes, rest, end)
  }

  /** Replies this thread gave: written; the connection is not read while its socket holds too many. */
  private writeAnswers(connection: Connection, reply: Buffer, last: number): void {
    const socket = connection.socket
    // As a full socket stops the main thread's reading of its client: until it drained.
    if (!socket.write(reply) && !connection.outputFull) {
      connection.outputFull = true
      this.updateReading(connection)
      socket.once('drain', () => {
        connection.outputFull = false
        this.updateReading(connection)
      })
    }
    this.answered.set(connection, last)
    this.activeTimer ??= setTimeout(this.reportActive, ACTIVE_EVERY_MS)
  }

  /** Keeps what the connection gets until the writes its answers may show are durable. */
  private hold(connection: Connection, held: Held): void {
    if (connection.held === undefined) {
      connection.held = []
      this.holding.add(connection)
    }
    connection.held.push(held)
    connection.heldBytes += held.bytes?.length ?? 0
    if (connection.heldBytes >= READ_AHEAD_BYTES) this.updateReading(connection)
    if (held.need !== undefined && this.answers!.awaitDurable(held.need)) this.releaseConnection(connection)
  }

  /** The main thread made more writes durable: what waited for them is written. */
  private release(): void {
    for (const connection of this.holding) this.releaseConnection(connection)
  }

  private releaseConnection(connection: Connection): void {
    const held = connection.held!
    let done = 0
    for (; done < held.length; done++) {
      const next = held[done]!
      if (next.need !== undefined && !this.answers!.durable(next.need)) break
      if (next.type === ANSWER) this.writeAnswers(connection, next.bytes!, next.last)
      else this.write(connection, next.type, next.bytes)
    }
    if (done === held.length) {
      connection.held = undefined
      connection.heldBytes = 0
      this.holding.delete(connection)
      this.updateReading(connection)
      return
    }
    for (let i = 0; i < done; i++) connection.heldBytes -= held[i]!.bytes?.length ?? 0
    held.splice(0, done)
    if (this.answers!.awaitDurable(held[0]!.need!)) this.releaseConnection(connection)
  }

  private readonly reportActive = (): void => {
    this.activeTimer = undefined
    for (const [connection, last] of this.answered) this.out.put(ACTIVE, connection.id, Buffer.of(last))
    this.answered.clear()
  }

  /** Bytes for the server: from now on everything read goes there, until it says the connection settled. */
  private forward(connection: Connection, bytes: Buffer, start: number, end: number): void {
    connection.local = false
    const length = end - start
    this.out.put(READ, connection.id, bytes, start, end, connection.taken)
    connection.read = (connection.read + length) >>> 0
    if ((connection.read - connection.consumed) >>> 0 < READ_AHEAD_BYTES) return
    connection.ahead = true
    this.updateReading(connection)
  }

  /**
   * Reads the connection or not, by every reason not to: the main thread paused it, it is far
   * enough ahead of the server, or the main thread is behind. One the server ended is read
   * whatever the reasons: its peer's end or reset is seen only by reading, and until it is the
   * connection stays open.
   */
  private updateReading(connection: Connection): void {
    const read =
      connection.ending ||
      !(
        connection.pausedByMain ||
        connection.ahead ||
        this.mainBehind ||
        connection.outputFull ||
        connection.heldBytes >= READ_AHEAD_BYTES
      )
    const socket = connection.socket
    if (read && socket.isPaused()) socket.resume()
    else if (!read && !socket.isPaused()) socket.pause()
  }

  private setMainBehind(behind: boolean): void {
    this.mainBehind = behind
    for (const connection of this.connections.values()) this.updateReading(connection)
  }

  /** A record from the main thread. */
  private apply(type: number, id: number, payload: Buffer): void {
    const connection = this.connections.get(id)
    if (connection === undefined) return
    const socket = connection.socket
    switch (type) {
      case BYTES:
      case BYTES_THEN_REPORT: {
        connection.taken = (connection.taken + payload.length) >>> 0
        // Copied: the socket may keep what it cannot send at once, and the ring's bytes are reused.
        const bytes = Buffer.from(payload)
        if (connection.held === undefined) this.write(connection, type, bytes)
        else this.hold(connection, { type, bytes, need: undefined, last: 0 })
        return
      }
      case CLOSED:
        connection.ending = true
        if (connection.held === undefined) this.write(connection, type, undefined)
        else this.hold(connection, { type, bytes: undefined, need: undefined, last: 0 })
        return this.updateReading(connection)
      case DESTROY:
        socket.destroy()
        return
      case PAUSE:
      case RESUME:
        connection.pausedByMain = type === PAUSE
        return this.updateReading(connection)
      case CONSUMED:
        connection.consumed = payload.readUInt32LE(0)
        if (connection.ahead && (connection.read - connection.consumed) >>> 0 < READ_AHEAD_BYTES / 2) {
          connection.ahead = false
          this.updateReading(connection)
        }
        return
      case KEEPALIVE:
        socket.setKeepAlive(true, payload.readUInt32LE(0))
        return
      case SETTLED:
        // Only if nothing was sent to the server since what it took: else its answers are not all here yet.
        if (payload.readUInt32LE(0) === connection.read && !connection.ending) {
          connection.local = true
          connection.db = payload.readUInt32LE(4)
          connection.generation = payload.readUInt32LE(8) | 0
        }
        return
    }
  }

  /** The main thread's BYTES, BYTES_THEN_REPORT or CLOSED, done. */
  private write(connection: Connection, type: number, bytes: Buffer | undefined): void {
    if (type === BYTES) connection.socket.write(bytes!)
    else if (type === BYTES_THEN_REPORT) this.writeThenReport(connection, bytes!)
    else connection.socket.end()
  }

  /** Writes, reports what is unsent now and, if any is, again once this write is flushed. */
  private writeThenReport(connection: Connection, bytes: Buffer): void {
    connection.socket.write(bytes, () => {
      if (connection.flushReported !== bytes) return
      connection.flushReported = undefined
      this.report(connection)
    })
    this.report(connection)
    connection.flushReported = connection.socket.writableLength > 0 ? bytes : undefined
  }

  private report(connection: Connection): void {
    this.unsentReport.writeUInt32LE(connection.taken, 0)
    this.unsentReport.writeUInt32LE(connection.socket.writableLength >>> 0, 4)
    this.out.put(UNSENT, connection.id, this.unsentReport)
  }

  private stopListening(): void {
    const closed = [
      ...this.listeners.map((listener) => new Promise<void>((resolve) => listener.close(() => resolve()))),
      ...(this.tls?.close() ?? []),
    ]
    this.listeners = []
    this.tls = undefined
    void Promise.all(closed).then(() => this.post({ type: 'stopped-listening' }))
  }
}

/** A TLS setup as it came through postMessage (its Buffers cloned as Uint8Arrays), with Buffers again. */
function withBuffers(setup: TlsServerSetup): TlsServerSetup {
  const buffer = (value: unknown): unknown =>
    value instanceof Uint8Array && !Buffer.isBuffer(value)
      ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
      : Array.isArray(value)
        ? value.map(buffer)
        : value
  const options = Object.fromEntries(Object.entries(setup.options).map(([key, value]) => [key, buffer(value)]))
  return { options, optionalClientCert: setup.optionalClientCert }
}

/** The thread's log lines, written by the main thread's logger. */
function logTo(post: (message: IoThreadControl) => void): Logger {
  const line =
    (level: keyof Logger) =>
    (message: string): void =>
      post({ type: 'log', level, message })
  return { debug: line('debug'), verbose: line('verbose'), notice: line('notice'), warning: line('warning') }
}

if (parentPort !== null) new IoThread(parentPort, workerData as IoThreadData)
