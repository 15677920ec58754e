/**
 * The log behind SLOWLOG GET/LEN/RESET/HELP (admin/slowlog-commands.ts), as redis 7.0 slowlog.c: a command that ran for
 * at least `slowlog-log-slower-than` µs (timed per read of commands: command-timer.ts) enters
 * the log, newest first, at most `slowlog-max-len` entries. AUTH's and HELLO AUTH's arguments are
 * logged as "(redacted)", as redis's redactClientCommandArgument leaves them.
 */
import type { CommandArgs } from '../../protocol/command-args.js'
import { isKeyword, parseInteger } from '../kernel/args.js'

/** redis slowlog.h SLOWLOG_ENTRY_MAX_ARGC and SLOWLOG_ENTRY_MAX_STRING. */
export const MAX_ARGC = 32
const MAX_STRING = 128
const REDACTED = Buffer.from('(redacted)')

/** The client a slow command came from, as the log keeps it (kernel/context.ts ClientSession). */
export interface SlowLogClient {
  readonly addr: string
  readonly name: string
}

/** What the log reads of a command's table entry (kernel/context.ts CommandEntry): its name. */
export interface LoggedCommand {
  readonly spec: { readonly name: string }
}

interface SlowLogEntry {
  readonly id: number
  readonly unixSeconds: number
  readonly micros: number
  readonly argv: readonly Buffer[]
  readonly addr: string
  readonly name: string
}

export class SlowLog {
  /** Oldest first. */
  private entries: SlowLogEntry[] = []
  private nextId = 0

  add(client: SlowLogClient, argv: readonly Buffer[], micros: number, maxLen: number): void {
    this.entries.push({
      id: this.nextId++,
      unixSeconds: Math.floor(Date.now() / 1000),
      micros,
      argv,
      addr: client.addr,
      name: client.name,
    })
    this.trim(maxLen)
  }

  /** redis drops the oldest past slowlog-max-len after every command while the log is on. */
  trim(maxLen: number): void {
    if (this.entries.length > maxLen) this.entries = this.entries.slice(this.entries.length - maxLen)
  }

  get length(): number {
    return this.entries.length
  }

  /** Newest first, at most `count`. */
  newest(count: number): SlowLogEntry[] {
    return this.entries.slice(Math.max(0, this.entries.length - count)).reverse()
  }

  reset(): void {
    this.entries = []
  }
}

/**
 * redis slowlogCreateEntry: at most 32 arguments (the last saying how many more), each cut at 128
 * bytes. `argv` may hold only the first 32 of the command's `total`.
 */
export function loggedArgs(entry: LoggedCommand, argv: CommandArgs, total = argv.length): Buffer[] {
  const redacted = redactedPositions(entry, argv)
  const argc = Math.min(total, MAX_ARGC)
  const logged: Buffer[] = []
  for (let i = 0; i < argc; i++) {
    if (argc !== total && i === argc - 1) {
      logged.push(Buffer.from(`... (${total - argc + 1} more arguments)`))
    } else if (redacted.has(i)) {
      logged.push(REDACTED)
    } else {
      const arg = argv.get(i)
      logged.push(
        arg.length > MAX_STRING
          ? Buffer.concat([arg.subarray(0, MAX_STRING), Buffer.from(`... (${arg.length - MAX_STRING} more bytes)`)])
          : Buffer.from(arg),
      )
    }
  }
  return logged
}

/**
 * The arguments redis 7.0 redacts: ACL SETUSER's (the user name and rules), AUTH's (when it takes them: two or three words), HELLO's
 * AUTH username and password (once the protocol version was accepted; every AUTH option of
 * the command, where redis stops at the first that fails: never fewer).
 */
export function redactedPositions(entry: LoggedCommand, argv: CommandArgs): Set<number> {
  const positions = new Set<number>()
  // redis aclCommand redacts every argument of ACL SETUSER after the subcommand.
  if (entry.spec.name === 'ACL' && argv.length >= 3 && argv.isKeyword(1, 'SETUSER')) {
    for (let i = 2; i < argv.length; i++) positions.add(i)
  } else if (entry.spec.name === 'AUTH') {
    if (argv.length <= 3) for (let i = 1; i < argv.length; i++) positions.add(i)
  } else if (entry.spec.name === 'HELLO' && argv.length > 2) {
    const version = parseInteger(argv.get(1))
    if (version !== 2 && version !== 3) return positions
    for (let i = 2; i < argv.length; i++) {
      const more = argv.length - i - 1
      if (isKeyword(argv.get(i), 'AUTH') && more >= 2) {
        positions.add(i + 1).add(i + 2)
        i += 2
      } else if (isKeyword(argv.get(i), 'SETNAME') && more >= 1) {
        i += 1
      } else {
        break
      }
    }
  }
  return positions
}
