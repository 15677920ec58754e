/** The MONITOR command and RESET's way out of it; the monitors and what they are fed: state/monitor-hub.ts. */
import type { CommandContext } from '../kernel/context.js'
import { ERR, ReplyError } from '../kernel/reply-error.js'

/** MONITOR → +OK, then the commands every client runs; again: nothing (redis ignores it). */
export function monitor(ctx: CommandContext): void {
  const { client, server } = ctx
  // redis monitorCommand: CLIENT_DENY_BLOCKING, which a command run by EXEC has (MONITOR is queued
  // otherwise, so a transaction under way means EXEC runs it).
  if (client.transaction !== undefined) throw new ReplyError(ERR.MONITOR_DENY_BLOCKING)
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
