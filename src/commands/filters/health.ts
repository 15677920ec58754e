/**
 * Looking inside a filter: BF.DEBUG, as RedisBloom 2.4.23 answers it (src/rebloom.c
 * `BFDebug_RedisCommand`), and bfs's own BFS.HEALTH, its fill and estimated false-positive rate
 * (core/filter-health.ts) in BF.INFO's field-value shape.
 */
import type { ScalableBloomFilter } from '../../core/scalable-filter.js'
import { filterHealth, type FilterHealth } from '../../core/filter-health.js'
import { cuckooHealth } from '../../core/cuckoo-health.js'
import { formatG } from '../../protocol/format-double.js'
import { existingFilter } from './bloom.js'
import { keyspace, type CommandContext } from '../kernel/context.js'
import { ERR, ReplyError } from '../kernel/reply-error.js'
import type { CommandArgs } from '../../protocol/command-args.js'

/**
 * BF.DEBUG's lines: `size:<items>`, then per layer, oldest first, rebloom.c's
 * `"bytes:%lu bits:%llu hashes:%u hashwidth:%u capacity:%lu size:%lu ratio:%g"`. The hash width is
 * 64 for every filter bfs holds: RedisBloom's BLOOM_OPT_FORCE64 (all 2.x filters) and the original
 * library's MurmurHash64A alike.
 */
function debugLines(filter: ScalableBloomFilter): string[] {
  const lines = [`size:${filter.info().items}`]
  for (const layer of filter.layers) {
    lines.push(
      `bytes:${layer.bitmap.length} bits:${layer.bitCount} hashes:${layer.hashCount} hashwidth:64 ` +
        `capacity:${layer.capacity} size:${layer.items} ratio:${formatG(layer.errorRate)}`,
    )
  }
  return lines
}

/** BF.DEBUG key → [size:N, one line per layer] (bulk strings in RESP2 and RESP3 alike). */
export function bfDebug(ctx: CommandContext, argv: CommandArgs): void {
  const lines = debugLines(existingFilter(ctx, argv).filter)
  const reply = ctx.client.reply
  reply.array(lines.length)
  for (const line of lines) reply.bulk(line)
}

/**
 * The health of the Bloom or Cuckoo filter under argv[1] (core/filter-health.ts,
 * core/cuckoo-health.ts); "ERR not found" for none, -WRONGTYPE for a window filter.
 */
function healthOf(ctx: CommandContext, argv: CommandArgs): FilterHealth {
  const entry = keyspace(ctx).lookup(argv.bytes(1), argv.start(1), argv.end(1))
  if (entry === undefined) throw new ReplyError(ERR.NOT_FOUND)
  if (entry.kind === 'cuckoo') return cuckooHealth(entry.filter)
  if (entry.kind !== 'bloom') throw new ReplyError(ERR.WRONG_TYPE)
  return filterHealth(entry.filter)
}

/**
 * BFS.HEALTH key → Fill ratio, Estimated error rate, Error rate (doubles), Items, Capacity,
 * Items left (-1 for a filter that scales), Verdict (`ok`, `near full`, `over target`): a flat
 * field-value array in RESP2, a map in RESP3. For a Cuckoo filter: taken slots over slots, the
 * estimate from each sub-filter's load, and the rate of one full sub-filter as the target.
 */
export function bfsHealth(ctx: CommandContext, argv: CommandArgs): void {
  const health = healthOf(ctx, argv)
  const reply = ctx.client.reply
  reply.map(7)
  reply.simple('Fill ratio')
  reply.double(health.fillRatio)
  reply.simple('Estimated error rate')
  reply.double(health.estimatedErrorRate)
  reply.simple('Error rate')
  reply.double(health.errorRate)
  reply.simple('Items')
  reply.integer(health.items)
  reply.simple('Capacity')
  reply.integer(health.capacity)
  reply.simple('Items left')
  reply.integer(health.itemsLeft)
  reply.simple('Verdict')
  reply.simple(health.verdict)
}
