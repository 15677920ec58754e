/**
 * What a Cuckoo filter may allocate: a new filter (CF.RESERVE, auto-created by CF.ADD/CF.INSERT,
 * a CF.LOADCHUNK header) and each sub-filter it grows, checked against `max-filter-bytes` (all
 * its sub-filters) and `maxmemory` (all filters) before the bytes are allocated, and counted
 * against `maxmemory` when allowed. RedisBloom has no such bound: a capacity it cannot allocate
 * aborts it ("Out Of Memory allocating"); bfs answers RedisBloom's own text for sizes it refuses,
 * `ERR Insufficient memory to create filter`.
 */
import { CuckooFilter, subFilterBytes, type CuckooSettings, type GrowthCheck } from '../../core/cuckoo-filter.js'
import { MemoryGuard } from '../../store/memory-guard.js'
import type { CommandContext } from '../kernel/context.js'
import { ERR, ReplyError } from '../kernel/reply-error.js'

/**
 * Refuses `bytes` of buckets for a new filter: `ERR Insufficient memory to create filter` past
 * `max-filter-bytes` (or a sub-filter's 2^32 bytes, Infinity), -OOM past `maxmemory`; else counts them.
 */
export function reserveCuckooBytes(ctx: CommandContext, bytes: number): void {
  const config = ctx.server.config
  const maxFilterBytes = config['max-filter-bytes']
  if (bytes === Infinity || (maxFilterBytes > 0 && bytes > maxFilterBytes))
    throw new ReplyError(ERR.CF_INSUFFICIENT_MEMORY)
  const guard = MemoryGuard.of(ctx.server.databases)
  if (!guard.canAllocate(config.maxmemory, bytes)) throw new ReplyError(ERR.OOM)
  guard.allocated(bytes)
}

/** A new, empty filter with these settings, its first sub-filter sized and counted first. */
export function createCuckoo(ctx: CommandContext, settings: CuckooSettings): CuckooFilter {
  reserveCuckooBytes(ctx, subFilterBytes(settings, 0))
  try {
    return new CuckooFilter(settings)
  } catch (error) {
    // Memory the process could not get.
    if (error instanceof RangeError) throw new ReplyError(ERR.CF_INSUFFICIENT_MEMORY)
    throw error
  }
}

/** The command and filter {@link growthCheck} answers for, between cuckooGrowthCheck and endGrowthCheck. */
let growingCtx: CommandContext | undefined
let growingFilter: CuckooFilter | undefined

function growthCheck(bytes: number): boolean {
  const ctx = growingCtx!
  const config = ctx.server.config
  const maxFilterBytes = config['max-filter-bytes']
  if (maxFilterBytes > 0 && growingFilter!.bitmapBytes() + bytes > maxFilterBytes) return false
  const guard = MemoryGuard.of(ctx.server.databases)
  if (!guard.canAllocate(config.maxmemory, bytes)) return false
  guard.allocated(bytes)
  return true
}

/**
 * The check a growing filter asks before each new sub-filter (the add answers -1 / "Memory
 * allocation failure" when refused), valid until {@link endGrowthCheck}: one function for every
 * command (commands run one at a time), so that an add allocates nothing for it.
 */
export function cuckooGrowthCheck(ctx: CommandContext, filter: CuckooFilter): GrowthCheck {
  growingCtx = ctx
  growingFilter = filter
  return growthCheck
}

/** The adds are done: the command and filter are not kept. */
export function endGrowthCheck(): void {
  growingCtx = undefined
  growingFilter = undefined
}
