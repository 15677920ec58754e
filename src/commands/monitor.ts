/**
 * MONITOR, as redis 7.0 answers it: the client gets +OK, then one status line per command any
 * client ran (after it ran), `+<unix seconds>.<µs> [<db> <addr>] "arg" ...` with each argument
 * quoted as redis's sdscatrepr does; admin commands and subcommands (and skip_monitor ones) are not shown,
 * AUTH's and HELLO AUTH's arguments are "(redacted)". A monitor's output counts against the
 * normal class of client-output-buffer-limit, as a client that does not read it is closed.
 * RESET and QUIT leave the mode. While no monitor is attached, each command costs one size check.
 */
import { performance } from 'node:perf_hooks'
import type { ClientSession, CommandContext } from './context.js'
import type { CommandEntry } from './table.js'
import type { CommandArgs } from '../protocol/command-args.js'
import { ReplyError } from './reply-error.js'
import { redactedPositions } from './slowlog.js'
import { REDIS_ACL_CATEGORIES } from './acl-categories-data.js'
import { publish, spublish } from './pubsub.js'

/** What the hub needs from the server: whether a client still takes output, and to send what was added. */
export interface MonitorTarget {
  receives(client: ClientSession): boolean
  pushed(client: ClientSession): void
}

export class MonitorHub {
  private readonly monitors = new Set<ClientSession>()

  constructor(private readonly target: MonitorTarget) {}

  get size(): number {
    return this.monitors.size
  }

  has(client: ClientSession): boolean {
    return this.monitors.has(client)
  }

  add(client: ClientSession): void {
    this.monitors.add(client)
  }

  remove(client: ClientSession): void {
    this.monitors.delete(client)
  }

  /** redis replicationFeedMonitors: the command that just ran, to every monitor. */
  feed(ctx: CommandContext, entry: CommandEntry, argv: CommandArgs): void {
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
function adminSubcommand(entry: CommandEntry, argv: CommandArgs): boolean {
  if (entry.subcommands === undefined || argv.length < 2) return false
  return REDIS_ACL_CATEGORIES[`${entry.spec.name.toLowerCase()}|${argv.get(1).toString('latin1').toLowerCase()}`]?.includes('admin') ?? false
}

function monitorLine(addr: string, db: number, entry: CommandEntry, argv: CommandArgs): string {
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

/** MONITOR → +OK, then the commands every client runs; again: nothing (redis ignores it). */
export function monitor(ctx: CommandContext): void {
  const { client, server } = ctx
  // redis monitorCommand: CLIENT_DENY_BLOCKING, which a command run by EXEC has (MONITOR is queued
  // otherwise, so a transaction under way means EXEC runs it).
  if (client.transaction !== undefined) throw new ReplyError("ERR MONITOR isn't allowed for DENY BLOCKING client")
  if (server.monitors.has(client) || client.kind !== 'normal') return
  server.monitors.add(client)
  client.monitoring = true
  client.reply.simple('OK')
}

/** RESET leaves the monitor mode (redis clearClientConnectionState). */
export function stopMonitoring(ctx: CommandContext): void {
  if (ctx.client.monitoring !== true) return
  ctx.server.monitors.remove(ctx.client)
  ctx.client.monitoring = false
}

/**
 * redis 7.0 processCommand: a monitor (flagged as a replica) may not run a command that reads,
 * writes or may replicate (PUBLISH).
 */
export function monitorRefusal(entry: CommandEntry): string | undefined {
  const handler = entry.spec.handler
  return entry.writes || entry.spec.flags.includes('readonly') || handler === publish || handler === spublish
    ? "ERR Replica can't interact with the keyspace"
    : undefined
}
