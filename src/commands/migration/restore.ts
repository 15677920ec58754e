/**
 * DUMP, RESTORE and RESTORE-ASKING (redis 7.0.15 cluster.c dumpCommand / restoreCommand) for bfs
 * keys, with a bfs payload (format/dump-payload.ts): a filter file framed by a kind byte, a
 * version and redis's CRC-64. A foreign or damaged payload is refused as redis refuses one
 * ("DUMP payload version or checksum are wrong"), a sound frame around bad content with "Bad data
 * format". RESTORE-ASKING is RESTORE with the `asking` flag (cluster routing runs it as if ASKING
 * had been sent: MIGRATE's target gets it while the slot is still importing).
 */
import { ScalableBloomFilter } from '../../core/scalable-filter.js'
import { decodeFilter, encodeFilter } from '../../format/codec.js'
import {
  DUMP_KIND_BLOOM,
  DUMP_KIND_CUCKOO,
  DUMP_KIND_WINDOW,
  dumpPayloadFile,
  encodeDumpPayload,
  verifyDumpPayload,
} from '../../format/dump-payload.js'
import { isCuckooFile } from '../../format/cuckoo-file.js'
import { isWindowFile } from '../../format/window-file.js'
import { decodeWholeFile, filterOfWholeFile, wholeFileOf } from '../../store/whole-file.js'
import { DecodeError } from '../../format/decode-error.js'
import { nativeCrc32 } from '../../store/native-crc32.js'
import { FilterRegistry, type FilterEntry, type StoredFilter } from '../../store/registry.js'
import { keyspace, type CommandContext } from '../kernel/context.js'
import { ERR, ReplyError, notDumpableText } from '../kernel/reply-error.js'
import { parseInteger } from '../kernel/args.js'
import { replacedBytes, reserveLoadBytes } from '../kernel/filter-budget.js'
import type { CommandArgs } from '../../protocol/command-args.js'

const NO_NAME = new Uint8Array(0)

/** The DUMP payload of a key's filter. @throws ReplyError when the filter cannot be encoded (as SAVE refuses it) */
export function dumpPayloadOf(entry: FilterEntry): Buffer {
  try {
    const payload =
      entry.kind === 'bloom'
        ? encodeDumpPayload(
            DUMP_KIND_BLOOM,
            encodeFilter({ name: NO_NAME, parts: entry.filter.toParts() }, nativeCrc32),
          )
        : encodeDumpPayload(entry.kind === 'window' ? DUMP_KIND_WINDOW : DUMP_KIND_CUCKOO, [
            wholeFileOf(entry, NO_NAME, nativeCrc32)!,
          ])
    return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)
  } catch (error) {
    if (error instanceof RangeError) throw new ReplyError(notDumpableText(error.message))
    throw error
  }
}

/** DUMP key → the payload, or a null bulk when the key does not exist */
export function dump(ctx: CommandContext, argv: CommandArgs): void {
  const entry = keyspace(ctx).get(FilterRegistry.nameOf(argv.get(1)))
  if (entry === undefined) ctx.client.reply.nullBulk()
  else ctx.client.reply.bulk(dumpPayloadOf(entry))
}

/**
 * The filter of a payload, verified (version, CRC-64) then decoded from a copy of it (the decoded
 * bitmaps are views into that copy, which is no larger than the payload already read).
 * `freed`: the bytes of the key it replaces (filter-budget.ts reserveLoadBytes).
 * @throws ReplyError BAD_PAYLOAD or BAD_DATA_FORMAT, or -OOM past maxmemory
 */
export function filterOfPayload(ctx: CommandContext, payload: Uint8Array, freed = 0): StoredFilter {
  // The copy below holds the bitmaps, and is no larger than the payload: counted against
  // maxmemory first, as redis refuses before it runs a command (and before the checksum's work).
  reserveLoadBytes(ctx, payload.byteLength, freed)
  if (!verifyDumpPayload(payload)) throw new ReplyError(ERR.BAD_PAYLOAD)
  const { kind, file } = dumpPayloadFile(payload)
  if (kind !== DUMP_KIND_BLOOM && kind !== DUMP_KIND_WINDOW && kind !== DUMP_KIND_CUCKOO)
    throw new ReplyError(ERR.BAD_DATA_FORMAT)
  // The kind byte and the file's magic must agree.
  if (kind === DUMP_KIND_WINDOW ? !isWindowFile(file) : kind === DUMP_KIND_CUCKOO && !isCuckooFile(file))
    throw new ReplyError(ERR.BAD_DATA_FORMAT)
  const copy = new Uint8Array(file)
  try {
    if (kind !== DUMP_KIND_BLOOM) return filterOfWholeFile(decodeWholeFile(copy, nativeCrc32))
    const maxBytes = ctx.server.config['max-filter-bytes']
    return ScalableBloomFilter.fromParts(decodeFilter(copy, nativeCrc32).parts, maxBytes > 0 ? maxBytes : undefined)
  } catch (error) {
    if (error instanceof DecodeError || error instanceof RangeError) throw new ReplyError(ERR.BAD_DATA_FORMAT)
    throw error
  }
}

/** RESTORE's options after the payload (redis restoreCommand's parse, its errors in its order). */
export interface RestoreOptions {
  replace: boolean
  absttl: boolean
}

/** Parses REPLACE, ABSTTL, IDLETIME s, FREQ f from argument `from` on. IDLETIME and FREQ are checked, not kept (bfs keeps no LRU/LFU). */
export function parseRestoreOptions(argv: CommandArgs, from: number): RestoreOptions {
  const options: RestoreOptions = { replace: false, absttl: false }
  let idle = false
  let freq = false
  for (let j = from; j < argv.length; j++) {
    const more = argv.length - j - 1
    if (argv.isKeyword(j, 'REPLACE')) options.replace = true
    else if (argv.isKeyword(j, 'ABSTTL')) options.absttl = true
    else if (argv.isKeyword(j, 'IDLETIME') && more >= 1 && !freq) {
      const value = parseInteger(argv.get(++j))
      if (value === undefined) throw new ReplyError(ERR.NOT_INTEGER)
      if (value < 0) throw new ReplyError(ERR.INVALID_IDLETIME)
      idle = true
    } else if (argv.isKeyword(j, 'FREQ') && more >= 1 && !idle) {
      const value = parseInteger(argv.get(++j))
      if (value === undefined) throw new ReplyError(ERR.NOT_INTEGER)
      if (value < 0 || value > 255) throw new ReplyError(ERR.INVALID_FREQ)
      freq = true
    } else throw new ReplyError(ERR.SYNTAX)
  }
  return options
}

/** RESTORE's TTL argument: an integer >= 0 (redis: "Invalid TTL value, must be >= 0"). */
export function parseRestoreTtl(bytes: Uint8Array): number {
  const ttl = parseInteger(bytes)
  if (ttl === undefined) throw new ReplyError(ERR.NOT_INTEGER)
  if (ttl < 0) throw new ReplyError(ERR.INVALID_TTL)
  return ttl
}

/**
 * Stores a restored filter under `name` (redis restoreCommand from "Remove the old key if
 * needed"): replaces the old key when asked, drops a filter whose expiry has passed (on a master;
 * a replica's stream and a load keep it), sets the expiry. Returns what to propagate: 'restore'
 * (with the absolute expiry), 'del' (an old key replaced by an expired one), or 'none'.
 */
export function storeRestored(
  ctx: CommandContext,
  name: string,
  filter: StoredFilter,
  ttl: number,
  options: RestoreOptions,
): { propagate: 'restore' | 'del' | 'none'; expiresAt: number | undefined } {
  const registry = keyspace(ctx)
  const deleted = options.replace ? registry.delete(name) : false
  const now = registry.expiry.now()
  const expiresAt = ttl === 0 ? undefined : options.absttl ? ttl : ttl + now
  // redis checkAlreadyExpired: not while loading (the log's replay included), nor on a replica
  // (its master's DEL comes): only where the expiry policy deletes, as EXPIRE's (expiry.ts).
  if (expiresAt !== undefined && expiresAt <= now && registry.expiry.mode() === 'delete')
    return { propagate: deleted ? 'del' : 'none', expiresAt }
  const entry = registry.set(name, filter)
  if (expiresAt !== undefined) registry.setExpiry(entry, expiresAt)
  return { propagate: 'restore', expiresAt }
}

/** RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f] → +OK (and RESTORE-ASKING) */
export function restore(ctx: CommandContext, argv: CommandArgs): void {
  const options = parseRestoreOptions(argv, 4)
  const name = FilterRegistry.nameOf(argv.get(1))
  if (!options.replace && keyspace(ctx).has(name)) throw new ReplyError(ERR.BUSYKEY)
  const ttl = parseRestoreTtl(argv.get(2))
  const filter = filterOfPayload(ctx, argv.get(3), replacedBytes(ctx, name, options.replace))
  const stored = storeRestored(ctx, name, filter, ttl, options)
  if (stored.propagate === 'del') ctx.server.propagate([Buffer.from('DEL'), argv.get(1)])
  else if (stored.propagate === 'restore') {
    // redis rewrites a relative TTL as absolute, with ABSTTL, so that a replica or a replay agrees.
    const record = argv.toArray()
    if (stored.expiresAt !== undefined && !options.absttl) {
      record[2] = Buffer.from(String(stored.expiresAt))
      record.push(Buffer.from('ABSTTL'))
    }
    ctx.server.propagate(record)
  }
  ctx.client.reply.simple('OK')
}
