/**
 * The bitmap operations other than the Bloom kernel's, in WebAssembly over the arenas
 * (bitmap-ops.wat, one instance per arena, arena.ts): BF.MERGE's OR ({@link orBitmap}), fill
 * counting ({@link countArenaBits}, behind bitmap.ts `countSetBits`) and a window filter's probes
 * and sets per item ({@link windowTable}, {@link windowCall}, used by window-filter.ts). Each
 * answers exactly as the JavaScript loops it replaces; arrays outside the arenas keep those loops.
 *
 * Scratch area use (the first bytes of the arena, as filter-batch.ts; only within one call):
 *   [0, 256 KiB)        OR: a chunk of a source in another arena, copied in
 *   [64, 72)            window: the item's descriptor (u32 offset, u32 length)
 *   [128, 528)          window: its hash pair (u64 a, u64 b), then up to 48 positions (u64)
 *   [1024, 64 KiB)      window: the slice table (u64 bit count, u32 offset, u32 hash index each)
 *   [64 KiB, end - 8)   window: the item's bytes (8 bytes after it stay inside the scratch area)
 */

import { Arena, arenaOfView, PAGE_BYTES, SCRATCH_BYTES } from './arena.js'

/** Below this many bytes a range is counted by the JavaScript loop (no call across). */
const MIN_KERNEL_COUNT_BYTES = 256

const DESC = 64
const PAIR = 128
const TABLE = 1024
const ITEM = 64 * 1024
/** Slices a table holds; a window filter with more keeps the JavaScript loops. */
export const MAX_TABLE_SLICES = (ITEM - TABLE) / 16
/** Bytes of an item the window kernel takes; a longer one goes the JavaScript way. */
export const MAX_WINDOW_ITEM_BYTES = SCRATCH_BYTES - 8 - ITEM

/*
 * Every call goes through one of these sites, made megamorphic when the module loads by calls on
 * two small arenas of their own (as filter-batch.ts does for the Bloom kernel): a site that saw
 * one instance only would keep it, and its memory, alive after the filter is gone.
 */
function callOr(arena: Arena, dst: number, src: number, len: number): void {
  arena.ops.orInto(dst, src, len)
}

function callCount(arena: Arena, p: number, len: number): number {
  return arena.ops.countBits(p, len)
}

function callWindow(arena: Arena, add: boolean, k: number, live: number): number {
  return add ? arena.ops.windowAdd(DESC, PAIR, TABLE, k, live) : arena.ops.windowHas(DESC, PAIR, TABLE, k, live)
}

for (const sentinel of [new Arena(SCRATCH_BYTES + PAGE_BYTES, true), new Arena(SCRATCH_BYTES + PAGE_BYTES, true)]) {
  callOr(sentinel, SCRATCH_BYTES, SCRATCH_BYTES, 0)
  callCount(sentinel, SCRATCH_BYTES, 0)
  sentinel.words[DESC / 4 + 1] = 0 // an empty item
  sentinel.words.set([64, 0, SCRATCH_BYTES, 0], TABLE / 4) // one slice of 64 bits after the scratch area
  callWindow(sentinel, true, 1, 0)
  callWindow(sentinel, false, 1, 0)
}

/**
 * Set bits of `view[start, end)` by the kernel when the view is of an arena, else undefined (the
 * caller counts). Short ranges are left to the caller too.
 */
export function countArenaBits(view: Uint8Array, start: number, end: number): number | undefined {
  if (end - start < MIN_KERNEL_COUNT_BYTES) return undefined
  const arena = arenaOfView(view)
  return arena === undefined ? undefined : callCount(arena, view.byteOffset + start, end - start)
}

/**
 * `dst |= src`, byte by byte over `dst.length` bytes (`src` at least as long). In the kernel when
 * `dst` is in an arena: directly from `src` in the same arena, else through the scratch area in
 * chunks (one copy, then the OR; bench/bitmap-ops.mjs measured this against the JavaScript loop).
 */
export function orBitmap(dst: Uint8Array, src: Uint8Array): void {
  const length = dst.length
  const arena = arenaOfView(dst)
  if (arena === undefined) {
    for (let j = 0; j < length; j++) dst[j] = dst[j]! | src[j]!
    return
  }
  if (arenaOfView(src) === arena) {
    callOr(arena, dst.byteOffset, src.byteOffset, length)
    return
  }
  for (let at = 0; at < length; at += SCRATCH_BYTES) {
    const chunk = Math.min(SCRATCH_BYTES, length - at)
    arena.bytes.set(src.subarray(at, at + chunk), 0)
    callOr(arena, dst.byteOffset + at, 0, chunk)
  }
}

/** What {@link windowCall} needs of a slice. */
export interface TableSlice {
  readonly bitmap: Uint8Array
  readonly bitCount: number
  readonly hashIndex: number
}

/** A window filter's slices as the kernel's table, all in one arena. */
export interface WindowTable {
  readonly arena: Arena
  /** The table's words, copied into the scratch area before each call. */
  readonly image: Uint32Array
}

/**
 * The table of these slices (newest first), or undefined when the kernel cannot take them: some
 * slice outside the arenas or in another arena than the first, or too many slices.
 */
export function windowTable(slices: readonly TableSlice[]): WindowTable | undefined {
  if (slices.length === 0 || slices.length > MAX_TABLE_SLICES) return undefined
  const arena = arenaOfView(slices[0]!.bitmap)
  if (arena === undefined) return undefined
  const image = new Uint32Array(slices.length * 4)
  for (let p = 0; p < slices.length; p++) {
    const slice = slices[p]!
    if (arenaOfView(slice.bitmap) !== arena) return undefined
    image[4 * p] = slice.bitCount >>> 0
    image[4 * p + 1] = Math.floor(slice.bitCount / 4294967296)
    image[4 * p + 2] = slice.bitmap.byteOffset
    image[4 * p + 3] = slice.hashIndex
  }
  return { arena, image }
}

/**
 * The item `item[start, end)` through the window kernel: hashed, then a check (windowHas) or an
 * add (windowAdd) over the table's first `live` slices (k per run; an add sets the k newest).
 * Returns bit 0: some run of k held it; bit 1 (adds): some bit was clear. Undefined when the
 * item is too long for the scratch area (the caller takes the JavaScript way).
 */
export function windowCall(
  table: WindowTable,
  add: boolean,
  item: Uint8Array,
  start: number,
  end: number,
  k: number,
  live: number,
): number | undefined {
  const length = end - start
  if (length > MAX_WINDOW_ITEM_BYTES) return undefined
  const { arena, image } = table
  const bytes = arena.bytes
  if (length < 64) for (let i = 0; i < length; i++) bytes[ITEM + i] = item[start + i]!
  else bytes.set(item.subarray(start, end), ITEM)
  const words = arena.words
  words[DESC / 4] = ITEM
  words[DESC / 4 + 1] = length
  // The slices the call reads: the first `live`, and the k newest for an add.
  const used = 4 * (add ? Math.max(k, live) : live)
  if (used === image.length) words.set(image, TABLE / 4)
  else for (let w = 0; w < used; w++) words[TABLE / 4 + w] = image[w]!
  return callWindow(arena, add, k, live)
}
