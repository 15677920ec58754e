/**
 * The BF.* commands, worded and ordered as RedisBloom 2.4's src/rebloom.c so that every reply,
 * error included, is the same byte for byte. Keys and items are read where the parser found them
 * (`argv.bytes(i)`, `start(i)`, `end(i)`): BF.ADD/EXISTS/MADD/MEXISTS allocate nothing.
 */
import { ScalableBloomFilter } from '../../core/scalable-filter.js'
import type { AddOutcome } from '../../core/scalable-filter.js'
import { isFilterError } from '../../core/filter-error.js'
import type { BloomEntry } from '../../store/registry.js'
import { bloomOrWrongType } from '../kernel/key-kind.js'
import { keyspace, type CommandContext } from '../kernel/context.js'
import { ERR, FILTER_ERROR_TEXT, ReplyError, wrongArityText } from '../kernel/reply-error.js'
import { isKeyword, parseDouble, parseInteger } from '../kernel/args.js'
import { ONE, ZERO } from '../../protocol/shared-replies.js'
import { reserveFilterBytes, scaleUpRefusal } from '../kernel/filter-budget.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { watchHealth } from '../kernel/health-watch.js'
import { addLater, beforeLookup, checkLater } from '../kernel/read-batch.js'
import { openedForWrite } from '../kernel/transaction.js'

/** The options a new filter is made with. */
export interface CreateOptions {
  capacity: number
  errorRate: number
  expansion: number
  nonScaling: boolean
}

/**
 * Makes a filter, refusing one over the configured size before anything is allocated, and
 * turning a failed allocation into an error reply instead of a crash.
 */
export function createFilter(ctx: CommandContext, options: CreateOptions): ScalableBloomFilter {
  // Sized before anything is allocated: max-filter-bytes, then maxmemory (-OOM). Scale-ups are
  // checked the same way (scaleUpRefusal), so the core needs no limit of its own here.
  reserveFilterBytes(ctx, options.capacity, options.errorRate, options.nonScaling)
  try {
    return new ScalableBloomFilter(options)
  } catch (error) {
    // What is left: arguments no layer can be built from, or memory the process could not get.
    if (error instanceof RangeError) throw new ReplyError(ERR.COULD_NOT_CREATE)
    throw error
  }
}

/** RedisBloom passes expansion to an `unsigned`: negative values wrap as in C. */
function toUnsigned32(value: number): number {
  return value >= 0 && value <= 0xffffffff ? value : Number(BigInt.asUintN(32, BigInt(Math.trunc(value))))
}

/** rmutil RMUtil_ArgIndex: the first argument, the key included, equal to a keyword. */
function argIndex(argv: CommandArgs, keyword: string): number {
  for (let i = 0; i < argv.length; i++) if (argv.isKeyword(i, keyword)) return i
  return -1
}

/** The Bloom filter under the key, argv[1], if any; -WRONGTYPE for a key of another kind. */
function lookupKey(ctx: CommandContext, argv: CommandArgs): BloomEntry | undefined {
  return bloomOrWrongType(keyspace(ctx).lookup(argv.bytes(1), argv.start(1), argv.end(1)))
}

/** BF.EXISTS and BF.MEXISTS: the Bloom filter under argv[1], undefined for none or another kind (see key-kind.ts). */
function lookupForCheck(ctx: CommandContext, argv: CommandArgs): BloomEntry | undefined {
  const entry = keyspace(ctx).lookup(argv.bytes(1), argv.start(1), argv.end(1))
  return entry?.kind === 'bloom' ? entry : undefined
}

/** BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING] → +OK */
export function bfReserve(ctx: CommandContext, argv: CommandArgs): void {
  const errorRate = parseDouble(argv.get(2))
  if (errorRate === undefined) throw new ReplyError(ERR.BAD_ERROR_RATE)
  if (errorRate >= 1 || errorRate <= 0) throw new ReplyError(ERR.ERROR_RATE_RANGE)
  const capacity = parseInteger(argv.get(3))
  if (capacity === undefined) throw new ReplyError(ERR.BAD_CAPACITY)
  if (capacity <= 0) throw new ReplyError(ERR.CAPACITY_RANGE)
  const nonScaling = argIndex(argv, 'NONSCALING') !== -1
  let expansion = 2
  const at = argIndex(argv, 'EXPANSION')
  if (at + 1 === argv.length) throw new ReplyError(ERR.NO_EXPANSION)
  if (at !== -1) {
    if (nonScaling) throw new ReplyError(ERR.NONSCALING_EXPAND)
    const parsed = parseInteger(argv.get(at + 1))
    if (parsed === undefined) throw new ReplyError(ERR.BAD_EXPANSION)
    expansion = toUnsigned32(parsed)
  }
  openedForWrite(ctx)
  const name = argv.latin1(1)
  const registry = keyspace(ctx)
  if (bloomOrWrongType(registry.get(name)) !== undefined) throw new ReplyError(ERR.ITEM_EXISTS)
  registry.set(name, createFilter(ctx, { capacity, errorRate, expansion, nonScaling }))
  ctx.server.propagate(argv)
  ctx.client.reply.simple('OK')
}

/** The filter under argv[1], auto-created with the configured defaults (BF.ADD, BF.MADD). */
function filterForAdd(ctx: CommandContext, argv: CommandArgs): BloomEntry {
  openedForWrite(ctx)
  const existing = lookupKey(ctx, argv)
  if (existing !== undefined) return existing
  const registry = keyspace(ctx)
  const name = argv.latin1(1)
  const config = ctx.server.config
  const options: CreateOptions = {
    capacity: config['default-capacity'],
    errorRate: config['default-error-rate'],
    expansion: config['default-expansion'],
    nonScaling: false,
  }
  const entry = registry.set(name, createFilter(ctx, options))
  propagateCreate(ctx, argv.get(1), options)
  return entry
}

/** Logs a creation with explicit options, so a replay does not depend on the defaults of the day. */
function propagateCreate(ctx: CommandContext, key: Buffer, options: CreateOptions): void {
  const argv = [
    Buffer.from('BF.RESERVE'),
    key,
    Buffer.from(String(options.errorRate)),
    Buffer.from(String(options.capacity)),
  ]
  if (options.nonScaling) argv.push(Buffer.from('NONSCALING'))
  else argv.push(Buffer.from('EXPANSION'), Buffer.from(String(options.expansion)))
  ctx.server.propagate(argv)
}

/** The 0/1 outcomes of one command's items (BF.ADD, BF.MADD, BF.INSERT, BF.EXISTS, BF.MEXISTS), reused: commands run one at a time. */
let itemOutcomes = new Uint8Array(64)

/** BF.ADD key item → :1 added, :0 maybe present */
export function bfAdd(ctx: CommandContext, argv: CommandArgs): void {
  beforeLookup(argv)
  const entry = filterForAdd(ctx, argv)
  ctx.server.threadPlane?.looked(ctx.client, ctx.client.db, entry)
  // One of a read's BF.ADD commands, added with the others (read-batch.ts).
  if (addLater(ctx, entry, argv)) return
  let outcome: AddOutcome
  if (entry.filter.addMany(argv, 2, 3, itemOutcomes, 0) === 3) {
    outcome = itemOutcomes[0] === 1 ? 1 : 0
  } else {
    const item = argv.bytes(2)
    const start = argv.start(2)
    const end = argv.end(2)
    const refusal = scaleUpRefusal(ctx, entry.filter, item, start, end)
    if (refusal !== undefined) throw new ReplyError(refusal)
    outcome = entry.filter.add(item, start, end)
  }
  const reply = ctx.client.reply
  if (outcome === 1) {
    keyspace(ctx).touch(entry)
    ctx.server.propagate(argv)
    watchHealth(ctx.server.log, entry)
    reply.raw(ONE)
  } else if (outcome === 0) {
    reply.raw(ZERO)
  } else {
    throw new ReplyError(FILTER_ERROR_TEXT[outcome.code])
  }
}

/** BF.MADD key item [item ...] → array of :1/:0; a full non-scaling filter ends it with an error */
export function bfMadd(ctx: CommandContext, argv: CommandArgs): void {
  const entry = filterForAdd(ctx, argv)
  ctx.server.threadPlane?.looked(ctx.client, ctx.client.db, entry)
  addItems(ctx, entry, argv, 2)
}

/** Adds argv[first..] and writes RedisBloom's array: it stops at the first error, which it includes. */
function addItems(ctx: CommandContext, entry: BloomEntry, argv: CommandArgs, first: number): void {
  const reply = ctx.client.reply
  const filter = entry.filter
  const last = argv.length
  if (itemOutcomes.length < last - first) itemOutcomes = new Uint8Array(last - first)
  const outcomes = itemOutcomes
  // The array's length is only known at the end: a filter that cannot take an item ends it early.
  let error: string | undefined
  let done = 0
  let added = 0
  for (let i = first; i < last; i++) {
    // The Bloom kernel takes every item it can in a few calls; it stops before an item it leaves
    // to the loop below (the newest layer is full, an item is too long, a capture is reading).
    const next = filter.addMany(argv, i, last, outcomes, done)
    if (next > i) {
      for (let j = done; j < done + next - i; j++) added += outcomes[j]!
      done += next - i
      i = next - 1
      continue
    }
    const item = argv.bytes(i)
    const start = argv.start(i)
    const end = argv.end(i)
    error = scaleUpRefusal(ctx, filter, item, start, end)
    if (error !== undefined) break
    const outcome = filter.add(item, start, end)
    if (isFilterError(outcome)) {
      error = FILTER_ERROR_TEXT[outcome.code]
      break
    }
    outcomes[done++] = outcome
    added += outcome
  }
  if (added > 0) {
    keyspace(ctx).touch(entry, added)
    ctx.server.propagate(argv)
    watchHealth(ctx.server.log, entry)
  }
  reply.array(error === undefined ? done : done + 1)
  reply.zeroOrOne(outcomes, 0, done)
  if (error !== undefined) {
    ctx.server.stats.errorReplies++
    reply.error(error)
  }
}

/**
 * BF.ADDED key item [item ...] → :N, the items counted: the record of adds that the I/O threads
 * answered 1 for, as the append-only log and the replicas' stream take them (server/thread-plane.ts).
 * Each item's bits are set in the filter's newest layer and it is counted, whether or not it was
 * there (core/scalable-filter.ts addRecorded): a replay gives the counts the threads' answers gave.
 * The filter must exist ("ERR not found"): the threads only add to filters that do.
 */
export function bfAdded(ctx: CommandContext, argv: CommandArgs): void {
  openedForWrite(ctx)
  const entry = existingFilter(ctx, argv)
  const filter = entry.filter
  let added = 0
  let error: string | undefined
  let last = 2
  for (; last < argv.length; last++) {
    const outcome = filter.addRecorded(argv.bytes(last), argv.start(last), argv.end(last))
    if (isFilterError(outcome)) {
      error = FILTER_ERROR_TEXT[outcome.code]
      break
    }
    added += outcome
  }
  if (added > 0) {
    keyspace(ctx).touch(entry, added)
    ctx.server.propagate(last === argv.length ? argv : argv.toArray().slice(0, last))
    watchHealth(ctx.server.log, entry)
  }
  if (error !== undefined) throw new ReplyError(error)
  ctx.client.reply.integer(added)
}

/** BF.EXISTS key item → :1 maybe present, :0 certainly absent (also for a missing key) */
export function bfExists(ctx: CommandContext, argv: CommandArgs): void {
  beforeLookup(argv)
  const entry = lookupForCheck(ctx, argv)
  let found = false
  if (entry !== undefined) {
    ctx.server.threadPlane?.looked(ctx.client, ctx.client.db, entry)
    const filter = entry.filter
    // One of a read's BF.EXISTS commands, answered with the others (read-batch.ts).
    if (checkLater(ctx, entry, argv)) return
    found =
      filter.hasMany(argv, 2, 3, itemOutcomes, 0) === 3
        ? itemOutcomes[0] === 1
        : filter.has(argv.bytes(2), argv.start(2), argv.end(2))
  }
  ctx.client.reply.raw(found ? ONE : ZERO)
}

/** BF.MEXISTS key item [item ...] → array of :1/:0 */
export function bfMexists(ctx: CommandContext, argv: CommandArgs): void {
  const entry = lookupForCheck(ctx, argv)
  const reply = ctx.client.reply
  const count = argv.length - 2
  reply.array(count)
  if (entry === undefined) {
    for (let i = 0; i < count; i++) reply.raw(ZERO)
    return
  }
  ctx.server.threadPlane?.looked(ctx.client, ctx.client.db, entry)
  const filter = entry.filter
  if (itemOutcomes.length < count) itemOutcomes = new Uint8Array(count)
  const found = itemOutcomes
  // The Bloom kernel answers every item it can; has() the one it leaves (too long for one call).
  for (let i = 2; i < argv.length;) {
    const next = filter.hasMany(argv, i, argv.length, found, i - 2)
    if (next > i) {
      i = next
    } else {
      found[i - 2] = filter.has(argv.bytes(i), argv.start(i), argv.end(i)) ? 1 : 0
      i++
    }
  }
  reply.zeroOrOne(found, 0, count)
}

/**
 * BF.INSERT key [CAPACITY c] [ERROR p] [EXPANSION e] [NOCREATE] [NONSCALING] ITEMS item [item ...]
 * Options are told apart by their first letters, exactly as RedisBloom's scanner does.
 */
export function bfInsert(ctx: CommandContext, argv: CommandArgs): void {
  const config = ctx.server.config
  let capacity = config['default-capacity']
  let errorRate = config['default-error-rate']
  let expansion = config['default-expansion']
  let nonScaling = false
  let autocreate = true
  let itemsAt = -1
  const argc = argv.length
  let pos = 2
  while (pos < argc && itemsAt < 0) {
    const arg = argv.get(pos)
    switch (lowerByte(arg[0])) {
      case 0x69: // i: ITEMS
        itemsAt = ++pos
        break
      case 0x65: // e: ERROR or EXPANSION, by the second letter
        if (++pos === argc) throw new ReplyError(wrongArity())
        if (lowerByte(arg[1]) === 0x72) {
          const parsed = parseDouble(argv.get(pos++))
          if (parsed === undefined) throw new ReplyError(ERR.INSERT_BAD_ERROR_RATE)
          errorRate = parsed
        } else {
          const parsed = parseInteger(argv.get(pos++))
          if (parsed === undefined) throw new ReplyError(ERR.INSERT_BAD_EXPANSION)
          expansion = parsed
        }
        break
      case 0x63: {
        // c: CAPACITY
        if (++pos === argc) throw new ReplyError(wrongArity())
        const parsed = parseInteger(argv.get(pos++))
        if (parsed === undefined) throw new ReplyError(ERR.INSERT_BAD_CAPACITY)
        capacity = parsed
        break
      }
      case 0x6e: // n: NOCREATE or NONSCALING, by the third letter
        if (lowerByte(arg[2]) === 0x63) autocreate = false
        else nonScaling = true
        pos++
        break
      default:
        throw new ReplyError(ERR.INSERT_UNKNOWN_ARGUMENT)
    }
  }
  if (itemsAt < 0 || itemsAt === argc) throw new ReplyError(wrongArity())
  if (errorRate <= 0 || errorRate >= 1 || capacity < 1 || expansion < 1) {
    throw new ReplyError(ERR.INSERT_BAD_ARGUMENT)
  }
  openedForWrite(ctx)
  const name = argv.latin1(1)
  const registry = keyspace(ctx)
  let entry = bloomOrWrongType(registry.get(name))
  if (entry === undefined) {
    if (!autocreate) throw new ReplyError(ERR.NOT_FOUND)
    const options: CreateOptions = { capacity, errorRate, expansion: toUnsigned32(expansion), nonScaling }
    entry = registry.set(name, createFilter(ctx, options))
    propagateCreate(ctx, argv.get(1), options)
  }
  ctx.server.threadPlane?.looked(ctx.client, ctx.client.db, entry)
  addItems(ctx, entry, argv, itemsAt)

  function wrongArity(): string {
    return wrongArityText('bf.insert')
  }
}

function lowerByte(c: number | undefined): number {
  if (c === undefined) return 0
  return c >= 0x41 && c <= 0x5a ? c + 0x20 : c
}

/** The filter under argv[1], or RedisBloom's "ERR not found" (rebloom.c statusStrerror). */
export function existingFilter(ctx: CommandContext, argv: CommandArgs): BloomEntry {
  const entry = lookupKey(ctx, argv)
  if (entry === undefined) throw new ReplyError(ERR.NOT_FOUND)
  return entry
}

/** BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION] */
export function bfInfo(ctx: CommandContext, argv: CommandArgs): void {
  const info = existingFilter(ctx, argv).filter.info()
  const reply = ctx.client.reply
  const expansion = (): void => (info.expansion === null ? reply.nullBulk() : reply.integer(info.expansion))
  if (argv.length === 3) {
    const field = argv.get(2)
    let write: () => void
    if (isKeyword(field, 'CAPACITY')) write = () => reply.integer(info.capacity)
    else if (isKeyword(field, 'SIZE')) write = () => reply.integer(info.sizeBytes)
    else if (isKeyword(field, 'FILTERS')) write = () => reply.integer(info.layerCount)
    else if (isKeyword(field, 'ITEMS')) write = () => reply.integer(info.items)
    else if (isKeyword(field, 'EXPANSION')) write = expansion
    else throw new ReplyError(ERR.INVALID_INFO_VALUE)
    reply.array(1)
    write()
    return
  }
  reply.array(10)
  reply.simple('Capacity')
  reply.integer(info.capacity)
  reply.simple('Size')
  reply.integer(info.sizeBytes)
  reply.simple('Number of filters')
  reply.integer(info.layerCount)
  reply.simple('Number of items inserted')
  reply.integer(info.items)
  reply.simple('Expansion rate')
  expansion()
}

/** BF.CARD key → items added (0 for a missing key) */
export function bfCard(ctx: CommandContext, argv: CommandArgs): void {
  const entry = lookupKey(ctx, argv)
  if (entry !== undefined) ctx.server.threadPlane?.looked(ctx.client, ctx.client.db, entry)
  ctx.client.reply.integer(entry === undefined ? 0 : entry.filter.info().items)
}
