/**
 * An I/O thread (io-threads > 1): a worker thread with its own event loop and its own listening
 * sockets on the server's port (`reusePort`: the kernel spreads new connections over the threads'
 * sockets). It accepts connections, reads them and writes to them; it runs no command. Reads go
 * to the main thread as records through a shared ring (thread-ring.ts, thread-wire.ts), replies
 * come back through another. Every connection's bytes keep their order both ways.
 *
 * Started by io-threads.ts with the addresses and port to listen on and the two rings in
 * `workerData`.
 */
import net from 'node:net'
import { parentPort, workerData, type MessagePort } from 'node:worker_threads'
import { acceptConnections } from './accept-connections.js'
import { listenTcp, type BindAddress } from './listeners.js'
import type { Logger } from '../runtime/logger.js'
import {
  BYTES,
  BYTES_THEN_REPORT,
  CLOSED,
  CONSUMED,
  READ_AHEAD_BYTES,
  DESTROY,
  FAILED,
  KEEPALIVE,
  OPENED,
  PAUSE,
  RESUME,
  UNSENT,
} from './thread-wire.js'
import { RingChannel } from './thread-ring.js'

/** What the main thread gives an I/O thread. */
export interface IoThreadData {
  readonly addresses: readonly BindAddress[]
  readonly port: number
  /** The ring this thread writes (to the main thread) and the one it reads. */
  readonly toMain: SharedArrayBuffer
  readonly toThread: SharedArrayBuffer
  /** Where wake-ups come from and go to (thread-ring.ts). */
  readonly wakeups: MessagePort
}

/** Messages that are not record batches, both ways. */
export type IoThreadControl =
  | { readonly type: 'listening'; readonly port: number; readonly hosts: string[] }
  | { readonly type: 'listen-failed'; readonly message: string; readonly code?: string }
  | { readonly type: 'log'; readonly level: keyof Logger; readonly message: string }
  | { readonly type: 'stop-listening' }
  | { readonly type: 'stopped-listening' }

/** One accepted connection, by its number on this thread. */
interface Connection {
  readonly socket: net.Socket
  /** Bytes taken for it from the main thread so far, modulo 2^32 (its {@link UNSENT} reports). */
  taken: number
  /** Whether its socket's drain is reported (a report found bytes unsent). */
  reportOnDrain: boolean
  /** Whether the main thread paused its reading (a client that does not read its replies, a blocked one). */
  pausedByMain: boolean
  /** Bytes read from it, and of them taken by the server (its {@link CONSUMED} reports), modulo 2^32. */
  read: number
  consumed: number
  /** Whether it is not read for being {@link READ_AHEAD_BYTES} ahead of the server. */
  ahead: boolean
  /** Whether the server ended it: what it sends is dropped, and it is read only to see it close. */
  ending: boolean
}

function runIoThread(port: NonNullable<typeof parentPort>, data: IoThreadData): void {
  const connections = new Map<number, Connection>()
  let nextConnection = 1
  // While the main thread is behind (the ring to it full), no connection is read: what is read
  // would wait in this thread's memory, without bound.
  let mainBehind = false
  const readAll = (read: boolean): void => {
    mainBehind = !read
    for (const { socket, pausedByMain, ahead, ending } of connections.values()) {
      if (pausedByMain || ahead || ending) continue
      if (read) socket.resume()
      else socket.pause()
    }
  }
  // The main thread is woken after every read of this turn (the poll phase), before this loop
  // sleeps: once per turn at most, and not at all while it is busy taking records.
  const out = new RingChannel(
    data.toMain,
    data.toThread,
    {
      wake: () => data.wakeups.postMessage(0),
      defer: setImmediate,
      full: () => readAll(false),
      room: () => readAll(true),
    },
    (type, id, payload) => apply(type, id, payload),
  )
  const post = (message: IoThreadControl): void => port.postMessage(message)
  const log = logTo(post)

  const accept = (socket: net.Socket): { onData(chunk: Buffer, length: number): void } => {
    const id = nextConnection
    nextConnection = nextConnection === 0xffffffff ? 1 : nextConnection + 1
    const connection: Connection = {
      socket,
      taken: 0,
      reportOnDrain: false,
      pausedByMain: false,
      read: 0,
      consumed: 0,
      ahead: false,
      ending: false,
    }
    connections.set(id, connection)
    socket.setNoDelay(true)
    if (mainBehind) socket.pause()
    const address = `${socket.remoteAddress ?? '?'}\n${socket.remotePort ?? 0}\n${socket.localAddress ?? '?'}\n${socket.localPort ?? 0}`
    out.put(OPENED, id, Buffer.from(address, 'latin1'))
    socket.on('error', (error) => out.put(FAILED, id, Buffer.from(error.message)))
    socket.on('close', () => {
      connections.delete(id)
      out.put(CLOSED, id)
    })
    socket.on('drain', () => {
      if (!connection.reportOnDrain) return
      connection.reportOnDrain = false
      report(id, connection)
    })
    return {
      onData: (chunk, length) => {
        if (connection.ending) return
        out.put(BYTES, id, chunk, 0, length)
        connection.read = (connection.read + length) >>> 0
        if ((connection.read - connection.consumed) >>> 0 < READ_AHEAD_BYTES) return
        connection.ahead = true
        socket.pause()
      },
    }
  }

  const apply = (type: number, id: number, payload: Buffer): void => {
    const connection = connections.get(id)
    if (connection === undefined) return
    const socket = connection.socket
    switch (type) {
      case BYTES:
      case BYTES_THEN_REPORT:
        // Copied: the socket may keep what it cannot send at once, and the ring's bytes are reused.
        socket.write(Buffer.from(payload))
        connection.taken = (connection.taken + payload.length) >>> 0
        if (type === BYTES_THEN_REPORT) {
          report(id, connection)
          connection.reportOnDrain = socket.writableLength > 0
        }
        break
      case CLOSED:
        // Read again, whatever paused it: the peer's end or reset is seen only by reading, and
        // until it is the connection stays open (the server ended it while its reading was paused).
        connection.ending = true
        socket.end()
        socket.resume()
        break
      case DESTROY:
        socket.destroy()
        break
      case PAUSE:
        connection.pausedByMain = true
        if (!connection.ending) socket.pause()
        break
      case RESUME:
        connection.pausedByMain = false
        if (!mainBehind && !connection.ahead) socket.resume()
        break
      case CONSUMED:
        connection.consumed = payload.readUInt32LE(0)
        if (connection.ahead && (connection.read - connection.consumed) >>> 0 < READ_AHEAD_BYTES / 2) {
          connection.ahead = false
          if (!mainBehind && !connection.pausedByMain) socket.resume()
        }
        break
      case KEEPALIVE:
        socket.setKeepAlive(true, payload.readUInt32LE(0))
        break
    }
  }

  const unsentReport = Buffer.alloc(8)
  const report = (id: number, connection: Connection): void => {
    unsentReport.writeUInt32LE(connection.taken, 0)
    unsentReport.writeUInt32LE(connection.socket.writableLength >>> 0, 4)
    out.put(UNSENT, id, unsentReport)
  }

  let listeners: net.Server[] = []
  data.wakeups.on('message', () => out.woken())
  port.on('message', (message: IoThreadControl) => {
    if (message.type === 'stop-listening') {
      let open = listeners.length
      if (open === 0) post({ type: 'stopped-listening' })
      for (const listener of listeners)
        listener.close(() => {
          if (--open === 0) post({ type: 'stopped-listening' })
        })
      listeners = []
    }
  })

  listenTcp(data.addresses, data.port, (listener) => acceptConnections(listener, accept), log, true).then(
    (tcp) => {
      listeners = tcp.listeners
      post({ type: 'listening', port: tcp.port, hosts: tcp.hosts })
    },
    (error: NodeJS.ErrnoException) => post({ type: 'listen-failed', message: error.message, code: error.code }),
  )
}

/** The thread's log lines, written by the main thread's logger. */
function logTo(post: (message: IoThreadControl) => void): Logger {
  const line =
    (level: keyof Logger) =>
    (message: string): void =>
      post({ type: 'log', level, message })
  return { debug: line('debug'), verbose: line('verbose'), notice: line('notice'), warning: line('warning') }
}

if (parentPort !== null) runIoThread(parentPort, workerData as IoThreadData)
