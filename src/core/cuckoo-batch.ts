/**
 * A Cuckoo filter's items through the Cuckoo kernel (cuckoo-kernel.wat) of the arena holding all
 * its sub-filters: the items staged in that arena's scratch area (filter-batch.ts: descriptors and
 * bytes), the sub-filter table and the per-item results in its hash-pair area, which the Cuckoo
 * kernel does not otherwise use:
 *   [PAIRS, +8 f)          the table: per sub-filter, oldest first, u32 offset and u32 mask
 *   [OUT, +4 n)            one i32 result per item
 *   [PARAMS, +8 n)         each item's lookup parameters, kept by the kernel between its two passes
 */
import { Arena, PAGE_BYTES, SCRATCH_BYTES } from './arena.js'
import { DESC, MAX_BATCH_ITEMS, PAIRS } from './filter-batch.js'

/** Most sub-filters the kernel's table holds: a filter with more takes the JavaScript loops. */
export const MAX_KERNEL_FILTERS = 64
const TABLE = PAIRS
const OUT = PAIRS + MAX_KERNEL_FILTERS * 8
const PARAMS = OUT + MAX_BATCH_ITEMS * 4
// cuckoo-kernel.wat's $params: where an item's parameters lie from its descriptor.
if (PARAMS - DESC !== 12800 || PARAMS + 8 * MAX_BATCH_ITEMS > PAIRS + 16 * MAX_BATCH_ITEMS)
  throw new Error('cuckoo-kernel.wat $params disagrees')

/** Writes the table of these sub-filters (all in `arena`) of `bucketSize`-byte buckets. */
export function writeTable(arena: Arena, subFilters: readonly Uint8Array[], bucketSize: number): void {
  const words = arena.words
  for (let i = 0; i < subFilters.length; i++) {
    const data = subFilters[i]!
    words[(TABLE >> 2) + 2 * i] = data.byteOffset
    words[(TABLE >> 2) + 2 * i + 1] = data.length / bucketSize - 1
  }
}

/** Result i32 of staged item `j` of the last call that started at `from`. */
export function resultOf(arena: Arena, j: number): number {
  return arena.words[(OUT >> 2) + j]! | 0
}

// Every kernel call goes through these sites, made megamorphic at load by calls on two arenas of
// their own (filter-batch.ts explains why: a site that saw one kernel keeps its arena alive).
export function callCheck(arena: Arena, from: number, n: number, filters: number, size: number): number {
  return arena.cuckoo.cfCheck(DESC + 8 * from, n, TABLE, filters, size, OUT + 4 * from)
}

export function callCount(arena: Arena, from: number, n: number, filters: number, size: number): void {
  arena.cuckoo.cfCount(DESC + 8 * from, n, TABLE, filters, size, OUT + 4 * from)
}

/** @returns the index after the last item handled */
export function callDelete(
  arena: Arena,
  from: number,
  n: number,
  filters: number,
  size: number,
  limit: number,
): number {
  return from + arena.cuckoo.cfDelete(DESC + 8 * from, n, TABLE, filters, size, OUT + 4 * from, limit)
}

/** @returns the index of the first item not placed (from + n when all were) */
export function callAdd(
  arena: Arena,
  from: number,
  n: number,
  filters: number,
  size: number,
  maxIterations: number,
): number {
  return from + arena.cuckoo.cfAdd(DESC + 8 * from, n, TABLE, filters, size, maxIterations, OUT + 4 * from)
}

/** Compacts sub-filter `index` (all in `arena`, its table written): true when it was emptied; {@link resultOf}(i) = fingerprints moved into sub-filter i. */
export function callCompactOne(arena: Arena, index: number, size: number): boolean {
  arena.words.fill(0, OUT >> 2, (OUT >> 2) + index)
  return arena.cuckoo.cfCompactOne(TABLE, index, size, OUT) === 1
}

for (const sentinel of [new Arena(SCRATCH_BYTES + PAGE_BYTES, true), new Arena(SCRATCH_BYTES + PAGE_BYTES, true)]) {
  callCheck(sentinel, 0, 0, 1, 1)
  callCount(sentinel, 0, 0, 1, 1)
  callDelete(sentinel, 0, 0, 1, 1, 1)
  callAdd(sentinel, 0, 0, 1, 1, 1)
  callCompactOne(sentinel, 0, 1)
}

/** Items one kernel call takes at most (as the Bloom kernel's). */
export const MAX_KERNEL_ITEMS = MAX_BATCH_ITEMS
