/**
 * The CF.* commands: Cuckoo filters (core/cuckoo-filter.ts), worded and ordered as RedisBloom
 * 2.4.23's src/rebloom.c so that every reply, error included, is the same byte for byte. Where
 * RedisBloom crashes or loses data, bfs answers an error instead (docs/reference/compatibility.md):
 * - CF.RESERVE with MAXITERATIONS, BUCKETSIZE or EXPANSION as its last argument reads past its
 *   arguments in RedisBloom (a crash): here it is that option's "Couldn't parse" error;
 * - sizes that cannot be allocated abort RedisBloom: here `ERR Insufficient memory to create filter`.
 * CF.SCANDUMP and CF.LOADCHUNK are in cuckoo-chunks.ts.
 */
import {
  CF_DEFAULT_BUCKET_SIZE,
  CF_DEFAULT_EXPANSION,
  CF_DEFAULT_MAX_ITERATIONS,
  CF_MAX_BUCKET_SIZE,
  CF_MAX_EXPANSION,
  CF_MAX_ITERATIONS,
  EXISTS,
  GROWTH_FAILED,
  INSERTED,
  reserveSettings,
  type CuckooInsertStatus,
} from '../../core/cuckoo-filter.js'
import type { CuckooEntry } from '../../store/registry.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import type { ReplySink } from '../../protocol/reply-sink.js'
import { parseInteger } from '../kernel/args.js'
import { keyspace, type CommandContext } from '../kernel/context.js'
import { createCuckoo, cuckooGrowthCheck, endGrowthCheck } from './cuckoo-budget.js'
import { cuckooOrWrongType } from '../kernel/key-kind.js'
import {
  beforeLookup,
  cuckooAddLater,
  cuckooCheckLater,
  cuckooDelLater,
  type CuckooAddRules,
} from '../kernel/read-batch.js'
import { ERR, ReplyError, cfOptionRangeText, cfUnparsableOptionText, wrongArityText } from '../kernel/reply-error.js'

/** Capacity of a filter CF.ADD / CF.INSERT create (RedisBloom's module argument CF_INITIAL_SIZE, default 1024). */
export const CF_DEFAULT_CAPACITY = 1024
/** Most sub-filters a filter may have before CF.ADD / CF.INSERT refuse it (module argument CF_MAX_EXPANSIONS, default 32). */
export const CF_MAX_EXPANSIONS = 32

/** rmutil RMUtil_ArgIndex: the first argument, the key included, equal to a keyword in any case. */
function argIndex(argv: CommandArgs, keyword: string): number {
  for (let i = 0; i < argv.length; i++) if (argv.isKeyword(i, keyword)) return i
  return -1
}

/**
 * One CF.RESERVE option: its default when absent, else its value in [min, max]. The keyword as
 * the last argument (no value after it) is answered as an unparsable value.
 */
function reserveOption(argv: CommandArgs, keyword: string, fallback: number, min: number, max: number): number {
  const at = argIndex(argv, keyword)
  if (at === -1) return fallback
  const value = at + 1 < argv.length ? parseInteger(argv.get(at + 1)) : undefined
  if (value === undefined) throw new ReplyError(cfUnparsableOptionText(keyword))
  if (value < min || value > max) throw new ReplyError(cfOptionRangeText(keyword, min, max))
  return value
}

/** CF.RESERVE key capacity [BUCKETSIZE n] [MAXITERATIONS n] [EXPANSION n] → +OK */
export function cfReserve(ctx: CommandContext, argv: CommandArgs): void {
  if (argv.length % 2 === 0) throw new ReplyError(wrongArityText('cf.reserve'))
  const capacity = parseInteger(argv.get(2))
  if (capacity === undefined) throw new ReplyError(ERR.INSERT_BAD_CAPACITY)
  const maxIterations = reserveOption(argv, 'MAXITERATIONS', CF_DEFAULT_MAX_ITERATIONS, 1, CF_MAX_ITERATIONS)
  const bucketSize = reserveOption(argv, 'BUCKETSIZE', CF_DEFAULT_BUCKET_SIZE, 1, CF_MAX_BUCKET_SIZE)
  const expansion = reserveOption(argv, 'EXPANSION', CF_DEFAULT_EXPANSION, 0, CF_MAX_EXPANSION)
  if (bucketSize * 2 > capacity) throw new ReplyError(ERR.CF_CAPACITY_TOO_SMALL)
  const registry = keyspace(ctx)
  const name = argv.latin1(1)
  if (cuckooOrWrongType(registry.get(name)) !== undefined) throw new ReplyError(ERR.ITEM_EXISTS)
  registry.set(name, createCuckoo(ctx, reserveSettings(capacity, bucketSize, maxIterations, expansion)))
  ctx.server.propagate(argv)
  ctx.client.reply.simple('OK')
}

/** The Cuckoo filter under argv[1], created with `capacity` when missing and `create`; RedisBloom's errors otherwise. */
function filterForInsert(ctx: CommandContext, argv: CommandArgs, create: boolean, capacity: number): CuckooEntry {
  const registry = keyspace(ctx)
  const existing = cuckooOrWrongType(registry.lookup(argv.bytes(1), argv.start(1), argv.end(1)))
  if (existing !== undefined) return existing
  if (!create) throw new ReplyError(ERR.NOT_FOUND)
  const settings = reserveSettings(capacity, CF_DEFAULT_BUCKET_SIZE, CF_DEFAULT_MAX_ITERATIONS, CF_DEFAULT_EXPANSION)
  return registry.set(argv.latin1(1), createCuckoo(ctx, settings))
}

/** The outcomes of one command's items, reused: commands run one at a time. */
let outcomes = new Int8Array(64)

/**
 * rebloom.c cfInsertCommon: adds argv[first..] (NX: only items not found) and answers one
 * integer (CF.ADD) or an array of them (CF.INSERT): 1 added, 0 found (NX), -1 full. The command is
 * propagated as it came once anything may have changed: the same items in the same order leave
 * the same buckets on a replica and in a replay.
 */
function insertItems(
  ctx: CommandContext,
  argv: CommandArgs,
  first: number,
  nx: boolean,
  multi: boolean,
  entry: CuckooEntry,
): void {
  const filter = entry.filter
  if (filter.numFilters >= CF_MAX_EXPANSIONS) throw new ReplyError(ERR.CF_MAX_EXPANSIONS)
  const count = argv.length - first
  if (outcomes.length < count) outcomes = new Int8Array(count)
  const canGrow = cuckooGrowthCheck(ctx, filter)
  let changed = 0
  try {
    for (let i = 0; i < count; i++) {
      const at = first + i
      const status: CuckooInsertStatus = filter.add(argv.bytes(at), argv.start(at), argv.end(at), nx, canGrow)
      outcomes[i] = status === INSERTED ? 1 : status === EXISTS ? 0 : -1
      if (status === INSERTED) changed++
      if (!multi && status !== INSERTED && status !== EXISTS) {
        throw new ReplyError(status === GROWTH_FAILED ? ERR.CF_ALLOCATION_FAILURE : ERR.CF_FULL)
      }
    }
  } finally {
    endGrowthCheck()
  }
  if (changed > 0) keyspace(ctx).touch(entry, changed)
  ctx.server.propagate(argv)
  const reply = ctx.client.reply
  if (!multi) {
    reply.integer(outcomes[0]!)
    return
  }
  reply.array(count)
  for (let i = 0; i < count; i++) reply.integer(outcomes[i]!)
}

/** What a read's batch of CF.ADD commands settles by: insertItems's limit and growth checks. */
const ADD_RULES: CuckooAddRules = { maxFilters: CF_MAX_EXPANSIONS, growthCheck: cuckooGrowthCheck, endGrowthCheck }

/** CF.ADD key item → :1 added; "Filter is full", "Maximum expansions reached" */
export function cfAdd(ctx: CommandContext, argv: CommandArgs): void {
  beforeLookup(argv)
  const entry = filterForInsert(ctx, argv, true, CF_DEFAULT_CAPACITY)
  // One of a read's CF.ADD commands, added with the others (read-batch.ts).
  if (cuckooAddLater(ctx, entry, argv, ADD_RULES)) return
  // A filter just created propagates with the add: a replay auto-creates it the same way.
  insertItems(ctx, argv, 2, false, false, entry)
}

/** CF.ADDNX key item → :1 added, :0 found */
export function cfAddnx(ctx: CommandContext, argv: CommandArgs): void {
  insertItems(ctx, argv, 2, true, false, filterForInsert(ctx, argv, true, CF_DEFAULT_CAPACITY))
}

/** rebloom.c CFInsert_RedisCommand's options, matched by their first letter: c... CAPACITY n, n... NOCREATE, i... ITEMS. */
function insertOptions(argv: CommandArgs, name: string): { capacity: number; create: boolean; itemsAt: number } {
  let capacity = CF_DEFAULT_CAPACITY
  let create = true
  let at = 2
  while (at < argv.length) {
    const option = argv.bytes(at)[argv.start(at)]
    const letter = argv.byteLength(at) === 0 ? 0 : option! | 0x20
    if (letter === 0x63 /* c */) {
      if (++at === argv.length) throw new ReplyError(wrongArityText(name))
      const parsed = parseInteger(argv.get(at++))
      if (parsed === undefined) throw new ReplyError(ERR.INSERT_BAD_CAPACITY)
      if (2 * CF_DEFAULT_BUCKET_SIZE > parsed) throw new ReplyError(ERR.CF_CAPACITY_TOO_SMALL)
      capacity = parsed
    } else if (letter === 0x69 /* i */) {
      if (at + 1 === argv.length) break
      return { capacity, create, itemsAt: at + 1 }
    } else if (letter === 0x6e /* n */) {
      create = false
      at++
    } else throw new ReplyError(ERR.INSERT_UNKNOWN_ARGUMENT)
  }
  throw new ReplyError(wrongArityText(name))
}

function insertCommand(nx: boolean) {
  const name = nx ? 'cf.insertnx' : 'cf.insert'
  /** CF.INSERT / CF.INSERTNX key [CAPACITY n] [NOCREATE] ITEMS item [item ...] → array of :1 / :0 / :-1 */
  return (ctx: CommandContext, argv: CommandArgs): void => {
    const options = insertOptions(argv, name)
    insertItems(ctx, argv, options.itemsAt, nx, true, filterForInsert(ctx, argv, options.create, options.capacity))
  }
}

export const cfInsert = insertCommand(false)
export const cfInsertnx = insertCommand(true)

/** The Cuckoo filter under argv[1] for CF.EXISTS / CF.MEXISTS / CF.COUNT: undefined for none or another kind (they answer 0). */
function filterForCheck(ctx: CommandContext, argv: CommandArgs): CuckooEntry | undefined {
  const entry = keyspace(ctx).lookup(argv.bytes(1), argv.start(1), argv.end(1))
  return entry?.kind === 'cuckoo' ? entry : undefined
}

/** CF.EXISTS key item → :1 / :0 */
export function cfExists(ctx: CommandContext, argv: CommandArgs): void {
  beforeLookup(argv)
  const entry = filterForCheck(ctx, argv)
  // One of a read's CF.EXISTS commands, answered with the others (read-batch.ts).
  if (entry !== undefined && cuckooCheckLater(ctx, entry, argv)) return
  const filter = entry?.filter
  ctx.client.reply.integer(filter !== undefined && filter.has(argv.bytes(2), argv.start(2), argv.end(2)) ? 1 : 0)
}

/** CF.MEXISTS key item [item ...] → array of :1 / :0 */
export function cfMexists(ctx: CommandContext, argv: CommandArgs): void {
  const filter = filterForCheck(ctx, argv)?.filter
  const reply = ctx.client.reply
  const count = argv.length - 2
  reply.array(count)
  if (filter === undefined) {
    for (let i = 0; i < count; i++) reply.integer(0)
    return
  }
  if (found.length < count) found = new Uint8Array(count)
  filter.hasMany(argv, 2, argv.length, found)
  reply.zeroOrOne(found, 0, count)
}

/** CF.MEXISTS's answers, reused: commands run one at a time. */
let found = new Uint8Array(64)

/** CF.COUNT key item → matching fingerprints in the item's buckets */
export function cfCount(ctx: CommandContext, argv: CommandArgs): void {
  const filter = filterForCheck(ctx, argv)?.filter
  ctx.client.reply.integer(filter === undefined ? 0 : filter.countOf(argv, 2))
}

/**
 * CF.DEL key item → :1 removed / :0 not found; "Not found" for a missing key or another kind.
 * Deleting an item that was never added may remove another item's equal fingerprint: inherent to
 * Cuckoo filters (docs/reference/compatibility.md), and what RedisBloom does.
 */
export function cfDel(ctx: CommandContext, argv: CommandArgs): void {
  beforeLookup(argv)
  const entry = filterForCheck(ctx, argv)
  if (entry === undefined) throw new ReplyError(ERR.CF_NOT_FOUND)
  // One of a read's CF.DEL commands, deleted with the others (read-batch.ts).
  if (cuckooDelLater(ctx, entry, argv)) return
  const removed = entry.filter.delete(argv.bytes(2), argv.start(2), argv.end(2))
  if (removed) {
    keyspace(ctx).touch(entry)
    ctx.server.propagate(argv)
  }
  ctx.client.reply.integer(removed ? 1 : 0)
}

/** CF.COMPACT key → +OK; a write here (RedisBloom flags it read-only but replicates it): it moves fingerprints and frees sub-filters. */
export function cfCompact(ctx: CommandContext, argv: CommandArgs): void {
  const entry = filterForCheck(ctx, argv)
  if (entry === undefined) throw new ReplyError(ERR.CF_COMPACT_NOT_FOUND)
  entry.filter.compact(true)
  keyspace(ctx).touch(entry)
  ctx.server.propagate(argv)
  ctx.client.reply.simple('OK')
}

/** The Cuckoo filter under argv[1]: "ERR not found" when missing, -WRONGTYPE for another kind. */
export function existingCuckoo(ctx: CommandContext, argv: CommandArgs): CuckooEntry {
  const entry = cuckooOrWrongType(keyspace(ctx).lookup(argv.bytes(1), argv.start(1), argv.end(1)))
  if (entry === undefined) throw new ReplyError(ERR.NOT_FOUND)
  return entry
}

/** A u64 counter as RedisModule_ReplyWithLongLong sends it: cast to signed. */
function signedInteger(reply: ReplySink, value: bigint): void {
  reply.raw(Buffer.from(`:${BigInt.asIntN(64, value)}\r\n`, 'latin1'))
}

/** CF.INFO key → Size, Number of buckets, of filters, of items inserted, of items deleted, Bucket size, Expansion rate, Max iterations */
export function cfInfo(ctx: CommandContext, argv: CommandArgs): void {
  const filter = existingCuckoo(ctx, argv).filter
  const reply = ctx.client.reply
  reply.array(16)
  reply.simple('Size')
  reply.integer(filter.sizeBytes())
  reply.simple('Number of buckets')
  reply.integer(filter.numBuckets)
  reply.simple('Number of filters')
  reply.integer(filter.numFilters)
  reply.simple('Number of items inserted')
  signedInteger(reply, filter.numItems)
  reply.simple('Number of items deleted')
  signedInteger(reply, filter.numDeletes)
  reply.simple('Bucket size')
  reply.integer(filter.bucketSize)
  reply.simple('Expansion rate')
  reply.integer(filter.expansion)
  reply.simple('Max iterations')
  reply.integer(filter.maxIterations)
}

/** CF.DEBUG key → "bktsize:2 buckets:512 items:0 deletes:0 filters:1 max_iterations:20 expansion:1" (counters unsigned) */
export function cfDebug(ctx: CommandContext, argv: CommandArgs): void {
  const f = existingCuckoo(ctx, argv).filter
  ctx.client.reply.bulk(
    `bktsize:${f.bucketSize} buckets:${f.numBuckets} items:${f.numItems} deletes:${f.numDeletes} ` +
      `filters:${f.numFilters} max_iterations:${f.maxIterations} expansion:${f.expansion}`,
  )
}
