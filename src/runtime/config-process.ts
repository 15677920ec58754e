/**
 * The keys of how bfs runs as a process and who may reach it (redis 7.0's names, defaults and
 * meanings): protected mode, the Unix socket, daemonize, supervision, the pid file and the I/O
 * threads. Their rows
 * are spread into config.ts's table after the TLS keys; docs/reference/configuration.md and
 * bfs.conf.example list them there.
 */
import type { ConfigRow } from './config-row.js'

/** How bfs tells a supervisor it is ready (redis `supervised`). */
export type SupervisedMode = 'no' | 'upstart' | 'systemd' | 'auto'

/** The process keys of Config. */
export interface ProcessConfig {
  /**
   * While the default user has no password, only clients on loopback (127.0.0.1, ::1) or the Unix
   * socket are served; others get redis 7.0's -DENIED text and are closed (networking.c).
   */
  'protected-mode': boolean
  /** Path of a Unix socket to listen on too; '' for none. */
  unixsocket: string
  /** The socket file's permission bits (octal in the file and CONFIG GET: 700); 0 leaves the umask's. */
  unixsocketperm: number
  /** Run in the background: the command returns once the server is listening. */
  daemonize: boolean
  /** Tell a supervisor when ready and when stopping: systemd (READY=1, STOPPING=1), upstart (SIGSTOP), auto, no. */
  supervised: SupervisedMode
  /** File written with the pid at start and removed at a clean exit; '' for none (daemonize then uses /var/run/bfs.pid). */
  pidfile: string
  /**
   * Threads that accept and serve client connections, 1..128, or 0 for `auto` (resolved at start
   * by io-threads-setting.ts, which then stands here in its place). Start-time only, as in redis.
   */
  'io-threads': number
  /** Accepted for redis.conf and shown by CONFIG GET; no effect: every I/O thread reads and writes. */
  'io-threads-do-reads': boolean
}

type ProcessKey = keyof ProcessConfig

/** The most permission bits unixsocketperm takes (redis: 0..0777). */
export const MAX_SOCKET_PERM = 0o777

/** The most I/O threads (redis 7.0: io-threads 1..128). */
export const MAX_IO_THREADS = 128

/** redis CONFIG_DEFAULT_PID_FILE, bfs's name: the pid file of a daemonized server without `pidfile`. */
export const DEFAULT_DAEMON_PIDFILE = '/var/run/bfs.pid'

/** Their rows, in bfs.conf.example's order. */
export const PROCESS_CONFIG_ROWS = {
  'protected-mode': {
    kind: { type: 'boolean' },
    default: true,
    mutable: true,
    description:
      'while the default user has no password (no requirepass), serve only clients on loopback or the Unix socket; others get -DENIED (as Redis)',
  },
  unixsocket: {
    kind: { type: 'string', emptyIsNone: true },
    default: '',
    mutable: false,
    description: 'path of a Unix socket to listen on as well, "" for none',
  },
  unixsocketperm: {
    kind: { type: 'octal', max: MAX_SOCKET_PERM },
    default: 0,
    mutable: false,
    description: 'permissions of the Unix socket file in octal (700), 0 = as the umask leaves them',
  },
  daemonize: {
    kind: { type: 'boolean' },
    default: false,
    mutable: false,
    description: 'run in the background: the command returns once the server listens (not when supervised)',
  },
  supervised: {
    kind: { type: 'enum', values: ['no', 'upstart', 'systemd', 'auto'] },
    default: 'no',
    mutable: false,
    description:
      'tell a supervisor when ready: systemd (READY=1 and STOPPING=1 through systemd-notify, unit NotifyAccess=all), upstart (SIGSTOP), auto (from NOTIFY_SOCKET or UPSTART_JOB) or no',
  },
  pidfile: {
    kind: { type: 'string', emptyIsNone: true },
    default: '',
    mutable: false,
    description: `file the pid is written to at start and removed from at exit, "" for none (daemonize: ${DEFAULT_DAEMON_PIDFILE})`,
  },
  // Both immutable, as redis 7.0's (config.c: IMMUTABLE_CONFIG).
  'io-threads': {
    kind: { type: 'integer', min: 1, max: MAX_IO_THREADS, auto: true },
    default: 0,
    mutable: false,
    description:
      'threads in all, as Redis counts them: with N > 1, N - 1 I/O threads accept, read and write the client connections and answer BF.EXISTS, BF.MEXISTS, BF.CARD, BF.ADD, BF.MADD and BF.INSERT (into a filter that exists) themselves, and the main thread runs every other command, in one order, as with 1; auto (1 below 4 cores, else cores - 1, at most 8) or 1-128; needs Node.js 22.12 or later (older: one thread, with a log line); CONFIG GET shows the number in use',
  },
  'io-threads-do-reads': {
    kind: { type: 'boolean' },
    default: false,
    mutable: false,
    description: 'accepted for redis.conf, no effect: every I/O thread reads and writes',
  },
} satisfies { readonly [K in ProcessKey]: ConfigRow<ProcessConfig[K]> }
