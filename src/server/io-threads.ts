/**
 * io-threads N > 1: N threads in all, as in redis. N - 1 I/O threads (io-thread.ts) listen on the
 * plaintext port, each with its own socket (`reusePort`), accept and read and write the
 * connections, and answer BF.EXISTS, BF.MEXISTS, BF.CARD, BF.ADD, BF.MADD and BF.INSERT themselves when they
 * may (thread-plane.ts);
 * the main thread runs every other command, as with one thread, in one order. A connection
 * reaches the server as a RemoteSocket, through the same accept as a socket of its own, so
 * everything a client is and does (ACL, MULTI, WATCH, pub/sub, MONITOR, CLIENT LIST/KILL/PAUSE,
 * timeout, output limits, replication links) is the main thread's, unchanged.
 *
 * What the threads take off the main thread is the per-read and per-write work around each
 * request (system calls, libuv callbacks, stream bookkeeping), and the whole of the checks they
 * answer. Bytes pass through shared rings (thread-ring.ts); a side is woken only when it sleeps,
 * so a busy main thread takes every thread's reads without a message.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { MessageChannel, Worker } from 'node:worker_threads'
import type { Logger } from '../runtime/logger.js'
import type { ConnectionReader } from './accept-connections.js'
import type { ClientSocket } from './client.js'
import type { IoThreadControl, IoThreadData } from './io-thread.js'
import { listenTcp, type BindAddress } from './listeners.js'
import { RemoteSocket, type ThreadOutbox } from './remote-socket.js'
import { ACTIVE, CLOSED, FAILED, JOURNALED, OPENED, READ, RING_BYTES, SLOW, UNSENT } from './thread-wire.js'
import { Client } from './client.js'
import type { PlaneMessage, PlaneNotice, ThreadPlane } from './thread-plane.js'
import { RingChannel, createRing } from './thread-ring.js'
import type { TlsPort } from './tls-listeners.js'
import type { TlsServerSetup } from '../runtime/tls-context.js'

/** A connection accepted by a thread: its reader, or undefined when the server refused it. */
export type AcceptRemote = (socket: ClientSocket) => ConnectionReader | undefined

/**
 * The thread's module: beside this one when built; from the build when this runs from the
 * TypeScript sources (the tests), as a worker thread runs JavaScript only.
 */
function ioThreadModule(): string {
  const here = fileURLToPath(import.meta.url)
  const beside = path.join(path.dirname(here), 'io-thread.js')
  if (existsSync(beside)) return beside
  return path.resolve(path.dirname(here), '../../dist/server/io-thread.js')
}

/**
 * An I/O thread's young generation: what `npm start`'s --max-semi-space-size=1 gives (3 MB). Its
 * garbage is small and short-lived (a few objects per read and write); V8's default (up to 16 MB
 * per semi-space, two or three of them) would cost up to tens of MB of RSS per thread.
 */
const IO_THREAD_YOUNG_GENERATION_MB = 3

/** One I/O thread and the connections it serves, seen from the main thread. */
class ThreadLink implements ThreadOutbox {
  private readonly sockets = new Map<number, RemoteSocket>()
  private readonly channel: RingChannel
  /** Resolves with the control messages awaited (listening, stopped listening). */
  private awaiting: ((message: IoThreadControl) => void) | undefined
  exited = false

  constructor(
    readonly thread: number,
    readonly worker: Worker,
    rings: { toMain: SharedArrayBuffer; toThread: SharedArrayBuffer },
    /** The wake-ups both ways: a port of its own is cheaper to post to than the worker. */
    wakeups: MessageChannel,
    private readonly accept: AcceptRemote,
    log: Logger,
    private readonly plane: ThreadPlane | undefined,
  ) {
    // The thread is woken once the current callback returned: after the server's end-of-turn
    // flush, which writes every client's replies in one callback.
    this.channel = new RingChannel(
      rings.toThread,
      rings.toMain,
      { wake: () => wakeups.port1.postMessage(0), defer: process.nextTick },
      this.onRecord,
    )
    wakeups.port1.on('message', () => this.channel.woken())
    worker.on('message', (message: IoThreadControl) => {
      if (message.type === 'log') log[message.level](message.message)
      else this.awaiting?.(message)
    })
    worker.on('error', (error) => log.warning(`An I/O thread failed: ${error.stack ?? error.message}`))
    worker.on('exit', () => {
      wakeups.port1.close()
      this.exited = true
      // Its connections are gone with it.
      for (const socket of [...this.sockets.values()]) socket.closed()
      this.awaiting?.({ type: 'listen-failed', message: 'the I/O thread exited' })
    })
  }

  /** The next control message (listening or not, stopped listening). */
  next(): Promise<IoThreadControl> {
    return new Promise((resolve) => {
      this.awaiting = (message) => {
        this.awaiting = undefined
        resolve(message)
      }
    })
  }

  put(type: number, connection: number, payload?: Uint8Array): void {
    this.channel.put(type, connection, payload)
  }

  putNumber(type: number, connection: number, value: number): void {
    this.channel.putNumber(type, connection, value)
  }

  forget(connection: number): void {
    this.sockets.delete(connection)
  }

  /** The client of a connection, while it is open. */
  clientOf(connection: number): Client | undefined {
    const client = this.sockets.get(connection)?.reader
    return client instanceof Client ? client : undefined
  }

  private readonly onRecord = (type: number, connection: number, payload: Buffer): void => {
    if (type === READ) {
      this.sockets.get(connection)?.received(payload.readUInt32LE(0), payload.subarray(4))
      return
    }
    if (type === OPENED) {
      this.opened(connection, payload.toString('latin1').split('\n'))
      return
    }
    if (type === JOURNALED) {
      this.plane?.journaled()
      return
    }
    const socket = this.sockets.get(connection)
    if (socket === undefined) return
    if (type === UNSENT) socket.unsentReported(payload.readUInt32LE(0), payload.readUInt32LE(4))
    else if (type === ACTIVE || type === SLOW) this.answeredByThread(socket, type, payload)
    else if (type === FAILED) socket.emit('error', new Error(payload.toString()))
    else if (type === CLOSED) socket.closed()
  }

  /** What the thread answered itself: the client is not idle; a slow read goes to the SLOWLOG. */
  private answeredByThread(socket: RemoteSocket, type: number, payload: Buffer): void {
    const client = socket.reader
    if (this.plane === undefined || !(client instanceof Client)) return
    if (type === ACTIVE) this.plane.touched(client, payload[0]!)
    else this.plane.slow(client, payload)
  }

  private opened(connection: number, [remoteAddress, remotePort, localAddress, localPort, encrypted]: string[]): void {
    const socket = new RemoteSocket(
      this,
      connection,
      remoteAddress!,
      Number(remotePort),
      localAddress!,
      Number(localPort),
      encrypted === '1',
    )
    this.sockets.set(connection, socket)
    socket.reader = this.accept(socket)
  }
}

/** The running I/O threads. */
export class IoThreads {
  /** The TLS port the threads serve, if any. */
  readonly tls: TlsPort | undefined

  private constructor(
    private readonly links: ThreadLink[],
    readonly port: number,
    readonly hosts: string[],
    tlsPort: number,
    tlsHosts: string[],
    plane: ThreadPlane | undefined,
  ) {
    if (tlsHosts.length === 0) return
    this.tls = {
      port: tlsPort,
      hosts: tlsHosts,
      get handshakes() {
        return plane?.handshakes() ?? 0
      },
      reconfigure: (setup) => {
        for (const link of this.links) if (!link.exited) link.worker.postMessage({ type: 'tls-setup', setup })
      },
      // The threads' TLS listeners close with their plaintext ones (stopListening).
      close: () => [],
    }
  }

  /**
   * Starts `count` threads listening on `port` (0: a free port, the first thread's; undefined:
   * none) at each address, and on the TLS port when `tls` is given. Each port is first bound once
   * without `reusePort` and released, so that a port another process listens on is refused (with
   * reusePort alone, a second server of the same user would share it silently).
   *
   * @throws Error as listenTcp does (an address in use, none of the addresses exists)
   */
  static async start(
    count: number,
    addresses: readonly BindAddress[],
    port: number | undefined,
    accept: AcceptRemote,
    log: Logger,
    plane?: ThreadPlane,
    tls?: { readonly port: number; readonly setup: TlsServerSetup },
  ): Promise<IoThreads> {
    for (const probed of [port, tls?.port]) {
      if (probed === undefined || probed <= 0) continue
      const probe = await listenTcp(addresses, probed, () => {}, log)
      await Promise.all(probe.listeners.map((listener) => new Promise((resolve) => listener.close(resolve))))
    }
    const links: ThreadLink[] = []
    let bound = port
    let hosts: string[] = []
    // tls-port -1 (tests): a free port, the first thread's, then the same for every thread.
    let tlsBound = tls === undefined ? 0 : Math.max(tls.port, 0)
    let tlsHosts: string[] = []
    try {
      for (let i = 0; i < count; i++) {
        const wakeups = new MessageChannel()
        const data: IoThreadData = {
          addresses,
          port: bound,
          tls: tls === undefined ? undefined : { port: tlsBound, setup: tls.setup },
          toMain: createRing(RING_BYTES),
          toThread: createRing(RING_BYTES),
          wakeups: wakeups.port2,
          thread: i,
          plane:
            plane === undefined
              ? undefined
              : { control: plane.control, counters: plane.counterMemory, journal: plane.journals[i]!, threads: count },
        }
        const worker = new Worker(ioThreadModule(), {
          workerData: data,
          transferList: [wakeups.port2],
          resourceLimits: { maxYoungGenerationSizeMb: IO_THREAD_YOUNG_GENERATION_MB },
        })
        const link = new ThreadLink(i, worker, data, wakeups, accept, log, plane)
        links.push(link)
        if (plane !== undefined) plane.clientOf = (thread, connection) => links[thread]?.clientOf(connection)
        const answer = await link.next()
        if (answer.type !== 'listening')
          throw Object.assign(new Error(answer.type === 'listen-failed' ? answer.message : 'no answer'), {
            code: answer.type === 'listen-failed' ? answer.code : undefined,
          })
        if (bound !== undefined) bound = answer.port
        hosts = answer.hosts
        tlsBound = answer.tlsPort
        tlsHosts = answer.tlsHosts
      }
    } catch (error) {
      await Promise.all(links.map((link) => link.worker.terminate()))
      throw error
    }
    const ports = [bound === undefined ? '' : `port ${bound}`, tls === undefined ? '' : `tls-port ${tlsBound}`]
    log.notice(
      `${count} I/O thread${count === 1 ? '' : 's'} serve${count === 1 ? 's' : ''} ${ports.filter((p) => p !== '').join(' and ')} and answer BF.EXISTS, BF.MEXISTS, BF.CARD, BF.ADD, BF.MADD and BF.INSERT; the main thread runs the other commands`,
    )
    return new IoThreads(links, bound ?? 0, hosts, tlsBound, tlsHosts, plane)
  }

  /** A message to one thread's checks (thread-plane.ts). */
  post(thread: number, message: PlaneMessage | PlaneNotice): void {
    const link = this.links[thread]
    if (link !== undefined && !link.exited) link.worker.postMessage(message)
  }

  /** Stops accepting connections; those open are served until they close. */
  async stopListening(): Promise<void> {
    await Promise.all(
      this.links.map(async (link) => {
        if (link.exited) return
        const stopped = link.next()
        link.worker.postMessage({ type: 'stop-listening' } satisfies IoThreadControl)
        await stopped
      }),
    )
  }

  /** Ends the threads (their connections closed first by the server). */
  async terminate(): Promise<void> {
    await Promise.all(this.links.map((link) => link.worker.terminate()))
  }
}
