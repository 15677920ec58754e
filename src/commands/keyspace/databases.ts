/**
 * The numbered databases (store/databases.ts), with redis 7.0's replies (src/db.c selectCommand,
 * moveCommand, swapdbCommand, flushdbCommand, flushallCommand): SELECT, MOVE, SWAPDB, FLUSHDB and
 * FLUSHALL. A client starts in database 0 (a new connection, RESET) and its commands reach the
 * keys of the one it selected through `keyspace(ctx)` (context.ts).
 */
import { FilterRegistry } from '../../store/registry.js'
import { moveKey } from '../../store/databases.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { ONE, ZERO } from '../../protocol/shared-replies.js'
import { keyspace, type CommandContext } from '../kernel/context.js'
import { parseInteger } from '../kernel/args.js'
import { ERR, ReplyError, valueOutOfRangeText } from '../kernel/reply-error.js'

const INT_MIN = -2_147_483_648
const INT_MAX = 2_147_483_647

/**
 * A database index argument as redis getIntFromObjectOrReply reads it: `notInteger` (redis's
 * own text unless the command gives one) when it is no 64-bit integer, and when it is outside a C
 * int (redis then says so, unless the command gives its text).
 */
function intArgument(bytes: Uint8Array, notInteger?: string): number {
  const value = parseInteger(bytes)
  if (value === undefined) throw new ReplyError(notInteger ?? ERR.NOT_INTEGER)
  if (value < INT_MIN || value > INT_MAX) {
    throw new ReplyError(notInteger ?? valueOutOfRangeText(INT_MIN, INT_MAX))
  }
  return value
}

/** A database index argument naming a database of this server (redis selectDb's check). */
function databaseArgument(ctx: CommandContext, bytes: Uint8Array, notInteger?: string): number {
  const index = intArgument(bytes, notInteger)
  if (!ctx.server.databases.has(index)) throw new ReplyError(ERR.DB_INDEX_OUT_OF_RANGE)
  return index
}

/** SELECT index → +OK; the client's later commands use that database */
export function select(ctx: CommandContext, argv: CommandArgs): void {
  // redis 7.0 db.c selectCommand.
  if (ctx.server.cluster !== undefined && intArgument(argv.get(1)) !== 0) throw new ReplyError(ERR.SELECT_IN_CLUSTER)
  ctx.client.db = databaseArgument(ctx, argv.get(1))
  ctx.client.reply.simple('OK')
}

/**
 * MOVE key db → :1 moved (with its expiry), :0 when it is not in this database or is in the other
 * already; the same database is an error (redis shared.sameobjecterr).
 */
export function move(ctx: CommandContext, argv: CommandArgs): void {
  // redis 7.0 db.c moveCommand.
  if (ctx.server.cluster !== undefined) throw new ReplyError(ERR.MOVE_IN_CLUSTER)
  const to = databaseArgument(ctx, argv.get(2))
  if (to === ctx.client.db) throw new ReplyError(ERR.SAME_SOURCE_AND_DESTINATION)
  const source = keyspace(ctx)
  const name = FilterRegistry.nameOf(argv.get(1))
  const entry = source.get(name)
  const target = ctx.server.databases.db(to)
  if (entry === undefined || target.get(name) !== undefined) {
    ctx.client.reply.raw(ZERO)
    return
  }
  moveKey(source, target, entry)
  // redis signalModifiedKey on both databases: dispatch touches the source's watchers.
  if (ctx.server.watchedKeys.size > 0) ctx.server.watchedKeys.touch(to, name)
  ctx.server.propagate(argv)
  ctx.client.reply.raw(ONE)
}

/**
 * SWAPDB index1 index2 → +OK: each database takes the other's keys; clients that selected one
 * see the other's keys (redis dbSwapDatabases). Every WATCHed key of either database that exists
 * in one of them is touched (redis touchAllWatchedKeysInDb, through dispatch's capture).
 */
export function swapdb(ctx: CommandContext, argv: CommandArgs): void {
  // redis 7.0 db.c swapdbCommand.
  if (ctx.server.cluster !== undefined) throw new ReplyError(ERR.SWAPDB_IN_CLUSTER)
  const a = intArgument(argv.get(1), ERR.INVALID_FIRST_DB)
  const b = intArgument(argv.get(2), ERR.INVALID_SECOND_DB)
  const databases = ctx.server.databases
  if (!databases.has(a) || !databases.has(b)) throw new ReplyError(ERR.DB_INDEX_OUT_OF_RANGE)
  databases.swap(a, b)
  databases.dirty++
  ctx.server.propagate(argv)
  ctx.client.reply.simple('OK')
}

/** FLUSHALL/FLUSHDB's one argument, ASYNC or SYNC (redis getFlushCommandFlags); freeing is synchronous either way. */
function checkFlushArguments(argv: CommandArgs): void {
  if (argv.length > 2 || (argv.length === 2 && !argv.isKeyword(1, 'ASYNC') && !argv.isKeyword(1, 'SYNC'))) {
    throw new ReplyError(ERR.SYNTAX)
  }
}

/** FLUSHDB [ASYNC | SYNC] → +OK: the client's database emptied; propagated even when it was empty (redis 7.0) */
export function flushdb(ctx: CommandContext, argv: CommandArgs): void {
  checkFlushArguments(argv)
  keyspace(ctx).clear()
  ctx.server.propagate(argv)
  ctx.client.reply.simple('OK')
}

/** FLUSHALL [ASYNC | SYNC] → +OK: every database emptied */
export function flushall(ctx: CommandContext, argv: CommandArgs): void {
  checkFlushArguments(argv)
  ctx.server.databases.clear()
  ctx.server.propagate(argv)
  ctx.client.reply.simple('OK')
}
