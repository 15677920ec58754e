/**
 * The TLS port (tls-port): one TLS listener per `bind` address, whose connections, once their
 * handshake is done, are served by the same Client as a plaintext one (the TLS socket is a
 * net.Socket, read through 'data'). The plaintext listeners are untouched: TLS costs nothing on
 * their path. A handshake that fails (plaintext bytes, no certificate under tls-auth-clients
 * yes, an untrusted one) closes that connection only and logs why, as redis does. CONFIG SET of
 * a TLS key replaces every listener's context for new connections, or changes nothing.
 */
import tls from 'node:tls'
import type net from 'node:net'
import type { Logger } from '../runtime/logger.js'
import type { TlsServerSetup } from '../runtime/tls-context.js'
import type { BindAddress } from './listeners.js'
import type { ConnectionReader } from './accept-connections.js'

/** The errors of an address the machine does not have (listeners.ts skips them for `-` addresses). */
const MISSING_ADDRESS = new Set(['EADDRNOTAVAIL', 'EAFNOSUPPORT', 'EPROTONOSUPPORT'])

function listen(listener: tls.Server, options: net.ListenOptions & { reusePort?: boolean }): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    listener.once('error', reject)
    listener.listen(options, () => {
      listener.off('error', reject)
      resolve()
    })
  })
}

/** Whether a connection under tls-auth-clients optional presented a certificate that did not verify. */
function badOptionalCertificate(socket: tls.TLSSocket): boolean {
  if (socket.authorized) return false
  const peer = socket.getPeerCertificate()
  return peer !== null && Object.keys(peer).length > 0
}

/** " (addr=ip:port)" while the socket still knows its peer. */
function peerOf(socket: tls.TLSSocket): string {
  return socket.remoteAddress === undefined ? '' : ` (addr=${socket.remoteAddress}:${socket.remotePort ?? 0})`
}

/** What the server holds of its TLS port: the main thread's listeners, or the I/O threads' (io-threads.ts). */
export interface TlsPort {
  readonly port: number
  readonly hosts: string[]
  /** Connections still in their handshake (they count against maxclients). */
  readonly handshakes: number
  /** New connections use `setup` from now on; connections already open keep theirs. */
  reconfigure(setup: TlsServerSetup): void
  /** Stops listening; each promise resolves once its listener's connections have all ended. */
  close(): Promise<void>[]
}

/** The TLS listeners and the setup they were made with. */
export class TlsListeners implements TlsPort {
  readonly listeners: tls.Server[] = []
  readonly hosts: string[] = []
  port = 0
  /**
   * Connections still in their TLS handshake (the TCP sockets under them): not clients yet, so
   * the server's close would not end them, and a listener's close waits for every connection.
   */
  private readonly handshaking = new Set<net.Socket>()

  /** Connections dropped before their handshake (maxclients): not logged as failed handshakes. */
  private readonly dropped = new WeakSet<net.Socket>()

  /**
   * @param admits whether one more connection may start its handshake, given those under way (redis
   *   acceptCommonHandler counts a TLS connection against maxclients from its accept)
   */
  /**
   * @param counted told the count of handshakes under way whenever it changes (an I/O thread
   *   shares it with the others: io-thread.ts)
   */
  constructor(
    private setup: TlsServerSetup,
    private readonly log: Logger,
    private readonly admits: (handshaking: number) => boolean = () => true,
    private readonly counted: (handshaking: number) => void = () => {},
  ) {}

  /**
   * A listener on each address (port -1: the free port the first one got, for all); `accept`
   * gets each connection once its handshake is done, and returns its reader (undefined: refused).
   * `reusePort`: beside other threads' listeners on the same port (io-thread.ts).
   */
  async listen(
    addresses: readonly BindAddress[],
    port: number,
    accept: (socket: net.Socket) => ConnectionReader | undefined,
    reusePort = false,
  ): Promise<void> {
    let boundPort = port === -1 ? 0 : port
    for (const { host, optional } of addresses) {
      const listener = tls.createServer(this.setup.options)
      try {
        await listen(listener, { port: boundPort, host, backlog: 4096, ipv6Only: host.includes(':'), reusePort })
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? ''
        if (optional && MISSING_ADDRESS.has(code)) continue
        this.close()
        throw error
      }
      this.wire(listener, accept)
      boundPort = (listener.address() as net.AddressInfo).port
      this.listeners.push(listener)
      this.hosts.push(host)
    }
    if (this.listeners.length === 0 && addresses.length > 0)
      throw new Error(
        `none of the bind addresses (${addresses.map((address) => address.host).join(' ')}) exists on this machine`,
      )
    this.port = boundPort
  }

  private wire(listener: tls.Server, accept: (socket: net.Socket) => ConnectionReader | undefined): void {
    listener.on('error', (error) => this.log.warning(`Accepting a client connection: ${error.message}`))
    // redis networking.c clientAcceptHandler: a connection whose handshake fails is closed and logged.
    listener.on('tlsClientError', (error, socket) => {
      if (this.dropped.has((socket as unknown as { _parent?: net.Socket })._parent!)) return
      // A certificate that did not verify ends the handshake without an error of its own (Node: "socket hang up").
      const why = !socket.authorizationError
        ? error.message.trim()
        : `certificate verify failed: ${String(socket.authorizationError)}`
      this.log.warning(`Error accepting a client connection: ${why}${peerOf(socket)}`)
      socket.destroy()
    })
    listener.on('connection', (raw: net.Socket) => {
      if (!this.admits(this.handshaking.size)) {
        // redis: "for TLS connections, no handshake was done yet so nothing is written and the connection will just drop".
        this.dropped.add(raw)
        raw.destroy()
        return
      }
      this.handshaking.add(raw)
      this.counted(this.handshaking.size)
      raw.once('close', () => {
        if (this.handshaking.delete(raw)) this.counted(this.handshaking.size)
      })
    })
    listener.on('secureConnection', (socket: tls.TLSSocket) => {
      // Node's TLS socket keeps the TCP socket it wraps as _parent.
      if (this.handshaking.delete((socket as unknown as { _parent?: net.Socket })._parent!))
        this.counted(this.handshaking.size)
      if (this.setup.optionalClientCert && badOptionalCertificate(socket)) {
        this.log.warning(
          `Error accepting a client connection: certificate verify failed: ${String(socket.authorizationError)}${peerOf(socket)}`,
        )
        socket.destroy()
        return
      }
      const reader = accept(socket)
      if (reader !== undefined) socket.on('data', (chunk: Buffer) => reader.onData(chunk, chunk.length))
    })
  }

  get handshakes(): number {
    return this.handshaking.size
  }

  /** New connections use `setup` (checked: runtime/tls-context.ts) from now on; connections already open keep theirs. */
  reconfigure(setup: TlsServerSetup): void {
    for (const listener of this.listeners) {
      listener.setSecureContext(setup.options)
      // Node's server reads these for each new connection; setSecureContext leaves them as they were.
      Object.assign(listener, {
        requestCert: setup.options.requestCert,
        rejectUnauthorized: setup.options.rejectUnauthorized,
      })
    }
    this.setup = setup
  }

  /** Stops listening and drops the handshakes under way; each promise resolves once its listener's connections have all ended. */
  close(): Promise<void>[] {
    const closed = this.listeners.map((listener) => new Promise<void>((resolve) => listener.close(() => resolve())))
    for (const raw of this.handshaking) raw.destroy()
    return closed
  }
}
