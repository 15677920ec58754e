/**
 * The clock behind INFO commandstats' usec and the SLOWLOG, read twice per read of a socket (a
 * burst of commands), not per command: a clock read costs about as much as 3 % of a pipelined
 * BF.ADD. {@link begin} when a read's commands start, {@link end} once they ran: the read's time
 * is shared evenly among the commands that ran in it (a command refused before it ran counts for
 * none; a read of one command is timed exactly). The SLOWLOG takes a read whose commands took
 * at least `slowlog-log-slower-than` µs together: its one command, as redis logs it, or for a
 * read of several its first command followed by "... (N more commands in the same read)" (EXEC
 * is never logged, the commands it ran are, as redis does).
 * Whatever starts a read of commands (a client's socket, the HTTP listener, the master link, the
 * log's replay) brackets it; a read begun inside another (a WAIT unblocked by a replica's ACK)
 * joins the outer one.
 */
import { performance } from 'node:perf_hooks'
import type { Config } from '../../runtime/config.js'
import type { LatencyMonitor } from '../../runtime/latency-monitor.js'
import { CommandArgs } from '../../protocol/command-args.js'
import { loggedArgs, MAX_ARGC, type LoggedCommand, type SlowLog, type SlowLogClient } from './slowlog.js'

/** What the timer reads of a command's table entry (kernel/context.ts CommandEntry). */
export interface TimedCommand extends LoggedCommand {
  readonly skipsSlowlog: boolean
  readonly spec: { readonly name: string; readonly flags: readonly string[] }
}

/** What the timer reads of the row that ran (kernel/context.ts CommandRow): its commandstats counters. */
export interface TimedRow {
  readonly counts: { micros: number }
}

/** The server as the timer sees it at the end of a read (kernel/context.ts ServerContext). */
export interface TimedServer {
  readonly config: Config
  readonly slowlog: SlowLog
  readonly latency: LatencyMonitor
}

export class CommandTimer {
  /** performance.now() when the current read began. */
  private mark = 0
  private active = false
  /** The commands that ran in the current read (the first `count`). */
  private readonly ran: TimedCommand[] = []
  /** Their rows (a container's subcommand's, for `cmdstat_config|get`). */
  private readonly ranRows: TimedRow[] = []
  private count = 0
  /** How many of them the SLOWLOG could log (all but EXEC, whose commands are logged instead). */
  private loggable = 0
  /**
   * Where the read's first loggable command's arguments lie (at most 32), not copies: the bytes
   * stay valid until the read ended (a copy per read costs as much as the timing saves). Its
   * argument count, table entry and client.
   */
  private readonly firstSources: (Buffer | undefined)[] = new Array<Buffer | undefined>(MAX_ARGC).fill(undefined)
  private readonly firstStarts = new Uint32Array(MAX_ARGC)
  private readonly firstEnds = new Uint32Array(MAX_ARGC)
  private firstArgc = 0
  private firstEntry: TimedCommand | undefined = undefined
  private firstClient: SlowLogClient | undefined = undefined

  /** A read of commands begins; false if one is already under way (this one joins it: do not {@link end} it). */
  begin(): boolean {
    if (this.active) return false
    this.active = true
    this.count = 0
    this.loggable = 0
    this.mark = performance.now()
    return true
  }

  /** A command ran (dispatch.ts). */
  ranCommand(ctx: { readonly client: SlowLogClient }, entry: TimedCommand, row: TimedRow, argv: CommandArgs): void {
    if (!entry.skipsSlowlog && this.loggable++ === 0) {
      const kept = Math.min(argv.length, MAX_ARGC)
      for (let i = 0; i < kept; i++) {
        this.firstSources[i] = argv.bytes(i)
        this.firstStarts[i] = argv.start(i)
        this.firstEnds[i] = argv.end(i)
      }
      this.firstArgc = argv.length
      this.firstEntry = entry
      this.firstClient = ctx.client
    }
    this.ranRows[this.count] = row
    this.ran[this.count++] = entry
  }

  /** The read's commands ran: their time is shared out, and the SLOWLOG takes a slow read. */
  end(server: TimedServer): void {
    this.active = false
    const count = this.count
    if (count === 0) return
    this.count = 0
    const micros = (performance.now() - this.mark) * 1000
    const share = micros / count
    for (let i = 0; i < count; i++) this.ranRows[i]!.counts.micros += share
    const latencyThreshold = server.config['latency-monitor-threshold']
    if (latencyThreshold > 0 && micros >= latencyThreshold * 1000) this.noteLatency(server, count, micros)
    if (this.loggable === 0) return
    const threshold = server.config['slowlog-log-slower-than']
    const maxLen = server.config['slowlog-max-len']
    if (threshold >= 0 && micros >= threshold) {
      const more = this.loggable - 1
      const first = loggedArgs(this.firstEntry!, this.firstArgs(), this.firstArgc)
      const argv = more === 0 ? first : [...first, Buffer.from(`... (${more} more commands in the same read)`)]
      server.slowlog.add(this.firstClient!, argv, Math.floor(micros), maxLen)
    } else if (threshold >= 0) {
      server.slowlog.trim(maxLen)
    }
    // Lets go of the bytes (a parser's copy of a large command).
    // A loop: Array.prototype.fill is a call into C++, dearer than the few stores of a usual read.
    const sources = this.firstSources
    for (let i = Math.min(this.firstArgc, MAX_ARGC) - 1; i >= 0; i--) sources[i] = undefined
    this.firstEntry = undefined
    this.firstClient = undefined
  }

  /**
   * redis call(): a command that took at least latency-monitor-threshold ms is a `command` sample,
   * or `fast-command` when flagged fast; here a read of commands, `fast-command` when all were.
   */
  private noteLatency(server: Pick<TimedServer, 'latency'>, count: number, micros: number): void {
    let fast = true
    for (let i = 0; i < count && fast; i++) fast = this.ran[i]!.spec.flags.includes('fast')
    server.latency.add(fast ? 'fast-command' : 'command', Math.floor(micros / 1000))
  }

  /** The first command's arguments (at most 32), from where they lie. */
  private firstArgs(): CommandArgs {
    const args = new CommandArgs()
    for (let i = 0; i < Math.min(this.firstArgc, MAX_ARGC); i++)
      args.push(this.firstSources[i]!, this.firstStarts[i]!, this.firstEnds[i]!)
    return args
  }
}

/** Runs `work` as one read of commands (a command from HTTP, the master link, the log). */
export function timedRead<T>(server: TimedServer & { readonly timer: CommandTimer }, work: () => T): T {
  const began = server.timer.begin()
  try {
    return work()
  } finally {
    if (began) server.timer.end(server)
  }
}
