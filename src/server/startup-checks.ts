/**
 * Checks made once at start, worded as redis-server 7.0 words them: too few file descriptors for
 * `maxclients` (server.c adjustOpenFilesLimit), and an address other than loopback reachable
 * without a password.
 */
import { readFileSync } from 'node:fs'

/** redis CONFIG_MIN_RESERVED_FDS: descriptors kept for listeners, files and logs. */
export const RESERVED_FDS = 32

/**
 * The soft limit on open files (`ulimit -n`) from /proc/self/limits, or undefined where that file
 * does not exist (not Linux) or says "unlimited".
 */
export function readOpenFilesLimit(limitsText?: string): number | undefined {
  let text = limitsText
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8')
    } catch {
      return undefined
    }
  }
  const match = /^Max open files\s+(\d+)/m.exec(text)
  return match ? Number(match[1]) : undefined
}

export interface FdCheck {
  /** maxclients to run with: reduced to fit the limit, as redis does. */
  maxclients: number
  /** Warning lines to log (none when the limit suffices or is unknown). */
  warnings: string[]
}

/**
 * redis server.c adjustOpenFilesLimit: each client takes a descriptor, plus RESERVED_FDS. Node
 * cannot raise its own limit, so when it is too low this says so and lowers maxclients to fit,
 * so that the client past it gets "-ERR max number of clients reached" rather than EMFILE.
 */
export function checkOpenFiles(maxclients: number, openFilesLimit: number | undefined): FdCheck {
  const needed = maxclients + RESERVED_FDS
  if (openFilesLimit === undefined || openFilesLimit >= needed) return { maxclients, warnings: [] }
  const reduced = Math.max(1, openFilesLimit - RESERVED_FDS)
  return {
    maxclients: reduced,
    warnings: [
      `You requested maxclients of ${maxclients} requiring at least ${needed} max file descriptors.`,
      `Current maximum open files is ${openFilesLimit}. maxclients has been reduced to ${reduced} to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.`,
    ],
  }
}

/** Whether an address only accepts connections from this machine. */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').toLowerCase()
  return bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare) || /^::ffff:127\./.test(bare)
}

/** The warning to log when a bind address other than loopback has no requirepass, or undefined. */
export function openBindWarning(addresses: readonly string[], requirepass: string): string | undefined {
  if (requirepass !== '') return undefined
  const open = addresses.filter((address) => !isLoopbackAddress(address))
  if (open.length === 0) return undefined
  return `WARNING: listening on ${open.join(' ')} with no requirepass: anyone who can reach ${open.length === 1 ? 'this address' : 'these addresses'} can read, add to and delete every filter. Set requirepass, or bind 127.0.0.1.`
}

/**
 * redis 7.0.15 networking.c islocalClient: a client on the Unix socket, or at 127.0.0.1 or ::1
 * (an IPv4 peer of a dual-stack listener shows as ::ffff:127.0.0.1).
 */
export function isLocalPeer(remoteAddress: string | undefined, unixSocket: boolean): boolean {
  return unixSocket || remoteAddress === '127.0.0.1' || remoteAddress === '::1' || remoteAddress === '::ffff:127.0.0.1'
}

/**
 * redis 7.0.15 clientAcceptHandler: in protected mode, while the default user has no password
 * (nopass: no requirepass, no password in its `user` line), a client that is not local is
 * refused with -DENIED, whatever `bind` says.
 */
export function protectedModeRefuses(protectedMode: boolean, defaultUserNoPass: boolean, local: boolean): boolean {
  return protectedMode && defaultUserNoPass && !local
}
