/**
 * CF.SCANDUMP and CF.LOADCHUNK, as RedisBloom 2.4.23's rebloom.c CFScanDump_RedisCommand and
 * CFLoadChunk_RedisCommand answer them, over the encoding of format/cuckoo-dump.ts. Where
 * RedisBloom loses data, bfs refuses (docs/reference/compatibility.md): a chunk past the last sub-filter
 * ("Couldn't load chunk!"), a header whose expansion is not a power of two or that declares more
 * than 65535 sub-filters ("Couldn't create filter!"), a header too large to allocate ("ERR
 * Insufficient memory to create filter"); and every chunk is propagated, not only the header, so
 * the log and the replicas hold the loaded buckets.
 */
import { CuckooFilter } from '../../core/cuckoo-filter.js'
import {
  cuckooChunkAt,
  cuckooChunkTarget,
  decodeCuckooHeader,
  encodeCuckooHeader,
  CF_HEADER_BYTES,
} from '../../format/cuckoo-dump.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { parseInteger } from '../kernel/args.js'
import { keyspace, type CommandContext } from '../kernel/context.js'
import { reserveCuckooBytes } from './cuckoo-budget.js'
import { existingCuckoo } from './cuckoo.js'
import { cuckooOrWrongType } from '../kernel/key-kind.js'
import { ERR, ReplyError } from '../kernel/reply-error.js'

/** The sub-filters' sizes in bytes, oldest first. */
function sizesOf(filter: CuckooFilter): number[] {
  return filter.subFilters.map((data) => data.length)
}

/** CF.SCANDUMP key cursor → [next cursor, chunk]: cursor 0 the header, then the buckets; [0, nil] at the end or for a filter with no items */
export function cfScandump(ctx: CommandContext, argv: CommandArgs): void {
  const cursor = parseInteger(argv.get(2))
  if (cursor === undefined || cursor < 0) throw new ReplyError(ERR.CF_INVALID_POSITION)
  const filter = existingCuckoo(ctx, argv).filter
  const reply = ctx.client.reply
  reply.array(2)
  const chunk = filter.numItems === 0n || cursor === 0 ? undefined : cuckooChunkAt(sizesOf(filter), cursor)
  if (filter.numItems !== 0n && cursor === 0) {
    reply.integer(1)
    reply.bulk(encodeCuckooHeader(filter))
  } else if (chunk === undefined) {
    reply.integer(0)
    reply.nullBulk()
  } else {
    reply.integer(chunk.next)
    reply.bulk(filter.subFilters[chunk.index]!.subarray(chunk.offset, chunk.offset + chunk.length))
  }
}

/** A filter made from a CF.SCANDUMP header (CFHeader_Load), refused before anything is allocated when it cannot be. */
function filterOfHeader(ctx: CommandContext, header: Uint8Array): CuckooFilter {
  const maxFilterBytes = ctx.server.config['max-filter-bytes']
  const decoded = decodeCuckooHeader(header, maxFilterBytes)
  if (decoded === 'invalid') throw new ReplyError(ERR.CF_COULD_NOT_CREATE)
  if (decoded === 'too-large') throw new ReplyError(ERR.CF_INSUFFICIENT_MEMORY)
  let bytes = 0
  const sizes: number[] = []
  for (
    let i = 0, size = decoded.numBuckets * decoded.bucketSize;
    i < decoded.numFilters;
    i++, size *= decoded.expansion
  ) {
    sizes.push(size)
    bytes += size
  }
  reserveCuckooBytes(ctx, bytes)
  let filter: CuckooFilter
  try {
    filter = new CuckooFilter(
      decoded,
      sizes.map((size) => new Uint8Array(size)),
    )
  } catch (error) {
    if (error instanceof RangeError) throw new ReplyError(ERR.CF_INSUFFICIENT_MEMORY) // memory the process could not get
    throw error
  }
  filter.numItems = decoded.numItems
  filter.numDeletes = decoded.numDeletes
  return filter
}

/** CF.LOADCHUNK key cursor data → +OK: cursor 1 with a header makes the filter, a later one writes buckets */
export function cfLoadchunk(ctx: CommandContext, argv: CommandArgs): void {
  const registry = keyspace(ctx)
  const found = registry.lookup(argv.bytes(1), argv.start(1), argv.end(1))
  const cursor = parseInteger(argv.get(2))
  if (cursor === undefined || cursor === 0) throw new ReplyError(ERR.CF_INVALID_POSITION)
  const data = argv.get(3)
  if (cursor === 1) {
    if (cuckooOrWrongType(found) !== undefined) throw new ReplyError(ERR.ITEM_EXISTS)
    if (data.length !== CF_HEADER_BYTES) throw new ReplyError(ERR.CF_INVALID_HEADER)
    registry.set(argv.latin1(1), filterOfHeader(ctx, data))
  } else {
    const entry = cuckooOrWrongType(found)
    if (entry === undefined) throw new ReplyError(ERR.NOT_FOUND)
    const target = cuckooChunkTarget(sizesOf(entry.filter), cursor, data.length)
    if (target === undefined) throw new ReplyError(ERR.CF_COULD_NOT_LOAD)
    entry.filter.loadBytes(target.index, target.offset, data)
    registry.touch(entry)
  }
  ctx.server.propagate(argv)
  ctx.client.reply.simple('OK')
}
