#!/usr/bin/env -S GLIBC_TUNABLES=glibc.malloc.mmap_threshold=16384 node --max-semi-space-size=1 --optimize-for-size
/**
 * The bfs command line: `bfs [path/to/bfs.conf] [--key value ...]`, like redis-server; a stock
 * redis.conf works too (the directives bfs has no use for are named in one warning).
 * SIGINT and SIGTERM shut down gracefully (saving when save rules are set) and exit 0.
 *
 * It runs with V8's young generation capped at 1 MB (`--max-semi-space-size=1`, in the shebang and
 * in `npm start`): the hot path allocates nothing per command, so a small young generation costs
 * no throughput. Both also pass `--optimize-for-size` (V8 keeps less code and metadata: about
 * 3 MB less RSS beside a 10M-item filter, and CPU per request within ±4 % on every row of
 * bench/cpu-ab.sh; bench/README.md, memory.sh) and set
 * `GLIBC_TUNABLES=glibc.malloc.mmap_threshold=16384`: every malloc of 16 KiB or more (each
 * Buffer from 16 KiB up: reply buffers, log and stream buffers) gets pages of its own, given back
 * when it is freed. Without it glibc raises that threshold as large blocks are freed, so they are
 * carved from its main heap instead, which it cannot shrink here (a reservation made at start sits
 * right after the brk area, so the heap grows in separate mappings that are never trimmed): after a
 * day's kind of use the freed blocks stayed resident, 20-35 MB of them (bench/README.md,
 * memory.sh). Elsewhere than glibc the variable is ignored.
 */
import { readFileSync } from 'node:fs'
import { ConfigError, type Config } from './runtime/config.js'
import { readConfig } from './runtime/config-load.js'
import { ignoredWarning } from './runtime/config-ignored.js'
import { DEFAULT_DAEMON_PIDFILE } from './runtime/config-process.js'
import { createServer, type BfsServer } from './server/server.js'
import { BFS_VERSION } from './runtime/version.js'
import { usageText } from './runtime/usage.js'
import {
  DAEMON_CHILD_ENV,
  daemonize,
  notifySystemd,
  removePidFile,
  reportToStarter,
  signalReady,
  supervisor,
  writePidFile,
} from './server/supervision.js'

/** Whether this process is the background copy `daemonize` started. */
const daemonChild = process.env[DAEMON_CHILD_ENV] !== undefined
delete process.env[DAEMON_CHILD_ENV]

/** A start-up failure: on stderr, and to the command that started a background copy. */
async function failed(message: string): Promise<number> {
  process.stderr.write(`bfs: ${message}\n`)
  if (daemonChild) await reportToStarter({ error: message })
  return 1
}

async function main(args: string[]): Promise<number> {
  if (args[0] === '--version' || args[0] === '-v') {
    process.stdout.write(`bfs v${BFS_VERSION}\n`)
    return 0
  }
  if (args[0] === '--help' || args[0] === '-h') {
    process.stdout.write(usageText())
    return 0
  }
  let fileText: string | undefined
  let flags = args
  if (args.length > 0 && !args[0]!.startsWith('--')) {
    try {
      fileText = readFileSync(args[0]!, 'utf8')
    } catch (error) {
      return failed(`cannot read config file '${args[0]}': ${(error as Error).message}`)
    }
    flags = args.slice(1)
  }
  let loaded
  try {
    loaded = readConfig(fileText, flags)
  } catch (error) {
    if (error instanceof ConfigError) return failed(error.message)
    throw error
  }
  const config = loaded.config
  // redis main(): daemonize only when not supervised.
  const background = config.daemonize && supervisor(config.supervised, process.env) === undefined
  if (background && !daemonChild) return daemonize(args)
  let server
  try {
    server = createServer({ config, configFile: fileText === undefined ? undefined : args[0] })
  } catch (error) {
    // rename-command naming a command that does not exist, or a name already taken.
    if (error instanceof ConfigError) return failed(error.message)
    throw error
  }
  server.log.notice(`bfs ${BFS_VERSION} starting, pid=${process.pid}`)
  const ignored = ignoredWarning(loaded.ignored)
  if (ignored !== undefined) server.log.warning(ignored)
  return run(server, config, background)
}

/** Runs the server until it shuts down: the pid file, the supervisor's notifications, the signals. */
async function run(server: BfsServer, config: Config, background: boolean): Promise<number> {
  const kind = supervisor(config.supervised, process.env, server.log)
  // redis createPidFile: with `pidfile`, or daemonized (then a default path).
  const pidfile = config.pidfile !== '' ? config.pidfile : background ? DEFAULT_DAEMON_PIDFILE : ''
  if (pidfile !== '') writePidFile(pidfile, server.log)
  try {
    await server.start()
  } catch (error) {
    server.log.warning(`Failed to start: ${(error as Error).message}`)
    if (pidfile !== '') removePidFile(pidfile, server.log)
    if (daemonChild) await reportToStarter({ error: `failed to start: ${(error as Error).message}` })
    return 1
  }
  if (daemonChild) await reportToStarter({ ready: true })
  // Not awaited: the signal handlers below must be in place at once. STOPPING=1 follows READY=1.
  const ready = signalReady(kind, server.log)
  let stoppingSent: Promise<void> | undefined
  const stopping = (): Promise<void> =>
    (stoppingSent ??= ready.then(() => (kind === 'systemd' ? notifySystemd(['STOPPING=1'], server.log) : undefined)))
  return new Promise<number>((resolve) => {
    let shuttingDown = false
    const stop = (signal: string): void => {
      if (shuttingDown) return
      shuttingDown = true
      server.log.warning(`Received ${signal} scheduling shutdown...`)
      void stopping()
      const error = server.shutdown({})
      if (error !== undefined) {
        // redis: "Error trying to save the DB, can't exit." The server keeps running; another
        // signal tries again.
        server.log.warning(`Error trying to shut down (${error}), can't exit.`)
        shuttingDown = false
      }
    }
    process.on('SIGINT', () => stop('SIGINT'))
    process.on('SIGTERM', () => stop('SIGTERM'))
    server.on('shutdown', (code?: number) => {
      void stopping().then(() => {
        if (pidfile !== '') removePidFile(pidfile, server.log)
        resolve(code ?? 0)
      })
    })
  })
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bfs: ${(error as Error)?.stack ?? String(error)}\n`)
    process.exit(1)
  },
)
