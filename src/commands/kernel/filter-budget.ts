/**
 * What a filter may allocate: `max-filter-bytes` (one filter, all layers) and `maxmemory` (all
 * filters). Both are checked before the bytes are allocated, from the sizes src/core/sizing.ts
 * computes, so one BF.RESERVE of a terabyte is an error reply, never an out-of-memory crash.
 */
import type { ScalableBloomFilter } from '../../core/scalable-filter.js'
import { ERROR_TIGHTENING_RATIO, firstLayerErrorRate, layerGeometry } from '../../core/sizing.js'
import { MemoryGuard } from '../../store/memory-guard.js'
import type { Databases } from '../../store/databases.js'
import { keyspace, type CommandContext } from './context.js'
import { ERR, FILTER_ERROR_TEXT, ReplyError } from './reply-error.js'

/**
 * Bitmap bytes of a new filter's first layer, refused with an error reply when it would pass
 * `max-filter-bytes` or `maxmemory`; counted against `maxmemory` when allowed.
 *
 * @throws ReplyError `ERR could not create filter` for parameters no layer can be built from
 */
export function reserveFilterBytes(
  ctx: CommandContext,
  capacity: number,
  errorRate: number,
  nonScaling: boolean,
): number {
  let bytes: number
  try {
    bytes = layerGeometry(capacity, firstLayerErrorRate(errorRate, nonScaling)).byteCount
  } catch (error) {
    if (error instanceof RangeError) throw new ReplyError(ERR.COULD_NOT_CREATE)
    throw error
  }
  reserveBytes(ctx, bytes)
  return bytes
}

/**
 * `bytes` of bitmap for one new filter (all its layers): refused with BF.RESERVE's error reply
 * when over `max-filter-bytes`, with -OOM when over `maxmemory`; counted against `maxmemory` when
 * allowed. Called before the bytes are allocated.
 */
export function reserveBytes(ctx: CommandContext, bytes: number): void {
  const config = ctx.server.config
  const maxFilterBytes = config['max-filter-bytes']
  if (maxFilterBytes > 0 && bytes > maxFilterBytes) throw new ReplyError(ERR.FILTER_TOO_LARGE)
  const guard = MemoryGuard.of(ctx.server.databases)
  if (!guard.canAllocate(config.maxmemory, bytes)) throw new ReplyError(ERR.OOM)
  guard.allocated(bytes)
}

/**
 * `bytes` a load is about to allocate (RESTORE's payload, BF.LOAD's file, BF.LOADCHUNK's header, a
 * BFS.RESTORE-PART staging's record: each bounds the bitmaps it can hold), refused with -OOM when
 * over `maxmemory` and counted when allowed, before anything is allocated. `freed`: the bitmap
 * bytes of the key it replaces (REPLACE), given back when the new one is stored. What redis checks
 * before the command (used > maxmemory) cannot see a payload's size: counting it here is what
 * keeps a pipeline of loads from passing the limit before the count catches up.
 */
export function reserveLoadBytes(ctx: CommandContext, bytes: number, freed = 0): void {
  const guard = MemoryGuard.of(ctx.server.databases)
  const needed = Math.max(0, bytes - freed)
  if (!guard.canAllocate(ctx.server.config.maxmemory, needed)) throw new ReplyError(ERR.OOM)
  guard.allocated(needed)
}

/** Bitmap bytes of the filter under `name` that a REPLACE would free (0 without REPLACE or key). */
export function replacedBytes(ctx: CommandContext, name: string, replace: boolean): number {
  return replace ? (keyspace(ctx).get(name)?.filter.bitmapBytes() ?? 0) : 0
}

/**
 * Before `filter.add(item, start, end)`: undefined when the add may go ahead, or the error text when it would
 * add a layer that passes `max-filter-bytes` or `maxmemory`. Costs two field reads unless the
 * newest layer is full; the layer it allows is counted against `maxmemory`.
 */
export function scaleUpRefusal(
  ctx: CommandContext,
  filter: ScalableBloomFilter,
  item: Uint8Array,
  start: number,
  end: number,
): string | undefined {
  const layers = filter.layers
  const newest = layers[layers.length - 1]!
  if (newest.items < newest.capacity || !filter.canScale) return undefined
  return checkScaleUp(ctx, filter, item, start, end)
}

function checkScaleUp(
  ctx: CommandContext,
  filter: ScalableBloomFilter,
  item: Uint8Array,
  start: number,
  end: number,
): string | undefined {
  // sb.c SBChain_Add: an item some layer already reports is answered 0 without growing.
  if (filter.has(item, start, end)) return undefined
  const layers = filter.layers
  const newest = layers[layers.length - 1]!
  const capacity = newest.capacity * filter.expansion
  const errorRate = newest.errorRate * ERROR_TIGHTENING_RATIO
  // Parameters no layer can be built from: the core itself answers too-large.
  if (!Number.isSafeInteger(capacity) || !(errorRate > 0)) return undefined
  const bytes = layerGeometry(capacity, errorRate).byteCount
  const config = ctx.server.config
  const maxFilterBytes = config['max-filter-bytes']
  if (maxFilterBytes > 0) {
    if (bytes + filter.bitmapBytes() > maxFilterBytes) return FILTER_ERROR_TEXT['too-large']
  }
  const guard = MemoryGuard.of(ctx.server.databases)
  if (!guard.canAllocate(config.maxmemory, bytes)) return ERR.OOM
  guard.allocated(bytes)
  return undefined
}

/** Filters over max-filter-bytes named one by one after a load; the rest are counted. */
const MAX_NAMED_FILTERS = 10

/**
 * Warning lines about what a start loaded past the limits. Loading refuses nothing for a limit
 * (redis applies no maxmemory while loading either): afterwards, while over `maxmemory`, commands
 * that need memory get -OOM and reads, DEL and FLUSHALL work; a filter over `max-filter-bytes`
 * takes adds that fit in its layers, and one that would add a layer is refused with BF.RESERVE's
 * text. 0 means no limit.
 */
export function loadedOverLimits(databases: Databases, maxmemory: number, maxFilterBytes: number): string[] {
  const lines: string[] = []
  if (maxmemory > 0) {
    const used = MemoryGuard.of(databases).recount()
    if (used > maxmemory) {
      lines.push(
        `The dataset loaded (${used} bytes of filters) exceeds maxmemory (${maxmemory} bytes): nothing was dropped; ` +
          'commands that need memory get -OOM until it is under the limit (DEL, FLUSHALL, or CONFIG SET maxmemory)',
      )
    }
  }
  if (maxFilterBytes > 0) {
    let over = 0
    for (const { entry } of databases.allEntries()) {
      const bytes = entry.filter.bitmapBytes()
      if (bytes <= maxFilterBytes) continue
      if (over++ < MAX_NAMED_FILTERS) {
        lines.push(
          `Filter ${JSON.stringify(entry.name)} (${bytes} bytes) exceeds max-filter-bytes (${maxFilterBytes}): loaded whole; ` +
            'adds that fit in its layers go on, one that would add a layer is refused',
        )
      }
    }
    if (over > MAX_NAMED_FILTERS)
      lines.push(`${over - MAX_NAMED_FILTERS} more filters exceed max-filter-bytes (${maxFilterBytes})`)
  }
  return lines
}
