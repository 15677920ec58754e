/**
 * Keyspace commands over the named filters, with redis 7.0's replies: a key holds a Bloom filter,
 * whose TYPE is RedisBloom's "MBbloom--", a Cuckoo filter ("MBbloomCF"), or a sliding-window
 * filter (APBFcTYPE / APBFtTYPE).
 */
import { FilterRegistry, type FilterEntry } from '../../store/registry.js'
import { keyspace, type CommandContext } from '../kernel/context.js'
import { ERR, ReplyError } from '../kernel/reply-error.js'
import { isKeyword, parseInteger } from '../kernel/args.js'
import { globMatch } from '../kernel/glob.js'
import { ONE, ZERO } from '../../protocol/shared-replies.js'
import type { CommandArgs } from '../../protocol/command-args.js'

/** RedisBloom's module type name, as TYPE reports it. */
export const FILTER_TYPE_NAME = 'MBbloom--'

/**
 * The module type names of RedisBloom's experimental age-partitioned branch (src/rm_apbf.c
 * APBFModule_onLoad: RedisModule_CreateDataType "APBFcTYPE" and "APBFtTYPE"), one per window kind.
 */
export const WINDOW_COUNT_TYPE_NAME = 'APBFcTYPE'
export const WINDOW_TIME_TYPE_NAME = 'APBFtTYPE'

/** RedisBloom's module type name of a Cuckoo filter (rebloom.c: RedisModule_CreateDataType "MBbloomCF"). */
export const CUCKOO_TYPE_NAME = 'MBbloomCF'

/** TYPE's answer for a key. */
export function typeNameOf(entry: FilterEntry): string {
  if (entry.kind === 'bloom') return FILTER_TYPE_NAME
  if (entry.kind === 'cuckoo') return CUCKOO_TYPE_NAME
  return entry.filter.kind === 'count' ? WINDOW_COUNT_TYPE_NAME : WINDOW_TIME_TYPE_NAME
}

/** DEL key [key ...] → number removed (UNLINK is the same: freeing is cheap here) */
export function del(ctx: CommandContext, argv: CommandArgs): void {
  const registry = keyspace(ctx)
  let removed = 0
  for (let i = 1; i < argv.length; i++) {
    // An expired key is deleted as expired first (redis delGenericCommand: expireIfNeeded), and not counted.
    const name = FilterRegistry.nameOf(argv.get(i))
    if (registry.get(name) !== undefined && registry.delete(name)) removed++
  }
  if (removed > 0) ctx.server.propagate(argv)
  ctx.client.reply.integer(removed)
}

/** EXISTS key [key ...] → how many of the keys exist (repeats counted) */
export function exists(ctx: CommandContext, argv: CommandArgs): void {
  const registry = keyspace(ctx)
  let found = 0
  for (let i = 1; i < argv.length; i++) if (registry.has(FilterRegistry.nameOf(argv.get(i)))) found++
  ctx.client.reply.integer(found)
}

/** TYPE key → +MBbloom--, +APBFcTYPE, +APBFtTYPE or +none */
export function type(ctx: CommandContext, argv: CommandArgs): void {
  const entry = keyspace(ctx).get(FilterRegistry.nameOf(argv.get(1)))
  ctx.client.reply.simple(entry === undefined ? 'none' : typeNameOf(entry))
}

/** RENAME key newkey → +OK, or "ERR no such key" */
export function rename(ctx: CommandContext, argv: CommandArgs): void {
  const from = FilterRegistry.nameOf(argv.get(1))
  if (!keyspace(ctx).rename(from, FilterRegistry.nameOf(argv.get(2)))) throw new ReplyError(ERR.NO_SUCH_KEY)
  ctx.server.propagate(argv)
  ctx.client.reply.simple('OK')
}

/** RENAMENX key newkey → :1 renamed, :0 the new name exists */
export function renamenx(ctx: CommandContext, argv: CommandArgs): void {
  const registry = keyspace(ctx)
  const from = FilterRegistry.nameOf(argv.get(1))
  const to = FilterRegistry.nameOf(argv.get(2))
  if (!registry.has(from)) throw new ReplyError(ERR.NO_SUCH_KEY)
  if (registry.has(to)) {
    ctx.client.reply.raw(ZERO)
    return
  }
  registry.rename(from, to)
  ctx.server.propagate(argv)
  ctx.client.reply.raw(ONE)
}

/** DBSIZE → number of filters */
export function dbsize(ctx: CommandContext): void {
  ctx.client.reply.integer(keyspace(ctx).liveSize())
}

/** KEYS pattern → every name that matches */
export function keys(ctx: CommandContext, argv: CommandArgs): void {
  const pattern = argv.get(1)
  const matchAll = pattern.length === 1 && pattern[0] === 0x2a // *
  const found: Buffer[] = []
  for (const name of keyspace(ctx).names()) {
    const bytes = FilterRegistry.bytesOf(name)
    if (matchAll || globMatch(pattern, bytes)) found.push(bytes)
  }
  const reply = ctx.client.reply
  reply.array(found.length)
  for (const bytes of found) reply.bulk(bytes)
}

/**
 * SCAN cursor [MATCH pattern] [COUNT count] [TYPE type] → [next cursor, names]. The cursor is the
 * registry's insertion sequence number, so a name present for the whole scan is returned once.
 */
export function scan(ctx: CommandContext, argv: CommandArgs): void {
  const cursor = parseInteger(argv.get(1))
  if (cursor === undefined || cursor < 0) throw new ReplyError(ERR.INVALID_CURSOR)
  let count = 10
  let pattern: Buffer | undefined
  let typeName: string | undefined
  for (let i = 2; i < argv.length; i += 2) {
    const option = argv.get(i)
    if (i + 1 >= argv.length) throw new ReplyError(ERR.SYNTAX)
    const value = argv.get(i + 1)
    if (isKeyword(option, 'COUNT')) {
      const parsed = parseInteger(value)
      if (parsed === undefined) throw new ReplyError(ERR.NOT_INTEGER)
      if (parsed < 1) throw new ReplyError(ERR.SYNTAX)
      count = parsed
    } else if (isKeyword(option, 'MATCH')) {
      pattern = value
    } else if (isKeyword(option, 'TYPE')) {
      typeName = value.toString('latin1')
    } else {
      throw new ReplyError(ERR.SYNTAX)
    }
  }
  const found: Buffer[] = []
  let visited = 0
  let next = 0
  for (const entry of keyspace(ctx).entries()) {
    if (entry.seq < cursor) continue
    if (visited++ === count) {
      next = entry.seq
      break
    }
    const bytes = FilterRegistry.bytesOf(entry.name)
    if (pattern !== undefined && !globMatch(pattern, bytes)) continue
    if (typeName !== undefined && typeName.toLowerCase() !== typeNameOf(entry).toLowerCase()) continue
    found.push(bytes)
  }
  const reply = ctx.client.reply
  reply.array(2)
  reply.bulk(String(next))
  reply.array(found.length)
  for (const bytes of found) reply.bulk(bytes)
}

/** RANDOMKEY → a name, or null when there are none */
export function randomkey(ctx: CommandContext): void {
  const registry = keyspace(ctx)
  const size = registry.liveSize()
  if (size === 0) {
    ctx.client.reply.nullBulk()
    return
  }
  let skip = Math.floor(Math.random() * size)
  for (const name of registry.names()) {
    if (skip-- === 0) {
      ctx.client.reply.bulk(FilterRegistry.bytesOf(name))
      return
    }
  }
}

/** MEMORY USAGE key [SAMPLES count] → bytes (BF.INFO Size and the key's own, as redis counts them), or null */
export function memoryUsage(ctx: CommandContext, argv: CommandArgs): void {
  // redis 7.0 object.c memoryCommand: the options first, each SAMPLES with its count (which
  // changes nothing here: a filter's size is exact), then the key.
  for (let i = 3; i < argv.length; i++) {
    if (!argv.isKeyword(i, 'SAMPLES') || i + 1 >= argv.length) throw new ReplyError(ERR.SYNTAX)
    const samples = parseInteger(argv.get(++i))
    if (samples === undefined) throw new ReplyError(ERR.NOT_INTEGER)
    if (samples < 0) throw new ReplyError(ERR.SYNTAX)
  }
  const key = argv.get(2)
  const entry = keyspace(ctx).get(FilterRegistry.nameOf(key))
  const reply = ctx.client.reply
  if (entry === undefined) reply.nullBulk()
  else reply.integer(entry.filter.sizeBytes() + keyEntryBytes(key.length, ctx.server.cluster !== undefined))
}

/** redis 7.0 dict.h: a dictEntry's bytes (key, value, next). */
const DICT_ENTRY_BYTES = 24
/** redis 7.0 cluster mode's clusterDictEntryMetadata (the slot's key list: prev, next) on each dictEntry. */
const CLUSTER_ENTRY_METADATA_BYTES = 16

/**
 * What redis 7.0 memoryCommand adds to a value's own size (RedisBloom's mem_usage: BF.INFO's
 * Size): the key's sds as the allocator sizes it (sdsZmallocSize), its dictEntry and, in cluster
 * mode, the entry's metadata.
 */
export function keyEntryBytes(keyLength: number, cluster: boolean): number {
  const sds = allocationClass(sdsHeaderBytes(keyLength) + keyLength + 1)
  return sds + DICT_ENTRY_BYTES + (cluster ? CLUSTER_ENTRY_METADATA_BYTES : 0)
}

/** redis sds.c sdsReqType's header for a string of this length (sdshdr5, 8, 16, 32, 64; an empty one is sdshdr8). */
function sdsHeaderBytes(length: number): number {
  if (length < 32) return length === 0 ? 3 : 1
  if (length < 0x100) return 3
  if (length < 0x10000) return 5
  return length < 2 ** 32 ? 9 : 17
}

/** jemalloc's size class for a request (zmalloc_size): 8, 16 to 128 by 16, then four classes per doubling. */
export function allocationClass(bytes: number): number {
  if (bytes <= 8) return 8
  if (bytes <= 128) return Math.ceil(bytes / 16) * 16
  let group = 128
  while (group * 2 < bytes) group *= 2
  const step = group / 4
  return Math.ceil(bytes / step) * step
}

/** MEMORY DOCTOR → redis's all-clear */
export function memoryDoctor(ctx: CommandContext): void {
  ctx.client.reply.verbatim('Hi Sam, I have no memory problems to report.')
}
