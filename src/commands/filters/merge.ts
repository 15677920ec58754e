/**
 * BF.MERGE destkey sourcekey [sourcekey ...] (bfs; RedisBloom has no such command): destkey
 * becomes the union of the sources, replacing what it held, as SUNIONSTORE does. The union is
 * built by src/core/merge.ts; here: the keys, the memory limits, the log and the reply.
 */
import { mergeFilters, mergedBytes, mergeMismatch } from '../../core/merge.js'
import { ScalableBloomFilter } from '../../core/scalable-filter.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { bloomOrWrongType } from '../kernel/key-kind.js'
import { keyspace, type CommandContext } from '../kernel/context.js'
import { reserveBytes } from '../kernel/filter-budget.js'
import { ERR, mergeMismatchText, ReplyError } from '../kernel/reply-error.js'

/** BF.MERGE destkey sourcekey [sourcekey ...] → +OK */
export function bfMerge(ctx: CommandContext, argv: CommandArgs): void {
  const registry = keyspace(ctx)
  const sources: ScalableBloomFilter[] = []
  for (let i = 2; i < argv.length; i++) {
    // A window filter is -WRONGTYPE (key-kind.ts), as a source of another type is for SUNIONSTORE.
    const entry = bloomOrWrongType(registry.get(argv.latin1(i)))
    if (entry === undefined) throw new ReplyError(ERR.NOT_FOUND)
    sources.push(entry.filter)
  }
  const merged = mergeOrRefuse(ctx, argv, sources)
  registry.set(argv.latin1(1), merged)
  // Logged as the command: a replay runs every earlier write first, so the sources are then as
  // they are now, and the union's bits and counts come out the same (merging is deterministic).
  ctx.server.propagate(argv)
  ctx.client.reply.simple('OK')
}

/** The union, once the sources were found alike and its bytes within the limits. */
function mergeOrRefuse(ctx: CommandContext, argv: CommandArgs, sources: ScalableBloomFilter[]): ScalableBloomFilter {
  const difference = mergeMismatch(sources)
  if (difference !== undefined) {
    const first = argv.latin1(difference.first + 2)
    const other = argv.latin1(difference.other + 2)
    throw new ReplyError(mergeMismatchText(difference, first, other), 'latin1')
  }
  // Sized before anything is allocated; the destination's old bitmaps are not counted as freed
  // (the running count is recounted when it says "over").
  reserveBytes(ctx, mergedBytes(sources))
  let merged: ReturnType<typeof mergeFilters>
  try {
    merged = mergeFilters(sources)
  } catch (error) {
    if (error instanceof RangeError) throw new ReplyError(ERR.COULD_NOT_CREATE) // memory the process could not get
    throw error
  }
  if (!(merged instanceof ScalableBloomFilter)) throw new Error('sources found alike, then not') // cannot happen
  return merged
}
