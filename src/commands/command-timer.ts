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
import type { ClientSession, CommandContext, ServerContext } from './context.js'
import type { CommandEntry } from './table.js'
import type { CommandArgs } from '../protocol/command-args.js'
import { loggedArgs } from './slowlog.js'

export class CommandTimer {
  /** performance.now() when the current read began. */
  private mark = 0
  private active = false
  /** The commands that ran in the current read (the first `count`). */
  private readonly ran: CommandEntry[] = []
  private count = 0
  /** How many of them the SLOWLOG could log (all but EXEC, whose commands are logged instead). */
  private loggable = 0
  /** The read's first command as the SLOWLOG would log it (taken while the log is on), and its client. */
  private firstArgs: Buffer[] | undefined = undefined
  private firstClient: ClientSession | undefined = undefined

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
  ranCommand(ctx: CommandContext, entry: CommandEntry, argv: CommandArgs): void {
    if (!entry.skipsSlowlog && this.loggable++ === 0 && ctx.server.config['slowlog-log-slower-than'] >= 0) {
      this.firstArgs = loggedArgs(entry, argv)
      this.firstClient = ctx.client
    }
    this.ran[this.count++] = entry
  }

  /** The read's commands ran: their time is shared out, and the SLOWLOG takes a slow read. */
  end(server: Pick<ServerContext, 'config' | 'slowlog'>): void {
    this.active = false
    const count = this.count
    if (count === 0) return
    this.count = 0
    const micros = (performance.now() - this.mark) * 1000
    const share = micros / count
    for (let i = 0; i < count; i++) this.ran[i]!.micros += share
    const first = this.firstArgs
    if (first === undefined) return
    this.firstArgs = undefined
    const threshold = server.config['slowlog-log-slower-than']
    if (threshold < 0) return
    const maxLen = server.config['slowlog-max-len']
    if (micros < threshold) {
      server.slowlog.trim(maxLen)
      return
    }
    const more = this.loggable - 1
    const argv = more === 0 ? first : [...first, Buffer.from(`... (${more} more commands in the same read)`)]
    server.slowlog.add(this.firstClient!, argv, Math.floor(micros), maxLen)
  }
}

/** Runs `work` as one read of commands (a command from HTTP, the master link, the log). */
export function timedRead<T>(server: ServerContext, work: () => T): T {
  const began = server.timer.begin()
  try {
    return work()
  } finally {
    if (began) server.timer.end(server)
  }
}
