/**
 * How bfs runs as a service, as redis-server 7.0 does (server.c): the pid file (createPidFile,
 * removed at a clean exit), `daemonize`, and `supervised` (redisIsSupervised).
 *
 * Node has no fork(), so `daemonize yes` starts the same command again, detached and with its
 * output to /dev/null (redis's daemonize()), and the first process exits once the second tells it,
 * over an IPC channel, that it listens (or why it could not start). The command therefore returns
 * when the server answers, and a start-up error still reaches the terminal.
 *
 * Node has no Unix datagram sockets either, so the systemd notifications (READY=1, STOPPING=1 on
 * $NOTIFY_SOCKET) are sent by `systemd-notify`, which every systemd machine has: no native module
 * to build. systemd accepts a message from a process other than the main one only with
 * `NotifyAccess=all` in the unit. Without the tool the server logs a warning and runs on.
 */
import { spawn } from 'node:child_process'
import { unlinkSync, writeFileSync } from 'node:fs'
import type { Logger } from '../runtime/logger.js'
import type { SupervisedMode } from '../runtime/config-process.js'

/** Set in the environment of the background copy `daemonize` starts. */
export const DAEMON_CHILD_ENV = 'BFS_DAEMONIZED'

/** Writes the pid file, best effort as redis's createPidFile: a failure is a warning. */
export function writePidFile(file: string, log: Logger): void {
  try {
    writeFileSync(file, `${process.pid}\n`)
  } catch (error) {
    log.warning(`Failed to write PID file: ${(error as Error).message}`)
  }
}

export function removePidFile(file: string, log: Logger): void {
  log.notice('Removing the pid file.')
  try {
    unlinkSync(file)
  } catch {
    // Already gone (or never written): nothing to do.
  }
}

/** redis redisIsSupervised: the supervisor in effect, `auto` resolved from the environment; undefined for none. */
export function supervisor(
  mode: SupervisedMode,
  env: NodeJS.ProcessEnv,
  log?: Logger,
): 'systemd' | 'upstart' | undefined {
  let resolved = mode
  if (mode === 'auto') resolved = env.UPSTART_JOB ? 'upstart' : env.NOTIFY_SOCKET ? 'systemd' : 'no'
  if (resolved === 'upstart') {
    if (env.UPSTART_JOB) return 'upstart'
    log?.warning('upstart supervision requested, but UPSTART_JOB not found!')
  }
  if (resolved === 'systemd') {
    if (env.NOTIFY_SOCKET) {
      log?.notice(
        'Supervised by systemd. Please make sure you set appropriate values for TimeoutStartSec and TimeoutStopSec in your service unit.',
      )
      return 'systemd'
    }
    log?.warning('systemd supervision error: NOTIFY_SOCKET not found!')
  }
  return undefined
}

/**
 * Sends `assignments` (READY=1, STATUS=...) to $NOTIFY_SOCKET through systemd-notify; resolves
 * when it has run. A missing or failing tool is a warning.
 */
export function notifySystemd(assignments: readonly string[], log: Logger): Promise<void> {
  return new Promise<void>((resolve) => {
    const child = spawn('systemd-notify', [...assignments], { stdio: 'ignore' })
    child.once('error', (error) => {
      log.warning(`Cannot tell systemd ${assignments.join(' ')}: systemd-notify: ${error.message}`)
      resolve()
    })
    child.once('exit', (code) => {
      if (code !== 0) log.warning(`Cannot tell systemd ${assignments.join(' ')}: systemd-notify exited with ${code}`)
      resolve()
    })
  })
}

/** Readiness, as redis tells each supervisor: READY=1 to systemd, SIGSTOP for upstart (`expect stop`). */
export async function signalReady(kind: 'systemd' | 'upstart' | undefined, log: Logger): Promise<void> {
  if (kind === 'systemd') await notifySystemd(['READY=1', 'STATUS=Ready to accept connections'], log)
  if (kind === 'upstart') {
    log.notice('supervised by upstart, will stop to signal readiness.')
    delete process.env.UPSTART_JOB
    process.kill(process.pid, 'SIGSTOP')
  }
}

/** What the background copy tells the command that started it. */
type DaemonMessage = { ready: true } | { error: string }

/**
 * `daemonize yes`: starts this command again in the background (detached, output to /dev/null,
 * the same Node flags and arguments) and resolves with the exit code for this process: 0 once
 * the copy listens, 1 (its reason on stderr) if it stopped first.
 */
export function daemonize(args: readonly string[]): Promise<number> {
  return new Promise<number>((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, ...args], {
      detached: true,
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      env: { ...process.env, [DAEMON_CHILD_ENV]: '1' },
    })
    child.once('message', (message: DaemonMessage) => {
      if ('error' in message) {
        process.stderr.write(`bfs: ${message.error}\n`)
        return
      }
      child.disconnect()
      child.unref()
      resolve(0)
    })
    child.once('error', (error) => {
      process.stderr.write(`bfs: cannot start in the background: ${error.message}\n`)
      resolve(1)
    })
    child.once('exit', (code) => {
      process.stderr.write(`bfs: the background server exited (code ${code}) before it was ready\n`)
      resolve(1)
    })
  })
}

/** In the background copy: tells the command that started it that the server listens, or why it stopped; resolves once sent. */
export function reportToStarter(message: DaemonMessage): Promise<void> {
  return new Promise<void>((resolve) => {
    if (process.send === undefined || !process.connected) return resolve()
    process.send(message, () => {
      // Once ready, the channel closes so that the starter can exit and nothing holds this one.
      if ('ready' in message) process.disconnect()
      resolve()
    })
  })
}
