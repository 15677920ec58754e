/**
 * Persistence commands: SAVE, BGSAVE, LASTSAVE, BGREWRITEAOF as redis 7.0 answers them, and BF.SAVE / BF.LOAD,
 * which write and read one filter as a header-plus-bitmap file under `dir`. The snapshot itself is
 * store/snapshot.ts; SHUTDOWN's SAVE/NOSAVE are handled by the server's shutdown().
 */
import { statSync } from 'node:fs'
import { bloomOrWrongType } from '../kernel/key-kind.js'
import { replacedBytes, reserveLoadBytes } from '../kernel/filter-budget.js'
import { keyspace, type CommandContext } from '../kernel/context.js'
import { ERR, ReplyError, errText, filterFileText } from '../kernel/reply-error.js'
import { ScalableBloomFilter } from '../../core/scalable-filter.js'
import { decodeFilter, encodeFilter, type FilterRecord } from '../../format/codec.js'
import { readFilterFile } from '../../store/filter-file.js'
import { DecodeError } from '../../format/decode-error.js'
import { FilterRegistry } from '../../store/registry.js'
import { UnsafePathError } from '../../store/safe-path.js'
import { resolveClientPath } from '../../store/owned-files.js'
import { openedForWrite } from '../kernel/transaction.js'
import { nativeCrc32, writeFilterFileSync } from '../../store/snapshot.js'
import type { CommandArgs } from '../../protocol/command-args.js'

const BGSAVE_STARTED = 'Background saving started'
const BGSAVE_SCHEDULED = 'Background saving scheduled'

/** SAVE → +OK once every changed filter is on disk (blocks the server, as in redis) */
export function save(ctx: CommandContext): void {
  const store = ctx.server.persistence.snapshots
  if (store.inProgress) throw new ReplyError(ERR.BGSAVE_IN_PROGRESS)
  try {
    store.saveSync(ctx.server.databases)
  } catch (error) {
    throw new ReplyError(errText((error as Error).message))
  }
  ctx.client.reply.simple('OK')
}

/** BGSAVE [SCHEDULE] → +Background saving started; the save runs while the server keeps serving */
export function bgsave(ctx: CommandContext, argv: CommandArgs): void {
  let schedule = false
  if (argv.length > 1) {
    if (argv.length === 2 && argv.isKeyword(1, 'SCHEDULE')) schedule = true
    else throw new ReplyError(ERR.SYNTAX)
  }
  const store = ctx.server.persistence.snapshots
  // redis 7.0 bgsaveCommand: inside EXEC the save waits until the transaction is over, so that it
  // holds all of it or none (the save timer starts it within 100 ms).
  if (store.inProgress || ctx.server.persistence.inTransaction) {
    if (!schedule && !ctx.server.persistence.inTransaction) throw new ReplyError(ERR.BGSAVE_IN_PROGRESS)
    store.scheduled = true
    ctx.client.reply.simple(BGSAVE_SCHEDULED)
    return
  }
  ctx.server.log.notice('Background saving started')
  // Errors are logged and shown by INFO persistence (rdb_last_bgsave_status), as in redis.
  store.saveAll(ctx.server.databases, { background: true }).catch(() => {})
  ctx.client.reply.simple(BGSAVE_STARTED)
}

/** LASTSAVE → unix time (seconds) of the last successful save */
export function lastsave(ctx: CommandContext): void {
  ctx.client.reply.integer(Math.floor(ctx.server.persistence.snapshots.lastSaveMs / 1000))
}

function safePath(ctx: CommandContext, raw: Buffer, mode: 'read' | 'write'): { absolute: string; relative: string } {
  try {
    // Every file bfs owns is refused (store/owned-files.ts).
    return resolveClientPath(ctx.server.config, ctx.server.configFile, raw, mode)
  } catch (error) {
    if (error instanceof UnsafePathError) throw new ReplyError(errText(error.message))
    throw error
  }
}

/** BGREWRITEAOF → +Background append only file rewriting started (redis aof.c bgrewriteaofCommand): the log folded into a fresh snapshot, a new empty one started */
export function bgrewriteaof(ctx: CommandContext): void {
  // redis 7.0: inside EXEC the rewrite is scheduled, to start once the transaction is over.
  if (ctx.server.persistence.inTransaction) {
    setImmediate(() => ctx.server.persistence.logRewriter.start())
    ctx.client.reply.simple('Background append only file rewriting scheduled')
    return
  }
  if (ctx.server.persistence.logRewriter.start() === 'in-progress') {
    throw new ReplyError(ERR.BGREWRITEAOF_IN_PROGRESS)
  }
  ctx.client.reply.simple('Background append only file rewriting started')
}

/** BF.SAVE key path → +OK; writes the filter to `path` (relative to dir) atomically */
export function bfSave(ctx: CommandContext, argv: CommandArgs): void {
  const name = FilterRegistry.nameOf(argv.get(1))
  const entry = bloomOrWrongType(keyspace(ctx).get(name))
  if (entry === undefined) throw new ReplyError(ERR.NOT_FOUND)
  const target = safePath(ctx, argv.get(2), 'write')
  try {
    writeFilterFileSync(target.absolute, { name: argv.get(1), parts: entry.filter.toParts() })
  } catch (error) {
    throw new ReplyError(filterFileText('cannot write', target.relative, (error as Error).message))
  }
  // Nothing to propagate: the dataset did not change.
  ctx.client.reply.simple('OK')
}

/** The size of a file BF.LOAD is about to read. */
function fileSize(source: { absolute: string; relative: string }): number {
  try {
    return statSync(source.absolute).size
  } catch (error) {
    throw new ReplyError(filterFileText('cannot read', source.relative, (error as Error).message))
  }
}

/**
 * The append-only log's form of BF.LOAD: `BF.LOAD key <file contents> CONTENTS`, which loads the
 * bytes given (replacing the key) instead of reading a file. A BF.LOAD is logged this way so that
 * its replay does not depend on a file that may have been overwritten or deleted since.
 */
export const BF_LOAD_CONTENTS = 'CONTENTS'

/**
 * BF.LOAD key path [REPLACE] → +OK; reads a bfs file or an original-library file (which keeps
 * its seed and answers as the original library would). The key names the filter, whatever name
 * the file carries.
 */
export function bfLoad(ctx: CommandContext, argv: CommandArgs): void {
  let replace = false
  let inline = false
  if (argv.length === 4) {
    if (argv.isKeyword(3, 'REPLACE')) replace = true
    else if (argv.isKeyword(3, BF_LOAD_CONTENTS)) replace = inline = true
    else throw new ReplyError(ERR.SYNTAX)
  }
  // Opened for writing as a BF.* command opens its key (transaction.ts openedForWrite).
  openedForWrite(ctx)
  const name = FilterRegistry.nameOf(argv.get(1))
  const registry = keyspace(ctx)
  if (!replace && registry.has(name)) throw new ReplyError(ERR.ITEM_EXISTS)
  const source = inline ? { absolute: '', relative: 'contents' } : safePath(ctx, argv.get(2), 'read')
  // Counted against maxmemory before anything is read: the file's size bounds its bitmaps.
  reserveLoadBytes(ctx, inline ? argv.get(2).length : fileSize(source), replacedBytes(ctx, name, replace))
  let bytes: Uint8Array | undefined
  let filter: ScalableBloomFilter
  try {
    let record: FilterRecord
    if (inline) {
      // A copy: the decoded bitmaps are views into these bytes and stay in the filter.
      bytes = new Uint8Array(argv.get(2))
      record = decodeFilter(bytes, nativeCrc32)
    } else {
      // Piece by piece, every size checked against the file's before it is read.
      record = readFilterFile(source.absolute, nativeCrc32)
    }
    const maxBytes = ctx.server.config['max-filter-bytes']
    filter = ScalableBloomFilter.fromParts(record.parts, maxBytes > 0 ? maxBytes : undefined)
    // The log gets the filter's bytes, not the path (below): a file's are encoded again from what
    // was loaded, only when there is a log to write them to.
    if (bytes === undefined && ctx.server.config.appendonly) bytes = Buffer.concat(encodeFilter(record))
  } catch (error) {
    if (error instanceof DecodeError || error instanceof RangeError) {
      throw new ReplyError(filterFileText('bad filter file', source.relative, error.message))
    }
    throw new ReplyError(filterFileText('cannot read', source.relative, (error as Error).message))
  }
  // A new entry (version 1, never saved) is written by the next snapshot; set() counts the change.
  registry.set(name, filter)
  // Logged with the bytes that were loaded, not the path: the file may change or go before a
  // replay (a later BF.SAVE to the same path, a deletion), and the replay must load these.
  if (bytes !== undefined)
    ctx.server.propagate([Buffer.from('BF.LOAD'), argv.get(1), bytes, Buffer.from(BF_LOAD_CONTENTS)])
  ctx.client.reply.simple('OK')
}
