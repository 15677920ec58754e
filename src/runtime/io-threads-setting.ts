/**
 * How many I/O threads a server starts with: `io-threads` (config-process.ts; 0 is `auto`)
 * resolved against the machine's cores and the Node.js that runs bfs. Each thread listens on the
 * same port with `net` listen's `reusePort` (Node.js 22.12 and 23.1 on), so an older Node serves
 * from one thread. Pure: the caller passes the cores (os.availableParallelism()) and
 * process.version, and logs the warning.
 */

/** `auto` takes a core less than the machine has (one left to the system and the clients), at most this many. */
export const MAX_AUTO_IO_THREADS = 8

/** Below this many cores `auto` is one thread: the threads would take the main thread's core. */
export const MIN_CORES_FOR_AUTO_THREADS = 4

/** The resolved count, and the line to log when the count asked for cannot be had. */
export interface IoThreadsSetting {
  readonly threads: number
  readonly warning?: string
}

/** Whether this Node.js (process.version: `v22.12.0`, or without the `v`) has `reusePort` on `net` listen. */
export function nodeHasReusePort(version: string): boolean {
  const match = /^v?(\d+)\.(\d+)\./.exec(version)
  if (match === null) return false
  const major = Number(match[1])
  const minor = Number(match[2])
  if (major === 22) return minor >= 12
  if (major === 23) return minor >= 1
  return major > 23
}

/** `auto`'s count on a machine of `cores`. */
function autoThreads(cores: number): number {
  return cores < MIN_CORES_FOR_AUTO_THREADS ? 1 : Math.min(MAX_AUTO_IO_THREADS, cores - 1)
}

/**
 * The threads to start for `requested` (0 = auto: one below 4 cores, else cores - 1, at most 8;
 * a number is taken as is) on a machine of `cores` under Node.js `nodeVersion`. Without
 * `reusePort` more than one thread resolves to one: with a warning for a number asked for, silently
 * for auto.
 */
export function resolveIoThreads(requested: number, cores: number, nodeVersion: string): IoThreadsSetting {
  const auto = requested === 0
  const threads = auto ? autoThreads(cores) : requested
  if (threads === 1 || nodeHasReusePort(nodeVersion)) return { threads }
  if (auto) return { threads: 1 }
  const version = nodeVersion.replace(/^v/, '')
  return {
    threads: 1,
    warning: `io-threads ${requested} needs Node.js 22.12 or later (this is ${version}): serving from one thread`,
  }
}
