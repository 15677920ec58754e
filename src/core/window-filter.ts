/**
 * Sliding-window filters: a Bloom filter whose items are forgotten once they leave a window, with
 * no false negative inside it. Two windows, one structure:
 *
 * - COUNT, the last `capacity` items: the age-partitioned Bloom filter of Shtul, Baquero and
 *   Almeida ("Age-Partitioned Bloom Filters", 2020, arXiv:2001.03147), as the paper defines its
 *   structure, insertion, shift and query: k + l slices; an add sets one bit in each of the k
 *   newest slices (one hash function per slice, so any k consecutive slices use k different
 *   ones); every g = ⌈capacity / l⌉ adds a generation ends: the oldest slice is emptied and
 *   becomes the newest ("shift"). A query answers 1 when some k consecutive slices all hold the
 *   item's bit. An item added in the current generation or the l before it still has its k
 *   slices, so the last l·g ≥ capacity adds always answer 1; it is gone g adds later at most (the
 *   paper's "slack"). The query probes one slice in k (every run of k consecutive slices holds
 *   exactly one slice whose age is k − 1 mod k) and extends a run only from a set bit, as the
 *   paper's query skips slices that cannot start a run. (k, l): window-sizing.ts.
 *
 * - TIME, the last `windowMs`: the Time-limited Bloom Filter of Rodrigues, Shtul, Baquero and
 *   Almeida (ACM SAC 2023, arXiv:2306.06742: a time period kept at variable insertion rates,
 *   stale data retired, the target rate striven for), as the authors' reference implementation
 *   in RedisBloom's age-partitioned branch does it (src/contrib/agingBloom.c: retireSlices,
 *   nextGenerationSize, predictSize, APBF_slideTime): the same slices, each stamped with the time
 *   of its last add. A generation ends when the clock says (every windowMs / l) or when the k
 *   newest slices could not take more adds without passing half full (nextGenerationSize: the
 *   room left in slice p, shared by the k − p generations it still takes). A slice is retired
 *   only once its last add is at least windowMs old (retireSlices), so no slice holding an item
 *   younger than the window is ever dropped; when the rate rises, slices retire later than they
 *   are made and the filter holds more of them. Each new slice is sized for the rate just
 *   measured (predictSize, simplified: the items of the ended generation scaled to the target
 *   duration), so generations go back to lasting windowMs / l and the number of slices, hence
 *   the false-positive rate, back to the steady k + l: the target rate is kept at the cost of
 *   memory proportional to the rate. Unlike the reference, a query ignores slices whose last add
 *   is windowMs old or more, so an item is forgotten between windowMs and windowMs plus one
 *   generation after its add even when nothing is added meanwhile.
 *
 * Time-based state is a function of the adds and of the time each add is given (nothing here
 * reads a clock): a log that records the time of each add replays to the same bits. Time never
 * goes back: an add stamped before the latest one seen counts as made at the latest.
 */
import { windowCall, windowTable, type WindowTable } from './bitmap-ops.js'
import { createHashPair, hashRedisBloom } from './hashing.js'
import { chooseWindowShape, MAX_HASHES, MAX_GENERATIONS } from './window-sizing.js'
import { expandHashes, WindowSlice, type SliceParts } from './window-slice.js'

/** Which window: the last `capacity` adds (COUNT) or the last `windowMs` (TIME). */
export type WindowKind = 'count' | 'time'

/** How to make a window filter. */
export interface WindowOptions {
  kind: WindowKind
  /** Target false-positive rate in (0, 1). */
  errorRate: number
  /** COUNT: items in the window; TIME: items per window the filter is sized for (more are taken). */
  capacity: number
  /** TIME only: the window in ms. */
  windowMs?: number
}

/** A window filter's whole state (what a snapshot stores). */
export interface WindowParts {
  kind: WindowKind
  errorRate: number
  capacity: number
  /** 0 for COUNT. */
  windowMs: number
  k: number
  l: number
  /** Items per generation the newest slice was sized for. */
  target: number
  /** Adds ever made. */
  inserts: number
  /** Adds in the current generation (TIME: those that set a bit). */
  genCount: number
  /** Adds the current generation may take before it ends. */
  genLimit: number
  /** TIME: when the current generation began (unix ms), -1 before the first add. */
  genStart: number
  /** TIME: the latest time an add was made at, -1 before the first. */
  clock: number
  /** Newest first. */
  slices: SliceParts[]
}

/** What APBF.INFO reports. */
export interface WindowInfo {
  kind: WindowKind
  capacity: number
  /** COUNT: items; TIME: seconds. */
  window: number
  errorRate: number
  sizeBytes: number
  slices: number
  hashes: number
  itemsInWindow: number
}

/** Largest slice: 1 GiB of bits. Growth stops there. */
export const MAX_SLICE_BYTES = 2 ** 30
/** A TIME filter's newest slice is sized for at most this many times the previous one's items. */
export const GROWTH_LIMIT = 8
/** The largest window: about 1000 years of ms, far inside 2^53. */
export const MAX_WINDOW_MS = 2 ** 45

/** Bytes of a slice that takes k generations of `perGeneration` items and is then half full. */
export function sliceBytes(k: number, perGeneration: number): number {
  return Math.max(1, Math.ceil((k * perGeneration) / Math.LN2 / 8))
}

/** Bytes of bitmap a new filter with these options allocates. @throws RangeError for bad options */
export function windowFilterBytes(options: WindowOptions): number {
  const { k, l } = shapeFor(options)
  const bytes = sliceBytes(k, Math.ceil(options.capacity / l))
  if (bytes > MAX_SLICE_BYTES) throw new RangeError('slices would exceed 1 GiB')
  return bytes * (options.kind === 'count' ? k + l : k)
}

function shapeFor(options: WindowOptions): { k: number; l: number } {
  const { kind, errorRate, capacity, windowMs } = options
  if (kind !== 'count' && kind !== 'time') throw new RangeError('kind must be count or time')
  if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer')
  if (kind === 'time' && !(Number.isSafeInteger(windowMs) && windowMs! >= 1 && windowMs! <= MAX_WINDOW_MS)) {
    throw new RangeError('a TIME window needs windowMs in [1, 2^45]')
  }
  return chooseWindowShape(errorRate, capacity)
}

const pair = createHashPair()
let hashes = new Uint32Array(2 * MAX_HASHES)

/**
 * Each filter's slice table for the arena kernel (bitmap-ops.ts), built on first use after a
 * shift; null when its slices keep the JavaScript loops (not all in one arena).
 */
const TABLES = new WeakMap<WindowFilter, WindowTable | null>()

/** A sliding-window filter, COUNT or TIME (see the module comment): the value of an APBF.* key. */
export class WindowFilter {
  readonly kind: WindowKind
  readonly errorRate: number
  readonly capacity: number
  readonly windowMs: number
  readonly k: number
  readonly l: number
  /** Newest first. */
  readonly slices: WindowSlice[]
  target: number
  inserts = 0
  genCount = 0
  genLimit: number
  genStart = -1
  clock = -1

  /** @throws RangeError for options no filter can be made of, or memory the process cannot get */
  constructor(options: WindowOptions) {
    const { k, l } = shapeFor(options)
    this.kind = options.kind
    this.errorRate = options.errorRate
    this.capacity = options.capacity
    this.windowMs = options.kind === 'time' ? options.windowMs! : 0
    this.k = k
    this.l = l
    this.target = Math.ceil(options.capacity / l)
    const bytes = sliceBytes(k, this.target)
    if (bytes > MAX_SLICE_BYTES) throw new RangeError('slices would exceed 1 GiB')
    const count = this.kind === 'count' ? k + l : k
    // In one arena when they fit in one: the window kernel serves a filter whose slices share an arena.
    this.slices = WindowSlice.allocateAll(count, k, bytes)
    this.genLimit = this.kind === 'count' ? this.target : this.fillLimit()
  }

  /** The generation length a TIME filter aims at: windowMs / l. */
  get generationMs(): number {
    return this.windowMs / this.l
  }

  /** Whether the item `item[start, end)` is in the window at `now` (unix ms; ignored by COUNT). */
  has(item: Uint8Array, start: number, end: number, now: number): boolean {
    const live = this.liveSlices(now)
    if (live < this.k) return false // no run of k slices to find (findRun would look at none)
    const table = this.kernelTable()
    const found = table === null ? undefined : windowCall(table, false, item, start, end, this.k, live)
    if (found !== undefined) return found !== 0
    this.hashItem(item, start, end)
    return this.findRun(live)
  }

  /** The slice table of the arena kernel, or null for the JavaScript loops. */
  private kernelTable(): WindowTable | null {
    let table = TABLES.get(this)
    if (table === undefined) TABLES.set(this, (table = windowTable(this.slices) ?? null))
    return table
  }

  /**
   * The add's probes and sets: whether the item was in the window (`seen`), and whether setting
   * its bits in the k newest slices changed one (`changed`). In the arena kernel where it can.
   */
  private probeAndSet(item: Uint8Array, start: number, end: number, live: number): number {
    const table = this.kernelTable()
    const done = table === null ? undefined : windowCall(table, true, item, start, end, this.k, live)
    if (done !== undefined) return done
    this.hashItem(item, start, end)
    const seen = this.findRun(live)
    let changed = false
    const { k, slices } = this
    for (let p = 0; p < k; p++) if (slices[p]!.set(hashes)) changed = true
    return (seen ? 1 : 0) | (changed ? 2 : 0)
  }

  /**
   * Adds `item[start, end)` at `now` (unix ms; COUNT ignores it): 1 when it was not in the window
   * before, 0 when it maybe was. Either way it is written again, so its window starts anew.
   * @throws RangeError when a TIME filter must grow and the process cannot get the memory
   */
  add(item: Uint8Array, start: number, end: number, now: number): 0 | 1 {
    if (this.kind === 'time') {
      now = Math.max(now, this.clock)
      this.clock = now
    }
    this.beforeAdd(now)
    const outcome = this.probeAndSet(item, start, end, this.liveSlices(now))
    const seen = (outcome & 1) !== 0
    const changed = (outcome & 2) !== 0
    const { k, slices } = this
    const counted = changed || this.kind === 'count'
    for (let p = 0; p < k; p++) {
      const slice = slices[p]!
      if (this.kind === 'time') slice.lastAdd = now
      if (counted) slice.count++
    }
    if (counted) this.genCount++
    if (!seen) slices[0]!.added++
    this.inserts++
    return seen ? 0 : 1
  }

  /** Bytes of bitmap an add at `now` would allocate (a TIME filter's new slice), 0 when none. */
  growthBytes(now: number): number {
    if (this.kind !== 'time' || !this.shiftDue(Math.max(now, this.clock))) return 0
    return sliceBytes(this.k, this.nextTarget(Math.max(now, this.clock)))
  }

  private hashItem(item: Uint8Array, start: number, end: number): void {
    hashRedisBloom(item, start, end, pair)
    if (hashes.length < 2 * this.k) hashes = new Uint32Array(2 * this.k)
    expandHashes(pair, this.k, hashes)
  }

  /** Slices a query at `now` looks at: all (COUNT), or those whose last add is younger than the window. */
  liveSlices(now: number): number {
    const slices = this.slices
    let live = slices.length
    if (this.kind === 'count') return live
    const cutoff = now - this.windowMs
    while (live > 0 && slices[live - 1]!.lastAdd <= cutoff) live--
    return live
  }

  /** Whether k consecutive slices among the first `live` hold the hashed item (see the module comment). */
  private findRun(live: number): boolean {
    const { k, slices } = this
    for (let anchor = k - 1; anchor < live; anchor += k) {
      if (!slices[anchor]!.test(hashes)) continue
      let run = 1
      for (let p = anchor - 1; p > anchor - k && slices[p]!.test(hashes); p--) run++
      for (let p = anchor + 1; run < k && p < live && slices[p]!.test(hashes); p++) run++
      if (run >= k) return true
    }
    return false
  }

  private shiftDue(now: number): boolean {
    if (this.genCount >= this.genLimit) return true
    return this.kind === 'time' && this.genStart >= 0 && now - this.genStart >= this.generationMs
  }

  private beforeAdd(now: number): void {
    if (this.kind === 'time' && this.genStart < 0) this.genStart = now
    if (!this.shiftDue(now)) return
    if (this.kind === 'count') this.shiftCount()
    else this.shiftTime(now)
  }

  /** COUNT: the oldest slice, emptied, becomes the newest. */
  private shiftCount(): void {
    TABLES.delete(this) // the hash indexes move
    const slices = this.slices
    const oldest = slices.pop()!
    oldest.clear()
    oldest.hashIndex = (slices[0]!.hashIndex + this.k - 1) % this.k
    slices.unshift(oldest)
    this.genCount = 0
  }

  /**
   * Items per generation the next slice is sized for: the rate of the generation ending, per
   * target duration. A generation that ended within a few ms says little about the rate (a burst
   * within one ms would size slices for millions of items a second): it counts as lasting at
   * least 1 / GROWTH_LIMIT of the target, so the estimate is at most GROWTH_LIMIT times its items.
   */
  private nextTarget(now: number): number {
    const elapsed = Math.max(1, now - this.genStart, this.generationMs / GROWTH_LIMIT)
    const measured = Math.ceil((this.genCount * this.generationMs) / elapsed)
    const floor = Math.ceil(this.capacity / this.l)
    const grown = Math.min(Math.max(floor, measured), this.target * GROWTH_LIMIT)
    return Math.min(grown, Math.floor((MAX_SLICE_BYTES * 8 * Math.LN2) / this.k))
  }

  /** TIME: retire the slices whose last add left the window, empty stale young ones, add a new newest one. */
  private shiftTime(now: number): void {
    TABLES.delete(this) // slices retire, one is added
    const { k, slices } = this
    const target = this.nextTarget(now)
    const bytes = sliceBytes(k, target)
    const cutoff = now - this.windowMs
    let spare: WindowSlice | undefined
    while (slices.length > k - 1 && slices[slices.length - 1]!.lastAdd <= cutoff) spare = slices.pop()
    // Among the newest (they take the next adds): any whose items all left the window is emptied,
    // so they do not come back to life with a fresh stamp.
    for (const slice of slices) if (slice.lastAdd >= 0 && slice.lastAdd <= cutoff) slice.clear()
    const hashIndex = slices.length === 0 ? 0 : (slices[0]!.hashIndex + k - 1) % k
    let fresh: WindowSlice
    if (spare !== undefined && spare.bitmap.length === bytes) {
      spare.clear()
      spare.hashIndex = hashIndex
      fresh = spare
    } else {
      fresh = WindowSlice.allocate(hashIndex, bytes, slices[0]?.bitmap)
    }
    slices.unshift(fresh)
    this.target = target
    this.genStart = now
    this.genCount = 0
    this.genLimit = this.fillLimit()
  }

  /**
   * TIME: adds the current generation may take so that none of the k newest slices passes half
   * full before it leaves them: slice p takes this generation and k − 1 − p more.
   */
  private fillLimit(): number {
    let limit = Infinity
    const k = this.k
    for (let p = 0; p < k && p < this.slices.length; p++) {
      const slice = this.slices[p]!
      limit = Math.min(limit, Math.floor((slice.capacity - slice.count) / (k - p)))
    }
    return Math.max(1, limit)
  }

  /** Distinct adds in the window at `now`, estimated from each generation's new items. */
  itemsInWindow(now: number): number {
    const slices = this.slices
    let total = 0
    if (this.kind === 'count') {
      for (let p = 0; p < this.l && p < slices.length; p++) total += slices[p]!.added
      const partial = slices[this.l]
      if (partial !== undefined)
        total += Math.round((partial.added * Math.max(0, this.target - this.genCount)) / this.target)
      return total
    }
    const live = this.liveSlices(now)
    for (let p = 0; p < live; p++) total += slices[p]!.added
    return total
  }

  /** Bytes of bitmap held. */
  bitmapBytes(): number {
    let total = 0
    for (const slice of this.slices) total += slice.bitmap.length
    return total
  }

  /** Memory in RedisBloom's accounting style: a fixed header, and per slice its struct and its bitmap. */
  sizeBytes(): number {
    return 64 + this.slices.length * 32 + this.bitmapBytes()
  }

  info(now: number): WindowInfo {
    return {
      kind: this.kind,
      capacity: this.capacity,
      window: this.kind === 'count' ? this.capacity : this.windowMs / 1000,
      errorRate: this.errorRate,
      sizeBytes: this.sizeBytes(),
      slices: this.slices.length,
      hashes: this.k,
      itemsInWindow: this.itemsInWindow(now),
    }
  }

  toParts(): WindowParts {
    const { kind, errorRate, capacity, windowMs, k, l, target, inserts, genCount, genLimit, genStart, clock } = this
    return {
      kind,
      errorRate,
      capacity,
      windowMs,
      k,
      l,
      target,
      inserts,
      genCount,
      genLimit,
      genStart,
      clock,
      slices: this.slices.map((slice) => slice.toParts()),
    }
  }

  /** A filter from its stored state (bitmaps used, not copied). @throws RangeError for a state no filter has */
  static fromParts(parts: WindowParts): WindowFilter {
    checkParts(parts)
    const filter = Object.create(WindowFilter.prototype) as WindowFilter
    const { slices, ...fields } = parts
    Object.assign(filter, fields, { slices: slices.map((slice) => WindowSlice.fromParts(slice)) })
    return filter
  }
}

function isCount(value: unknown, min = 0): value is number {
  return Number.isSafeInteger(value) && (value as number) >= min
}

function checkParts(parts: WindowParts): void {
  if (typeof parts !== 'object' || parts === null) throw new RangeError('parts must be an object')
  const { kind, errorRate, capacity, windowMs, k, l, slices } = parts
  if (kind !== 'count' && kind !== 'time') throw new RangeError('kind must be count or time')
  if (!(errorRate > 0 && errorRate < 1)) throw new RangeError('error rate must be in (0, 1)')
  if (!isCount(capacity, 1) || !isCount(k, 1) || k > MAX_HASHES || !isCount(l, 1) || l > MAX_GENERATIONS)
    throw new RangeError('bad shape')
  if (kind === 'time' ? !isCount(windowMs, 1) || windowMs > MAX_WINDOW_MS : windowMs !== 0)
    throw new RangeError('bad window')
  for (const field of ['target', 'inserts', 'genCount', 'genLimit'] as const)
    if (!isCount(parts[field], field === 'inserts' || field === 'genCount' ? 0 : 1))
      throw new RangeError(`bad ${field}`)
  if (!isCount(parts.genStart + 1) || !isCount(parts.clock + 1)) throw new RangeError('bad time')
  if (!Array.isArray(slices) || (kind === 'count' ? slices.length !== k + l : slices.length < 1))
    throw new RangeError('bad slice count')
  for (const slice of slices) {
    if (
      !isCount(slice.hashIndex) ||
      slice.hashIndex >= k ||
      !isCount(slice.count) ||
      !isCount(slice.added) ||
      !isCount(slice.lastAdd + 1)
    ) {
      throw new RangeError('bad slice')
    }
    if (!(slice.bitmap instanceof Uint8Array) || slice.bitmap.length < 1 || slice.bitmap.length > MAX_SLICE_BYTES)
      throw new RangeError('bad slice bitmap')
  }
}
