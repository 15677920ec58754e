/**
 * The one place that checks a command before it runs: lookup (of the command, and of a container's
 * subcommand), arity, authentication, loading, maxmemory, persistence errors, the subscribed mode,
 * transaction rules. Handlers never re-check these. Errors thrown by handlers become replies here.
 */
import type { CommandContext, CommandEntry, CommandRow } from './context.js'
import { arityAccepts, arityFits, rowOf } from './table.js'
import {
  ERR,
  ReplyError,
  subscribedModeText,
  unknownCommandText,
  unknownSubcommandText,
  wrongArityText,
} from './reply-error.js'
import { MemoryGuard } from '../../store/memory-guard.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { exec, queueCommand, refuseInTransaction } from './transaction.js'
import { aclDenial, aclExecText, aclRefusal, logDenied } from './acl-check.js'
import { clusterRefusal } from './cluster-routing.js'
import { batchPending, settleBatch } from './read-batch.js'

/** Runs one command and writes its reply. Returns the table entry it named, if any. */
export function dispatch(ctx: CommandContext, argv: CommandArgs): CommandEntry | undefined {
  const client = ctx.client
  // The I/O threads' adds stop first (server/thread-plane.ts): a command runs as if alone.
  ctx.server.threadPlane?.quiesce()
  const entry = ctx.server.commands.lookup(argv.bytes(0), argv.start(0), argv.end(0))
  if (entry === undefined) return refuseUnknown(ctx, unknownCommandText(argv.toArray()))
  if (entry.writes || entry.isExec) ctx.server.threadPlane?.wrote()
  client.lastCommand = entry.lowerName
  const row = rowOf(entry, argv)
  if (row === undefined) return refuseUnknown(ctx, unknownSubcommandText(entry.spec.name, argv.get(1)))
  if (nothingRefuses(ctx, entry, row, argv.length)) {
    // A read's checks and adds run together (read-batch.ts), settled before any other command runs.
    if (!entry.answersTogether && batchPending()) settleBatch()
    run(ctx, entry, row, argv)
    return entry
  }
  if (batchPending()) settleBatch()
  const queueing = client.transaction !== undefined && !entry.runsInsideTransaction
  const refusal =
    arityRefusal(row, argv.length, queueing) ??
    authRefusal(ctx, entry) ??
    (ctx.server.acl.unrestricted ? undefined : aclRefusal(ctx, entry, row, argv)) ??
    (ctx.server.cluster === undefined ? undefined : clusterRefusal(ctx, entry, argv)) ??
    loadingRefusal(ctx, entry) ??
    memoryRefusal(ctx, entry) ??
    diskRefusal(ctx, entry) ??
    replicasRefusal(ctx, entry) ??
    replicaRefusal(ctx, entry) ??
    (ctx.client.monitoring === true ? monitorRefusal(entry) : undefined) ??
    subscribedRefusal(ctx, entry, row) ??
    (queueing ? transactionRefusal(entry) : undefined)
  if (refusal !== undefined) return reject(ctx, entry, row, refusal)
  if (queueing) queueCommand(ctx, entry, argv)
  else if (entry.isExec) runExec(ctx, entry, argv)
  else run(ctx, entry, row, argv)
  return entry
}

/**
 * The usual case, in a few field reads and no calls: no transaction, the argument count fits, and
 * nothing the refusal chain below looks at is on (authentication needed, ACL rules, cluster,
 * loading, maxmemory, a disk error for a write, min-replicas for a write, a replica's role (which
 * refuses nothing of its master's link), MONITOR, the subscribed mode, EXEC). True only when
 * every refusal would have found nothing; the chain itself decides every other case.
 */
function nothingRefuses(ctx: CommandContext, entry: CommandEntry, row: CommandRow, argc: number): boolean {
  const client = ctx.client
  const server = ctx.server
  const config = server.config
  const acl = server.acl
  return (
    client.transaction === undefined &&
    !entry.isExec &&
    arityAccepts(row.spec, argc) &&
    (client.authenticated || acl.defaultOpen) &&
    acl.unrestricted &&
    server.cluster === undefined &&
    config.maxmemory <= 0 &&
    (server.replication.role === 'master' || client.kind === 'master') &&
    !client.monitoring &&
    client.subscriptions === undefined &&
    !server.loading &&
    (!entry.writes || config['min-replicas-to-write'] === 0) &&
    (!entry.deniedOnDiskError || server.persistence.writeRefusal() === undefined)
  )
}

/**
 * The argument count, checked before anything else. Queued, a command is checked against the
 * arity redis registers for it: what its handler checks fails in EXEC.
 */
function arityRefusal(row: CommandRow, argc: number, queueing: boolean): string | undefined {
  const accepted = queueing ? arityFits(row.queuedArity, argc) : arityAccepts(row.spec, argc)
  return accepted ? undefined : wrongArityText(row.fullName)
}

/** redis authRequired: a client that did not authenticate, while the default user needs a password. */
function authRefusal(ctx: CommandContext, entry: CommandEntry): string | undefined {
  return ctx.client.authenticated || entry.allowedWithoutAuth || ctx.server.acl.defaultOpen ? undefined : ERR.NOAUTH
}

function loadingRefusal(ctx: CommandContext, entry: CommandEntry): string | undefined {
  return ctx.server.loading && !entry.allowedWhileLoading ? ERR.LOADING : undefined
}

/**
 * redis 7.0 processCommand: with maxmemory set, a denyoom command is refused while used >
 * maxmemory, and so is every command queued in a transaction (its queue grows without bound),
 * and an EXEC of denyoom commands.
 */
function memoryRefusal(ctx: CommandContext, entry: CommandEntry): string | undefined {
  const server = ctx.server
  const maxmemory = server.config.maxmemory
  if (maxmemory <= 0) return undefined
  const transaction = ctx.client.transaction
  const concerned =
    entry.deniedOverMaxmemory ||
    (transaction !== undefined &&
      (entry.refusedOverMaxmemoryInTransaction ||
        (entry.isExec && transaction.queued.some((queued) => queued.entry.deniedOverMaxmemory))))
  return concerned && MemoryGuard.of(server.databases).isOverLimit(maxmemory) ? ERR.OOM : undefined
}

/** A write while persistence fails; an EXEC of writes is refused as writes are (redis is_write_command). */
function diskRefusal(ctx: CommandContext, entry: CommandEntry): string | undefined {
  return entry.deniedOnDiskError || execOfWrites(ctx, entry) ? ctx.server.persistence.writeRefusal() : undefined
}

/** An EXEC whose queue holds a write: refused as the write would be (redis is_write_command over MULTI). */
function execOfWrites(ctx: CommandContext, entry: CommandEntry): boolean {
  return entry.isExec && (ctx.client.transaction?.queued.some((queued) => queued.entry.writes) ?? false)
}

/**
 * redis processCommand checkGoodReplicasStatus: with min-replicas-to-write and min-replicas-max-lag
 * set, a master refuses writes (an EXEC of writes too) while fewer replicas than that are online
 * and acknowledged within the lag.
 */
function replicasRefusal(ctx: CommandContext, entry: CommandEntry): string | undefined {
  const { config, replication, masterSide } = ctx.server
  const needed = config['min-replicas-to-write']
  if (needed === 0 || config['min-replicas-max-lag'] === 0 || replication.role !== 'master') return undefined
  const writes = entry.writes || execOfWrites(ctx, entry)
  return writes && masterSide.goodReplicaCount() < needed ? ERR.NOREPLICAS : undefined
}

/**
 * On a replica (redis processCommand): a write from anyone but the master's link is refused while
 * replica-read-only (an EXEC of writes too), and, with replica-serve-stale-data no, any command
 * without the stale flag while the link is down (an EXEC of such commands too).
 */
function replicaRefusal(ctx: CommandContext, entry: CommandEntry): string | undefined {
  const server = ctx.server
  if (server.replication.role !== 'replica' || ctx.client.kind === 'master') return undefined
  if ((entry.writes || execOfWrites(ctx, entry)) && server.config['replica-read-only']) return ERR.READONLY
  const queued = entry.isExec ? ctx.client.transaction?.queued : undefined
  if (server.replicaLink.state === 'connected' || server.config['replica-serve-stale-data']) return undefined
  const stale = (candidate: CommandEntry): boolean => candidate.spec.flags.includes('stale')
  return !stale(entry) || (queued?.some((command) => !stale(command.entry)) ?? false) ? ERR.MASTERDOWN : undefined
}

function transactionRefusal(entry: CommandEntry): string | undefined {
  return entry.refusedInTransaction ? ERR.NOT_IN_TRANSACTION : undefined
}

function runExec(ctx: CommandContext, entry: CommandEntry, argv: CommandArgs): void {
  ctx.server.stats.commandsProcessed++
  try {
    exec(ctx, runQueued)
  } catch (error) {
    failed(ctx, entry, entry.row, error)
  }
  // As redis counts a call once it returned: an INFO inside the transaction does not see it.
  entry.row.counts.calls++
  ctx.server.timer.ranCommand(ctx, entry, entry.row, argv)
  if (ctx.server.monitors.size !== 0 && !ctx.server.loading) ctx.server.monitors.feed(ctx, entry, argv)
}

/** Runs a queued command inside EXEC: the argument count it skipped when queued is checked now. */
function runQueued(ctx: CommandContext, entry: CommandEntry, argv: CommandArgs): void {
  const row = rowOf(entry, argv)! // found when it was queued
  const refusal = arityAccepts(row.spec, argv.length)
    ? queuedAclRefusal(ctx, entry, row, argv)
    : wrongArityText(row.fullName)
  if (refusal !== undefined) {
    ctx.server.stats.commandsProcessed++
    row.counts.calls++
    failed(ctx, entry, row, new ReplyError(refusal))
    return
  }
  run(ctx, entry, row, argv)
}

/** redis execCommand: permissions are checked again in EXEC, in case they changed since the command was queued. */
function queuedAclRefusal(
  ctx: CommandContext,
  entry: CommandEntry,
  row: CommandRow,
  argv: CommandArgs,
): string | undefined {
  const user = ctx.server.acl.unrestricted ? undefined : ctx.server.acl.get(ctx.client.user)
  const denied = user === undefined ? undefined : aclDenial(user, entry, row, argv)
  if (denied === undefined) return undefined
  logDenied(ctx, denied, row, argv)
  return aclExecText(denied)
}

/** Runs a command whose checks passed (dispatch's, or MULTI's when it was queued). */
function run(ctx: CommandContext, entry: CommandEntry, row: CommandRow, argv: CommandArgs): void {
  const server = ctx.server
  server.stats.commandsProcessed++
  // A write marks the clients WATCHing the keys it changes (redis signalModifiedKey), when there are any.
  const capture =
    entry.writes && server.watchedKeys.size > 0
      ? server.watchedKeys.capture(entry, argv, ctx.client.db, server.databases)
      : undefined
  let succeeded = true
  // What it propagates belongs to its client's database (redis call() propagates with c->db->id).
  server.persistence.db = ctx.client.db
  try {
    row.handler(ctx, argv)
  } catch (error) {
    succeeded = false
    failed(ctx, entry, row, error)
    // -OOM is what redis refuses before it runs a command (processCommand): no key was opened.
    if (capture !== undefined && error instanceof ReplyError && error.message === ERR.OOM)
      server.watchedKeys.notOpened()
  }
  // Counted once it returned, as redis call() does: INFO commandstats does not see itself, and
  // CONFIG RESETSTAT counts itself after the reset.
  row.counts.calls++
  if (capture !== undefined) server.watchedKeys.touchChanged(capture, server.databases, succeeded)
  server.timer.ranCommand(ctx, entry, row, argv)
  // redis 7.0 call(): monitors see a command once it ran. One size check while there are none.
  if (server.monitors.size !== 0 && !server.loading) server.monitors.feed(ctx, entry, argv)
}

/** An unknown command or subcommand: no command's counters, and a transaction fails. */
function refuseUnknown(ctx: CommandContext, text: string): undefined {
  const stats = ctx.server.stats
  stats.commandsProcessed++
  const sent = refuseInTransaction(ctx.client, undefined, text, ctx.server)
  stats.countError(sent)
  ctx.client.reply.error(sent, 'latin1')
  return undefined
}

function failed(ctx: CommandContext, entry: CommandEntry, row: CommandRow, error: unknown): void {
  row.counts.failedCalls++
  const stats = ctx.server.stats
  if (error instanceof ReplyError) {
    stats.countError(error.message)
    ctx.client.reply.error(error.message, error.encoding)
  } else if ((error as { code?: unknown } | undefined)?.code === 'ERR_STRING_TOO_LONG') {
    // A key or name past V8's longest string: found when it is first turned into a name, before
    // anything changed.
    stats.countError(ERR.KEY_TOO_LONG)
    ctx.client.reply.error(ERR.KEY_TOO_LONG)
  } else {
    ctx.server.log.warning(`internal error in ${entry.spec.name}: ${(error as Error)?.stack ?? String(error)}`)
    stats.countError(ERR.INTERNAL)
    ctx.client.reply.error(ERR.INTERNAL)
  }
}

function reject(ctx: CommandContext, entry: CommandEntry, row: CommandRow, text: string): CommandEntry {
  ctx.server.stats.commandsProcessed++
  row.counts.rejectedCalls++
  const sent = refuseInTransaction(ctx.client, entry, text, ctx.server)
  ctx.server.stats.countError(sent)
  ctx.client.reply.error(sent)
  return entry
}

/**
 * The commands a RESP2 client may send while subscribed (redis 7.0 processCommand compares the
 * command's function, so a renamed one is still allowed): by original name.
 */
const ALLOWED_WHEN_SUBSCRIBED = new Set([
  'PING',
  'SUBSCRIBE',
  'SSUBSCRIBE',
  'UNSUBSCRIBE',
  'SUNSUBSCRIBE',
  'PSUBSCRIBE',
  'PUNSUBSCRIBE',
  'QUIT',
  'RESET',
])

/**
 * redis 7.0 processCommand: a RESP2 connection with subscriptions runs only the commands above
 * (RESP3 ones run anything, their messages being push replies). Checked after the disk error, as
 * redis does.
 */
export function subscribedRefusal(ctx: CommandContext, entry: CommandEntry, row: CommandRow): string | undefined {
  const client = ctx.client
  if (client.subscriptions === undefined || client.reply.protocol !== 2 || ALLOWED_WHEN_SUBSCRIBED.has(entry.spec.name))
    return undefined
  return subscribedModeText(row.fullName)
}

/**
 * The commands that may replicate (redis processCommand compares the command's function with
 * publishCommand and spublishCommand): by original name, as the subscribed mode's list above.
 */
const MAY_REPLICATE = new Set(['PUBLISH', 'SPUBLISH'])

/**
 * redis 7.0 processCommand: a monitor (flagged as a replica) may not run a command that reads,
 * writes or may replicate (PUBLISH).
 */
export function monitorRefusal(entry: CommandEntry): string | undefined {
  return entry.writes || entry.spec.flags.includes('readonly') || MAY_REPLICATE.has(entry.spec.name)
    ? ERR.MONITOR_KEYSPACE
    : undefined
}
