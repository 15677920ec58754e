/**
 * Opening every RESP listener at start: the plaintext TCP port on each `bind` address (none when
 * `port` is 0 beside a TLS port, as in Redis), the TLS port (tls-listeners.ts), and the Unix
 * socket, each routed to the server's accept.
 */
import type net from 'node:net'
import type { Config } from '../runtime/config.js'
import type { Logger } from '../runtime/logger.js'
import type { Stats } from '../runtime/stats.js'
import { TlsConfigError, checkTlsConfig, tlsEnabled, type TlsServerSetup } from '../runtime/tls-context.js'
import { acceptConnections, type ConnectionReader } from './accept-connections.js'
import { bindAddresses, listenTcp, listenUnix, type BindAddress } from './listeners.js'
import { openBindWarning } from './startup-checks.js'
import { TlsListeners, type TlsPort } from './tls-listeners.js'
import type { ClientSocket } from './client.js'
import { IoThreads } from './io-threads.js'
import type { ThreadPlane } from './thread-plane.js'

/** What start() listens on. */
export interface OpenListeners {
  /** The plaintext TCP listeners and the Unix socket's. */
  readonly listeners: net.Server[]
  /** The TLS port: the main thread's listeners, or the I/O threads'. */
  readonly tls: TlsPort | undefined
  /** The plaintext TCP port (0 with no plaintext listener). */
  readonly port: number
  /** The addresses listened on. */
  readonly hosts: string[]
  /** The I/O threads serving the plaintext and TLS ports (io-threads > 1). */
  readonly threads: IoThreads | undefined
}

/** A new connection: its reader, or undefined when refused. */
export type Accept = (socket: ClientSocket, unix: boolean) => ConnectionReader | undefined

/** What the listeners need from the server: its accept, and its client count and stats for the TLS port's maxclients. */
export interface ListenerHost {
  readonly accept: Accept
  readonly clientCount: () => number
  readonly stats: Stats
  /** Threads serving the plaintext port: 1 is the main thread alone (io-threads). */
  readonly ioThreads: number
  /** With io-threads > 1: the checks the I/O threads answer themselves (thread-plane.ts). */
  readonly threadPlane?: ThreadPlane | undefined
}

/**
 * Cluster mode knows a node by the plaintext port, or under tls-cluster by the TLS one (nodes.conf,
 * the links between nodes); a plaintext port beside it is given to plaintext clients (CLUSTER
 * SLOTS/NODES, MOVED/ASK), as Redis 7.0 does.
 */
function checkClusterPorts(config: Config, plaintext: boolean): void {
  if (!config['tls-cluster'] && !plaintext)
    throw new Error(
      'cluster mode without tls-cluster needs the plaintext port: set port beside tls-port (or tls-cluster yes)',
    )
  if (!config['tls-cluster']) return
  if (config['tls-port'] === 0) throw new Error('tls-cluster yes needs a tls-port')
  if (!config['tls-replication'])
    throw new Error("tls-cluster yes needs tls-replication yes (a replica connects to its master's TLS port)")
}

/**
 * The plaintext port: the main thread's own listeners, or, with io-threads N > 1, those of N - 1
 * I/O threads (N threads in all, as in redis: the main thread runs the commands the threads do not answer), whose
 * connections come to the same accept. The threads serve the TLS port too, when there is one
 * (`threads.tls`), with or without a plaintext port.
 */
async function openThreadsOrPlaintext(
  config: Config,
  addresses: readonly BindAddress[],
  host: ListenerHost,
  log: Logger,
  plaintext: boolean,
  tls: TlsServerSetup | undefined,
): Promise<{ listeners: net.Server[]; port: number; hosts: string[]; threads?: IoThreads } | undefined> {
  if (host.ioThreads > 1) {
    const threads = await IoThreads.start(
      host.ioThreads - 1,
      addresses,
      plaintext ? config.port : undefined,
      (socket) => host.accept(socket, false),
      log,
      host.threadPlane,
      tls === undefined ? undefined : { port: config['tls-port'], setup: tls },
    )
    return { listeners: [], port: threads.port, hosts: threads.hosts, threads }
  }
  if (!plaintext) return undefined
  const wire = (listener: net.Server): boolean => acceptConnections(listener, (socket) => host.accept(socket, false))
  return listenTcp(addresses, config.port, wire, log)
}

/**
 * The TLS port's setup, every file read and checked now; undefined without a TLS port.
 * @throws Error "Failed to configure TLS: ..." for a TLS configuration that cannot be used
 */
function tlsPortSetup(config: Config): TlsServerSetup | undefined {
  if (!tlsEnabled(config)) return undefined
  try {
    const setup = checkTlsConfig(config)
    return config['tls-port'] !== 0 ? setup : undefined
  } catch (error) {
    if (error instanceof TlsConfigError) throw new Error(`Failed to configure TLS: ${error.message}`, { cause: error })
    throw error
  }
}

/** @throws Error (a TLS configuration that cannot be used, an address in use, ...) */
export async function openListeners(
  config: Config,
  log: Logger,
  cluster: boolean,
  host: ListenerHost,
): Promise<OpenListeners> {
  const accept = host.accept
  const addresses = bindAddresses(config.bind)
  // In protected mode (redis 7.0) only local clients are served while there is no password.
  const bindWarning = config['protected-mode']
    ? undefined
    : openBindWarning(
        addresses.map((address) => address.host),
        config.requirepass,
      )
  if (bindWarning !== undefined) log.warning(bindWarning)
  const tlsSetup = tlsPortSetup(config)
  // The main thread's own TLS listeners, unless the I/O threads serve the TLS port.
  let tls: TlsPort | undefined
  if (tlsSetup !== undefined && host.ioThreads <= 1) {
    // A connection in its handshake counts against maxclients, as in redis.
    const admits = (handshaking: number): boolean => {
      if (host.clientCount() + handshaking < config.maxclients) return true
      host.stats.rejectedConnections++
      return false
    }
    tls = new TlsListeners(tlsSetup, log, admits)
  }
  // redis: port 0 beside a TLS port is no plaintext listener (bfs's port 0 alone: any free port).
  const plaintext = tlsSetup === undefined || config.port !== 0
  if (cluster) checkClusterPorts(config, plaintext)
  const wire = (unix: boolean) => (listener: net.Server) =>
    acceptConnections(listener, (socket) => accept(socket, unix))
  const listeners: net.Server[] = []
  const mode = `Running mode=${cluster ? 'cluster' : 'standalone'}`
  const tcp = await openThreadsOrPlaintext(config, addresses, host, log, plaintext, tlsSetup)
  const threads = tcp?.threads
  if (tcp !== undefined) listeners.push(...tcp.listeners)
  const port = plaintext ? (tcp?.port ?? 0) : 0
  const hosts = plaintext ? [...(tcp?.hosts ?? [])] : []
  // A later listener that fails stops the start: what was opened closes with it.
  const abandon = async (error: unknown): Promise<never> => {
    for (const listener of listeners) listener.close()
    await threads?.terminate()
    throw error
  }
  for (const host of hosts) {
    log.notice(`${mode}, port=${port}.`)
    log.notice(`Listening on ${host}:${port}`)
  }
  if (tls instanceof TlsListeners) {
    try {
      await tls.listen(addresses, config['tls-port'], (socket) => accept(socket, false))
    } catch (error) {
      await abandon(error)
    }
  }
  tls ??= threads?.tls
  if (tls !== undefined) {
    for (const host of tls.hosts) {
      log.notice(`${mode}, tls-port=${tls.port}.`)
      log.notice(`Listening on ${host}:${tls.port} (TLS)`)
    }
    if (hosts.length === 0) hosts.push(...tls.hosts)
  }
  if (config.unixsocket !== '') {
    try {
      listeners.push(await listenUnix(config.unixsocket, config.unixsocketperm, wire(true), log))
    } catch (error) {
      await abandon(error)
    }
  }
  return { listeners, tls, port, hosts, threads }
}
