/**
 * MONITOR, as redis 7.0 answers it: the client gets +OK, then one status line per command any
 * client ran (after it ran), `+<unix seconds>.<µs> [<db> <addr>] "arg" ...` with each argument
 * quoted as redis's sdscatrepr does; admin commands and subcommands (and skip_monitor ones) are not shown,
 * AUTH's and HELLO AUTH's arguments are "(redacted)". A monitor's output counts against the
 * normal class of client-output-buffer-limit, as a client that does not read it is closed.
 * RESET and QUIT leave the mode. While no monitor is attached, each command costs one size check.
 */
import { performance } from 'node:perf_hooks'
import type { CommandArgs } from '../../protocol/command-args.js'
import { redactedPositions } from './slowlog.js'
import type { ReplySink } from '../../protocol/reply-sink.js'
import { REDIS_ACL_CATEGORIES } from '../data/acl-categories-data.js'

/** A client in the MONITOR mode, as the hub keeps it (kernel/context.ts ClientSession). */
export interface Monitor {
  readonly reply: ReplySink
}

/** What a monitor is told of a command that ran: its client's address and database (kernel/context.ts CommandContext). */
export interface MonitoredRun {
  readonly client: { readonly addr: string; readonly db: number }
}

/** What the hub reads of a command's table entry (kernel/context.ts CommandEntry). */
export interface MonitoredCommand {
  readonly spec: { readonly name: string; readonly flags: readonly string[] }
  readonly subcommands?: unknown
}

/** What the hub needs from the server: whether a client still takes output, and to send what was added. */
export interface MonitorTarget {
  receives(client: Monitor): boolean
  pushed(client: Monitor): void
}

export class MonitorHub {
  private readonly monitors = new Set<Monitor>()

  constructor(private readonly target: MonitorTarget) {}

  get size(): number {
    return this.monitors.size
  }

  has(client: Monitor): boolean {
    return this.monitors.has(client)
  }

  add(client: Monitor): void {
    this.monitors.add(client)
  }

  remove(client: Monitor): void {
    this.monitors.delete(client)
  }

  /** redis replicationFeedMonitors: the command that just ran, to every monitor. */
  feed(ctx: MonitoredRun, entry: MonitoredCommand, argv: CommandArgs): void {
    const flags = entry.spec.flags
    if (flags.includes('admin') || flags.includes('skip_monitor') || adminSubcommand(entry, argv)) return
    // The client's database once the command ran (redis 7.0 call(): a SELECT shows its new one).
    const line = monitorLine(ctx.client.addr, ctx.client.db, entry, argv)
    for (const monitor of this.monitors) {
      if (!this.target.receives(monitor)) continue
      monitor.reply.simple(line)
      this.target.pushed(monitor)
    }
  }
}

/** A subcommand redis flags admin (ACL SETUSER, CLIENT KILL, ...) where its container is not: its @admin category says so. */
function adminSubcommand(entry: MonitoredCommand, argv: CommandArgs): boolean {
  if (entry.subcommands === undefined || argv.length < 2) return false
  return (
    REDIS_ACL_CATEGORIES[`${entry.spec.name.toLowerCase()}|${argv.get(1).toString('latin1').toLowerCase()}`]?.includes(
      'admin',
    ) ?? false
  )
}

function monitorLine(addr: string, db: number, entry: MonitoredCommand, argv: CommandArgs): string {
  const micros = Math.floor((performance.timeOrigin + performance.now()) * 1000)
  const redacted = redactedPositions(entry, argv)
  const parts: string[] = []
  for (let i = 0; i < argv.length; i++) parts.push(redacted.has(i) ? '"(redacted)"' : quoted(argv.get(i)))
  return `${Math.floor(micros / 1e6)}.${String(micros % 1e6).padStart(6, '0')} [${db} ${addr}] ${parts.join(' ')}`
}

/** redis sds.c sdscatrepr: printable ASCII as is, \\ and " escaped, \n \r \t \a \b named, the rest \xHH. */
export function quoted(bytes: Uint8Array): string {
  let out = '"'
  for (const byte of bytes) {
    if (byte === 0x5c || byte === 0x22) out += '\\' + String.fromCharCode(byte)
    else if (byte === 0x0a) out += '\\n'
    else if (byte === 0x0d) out += '\\r'
    else if (byte === 0x09) out += '\\t'
    else if (byte === 0x07) out += '\\a'
    else if (byte === 0x08) out += '\\b'
    else if (byte >= 0x20 && byte <= 0x7e) out += String.fromCharCode(byte)
    else out += '\\x' + byte.toString(16).padStart(2, '0')
  }
  return out + '"'
}
