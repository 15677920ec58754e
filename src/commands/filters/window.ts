/**
 * The APBF.* commands: sliding-window filters (core/window-filter.ts), a key type of their own
 * beside the Bloom filters of BF.*. The names are those of RedisBloom's unreleased experimental
 * age-partitioned branch (src/rm_apbf.c); its replies and errors are in BF.RESERVE's style here,
 * since that branch never shipped:
 *
 * - APBF.RESERVE key COUNT error_rate capacity | APBF.RESERVE key TIME error_rate capacity time_span → +OK
 * - APBF.ADD key item [item ...] → one integer per item: 1 new in the window, 0 maybe seen
 * - APBF.EXISTS key item [item ...] → one integer per item (all 0 for a missing key)
 * - APBF.INFO key → BF.INFO's shape: a flat array in RESP2, a map in RESP3
 * - APBF.ADDAT key unix-ms item [item ...]: APBF.ADD at a given time, the form the append-only log
 *   and the replicas get for every add to a TIME window, so that a replay reaches the same state
 *   whenever it runs (as EXPIRE is propagated as PEXPIREAT).
 */
import { MAX_WINDOW_MS, WindowFilter, windowFilterBytes, type WindowOptions } from '../../core/window-filter.js'
import { MIN_WINDOW_ERROR_RATE } from '../../core/window-sizing.js'
import { MemoryGuard } from '../../store/memory-guard.js'
import type { WindowEntry } from '../../store/registry.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { ONE, ZERO } from '../../protocol/shared-replies.js'
import { parseDouble, parseInteger } from '../kernel/args.js'
import { keyspace, type CommandContext, type CommandSpec } from '../kernel/context.js'
import { reserveBytes } from '../kernel/filter-budget.js'
import { windowOrWrongType } from '../kernel/key-kind.js'
import { ERR, FILTER_ERROR_TEXT, ReplyError } from '../kernel/reply-error.js'
import { openedForWrite } from '../kernel/transaction.js'

/** The arguments of APBF.RESERVE, checked in BF.RESERVE's order: rate, capacity, then the span. */
function reserveOptions(argv: CommandArgs): WindowOptions {
  const kind = argv.isKeyword(2, 'COUNT') ? 'count' : argv.isKeyword(2, 'TIME') ? 'time' : undefined
  if (kind === undefined) throw new ReplyError(ERR.WINDOW_BAD_TYPE)
  const errorRate = parseDouble(argv.get(3))
  if (errorRate === undefined) throw new ReplyError(ERR.BAD_ERROR_RATE)
  if (errorRate >= 1 || errorRate <= 0) throw new ReplyError(ERR.ERROR_RATE_RANGE)
  if (errorRate < MIN_WINDOW_ERROR_RATE) throw new ReplyError(ERR.WINDOW_ERROR_RATE_TOO_SMALL)
  const capacity = parseInteger(argv.get(4))
  if (capacity === undefined) throw new ReplyError(ERR.BAD_CAPACITY)
  if (capacity <= 0) throw new ReplyError(ERR.CAPACITY_RANGE)
  if (kind === 'count') {
    if (argv.length > 5) throw new ReplyError(ERR.WINDOW_COUNT_TIME_SPAN)
    return { kind, errorRate, capacity }
  }
  if (argv.length < 6) throw new ReplyError(ERR.WINDOW_NO_TIME_SPAN)
  const seconds = parseInteger(argv.get(5))
  if (seconds === undefined) throw new ReplyError(ERR.WINDOW_BAD_TIME_SPAN)
  if (seconds <= 0 || seconds * 1000 > MAX_WINDOW_MS) throw new ReplyError(ERR.WINDOW_TIME_SPAN_RANGE)
  return { kind, errorRate, capacity, windowMs: seconds * 1000 }
}

/** APBF.RESERVE key COUNT|TIME error_rate capacity [time_span] → +OK */
export function apbfReserve(ctx: CommandContext, argv: CommandArgs): void {
  const options = reserveOptions(argv)
  openedForWrite(ctx)
  const name = argv.latin1(1)
  const registry = keyspace(ctx)
  if (windowOrWrongType(registry.get(name)) !== undefined) throw new ReplyError(ERR.ITEM_EXISTS)
  let filter: WindowFilter
  try {
    // Sized before anything is allocated: max-filter-bytes, then maxmemory (-OOM).
    reserveBytes(ctx, windowFilterBytes(options))
    filter = new WindowFilter(options)
  } catch (error) {
    if (error instanceof RangeError) throw new ReplyError(ERR.COULD_NOT_CREATE)
    throw error
  }
  registry.set(name, filter)
  // No time in it: a TIME window's clock starts at its first add, whose time the log records.
  ctx.server.propagate(argv)
  ctx.client.reply.simple('OK')
}

/** The window filter under argv[1], or RedisBloom's "ERR not found"; -WRONGTYPE for a Bloom filter. */
function existingWindow(ctx: CommandContext, argv: CommandArgs): WindowEntry {
  const entry = windowOrWrongType(keyspace(ctx).lookup(argv.bytes(1), argv.start(1), argv.end(1)))
  if (entry === undefined) throw new ReplyError(ERR.NOT_FOUND)
  return entry
}

/** The server's clock, as expiry reads it (store/registry.ts ExpiryPolicy). */
function now(ctx: CommandContext): number {
  return keyspace(ctx).expiry.now()
}

/**
 * Before an add at `at`: undefined when it may go ahead, or the error text when the new slice a
 * TIME window would make passes `max-filter-bytes` or `maxmemory` (counted when allowed).
 */
function growthRefusal(ctx: CommandContext, filter: WindowFilter, at: number): string | undefined {
  const bytes = filter.growthBytes(at)
  if (bytes === 0) return undefined
  const config = ctx.server.config
  const maxFilterBytes = config['max-filter-bytes']
  if (maxFilterBytes > 0 && filter.bitmapBytes() + bytes > maxFilterBytes) return FILTER_ERROR_TEXT['too-large']
  const guard = MemoryGuard.of(ctx.server.databases)
  if (!guard.canAllocate(config.maxmemory, bytes)) return ERR.OOM
  guard.allocated(bytes)
  return undefined
}

/** The 0/1 outcomes of one add, reused: commands run one at a time. */
let outcomes = new Uint8Array(64)

/**
 * Adds argv[first..] at `at` and replies BF.MADD's way: one integer per item, an error ending the
 * array early (a TIME window that cannot grow). Every add is a write (an item seen again starts
 * its window anew): the items added are propagated, as APBF.ADDAT with the time for TIME windows.
 */
function addItems(ctx: CommandContext, entry: WindowEntry, argv: CommandArgs, first: number, at: number): void {
  const filter = entry.filter
  if (outcomes.length < argv.length - first) outcomes = new Uint8Array(argv.length - first)
  let error: string | undefined
  let done = 0
  const when = filter.kind === 'time' ? Math.max(at, filter.clock) : at
  for (let i = first; i < argv.length; i++) {
    error = growthRefusal(ctx, filter, when)
    if (error !== undefined) break
    try {
      outcomes[done] = filter.add(argv.bytes(i), argv.start(i), argv.end(i), when)
    } catch (thrown) {
      if (!(thrown instanceof RangeError)) throw thrown
      error = ERR.OOM // memory the process could not get
      break
    }
    done++
  }
  if (done > 0) {
    keyspace(ctx).touch(entry, done)
    propagateAdds(ctx, argv, first, done, filter.kind === 'time' ? when : undefined)
  }
  const reply = ctx.client.reply
  reply.array(error === undefined ? done : done + 1)
  for (let i = 0; i < done; i++) reply.raw(outcomes[i] === 1 ? ONE : ZERO)
  if (error !== undefined) {
    ctx.server.stats.errorReplies++
    reply.error(error)
  }
}

/** The log's and the replicas' record of `count` items added from argv[first]: APBF.ADDAT with the time, or APBF.ADD. */
function propagateAdds(
  ctx: CommandContext,
  argv: CommandArgs,
  first: number,
  count: number,
  at: number | undefined,
): void {
  const record: Uint8Array[] =
    at === undefined
      ? [Buffer.from('APBF.ADD'), argv.get(1)]
      : [Buffer.from('APBF.ADDAT'), argv.get(1), Buffer.from(String(at))]
  for (let i = first; i < first + count; i++) record.push(argv.get(i))
  ctx.server.propagate(record)
}

/** APBF.ADD key item [item ...] → array of :1 new / :0 maybe seen */
export function apbfAdd(ctx: CommandContext, argv: CommandArgs): void {
  openedForWrite(ctx)
  addItems(ctx, existingWindow(ctx, argv), argv, 2, now(ctx))
}

/** APBF.ADDAT key unix-ms item [item ...] → as APBF.ADD, the items added at that time (not before a TIME window's latest add) */
export function apbfAddat(ctx: CommandContext, argv: CommandArgs): void {
  const at = parseInteger(argv.get(2))
  if (at === undefined || at < 0) throw new ReplyError(ERR.WINDOW_BAD_TIMESTAMP)
  openedForWrite(ctx)
  addItems(ctx, existingWindow(ctx, argv), argv, 3, at)
}

/** APBF.EXISTS key item [item ...] → array of :1 maybe in the window / :0 not (all :0 for a missing key) */
export function apbfExists(ctx: CommandContext, argv: CommandArgs): void {
  const entry = windowOrWrongType(keyspace(ctx).lookup(argv.bytes(1), argv.start(1), argv.end(1)))
  const reply = ctx.client.reply
  const at = now(ctx)
  reply.array(argv.length - 2)
  for (let i = 2; i < argv.length; i++) {
    reply.raw(entry !== undefined && entry.filter.has(argv.bytes(i), argv.start(i), argv.end(i), at) ? ONE : ZERO)
  }
}

/** APBF.INFO key → Type, Capacity, Window, Error rate, Size, Slices, Hash functions, Items in window */
export function apbfInfo(ctx: CommandContext, argv: CommandArgs): void {
  const info = existingWindow(ctx, argv).filter.info(now(ctx))
  const reply = ctx.client.reply
  reply.map(8)
  reply.simple('Type')
  reply.simple(info.kind === 'count' ? 'COUNT' : 'TIME')
  reply.simple('Capacity')
  reply.integer(info.capacity)
  reply.simple('Window')
  reply.integer(info.window)
  reply.simple('Error rate')
  reply.double(info.errorRate)
  reply.simple('Size')
  reply.integer(info.sizeBytes)
  reply.simple('Slices')
  reply.integer(info.slices)
  reply.simple('Hash functions')
  reply.integer(info.hashes)
  reply.simple('Items in window')
  reply.integer(info.itemsInWindow)
}

const WRITE = ['write', 'denyoom', 'module'] as const
const READ = ['readonly', 'fast', 'module'] as const
const ROW = { keys: [1, 1, 1], group: 'bf', reportedArity: -1, since: '2.4.0' } as const

/** Their rows of the command table: flags and key positions as the BF.* rows (a module's commands, reported with arity -1). */
export const WINDOW_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'APBF.RESERVE',
    arity: -5,
    maxArgs: 6,
    flags: WRITE,
    ...ROW,
    summary: 'Creates a sliding-window filter over the last items (COUNT) or seconds (TIME) (bfs)',
    handler: apbfReserve,
  },
  {
    name: 'APBF.ADD',
    arity: -3,
    flags: WRITE,
    ...ROW,
    summary: 'Adds one or more items to a sliding-window filter (bfs)',
    handler: apbfAdd,
  },
  {
    name: 'APBF.ADDAT',
    arity: -4,
    flags: WRITE,
    ...ROW,
    summary: 'Adds one or more items to a sliding-window filter at a given Unix time in milliseconds (bfs)',
    handler: apbfAddat,
  },
  {
    name: 'APBF.EXISTS',
    arity: -3,
    flags: READ,
    ...ROW,
    summary: 'Checks whether one or more items are in the window of a sliding-window filter (bfs)',
    handler: apbfExists,
  },
  {
    name: 'APBF.INFO',
    arity: 2,
    flags: READ,
    ...ROW,
    summary: 'Returns information about a sliding-window filter (bfs)',
    handler: apbfInfo,
  },
]
