/**
 * Key expiry commands, as redis 7.0 src/expire.c: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (with
 * NX | XX | GT | LT), PERSIST, TTL, PTTL, EXPIRETIME, PEXPIRETIME. The expiry itself lives on the
 * registry entry (absolute Unix ms); lookups hide or delete a key past it (store/registry.ts), and
 * the active cycle (store/active-expiry.ts) deletes the ones nobody looks up.
 */
import { FilterRegistry } from '../../store/registry.js'
import { keyspace, type CommandContext, type CommandSpec } from '../kernel/context.js'
import { ERR, ReplyError, invalidExpireTimeText, unsupportedOptionText } from '../kernel/reply-error.js'
import { parseInteger } from '../kernel/args.js'
import { ONE, ZERO } from '../../protocol/shared-replies.js'
import type { CommandArgs } from '../../protocol/command-args.js'

const INT64_MAX = (1n << 63n) - 1n
const INT64_MIN = -(1n << 63n)

const NX = 1
const XX = 2
const GT = 4
const LT = 8

/** redis expire.c parseExtendedExpireArgumentsOrReply: the flags after the time, checked first. */
function parseFlags(argv: CommandArgs): number {
  let flags = 0
  for (let i = 3; i < argv.length; i++) {
    if (argv.isKeyword(i, 'NX')) flags |= NX
    else if (argv.isKeyword(i, 'XX')) flags |= XX
    else if (argv.isKeyword(i, 'GT')) flags |= GT
    else if (argv.isKeyword(i, 'LT')) flags |= LT
    else throw new ReplyError(unsupportedOptionText(argv.latin1(i)), 'latin1')
  }
  if ((flags & NX) !== 0 && (flags & (XX | GT | LT)) !== 0) {
    throw new ReplyError(ERR.EXPIRE_NX_XX_GT_LT)
  }
  if ((flags & GT) !== 0 && (flags & LT) !== 0) throw new ReplyError(ERR.EXPIRE_GT_LT)
  return flags
}

/**
 * The absolute time (Unix ms) argv[2] names, from `baseMs` (0 for the *AT forms), as redis
 * expireGenericCommand computes it: "invalid expire time" when the unit or the base overflow 64 bits.
 */
function expiryTime(argv: CommandArgs, baseMs: number, seconds: boolean): number {
  const raw = argv.get(2)
  if (parseInteger(raw) === undefined) throw new ReplyError(ERR.NOT_INTEGER)
  let when = BigInt(raw.toString('latin1'))
  const invalid = (): ReplyError => new ReplyError(invalidExpireTimeText(argv.latin1(0).toLowerCase()), 'latin1')
  if (seconds) {
    if (when > INT64_MAX / 1000n || when < INT64_MIN / 1000n) throw invalid()
    when *= 1000n
  }
  if (when > INT64_MAX - BigInt(baseMs)) throw invalid()
  // Past 2^53 ms (285,000 years) the time is kept rounded to a double (docs/reference/compatibility.md).
  return Number(when + BigInt(baseMs))
}

/** Whether NX/XX/GT/LT refuse the new time (redis: reply 0, nothing changed). */
function refusedByFlags(flags: number, current: number | undefined, when: number): boolean {
  if ((flags & NX) !== 0 && current !== undefined) return true
  if ((flags & XX) !== 0 && current === undefined) return true
  // No expiry counts as an infinite one: GT always fails on it, LT always passes.
  if ((flags & GT) !== 0 && (current === undefined || when <= current)) return true
  if ((flags & LT) !== 0 && current !== undefined && when >= current) return true
  return false
}

/**
 * redis expireGenericCommand. A time already past deletes the key (logged as DEL) on a master that
 * is not loading; otherwise the expiry is set and logged as PEXPIREAT with the absolute time and
 * the flags, so a replay later does not move it.
 */
function expireGeneric(ctx: CommandContext, argv: CommandArgs, seconds: boolean, relative: boolean): void {
  const flags = parseFlags(argv)
  const registry = keyspace(ctx)
  const when = expiryTime(argv, relative ? registry.expiry.now() : 0, seconds)
  const entry = registry.lookup(argv.bytes(1), argv.start(1), argv.end(1))
  if (entry === undefined || refusedByFlags(flags, entry.expiresAt, when)) {
    ctx.client.reply.raw(ZERO)
    return
  }
  // redis checkAlreadyExpired: not while loading, nor on a replica (its master's DEL comes).
  if (when <= registry.expiry.now() && registry.expiry.mode() === 'delete') {
    registry.delete(entry.name)
    ctx.server.propagate([Buffer.from('DEL'), argv.get(1)])
  } else {
    registry.setExpiry(entry, when)
    const record = argv.toArray()
    record[0] = Buffer.from('PEXPIREAT')
    record[2] = Buffer.from(String(when))
    ctx.server.propagate(record)
  }
  ctx.client.reply.raw(ONE)
}

/** EXPIRE key seconds [NX | XX | GT | LT] → :1 set, :0 not (no key, or a flag refused) */
export function expire(ctx: CommandContext, argv: CommandArgs): void {
  expireGeneric(ctx, argv, true, true)
}

/** PEXPIRE key milliseconds [NX | XX | GT | LT] */
export function pexpire(ctx: CommandContext, argv: CommandArgs): void {
  expireGeneric(ctx, argv, false, true)
}

/** EXPIREAT key unix-seconds [NX | XX | GT | LT] */
export function expireat(ctx: CommandContext, argv: CommandArgs): void {
  expireGeneric(ctx, argv, true, false)
}

/** PEXPIREAT key unix-milliseconds [NX | XX | GT | LT] */
export function pexpireat(ctx: CommandContext, argv: CommandArgs): void {
  expireGeneric(ctx, argv, false, false)
}

/** PERSIST key → :1 the expiry was removed, :0 no key or no expiry */
export function persist(ctx: CommandContext, argv: CommandArgs): void {
  const registry = keyspace(ctx)
  const entry = registry.lookup(argv.bytes(1), argv.start(1), argv.end(1))
  if (entry === undefined || entry.expiresAt === undefined) {
    ctx.client.reply.raw(ZERO)
    return
  }
  registry.setExpiry(entry, undefined)
  ctx.server.propagate(argv)
  ctx.client.reply.raw(ONE)
}

/**
 * redis ttlGenericCommand: -2 no key, -1 no expiry; else the time left (never below 0), or the
 * absolute time, in ms or in seconds (the time left rounded to the nearest second).
 */
function ttlGeneric(ctx: CommandContext, argv: CommandArgs, milliseconds: boolean, absolute: boolean): void {
  const registry = keyspace(ctx)
  const entry = registry.get(FilterRegistry.nameOf(argv.get(1)))
  const reply = ctx.client.reply
  if (entry === undefined) reply.integer(-2)
  else if (entry.expiresAt === undefined) reply.integer(-1)
  else {
    const ms = absolute ? entry.expiresAt : Math.max(0, entry.expiresAt - registry.expiry.now())
    const value = milliseconds ? ms : absolute ? Math.trunc(ms / 1000) : Math.trunc((ms + 500) / 1000)
    if (Number.isSafeInteger(value)) reply.integer(value)
    else reply.raw(Buffer.from(`:${int64Of(value)}\r\n`, 'latin1'))
  }
}

/**
 * A time past 2^53 as the 64-bit integer redis would print: the double clamped to the int64 range
 * (PEXPIREAT key 9223372036854775807 is held as 2^63, and answered as 2^63 - 1 as redis does).
 */
function int64Of(value: number): bigint {
  const big = BigInt(value)
  return big > INT64_MAX ? INT64_MAX : big < INT64_MIN ? INT64_MIN : big
}

/** TTL key → seconds left, -1 or -2 */
export function ttl(ctx: CommandContext, argv: CommandArgs): void {
  ttlGeneric(ctx, argv, false, false)
}

/** PTTL key → milliseconds left, -1 or -2 */
export function pttl(ctx: CommandContext, argv: CommandArgs): void {
  ttlGeneric(ctx, argv, true, false)
}

/** EXPIRETIME key → Unix seconds of the expiry, -1 or -2 */
export function expiretime(ctx: CommandContext, argv: CommandArgs): void {
  ttlGeneric(ctx, argv, false, true)
}

/** PEXPIRETIME key → Unix ms of the expiry, -1 or -2 */
export function pexpiretime(ctx: CommandContext, argv: CommandArgs): void {
  ttlGeneric(ctx, argv, true, true)
}

const KEY = [1, 1, 1] as const
const WRITE = ['write', 'fast'] as const
const READ = ['readonly', 'fast'] as const

/** Their rows of the command table (flags, arity and key positions as redis 7.0 COMMAND INFO). */
export const EXPIRY_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'EXPIRE',
    arity: -3,
    flags: WRITE,
    keys: KEY,
    group: 'generic',
    since: '1.0.0',
    summary: 'Sets the expiration time of a key in seconds.',
    handler: expire,
  },
  {
    name: 'PEXPIRE',
    arity: -3,
    flags: WRITE,
    keys: KEY,
    group: 'generic',
    since: '2.6.0',
    summary: 'Sets the expiration time of a key in milliseconds.',
    handler: pexpire,
  },
  {
    name: 'EXPIREAT',
    arity: -3,
    flags: WRITE,
    keys: KEY,
    group: 'generic',
    since: '1.2.0',
    summary: 'Sets the expiration time of a key to a Unix timestamp.',
    handler: expireat,
  },
  {
    name: 'PEXPIREAT',
    arity: -3,
    flags: WRITE,
    keys: KEY,
    group: 'generic',
    since: '2.6.0',
    summary: 'Sets the expiration time of a key to a Unix milliseconds timestamp.',
    handler: pexpireat,
  },
  {
    name: 'PERSIST',
    arity: 2,
    flags: WRITE,
    keys: KEY,
    group: 'generic',
    since: '2.2.0',
    summary: 'Removes the expiration time of a key.',
    handler: persist,
  },
  {
    name: 'TTL',
    arity: 2,
    flags: READ,
    keys: KEY,
    group: 'generic',
    since: '1.0.0',
    summary: 'Returns the expiration time in seconds of a key.',
    handler: ttl,
  },
  {
    name: 'PTTL',
    arity: 2,
    flags: READ,
    keys: KEY,
    group: 'generic',
    since: '2.6.0',
    summary: 'Returns the expiration time in milliseconds of a key.',
    handler: pttl,
  },
  {
    name: 'EXPIRETIME',
    arity: 2,
    flags: READ,
    keys: KEY,
    group: 'generic',
    since: '7.0.0',
    summary: 'Returns the expiration time of a key as a Unix timestamp.',
    handler: expiretime,
  },
  {
    name: 'PEXPIRETIME',
    arity: 2,
    flags: READ,
    keys: KEY,
    group: 'generic',
    since: '7.0.0',
    summary: 'Returns the expiration time of a key as a Unix milliseconds timestamp.',
    handler: pexpiretime,
  },
]
