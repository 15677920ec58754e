/**
 * A Cuckoo filter as RedisBloom 2.4.23 keeps one (src/cuckoo.c): a list of sub-filters, the
 * first of `numBuckets` buckets, each next one `expansion` times larger, every bucket
 * `bucketSize` one-byte fingerprints. The same items added in the same order leave the same
 * bytes, so that CF.SCANDUMP / CF.LOADCHUNK move filters both ways between bfs and RedisBloom.
 *
 * - add: into the first bucket with an empty slot among the item's two, newest sub-filter first;
 *   else a kick walk in the newest (cuckoo-buckets.ts kickInsert); else a new sub-filter
 *   (expansion 0: never, "full"), where it lands at once.
 * - delete: one matching fingerprint, newest sub-filter first; a delete that leaves more than 10%
 *   of the items deleted on a filter of several sub-filters compacts it (moves fingerprints to
 *   older sub-filters and frees an emptied newest one).
 * - numItems and numDeletes are u64 as in RedisBloom: a chunk loaded without its header followed
 *   by CF.DEL takes numItems below zero, and it wraps.
 */
import { allocateArenaBitmap, arenaOf, type Arena } from './arena.js'
import {
  MAX_KERNEL_FILTERS,
  callAdd,
  callCheck,
  callCompactOne,
  callCount,
  callDelete,
  resultOf,
  writeTable,
} from './cuckoo-batch.js'
import { stage, stagedItems, stageItem, type ItemList } from './filter-batch.js'
import { murmurHash64AOne } from './murmur-hash.js'
import {
  MAX_SUB_FILTER_BYTES,
  altHash,
  bucketIndex,
  countInBucket,
  findInBucket,
  fingerprintOf,
  freeSlot,
  kickInsert,
} from './cuckoo-buckets.js'

/** RedisBloom's defaults and bounds (cuckoo.h). */
export const CF_DEFAULT_BUCKET_SIZE = 2
export const CF_DEFAULT_MAX_ITERATIONS = 20
export const CF_DEFAULT_EXPANSION = 1
export const CF_MAX_BUCKET_SIZE = 255
export const CF_MAX_ITERATIONS = 65535
export const CF_MAX_EXPANSION = 32768
/**
 * Most bytes of buckets one filter holds, all sub-filters together: its file, a DUMP payload and
 * a full-sync record are each one array, which Node 20 caps at 2^32 bytes (format/limits.ts
 * MAX_CUCKOO_FILTER_BYTES, the same bound). RedisBloom has none.
 */
export const MAX_CUCKOO_BYTES = 2 ** 31
/** Most sub-filters: a u16 in RedisBloom's CuckooFilter. */
export const CF_MAX_FILTERS = 0xffff

/** What an add did (CuckooInsertStatus): 1 inserted, 0 already there (NX), -1 full, -2 no growth possible. */
export type CuckooInsertStatus = 1 | 0 | -1 | -2
export const INSERTED = 1
export const EXISTS = 0
export const NO_SPACE = -1
export const GROWTH_FAILED = -2

/**
 * Asked before a new sub-filter of `bytes` is allocated; false refuses it (the add then answers
 * {@link GROWTH_FAILED}). The command layer checks `max-filter-bytes` and `maxmemory` here.
 */
export type GrowthCheck = (bytes: number) => boolean

/** A filter's settings and counters, as CF.INFO and the SCANDUMP header carry them. */
export interface CuckooSettings {
  /** Buckets of the first sub-filter: a power of two. */
  readonly numBuckets: number
  readonly bucketSize: number
  readonly maxIterations: number
  /** A power of two, or 0 (never grows). */
  readonly expansion: number
}

/** cuckoo.c getNextN2: the least power of two >= n (1 for n = 0 here, as CuckooFilter_Init makes it). */
export function nextPowerOfTwo(n: number): number {
  let p = 1
  while (p < n) p *= 2
  return p
}

/** cuckoo.c getNextN2 for an expansion: 0 stays 0 (the u64 arithmetic wraps back to 0). */
export function roundExpansion(expansion: number): number {
  return expansion === 0 ? 0 : nextPowerOfTwo(expansion)
}

/** Buckets of sub-filter `index`: numBuckets * expansion^index (may pass 2^53 for absurd ones: callers bound it). */
export function subFilterBuckets(settings: CuckooSettings, index: number): number {
  return settings.numBuckets * settings.expansion ** index
}

/** The settings CF.RESERVE gives `capacity` (CuckooFilter_Init): numBuckets = next power of two of capacity / bucketSize. */
export function reserveSettings(
  capacity: number,
  bucketSize: number,
  maxIterations: number,
  expansion: number,
): CuckooSettings {
  return {
    numBuckets: nextPowerOfTwo(Math.floor(capacity / bucketSize)),
    bucketSize,
    maxIterations,
    expansion: roundExpansion(expansion),
  }
}

/** Bytes of buckets sub-filter `index` holds, or Infinity past what one sub-filter or one filter may be. */
export function subFilterBytes(settings: CuckooSettings, index: number): number {
  const bytes = subFilterBuckets(settings, index) * settings.bucketSize
  return bytes <= MAX_SUB_FILTER_BYTES && bytes <= MAX_CUCKOO_BYTES ? bytes : Infinity
}

/** Everything a filter holds, as a file stores it: its settings, counters and sub-filters' buckets (views, not copies). */
export interface CuckooParts extends CuckooSettings {
  readonly numItems: bigint
  readonly numDeletes: bigint
  readonly subFilters: readonly Uint8Array[]
}

/** Largest u64 counter kept as a number alone (2^53 - 1, every smaller integer exact as a double). */
const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER)

// The hash of the item being looked up: [hi, lo].
const hashOut = new Uint32Array(2)
// Lookup parameters of the current command (commands run one at a time): its fingerprint and
// the low 32 bits of its two bucket hashes, as i32 in a typed array, read where used (module
// variables holding numbers past 2^30 would each be a new heap number).
const lookup = new Int32Array(3)
const FP = 0
const H1 = 1
const H2 = 2

function setLookup(item: Uint8Array, start: number, end: number): void {
  murmurHash64AOne(item, start, end, hashOut)
  const fp = fingerprintOf(hashOut[0]!, hashOut[1]!)
  lookup[FP] = fp
  lookup[H1] = hashOut[1]!
  lookup[H2] = altHash(fp, hashOut[1]!)
}

export class CuckooFilter implements CuckooSettings {
  readonly numBuckets: number
  readonly bucketSize: number
  readonly maxIterations: number
  readonly expansion: number
  /**
   * The u64 counters, as numbers while below 2^53 (adds and deletes then cost no BigInt), each
   * with its bigint beside it only once past that (a counter wrapped below zero).
   */
  private items = 0
  private itemsWide: bigint | undefined
  private deletes = 0
  private deletesWide: bigint | undefined
  /** The sub-filters' buckets, oldest first. */
  readonly subFilters: Uint8Array[]
  /**
   * Taken slots per sub-filter, counted on the first {@link occupiedSlots} call and kept up to
   * date by every change after it (the health estimate reads it; a filter never asked pays one
   * `undefined` check per change).
   */
  private occupied: number[] | undefined
  /**
   * The arena holding every sub-filter, whose Cuckoo kernel then serves the filter
   * (cuckoo-kernel.wat); undefined when they lie apart or outside the arenas (the JavaScript loops
   * of cuckoo-buckets.ts answer then, the same).
   */
  private home: Arena | undefined
  /** The arena the current batch's items were staged in (see {@link stageItem}). */
  private staging: Arena | undefined
  /** Whether the kernel may serve it ({@link useCuckooKernel} when it was made). */
  private readonly kernel = kernelOn

  /**
   * A filter with these settings and sub-filters (all of them when given: a loaded filter), or
   * with its first, empty, sub-filter.
   *
   * @throws RangeError when a sub-filter's size does not follow from the settings or passes
   *   {@link MAX_SUB_FILTER_BYTES}, or the settings are out of RedisBloom's bounds
   */
  constructor(settings: CuckooSettings, subFilters?: Uint8Array[]) {
    this.numBuckets = settings.numBuckets
    this.bucketSize = settings.bucketSize
    this.maxIterations = settings.maxIterations
    this.expansion = settings.expansion
    const problem = settingsProblem(settings)
    if (problem !== undefined) throw new RangeError(problem)
    if (subFilters === undefined) {
      const bytes = subFilterBytes(settings, 0)
      if (bytes === Infinity) throw new RangeError('the first sub-filter is too large')
      subFilters = [allocateBuckets(bytes)]
    }
    if (subFilters.length < 1 || subFilters.length > CF_MAX_FILTERS)
      throw new RangeError('sub-filter count out of range')
    if (this.expansion === 0 && subFilters.length > 1)
      throw new RangeError('a filter with expansion 0 has one sub-filter')
    let total = 0
    subFilters.forEach((data, i) => {
      if (data.length !== subFilterBytes(settings, i)) throw new RangeError(`sub-filter ${i} has the wrong size`)
      total += data.length
    })
    if (total > MAX_CUCKOO_BYTES) throw new RangeError(`${total} bytes of buckets, more than 2^31`)
    const held: Uint8Array[] = []
    for (const data of subFilters) held.push(intoArena(data, held[0]))
    this.subFilters = held
    this.home = this.findHome()
  }

  /**
   * The filter `parts` describe, holding their buckets (not copied).
   * @throws RangeError for parts out of RedisBloom's bounds (see the constructor)
   */
  static fromParts(parts: CuckooParts): CuckooFilter {
    const filter = new CuckooFilter(parts, [...parts.subFilters])
    filter.numItems = BigInt.asUintN(64, parts.numItems)
    filter.numDeletes = BigInt.asUintN(64, parts.numDeletes)
    return filter
  }

  /** Items added less items deleted, a u64 (wraps as RedisBloom's does). */
  get numItems(): bigint {
    return this.itemsWide ?? BigInt(this.items)
  }

  set numItems(value: bigint) {
    const wrapped = BigInt.asUintN(64, value)
    this.itemsWide = wrapped > MAX_EXACT ? wrapped : undefined
    this.items = Number(wrapped)
  }

  /** Deletes since the last compaction, a u64. */
  get numDeletes(): bigint {
    return this.deletesWide ?? BigInt(this.deletes)
  }

  set numDeletes(value: bigint) {
    const wrapped = BigInt.asUintN(64, value)
    this.deletesWide = wrapped > MAX_EXACT ? wrapped : undefined
    this.deletes = Number(wrapped)
  }

  /** numItems + 1, wrapping. */
  private countAdd(): void {
    if (this.itemsWide === undefined && this.items < Number.MAX_SAFE_INTEGER) this.items++
    else this.numItems = this.numItems + 1n
  }

  /** Its parts, the buckets as views (a file encoder copies them). */
  toParts(): CuckooParts {
    const { numBuckets, bucketSize, maxIterations, expansion, numItems, numDeletes } = this
    return { numBuckets, bucketSize, maxIterations, expansion, numItems, numDeletes, subFilters: this.subFilters }
  }

  /** Number of sub-filters (CF.INFO "Number of filters"). */
  get numFilters(): number {
    return this.subFilters.length
  }

  /** Bytes of buckets in all sub-filters. */
  bucketBytes(): number {
    let bytes = 0
    for (const data of this.subFilters) bytes += data.length
    return bytes
  }

  /** Bytes of buckets, as memory accounting counts every kind of filter (the name the Bloom filters' bitmaps gave it). */
  bitmapBytes(): number {
    return this.bucketBytes()
  }

  /** CF.INFO "Size" (rebloom.c CFSize): sizeof(CuckooFilter) 40 + sizeof(SubCF) 16 per sub-filter + the buckets. */
  sizeBytes(): number {
    return 40 + 16 * this.subFilters.length + this.bucketBytes()
  }

  /** Taken (non-zero) slots of sub-filter `index`: counted once, then kept up to date. */
  occupiedSlots(index: number): number {
    if (this.occupied === undefined) this.occupied = this.subFilters.map(countTaken)
    return this.occupied[index]!
  }

  /** Copies `data` into sub-filter `index` at byte `offset` (CF.LOADCHUNK), keeping the taken-slot count. */
  loadBytes(index: number, offset: number, data: Uint8Array): void {
    const target = this.subFilters[index]!
    if (this.occupied === undefined) {
      target.set(data, offset)
      return
    }
    const before = countTaken(target.subarray(offset, offset + data.length))
    target.set(data, offset)
    this.occupied[index]! += countTaken(data) - before
  }

  /**
   * Stages item i of `items` for a later {@link checkStaged}, {@link addStaged} or
   * {@link deleteStaged}, after the `staged` items staged before it: the checks, adds or deletes
   * that commands of one read make one item each (commands/read-batch.ts). Nothing may change the
   * filter until then.
   * @returns false when the kernel does not serve this filter or the item does not fit
   */
  stageItem(items: ItemList, i: number, staged: number): boolean {
    const home = this.home
    if (home === undefined || !stageItem(home, items, i, staged)) return false
    this.staging = home
    return true
  }

  /** The items staged, where they lie (valid until the next staging in that arena). */
  stagedItems(): ItemList {
    return stagedItems(this.staging!)
  }

  /** {@link has} of the n staged items: `out[j]` = 1 when staged item j may be present. */
  checkStaged(n: number, out: Uint8Array): void {
    const arena = this.staging!
    if (this.home === arena) {
      writeTable(arena, this.subFilters, this.bucketSize)
      callCheck(arena, 0, n, this.subFilters.length, this.bucketSize)
      for (let j = 0; j < n; j++) out[j] = resultOf(arena, j)
      return
    }
    const items = stagedItems(arena)
    for (let j = 0; j < n; j++) out[j] = this.has(items.bytes(j), items.start(j), items.end(j)) ? 1 : 0
  }

  /**
   * CF.MEXISTS: `out[j]` = 1 when items[from + j] may be present, for items[from, to), one kernel
   * call per scratch area's worth of items; the JavaScript loops when the kernel does not serve it.
   */
  hasMany(items: ItemList, from: number, to: number, out: Uint8Array): void {
    const home = this.home
    let i = from
    while (home !== undefined && i < to) {
      const n = stage(home, items, i, to)
      if (n === 0) break
      writeTable(home, this.subFilters, this.bucketSize)
      callCheck(home, 0, n, this.subFilters.length, this.bucketSize)
      for (let j = 0; j < n; j++) out[i - from + j] = resultOf(home, j)
      i += n
    }
    for (; i < to; i++) out[i - from] = this.has(items.bytes(i), items.start(i), items.end(i)) ? 1 : 0
  }

  /** CF.COUNT of items[i]: one kernel call when the kernel serves the filter. */
  countOf(items: ItemList, i: number): number {
    const home = this.home
    if (home === undefined || !stageItem(home, items, i, 0))
      return this.count(items.bytes(i), items.start(i), items.end(i))
    writeTable(home, this.subFilters, this.bucketSize)
    callCount(home, 0, 1, this.subFilters.length, this.bucketSize)
    return resultOf(home, 0)
  }

  /**
   * {@link delete} of the n staged items in order: `out[j]` = 1 when staged item j's fingerprint
   * was removed. The kernel deletes until the one after which the filter compacts (or its item
   * count would reach 0, or the counters are past 2^53); the JavaScript way takes such items.
   */
  deleteStaged(n: number, out: Uint8Array): void {
    const arena = this.staging!
    const size = this.bucketSize
    let j = 0
    while (j < n) {
      const limit = this.home === arena ? this.deleteLimit() : 0
      if (limit === 0) {
        const items = stagedItems(arena)
        out[j] = this.delete(items.bytes(j), items.start(j), items.end(j)) ? 1 : 0
        j++
        continue
      }
      writeTable(arena, this.subFilters, size)
      const done = callDelete(arena, j, n - j, this.subFilters.length, size, limit)
      let deleted = 0
      for (let k = j; k < done; k++) {
        const where = resultOf(arena, k)
        out[k] = where >= 0 ? 1 : 0
        if (where < 0) continue
        deleted++
        if (this.occupied !== undefined) this.occupied[where]!--
      }
      this.items -= deleted
      this.deletes += deleted
      j = done
      // As delete: compacts right after the delete that brings the deletes past 10% (the kernel
      // stopped there), never on an item not found.
      if (deleted === limit && this.subFilters.length > 1 && this.deletes > this.items * 0.1) this.compact(false)
    }
  }

  /**
   * Deletes the kernel may make before the one after which {@link delete} compacts (that one
   * included), at most the item count (which a delete never takes below 0 in the kernel); 0 when
   * a counter is past 2^53.
   */
  private deleteLimit(): number {
    if (this.itemsWide !== undefined || this.deletesWide !== undefined) return 0
    const items = this.items
    const deletes = this.deletes
    let limit = Math.min(items, 0x7fffffff)
    if (this.subFilters.length > 1) {
      // The least k with deletes + k > (items - k) * 0.1, as delete compares (doubles).
      const compacts = (k: number): boolean => deletes + k > (items - k) * 0.1
      let k = Math.max(1, Math.ceil((items * 0.1 - deletes) / 1.1))
      while (k > 1 && compacts(k - 1)) k--
      while (!compacts(k)) k++
      limit = Math.min(limit, k)
    }
    return limit
  }

  /**
   * {@link add} (not unique) of the n staged items in order: `out[j]` = 1 added, -1 full, -2 no
   * growth possible, -3 refused before trying, as the filter had `maxFilters` sub-filters or more
   * (CF.ADD's "Maximum expansions reached"). The kernel places items until one needs the filter
   * to grow, which the JavaScript way does (`canGrow` asked first).
   */
  addStaged(n: number, out: Int8Array, canGrow: GrowthCheck | undefined, maxFilters: number): void {
    const arena = this.staging!
    const size = this.bucketSize
    let j = 0
    while (j < n) {
      if (this.subFilters.length >= maxFilters) {
        out[j++] = -3
        continue
      }
      if (this.home === arena && this.itemsWide === undefined && this.items + n < Number.MAX_SAFE_INTEGER) {
        writeTable(arena, this.subFilters, size)
        const done = callAdd(arena, j, n - j, this.subFilters.length, size, this.maxIterations)
        for (let k = j; k < done; k++) {
          out[k] = 1
          if (this.occupied !== undefined) this.occupied[resultOf(arena, k)]!++
        }
        this.items += done - j
        j = done
        if (j === n) break
      }
      const items = stagedItems(arena)
      out[j] = this.add(items.bytes(j), items.start(j), items.end(j), false, canGrow)
      j++
    }
  }

  /** Buckets of sub-filter `index`. */
  bucketsOf(index: number): number {
    return this.subFilters[index]!.length / this.bucketSize
  }

  /** CF.ADD (unique false) / CF.ADDNX (unique true): CuckooFilter_Insert / CuckooFilter_InsertUnique. */
  add(item: Uint8Array, start: number, end: number, unique: boolean, canGrow?: GrowthCheck): CuckooInsertStatus {
    setLookup(item, start, end)
    if (unique && this.findLookup()) return EXISTS
    return this.insertLookup(canGrow)
  }

  /** CF.EXISTS (CuckooFilter_Check). */
  has(item: Uint8Array, start: number, end: number): boolean {
    setLookup(item, start, end)
    return this.findLookup()
  }

  /** CF.COUNT (CuckooFilter_Count): matching fingerprints in both buckets of every sub-filter (one bucket twice when they coincide). */
  count(item: Uint8Array, start: number, end: number): number {
    setLookup(item, start, end)
    let count = 0
    const size = this.bucketSize
    const fp = lookup[FP]!
    for (let i = 0; i < this.subFilters.length; i++) {
      const data = this.subFilters[i]!
      const buckets = data.length / size
      count += countInBucket(data, bucketIndex(lookup[H1]!, buckets) * size, size, fp)
      count += countInBucket(data, bucketIndex(lookup[H2]!, buckets) * size, size, fp)
    }
    return count
  }

  /** CF.DEL (CuckooFilter_Delete): true when a matching fingerprint was removed. */
  delete(item: Uint8Array, start: number, end: number): boolean {
    setLookup(item, start, end)
    const size = this.bucketSize
    const fp = lookup[FP]!
    for (let i = this.subFilters.length - 1; i >= 0; i--) {
      const data = this.subFilters[i]!
      const buckets = data.length / size
      let slot = findInBucket(data, bucketIndex(lookup[H1]!, buckets) * size, size, fp)
      if (slot === -1) slot = findInBucket(data, bucketIndex(lookup[H2]!, buckets) * size, size, fp)
      if (slot === -1) continue
      data[slot] = 0
      if (this.occupied !== undefined) this.occupied[i]!--
      if (this.itemsWide === undefined && this.items > 0) this.items--
      else this.numItems = this.numItems - 1n
      if (this.deletesWide === undefined && this.deletes < Number.MAX_SAFE_INTEGER) this.deletes++
      else this.numDeletes = this.numDeletes + 1n
      // Both sides as doubles, as the C comparison converts them (items and deletes are exactly
      // those doubles below 2^53, and Number() of a wider one rounds as the C conversion does).
      if (this.subFilters.length > 1 && this.deletes > this.items * 0.1) this.compact(false)
      return true
    }
    return false
  }

  /**
   * CuckooFilter_Compact: from the newest sub-filter down to the second, moves each fingerprint
   * to the first older sub-filter with room in its buckets there, freeing the newest one once
   * emptied; `keepGoing` false stops at the first sub-filter that cannot be emptied (CF.DEL's
   * automatic compaction), true goes on (CF.COMPACT). numDeletes returns to 0.
   */
  compact(keepGoing: boolean): void {
    for (let index = this.subFilters.length - 1; index > 0; index--) {
      if (!this.compactOne(index) && !keepGoing) break
    }
    this.numDeletes = 0n
  }

  /** CuckooFilter_CompactSingle: true when every fingerprint of sub-filter `index` found a home. */
  private compactOne(index: number): boolean {
    const emptied = this.home !== undefined ? this.compactInKernel(this.home, index) : this.compactInLoops(index)
    if (emptied && index === this.subFilters.length - 1) {
      this.subFilters.pop()
      this.occupied?.pop()
      this.home = this.findHome()
    }
    return emptied
  }

  /** {@link compactOne}'s moves by the kernel (cuckoo-kernel.wat cfCompactOne). */
  private compactInKernel(home: Arena, index: number): boolean {
    writeTable(home, this.subFilters, this.bucketSize)
    const emptied = callCompactOne(home, index, this.bucketSize)
    const occupied = this.occupied
    if (occupied !== undefined) {
      for (let i = 0; i < index; i++) {
        const moved = resultOf(home, i)
        occupied[i]! += moved
        occupied[index]! -= moved
      }
    }
    return emptied
  }

  /** {@link compactOne}'s moves by the JavaScript loops. */
  private compactInLoops(index: number): boolean {
    const data = this.subFilters[index]!
    // Slots in bucket order, four at a time where they can be read as one word: a newest
    // sub-filter is mostly empty when CF.DEL compacts it, and each compaction scans all of it.
    const words =
      (data.byteOffset & 3) === 0 ? new Int32Array(data.buffer, data.byteOffset, data.length >>> 2) : undefined
    const wordSlots = words === undefined ? 0 : words.length * 4
    let emptied = true
    for (let w = 0; w < wordSlots / 4; w++) {
      if (words![w] !== 0 && !this.relocateSlots(index, w * 4, w * 4 + 4)) emptied = false
    }
    if (!this.relocateSlots(index, wordSlots, data.length)) emptied = false
    return emptied
  }

  /** Moves the fingerprints of slots [from, to) of sub-filter `index` to older ones where they fit: true when all did. */
  private relocateSlots(index: number, from: number, to: number): boolean {
    const data = this.subFilters[index]!
    const size = this.bucketSize
    let emptied = true
    for (let slot = from; slot < to; slot++) {
      const fp = data[slot]!
      if (fp === 0) continue
      // relocateSlot: the bucket's index stands for the hash, as sub-filters only shrink going back.
      const bucket = Math.floor(slot / size)
      if (this.placeInOlder(fp, bucket, altHash(fp, bucket), index)) {
        data[slot] = 0
        if (this.occupied !== undefined) this.occupied[index]!--
      } else emptied = false
    }
    return emptied
  }

  private placeInOlder(fp: number, h1: number, h2: number, below: number): boolean {
    for (let i = 0; i < below; i++) {
      const slot = this.freeSlotIn(i, h1, h2)
      if (slot !== -1) {
        this.subFilters[i]![slot] = fp
        if (this.occupied !== undefined) this.occupied[i]!++
        return true
      }
    }
    return false
  }

  /** Filter_FindAvailable: the first empty slot of bucket h1, then of bucket h2, in sub-filter `index`; -1 when none. */
  private freeSlotIn(index: number, h1: number, h2: number): number {
    const data = this.subFilters[index]!
    const size = this.bucketSize
    const buckets = data.length / size
    const slot = freeSlot(data, bucketIndex(h1, buckets) * size, size)
    return slot !== -1 ? slot : freeSlot(data, bucketIndex(h2, buckets) * size, size)
  }

  /** The current lookup's fingerprint in either bucket of any sub-filter (CuckooFilter_Check). */
  private findLookup(): boolean {
    const size = this.bucketSize
    const fp = lookup[FP]!
    for (let i = 0; i < this.subFilters.length; i++) {
      const data = this.subFilters[i]!
      const buckets = data.length / size
      if (findInBucket(data, bucketIndex(lookup[H1]!, buckets) * size, size, fp) !== -1) return true
      if (findInBucket(data, bucketIndex(lookup[H2]!, buckets) * size, size, fp) !== -1) return true
    }
    return false
  }

  /** CuckooFilter_InsertFP of the current lookup's fingerprint. */
  private insertLookup(canGrow: GrowthCheck | undefined): CuckooInsertStatus {
    const size = this.bucketSize
    const fp = lookup[FP]!
    for (;;) {
      for (let i = this.subFilters.length - 1; i >= 0; i--) {
        // Filter_FindAvailable, as freeSlotIn, with the hashes read here.
        const data = this.subFilters[i]!
        const buckets = data.length / size
        let slot = freeSlot(data, bucketIndex(lookup[H1]!, buckets) * size, size)
        if (slot === -1) slot = freeSlot(data, bucketIndex(lookup[H2]!, buckets) * size, size)
        if (slot !== -1) {
          data[slot] = fp
          if (this.occupied !== undefined) this.occupied[i]!++
          this.countAdd()
          return INSERTED
        }
      }
      const newest = this.subFilters[this.subFilters.length - 1]!
      if (kickInsert(newest, newest.length / size, size, this.maxIterations, fp, lookup[H1]! >>> 0)) {
        if (this.occupied !== undefined) this.occupied[this.subFilters.length - 1]!++
        this.countAdd()
        return INSERTED
      }
      if (this.expansion === 0) return NO_SPACE
      if (!this.grow(canGrow)) return GROWTH_FAILED
    }
  }

  /** CuckooFilter_Grow: a new, empty, sub-filter; false when there may be no more or it is too large. */
  private grow(canGrow: GrowthCheck | undefined): boolean {
    if (this.subFilters.length >= CF_MAX_FILTERS) return false
    const bytes = subFilterBytes(this, this.subFilters.length)
    if (
      bytes === Infinity ||
      this.bucketBytes() + bytes > MAX_CUCKOO_BYTES ||
      (canGrow !== undefined && !canGrow(bytes))
    )
      return false
    let data: Uint8Array
    try {
      data = allocateBuckets(bytes, this.subFilters[0])
    } catch (error) {
      if (error instanceof RangeError) return false // memory the process could not get
      throw error
    }
    this.subFilters.push(data)
    this.occupied?.push(0)
    this.home = this.findHome()
    return true
  }

  /** The arena whose kernel serves the filter now (see {@link home}), its sub-filters gathered there when they can be. */
  private findHome(): Arena | undefined {
    return this.kernel ? (kernelHome(this.subFilters) ?? this.gather()) : undefined
  }

  /**
   * Sub-filters in more than one arena (a growth whose sub-filter found no room beside the
   * others, or a loaded filter): the older ones copied beside the newest, when its arena has room
   * for them all (else the filter stays as it is, served by the JavaScript loops). A growth is
   * rare, and the kernel serves only a filter whose sub-filters share an arena. Returns the arena
   * that then holds them all.
   */
  private gather(): Arena | undefined {
    const subFilters = this.subFilters
    if (subFilters.length > MAX_KERNEL_FILTERS) return undefined
    const newest = subFilters[subFilters.length - 1]!
    const arena = arenaOf(newest)
    if (arena === undefined) return undefined
    const moved: Uint8Array[] = []
    for (let i = 0; i < subFilters.length - 1; i++) {
      const data = subFilters[i]!
      const copy = arenaOf(data) === arena ? data : allocateArenaBitmap(data.length, newest)
      if (copy === undefined || arenaOf(copy) !== arena) return undefined
      if (copy !== data) copy.set(data)
      moved.push(copy)
    }
    for (let i = 0; i < moved.length; i++) subFilters[i] = moved[i]!
    return arena
  }
}

/** `bytes` zeroed bytes of buckets: in an arena (beside `near`'s when it can), else a plain array. */
function allocateBuckets(bytes: number, near?: Uint8Array): Uint8Array {
  return allocateArenaBitmap(bytes, near) ?? new Uint8Array(bytes)
}

/** `data` itself when it is in an arena already, else a copy in one (beside `near`), else itself. */
function intoArena(data: Uint8Array, near: Uint8Array | undefined): Uint8Array {
  if (arenaOf(data) !== undefined) return data
  const copy = allocateArenaBitmap(data.length, near)
  if (copy === undefined) return data
  copy.set(data)
  return copy
}

/** Off: filters made meanwhile keep the JavaScript loops (the reference test/core/cuckoo-kernel.test.ts compares the kernel with). */
let kernelOn = true

/** Turns the Cuckoo kernel on or off for the filters made from now on (for their whole life). */
export function useCuckooKernel(on: boolean): void {
  kernelOn = on
}

/** The arena holding every one of these sub-filters, when the kernel can serve them; else undefined. */
function kernelHome(subFilters: readonly Uint8Array[]): Arena | undefined {
  if (subFilters.length > MAX_KERNEL_FILTERS) return undefined
  const home = arenaOf(subFilters[0]!)
  for (let i = 1; i < subFilters.length && home !== undefined; i++)
    if (arenaOf(subFilters[i]!) !== home) return undefined
  return home
}

/** Non-zero bytes: taken slots. */
function countTaken(data: Uint8Array): number {
  let taken = 0
  for (let i = 0; i < data.length; i++) if (data[i] !== 0) taken++
  return taken
}

/** Why these settings are outside RedisBloom's bounds (CuckooFilter_ValidateIntegrity) or bfs's, or undefined. */
export function settingsProblem(settings: CuckooSettings): string | undefined {
  const { numBuckets, bucketSize, maxIterations, expansion } = settings
  if (!(Number.isInteger(bucketSize) && bucketSize >= 1 && bucketSize <= CF_MAX_BUCKET_SIZE))
    return `bucket size ${bucketSize} is not in [1, 255]`
  if (!(Number.isInteger(maxIterations) && maxIterations >= 1 && maxIterations <= CF_MAX_ITERATIONS))
    return `max iterations ${maxIterations} is not in [1, 65535]`
  if (!(
    Number.isInteger(numBuckets) &&
    numBuckets >= 1 &&
    numBuckets <= 0x1_0000_0000 &&
    nextPowerOfTwo(numBuckets) === numBuckets
  )) {
    return `bucket count ${numBuckets} is not a power of two in [1, 2^32]`
  }
  // A non-power-of-two expansion gives later sub-filters bucket counts whose alternate buckets do not pair.
  if (!(
    Number.isInteger(expansion) &&
    expansion >= 0 &&
    expansion <= CF_MAX_EXPANSION &&
    roundExpansion(expansion) === expansion
  )) {
    return `expansion ${expansion} is not 0 or a power of two up to 32768`
  }
  return undefined
}
