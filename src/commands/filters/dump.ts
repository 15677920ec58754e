/**
 * BF.SCANDUMP and BF.LOADCHUNK: RedisBloom 2.4's chunked dump (src/rebloom.c
 * `BFScanDump_RedisCommand`, `BFLoadChunk_RedisCommand`), byte-compatible both ways, so a filter
 * moves between bfs and Redis + RedisBloom without re-adding an item. The byte layout and the
 * chunk walk are format/dump-header.ts and format/dump-chunk.ts; this file adds the key lookup,
 * the argument order, the error texts and the size limit.
 */
import { allocateLayerBitmap } from '../../core/bitmap.js'
import { ScalableBloomFilter } from '../../core/scalable-filter.js'
import { decodeDumpHeader } from '../../format/dump-header.js'
import { dumpHeaderBitmapBytes } from '../../format/dump-size.js'
import { applyDumpChunk, dumpChunkAt, DUMP_ITER_INIT, type DumpChunkError } from '../../format/dump-chunk.js'
import { DecodeError } from '../../format/decode-error.js'
import { FilterRegistry } from '../../store/registry.js'
import { bloomOrWrongType } from '../kernel/key-kind.js'
import { keyspace, type CommandContext } from '../kernel/context.js'
import { ERR, ReplyError } from '../kernel/reply-error.js'
import { parseInteger } from '../kernel/args.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { watchHealth } from '../kernel/health-watch.js'
import { openedForWrite } from '../kernel/transaction.js'
import { reserveLoadBytes } from '../kernel/filter-budget.js'

/** SBChain_LoadEncodedChunk's refusals, worded as src/sb.c words them. */
const CHUNK_ERROR_TEXT: Record<DumpChunkError, string> = {
  'bad-data': ERR.RECEIVED_BAD_DATA,
  'no-link': ERR.INVALID_OFFSET,
  'too-big': ERR.CHUNK_TOO_BIG,
}

/**
 * BF.SCANDUMP key iterator → [1, header] for iterator 0, [next, chunk] after it, [0, ""] at the end.
 * As rebloom.c: the key is looked up before the iterator is parsed, so a missing key wins.
 */
export function bfScandump(ctx: CommandContext, argv: CommandArgs): void {
  const entry = bloomOrWrongType(keyspace(ctx).get(FilterRegistry.nameOf(argv.get(1))))
  if (entry === undefined) throw new ReplyError(ERR.NOT_FOUND)
  // RedisModule_StringToLongLong; values past 2^53 lose precision but are past any filter's end
  // anyway, where RedisBloom answers [0, ""] too.
  const iterator = parseInteger(argv.get(2))
  if (iterator === undefined) throw new ReplyError(ERR.SCANDUMP_ITERATOR)
  const parts = entry.filter.toParts()
  if (parts.hashing.kind !== 'redisbloom') throw new ReplyError(ERR.NOT_DUMPABLE)
  const chunk = dumpChunkAt(parts, iterator) // iterator 0: [1, the header]
  const reply = ctx.client.reply
  reply.array(2)
  reply.integer(chunk.next)
  reply.bulk(chunk.data) // copied into the reply buffer: a later add cannot change what is sent
}

/**
 * BF.LOADCHUNK key iterator data → +OK. On a missing key, iterator 1 carries the header and creates
 * the filter (empty bitmaps); on an existing filter, `data` is copied to the bitmaps at the
 * position SCANDUMP gave it. As rebloom.c: the iterator is parsed before the key is looked up.
 */
export function bfLoadchunk(ctx: CommandContext, argv: CommandArgs): void {
  const iterator = parseInteger(argv.get(2))
  if (iterator === undefined) throw new ReplyError(ERR.LOADCHUNK_ITERATOR)
  const data = argv.get(3)
  openedForWrite(ctx)
  const name = FilterRegistry.nameOf(argv.get(1))
  const registry = keyspace(ctx)
  const entry = bloomOrWrongType(registry.get(name))
  if (entry === undefined) {
    // src/sb.h SB_CHUNKITER_INIT: on a missing key only iterator 1, the header, is accepted.
    if (iterator !== DUMP_ITER_INIT) throw new ReplyError(ERR.NOT_FOUND)
    registry.set(name, filterFromHeader(ctx, data))
  } else {
    const layers = entry.filter.layers
    // Through the layer, so that its count of set bits covers the chunk (counted over its range only).
    const outcome = applyDumpChunk(entry.filter.toParts(), iterator, data, (index, offset, bytes) =>
      layers[index]!.writeBytes(bytes, offset),
    )
    if (outcome !== 'ok') throw new ReplyError(CHUNK_ERROR_TEXT[outcome])
    registry.touch(entry)
    watchHealth(ctx.server.log, entry, true)
  }
  // RedisModule_ReplicateVerbatim: the append-only log replays the same chunks in the same order.
  ctx.server.propagate(argv)
  ctx.client.reply.simple('OK')
}

/**
 * A new filter from a SCANDUMP header, validated as strictly as a file load before any bitmap is
 * allocated: RedisBloom's own checks (SB_NewChainFromHeader, all "ERR received bad data") plus
 * bfs's limits, with 'max-filter-bytes' applied to the sum of the layers' bitmaps.
 */
function filterFromHeader(ctx: CommandContext, header: Uint8Array): ScalableBloomFilter {
  const configured = ctx.server.config['max-filter-bytes']
  const maxBytes = configured > 0 ? configured : Number.MAX_SAFE_INTEGER
  const declared = dumpHeaderBitmapBytes(header)
  // Refused before anything is allocated, as BF.RESERVE refuses a filter over the limit, and
  // counted against maxmemory (-OOM past it) as BF.RESERVE counts one.
  if (declared !== undefined && declared > maxBytes) throw new ReplyError(ERR.FILTER_TOO_LARGE)
  if (declared !== undefined) reserveLoadBytes(ctx, declared)
  try {
    const parts = decodeDumpHeader(header, { maxBytes, allocate: allocateLayerBitmap })
    return ScalableBloomFilter.fromParts(parts, configured > 0 ? configured : undefined)
  } catch (error) {
    if (error instanceof DecodeError) throw new ReplyError(ERR.RECEIVED_BAD_DATA)
    if (error instanceof RangeError) {
      // fromParts refusing the layers (a non-scaling chain of several layers, a hash count that
      // does not match), or a bitmap the runtime cannot allocate.
      throw new ReplyError(
        /array length|allocat|memory/i.test(error.message) ? ERR.FILTER_TOO_LARGE : ERR.RECEIVED_BAD_DATA,
      )
    }
    throw error
  }
}
