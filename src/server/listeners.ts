/**
 * The RESP listeners: one TCP listener per `bind` address, read as redis 7.0 reads them (a `-`
 * prefix: skipped when the machine lacks the address; `*`: every IPv4 address, `::*`: every IPv6
 * one), and the optional Unix socket (`unixsocket`, `unixsocketperm`).
 */
import net from 'node:net'
import { chmodSync, unlinkSync } from 'node:fs'
import type { Logger } from '../runtime/logger.js'

/** One `bind` word: the host to listen on, and whether a missing address is skipped. */
export interface BindAddress {
  readonly host: string
  readonly optional: boolean
}

/** The words of `bind` as redis config.c and server.c listenToPort read them. */
export function bindAddresses(bind: string): BindAddress[] {
  return bind
    .split(/\s+/)
    .filter((word) => word !== '')
    .map((word) => {
      const optional = word.startsWith('-')
      const bare = optional ? word.slice(1) : word
      return { host: bare === '*' ? '0.0.0.0' : bare === '::*' ? '::' : bare, optional }
    })
}

/** The errors of an address the machine does not have (redis listenToPort skips them for `-` addresses). */
const MISSING_ADDRESS = new Set(['EADDRNOTAVAIL', 'EAFNOSUPPORT', 'EPROTONOSUPPORT'])

/** Listens, resolving once listening and rejecting with the listen error. */
function listen(listener: net.Server, options: net.ListenOptions & { reusePort?: boolean }): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    listener.once('error', reject)
    listener.listen(options, () => {
      listener.off('error', reject)
      resolve()
    })
  })
}

/** What listenTcp bound: the listeners, the port they share and their hosts. */
export interface TcpListeners {
  readonly listeners: net.Server[]
  readonly port: number
  readonly hosts: string[]
}

/**
 * A listener on each address (port 0: the port the first one got, for all). `wire` is called with
 * each new listener before the next is opened; `log` names each as the tests and operators read it.
 */
export async function listenTcp(
  addresses: readonly BindAddress[],
  port: number,
  wire: (listener: net.Server) => void,
  log: Logger,
  /** Several threads listen on the same port (io-threads), the kernel spreading connections over them. */
  reusePort = false,
): Promise<TcpListeners> {
  const listeners: net.Server[] = []
  const hosts: string[] = []
  let boundPort = port
  for (const { host, optional } of addresses) {
    const listener = net.createServer()
    try {
      // A deep accept queue so a burst of connects (c10k) is not dropped and retried; the kernel
      // caps it at somaxconn. IPv6 addresses take IPv6 only, so that `* ::*` can share a port.
      await listen(listener, { port: boundPort, host, backlog: 4096, ipv6Only: host.includes(':'), reusePort })
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? ''
      if (optional && MISSING_ADDRESS.has(code)) {
        log.verbose(`Skipping the optional bind address ${host}: ${code}`)
        continue
      }
      // The start fails: the listeners already open close with it.
      for (const open of listeners) open.close()
      throw error
    }
    // After listening, an accept error (EMFILE past `ulimit -n`) must not crash the process.
    listener.on('error', (error) => log.warning(`Accepting a client connection: ${error.message}`))
    wire(listener)
    boundPort = (listener.address() as net.AddressInfo).port
    listeners.push(listener)
    hosts.push(host)
  }
  if (listeners.length === 0 && addresses.length > 0)
    throw new Error(
      `none of the bind addresses (${addresses.map((address) => address.host).join(' ')}) exists on this machine`,
    )
  return { listeners, port: boundPort, hosts }
}

/**
 * The Unix socket listener: a file left at the path (a crash) is removed first, as redis does, and
 * `perm` (when not 0) set on the new one. Node removes the file when the listener closes.
 */
export async function listenUnix(
  socketPath: string,
  perm: number,
  wire: (listener: net.Server) => void,
  log: Logger,
): Promise<net.Server> {
  try {
    unlinkSync(socketPath)
  } catch {
    // No file there: nothing to remove.
  }
  const listener = net.createServer()
  await listen(listener, { path: socketPath, backlog: 4096 })
  if (perm !== 0) chmodSync(socketPath, perm)
  listener.on('error', (error) => log.warning(`Accepting a client connection: ${error.message}`))
  wire(listener)
  log.notice(`The server is now ready to accept connections at ${socketPath}`)
  return listener
}
