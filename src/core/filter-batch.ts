/**
 * A whole command's items through the Bloom kernel (bloom-kernel.wat) in a few calls: the items
 * are copied once into the scratch area of the newest layer's arena (one copy of the range they
 * arrived in when the parser found the command in one read), then hashed there (RedisBloom's two
 * MurmurHash64A per item) and each layer walked by one call over all of them (newest first for
 * checks; for adds, the older layers are checked first, then the newest is tested and set item by
 * item, stopping at the item that fills it so the caller can grow the filter). On a filter of one
 * layer, the usual case, a command is one call: hashing and the walk together. Positions and
 * answers are exactly those of the JavaScript loops of bloom-layer.ts.
 *
 * Scratch area of every arena (the first {@link SCRATCH_BYTES} of its memory):
 *   [0, 8)             the kernel's result words (bits turned on, items added)
 *   [64, +8 n)         item descriptors: u32 offset, u32 length
 *   [PAIRS, +16 n)     hash pairs a, b (u64 each)
 *   [FLAGS, +n)        one byte per item (bloom-kernel.wat: 0 unknown, 1 added, 2 present)
 *   [ITEMS, end - 8)   the items' bytes: each from a multiple of 4, or as they lay in the read
 *                      (RESP headers between them); 8 bytes of room after the last (the kernel
 *                      loads an item's 1..7 tail bytes as one 8-byte word, the rest masked off)
 */

import { Arena, PAGE_BYTES, PIECE_LIST_BYTES, SCRATCH_BYTES } from './arena.js'
import type { BloomLayer, LayerPiece } from './bloom-layer.js'

/** A command's items, read where they are (the request parser's CommandArgs fits). */
export interface ItemList {
  /** The array holding item `i`. */
  bytes(i: number): Uint8Array
  /** Where item `i` starts in it. */
  start(i: number): number
  /** Where item `i` ends in it (exclusive). */
  end(i: number): number
}

const RESULT = 0
/** Where the staged items' descriptors start (the Cuckoo kernel reads them too: cuckoo-batch.ts). */
export const DESC = 64
/** Items one kernel call takes at most; a longer command takes several. */
export const MAX_BATCH_ITEMS = 1024
/** The hash pairs' area, 16 bytes per item (cuckoo-batch.ts keeps its sub-filter table and results there). */
export const PAIRS = DESC + MAX_BATCH_ITEMS * 8
const FLAGS = PAIRS + MAX_BATCH_ITEMS * 16
const ITEMS = FLAGS + MAX_BATCH_ITEMS
const ITEMS_END = SCRATCH_BYTES - 8
/** Bytes of items one call takes; a single longer item goes the JavaScript way. */
export const MAX_BATCH_ITEM_BYTES = ITEMS_END - ITEMS

/** Up to this many bytes an item is copied by a loop (no subarray allocated). */
const LOOP_COPY_BYTES = 64

/**
 * A run of items from the array of the last run (the shared read buffer, nearly always) is copied
 * four bytes a load through the DataView kept for it; from another array, a run of more than
 * {@link LOOP_COPY_BYTES} and up to this many bytes makes that view (and keeps it), a longer one
 * is copied through a view made for the copy. A view made per command was 7.7 % of the server's
 * samples under BF.MEXISTS ×10 (a perf profile of the server).
 */
const RUN_LOOP_COPY_BYTES = 2048
/**
 * Arrays up to this size keep their DataView for the next run; a larger one (the parser's holder
 * of one long command) is not kept alive so.
 */
const KEPT_VIEW_BYTES = 1024 * 1024

/*
 * Every kernel call goes through one of these sites, made megamorphic when the module loads
 * by calls on two small arenas of their own: a call site that saw one kernel only would keep that
 * kernel's instance, and so its memory, alive in its feedback after the filter is gone (a deleted
 * 1 GiB filter would stay resident until another arena's kernel ran there).
 */
function callHash(arena: Arena, n: number): void {
  arena.kernel.hashItems(DESC, n, PAIRS)
}

function callCheck(arena: Arena, n: number, bitmap: number, bitCount: number, hashCount: number): number {
  return arena.kernel.checkLayer(PAIRS, FLAGS, n, bitmap, bitCount, hashCount)
}

function callAdd(arena: Arena, n: number, bitmap: number, bitCount: number, hashCount: number, room: number): number {
  return arena.kernel.addLayer(PAIRS, FLAGS, 0, n, bitmap, bitCount, hashCount, room, RESULT)
}

function callHashCheck(arena: Arena, n: number, bitmap: number, bitCount: number, hashCount: number): number {
  return arena.kernel.hashCheck(DESC, n, PAIRS, FLAGS, bitmap, bitCount, hashCount)
}

function callHashAdd(
  arena: Arena,
  n: number,
  bitmap: number,
  bitCount: number,
  hashCount: number,
  room: number,
): number {
  return arena.kernel.hashAdd(DESC, n, PAIRS, FLAGS, bitmap, bitCount, hashCount, room, RESULT)
}

function callCheckPiece(arena: Arena, at: number, n: number, layer: BloomLayer, piece: LayerPiece): void {
  arena.kernel.checkPiece(
    PAIRS + 16 * at,
    FLAGS + at,
    n,
    layer.bitCount,
    layer.hashCount,
    piece.firstBit,
    piece.bits,
    piece.list,
    piece.offset,
  )
}

function callCheckFirst(arena: Arena, at: number, n: number, layer: BloomLayer, piece: LayerPiece): void {
  arena.kernel.checkFirst(
    PAIRS + 16 * at,
    FLAGS + at,
    n,
    layer.bitCount,
    piece.firstBit,
    piece.bits,
    piece.list,
    piece.offset,
  )
}

function callAddPiece(arena: Arena, at: number, n: number, layer: BloomLayer, piece: LayerPiece): number {
  return arena.kernel.addPiece(
    PAIRS + 16 * at,
    FLAGS + at,
    n,
    layer.bitCount,
    layer.hashCount,
    piece.firstBit,
    piece.bits,
    piece.list,
    piece.offset,
  )
}

for (const sentinel of [new Arena(SCRATCH_BYTES + PAGE_BYTES, true), new Arena(SCRATCH_BYTES + PAGE_BYTES, true)]) {
  const shape = { bitCount: 64, hashCount: 1 } as BloomLayer
  const piece = { arena: sentinel, offset: SCRATCH_BYTES, list: SCRATCH_BYTES, firstBit: 0, bits: 64 }
  callCheckPiece(sentinel, 0, 0, shape, piece)
  callCheckFirst(sentinel, 0, 0, shape, piece)
  callAddPiece(sentinel, 0, 0, shape, piece)
  callHash(sentinel, 0)
  callCheck(sentinel, 0, SCRATCH_BYTES, 64, 1)
  callAdd(sentinel, 0, SCRATCH_BYTES, 64, 1, 1)
  callHashCheck(sentinel, 0, SCRATCH_BYTES, 64, 1)
  callHashAdd(sentinel, 0, SCRATCH_BYTES, 64, 1, 1)
}

/** Whether the kernel can serve these layers: every one is in an arena (or in pieces in arenas). */
export function kernelServes(layers: readonly BloomLayer[]): boolean {
  for (let i = 0; i < layers.length; i++) if (layers[i]!.home === undefined) return false
  return true
}

/**
 * Copies items[from, to) into `arena`'s scratch area, as many as fit, with their descriptors (not
 * hashed yet: the caller's first kernel call does that).
 * @returns how many it took (0 when the first alone is too long for the scratch area)
 */
export function stage(arena: Arena, items: ItemList, from: number, to: number): number {
  const run = stageRun(arena, items, from, to)
  return run === 1 && from + 1 < to ? stageEach(arena, items, from + 1, to, 1) : run
}

/**
 * Stages the items from `from` on that lie in order in one array, the last ending at most
 * {@link MAX_BATCH_ITEM_BYTES} after the first starts (a command the parser found whole in one
 * read), by one copy of that range: the RESP headers between them ride along. Descriptors are
 * written in the same pass that finds the run's end. A run may be one item: a command of one, or
 * items each in an array of their own (the caller stages the rest one by one).
 * @returns how many it staged (0 when the first alone is too long for the scratch area)
 */
function stageRun(arena: Arena, items: ItemList, from: number, to: number): number {
  const source = items.bytes(from)
  const first = items.start(from)
  const last = Math.min(to, from + MAX_BATCH_ITEMS)
  const words = arena.words
  const shift = ITEMS - first
  let end = first
  let i = from
  for (; i < last; i++) {
    const start = items.start(i)
    const next = items.end(i)
    if (items.bytes(i) !== source || start < end || next - first > MAX_BATCH_ITEM_BYTES) break
    words[(DESC >> 2) + 2 * (i - from)] = start + shift
    words[(DESC >> 2) + 2 * (i - from) + 1] = next - start
    end = next
  }
  if (i === from) return 0
  const length = end - first
  if (source === viewed) copyRun(words, ITEMS, viewedAs!, source, first, length)
  else if (length <= LOOP_COPY_BYTES) copyWords(words, ITEMS, source, first, length)
  else if (length <= RUN_LOOP_COPY_BYTES && source.byteLength <= KEPT_VIEW_BYTES) {
    viewed = source
    viewedAs = new DataView(source.buffer, source.byteOffset, source.byteLength)
    copyRun(words, ITEMS, viewedAs, source, first, length)
  } else arena.bytes.set(new Uint8Array(source.buffer, source.byteOffset + first, length), ITEMS)
  return i - from
}

/**
 * Stages items from `from` on one by one, as many as fit, after the `staged` items already there.
 * @returns how many items the scratch area then holds
 */
function stageEach(arena: Arena, items: ItemList, from: number, to: number, staged: number): number {
  let n = staged
  for (let i = from; i < to && stageItem(arena, items, i, n); i++) n++
  return n
}

/**
 * Stages item i of `items` after the `staged` items already in `arena`'s scratch area (from a
 * multiple of 4, with its descriptor): stageEach's step, and a batch that commands fill one item
 * each (the checks and adds of one read, commands/kernel/read-batch.ts).
 * @returns false when it does not fit (nothing staged)
 */
export function stageItem(arena: Arena, items: ItemList, i: number, staged: number): boolean {
  if (staged >= MAX_BATCH_ITEMS) return false
  const words = arena.words
  const last = (DESC >> 2) + 2 * (staged - 1)
  const at = staged === 0 ? ITEMS : (words[last]! + words[last + 1]! + 3) & ~3
  const source = items.bytes(i)
  const start = items.start(i)
  const length = items.end(i) - start
  if (at + length > ITEMS_END) return false
  if (length <= LOOP_COPY_BYTES) copyWords(words, at, source, start, length)
  else if (start === 0 && length === source.length) arena.bytes.set(source, at)
  else arena.bytes.set(source.subarray(start, start + length), at)
  words[(DESC >> 2) + 2 * staged] = at
  words[(DESC >> 2) + 2 * staged + 1] = length
  return true
}

/**
 * source[start, start + length) into the scratch area from byte `at`, a multiple of 4: four bytes
 * a store, gathered little-endian (as murmur-hash.ts feeds its module); the last word is filled
 * out with zeros (up to 3 bytes past the item, where the next item starts on the next word).
 */
function copyWords(words: Uint32Array, at: number, source: Uint8Array, start: number, length: number): void {
  let word = at >> 2
  let p = start
  const end = start + length
  for (const whole = end - 3; p < whole; p += 4) {
    words[word++] = source[p]! | (source[p + 1]! << 8) | (source[p + 2]! << 16) | (source[p + 3]! << 24)
  }
  if (p < end) words[word] = tailWord(source, p, end)
}

/** The 1–3 bytes source[p, end) as a little-endian word, zeros above them. */
function tailWord(source: Uint8Array, p: number, end: number): number {
  let last = 0
  for (let shift = 0; p < end; p++, shift += 8) last |= source[p]! << shift
  return last
}

/**
 * The array a run was last copied from through a DataView (stageRun), and that view: kept, so
 * that the next run from the same array allocates nothing (a typed array's buffer, byteOffset and
 * byteLength are each a call, too).
 */
let viewed: Uint8Array | undefined
let viewedAs: DataView | undefined

/** {@link copyWords}, four bytes a load through `view`, a DataView of all of `source`. */
function copyRun(
  words: Uint32Array,
  at: number,
  view: DataView,
  source: Uint8Array,
  start: number,
  length: number,
): void {
  let word = at >> 2
  let p = start
  const end = start + length
  for (const whole = end - 3; p < whole; p += 4) words[word++] = view.getUint32(p, true)
  if (p < end) words[word] = tailWord(source, p, end)
}

/** Hashes the n staged items of `arena` and clears their flags (for a walk of several calls). */
function hashStaged(arena: Arena, n: number): void {
  callHash(arena, n)
  const bytes = arena.bytes
  for (let j = 0; j < n; j++) bytes[FLAGS + j] = 0
}

/**
 * Runs checkLayer for `layer` over the n staged items of `home`, in the layer's own arena (pairs
 * and flags copied there and the flags back when it is another one).
 */
function checkLayer(home: Arena, layer: BloomLayer, n: number): number {
  if (layer.pieces !== undefined) return checkPieces(home, layer, layer.pieces, n)
  const arena = layer.arena!
  if (arena !== home) {
    arena.bytes.set(home.bytes.subarray(PAIRS, PAIRS + 16 * n), PAIRS)
    arena.bytes.set(home.bytes.subarray(FLAGS, FLAGS + n), FLAGS)
  }
  const found = callCheck(arena, n, layer.bitmapOffset, layer.bitCount, layer.hashCount)
  if (arena !== home) home.bytes.set(arena.bytes.subarray(FLAGS, FLAGS + n), FLAGS)
  return found
}

/**
 * Runs `call` on staged items [at, at + count) of `home` in `arena`, the arena of one piece of a
 * layer: their pairs and flags copied there and the flags back when it is another one.
 */
function inPiece(home: Arena, arena: Arena, at: number, count: number, call: () => void): void {
  if (arena !== home) {
    arena.bytes.set(home.bytes.subarray(PAIRS + 16 * at, PAIRS + 16 * (at + count)), PAIRS + 16 * at)
    arena.bytes.set(home.bytes.subarray(FLAGS + at, FLAGS + at + count), FLAGS + at)
  }
  call()
  if (arena !== home) home.bytes.set(arena.bytes.subarray(FLAGS + at, FLAGS + at + count), FLAGS + at)
}

/**
 * Items per piece pass: each lists at most k positions in the piece's list area (one entry more
 * is written past the last, bloom-kernel.wat listPiece).
 */
function roundItems(layer: BloomLayer): number {
  return Math.max(1, Math.floor((PIECE_LIST_BYTES / 8 - 1) / Math.max(1, layer.hashCount)))
}

/**
 * {@link checkLayer} for a layer in pieces: one checkFirst call per piece (the items whose first
 * position is clear), then one checkPiece call per piece (an item flagged 3 is skipped by the
 * next), then flag 0 (every position set) becomes 2, 3 becomes 0.
 */
function checkPieces(home: Arena, layer: BloomLayer, pieces: readonly LayerPiece[], n: number): number {
  for (const piece of pieces) inPiece(home, piece.arena, 0, n, () => callCheckFirst(piece.arena, 0, n, layer, piece))
  const round = roundItems(layer)
  for (let i = 0; i < n; i += round) {
    const count = Math.min(round, n - i)
    for (const piece of pieces)
      inPiece(home, piece.arena, i, count, () => callCheckPiece(piece.arena, i, count, layer, piece))
  }
  const bytes = home.bytes
  let found = 0
  for (let j = 0; j < n; j++) {
    const flag = bytes[FLAGS + j]
    if (flag === 0) {
      bytes[FLAGS + j] = 2
      found++
    } else if (flag === 3) bytes[FLAGS + j] = 0
  }
  return found
}

/**
 * addLayer for a layer in pieces, over the n staged items (flags 0, or 2 where an older layer has
 * the item): one addPiece call per piece, items in order in each, so each item's bits turned on
 * add up over the pieces to what one pass item by item gives. At most `room` items per round:
 * the round can then fill the layer only at its last item, where addLayer would stop too.
 * Adds to the result words as addLayer does; returns the items handled.
 */
function addPieces(home: Arena, layer: BloomLayer, pieces: readonly LayerPiece[], n: number, room: number): number {
  const bytes = home.bytes
  const round = roundItems(layer)
  let i = 0
  while (i < n && room > 0) {
    const count = Math.min(n - i, room, round)
    for (const piece of pieces) {
      inPiece(home, piece.arena, i, count, () => {
        home.words[RESULT >> 2] += callAddPiece(piece.arena, i, count, layer, piece)
      })
    }
    let added = 0
    for (let j = i; j < i + count; j++) {
      const flag = bytes[FLAGS + j]
      if (flag === 1) added++
      else if (flag === 0) bytes[FLAGS + j] = 2
    }
    home.words[(RESULT >> 2) + 1] += added
    room -= added
    i += count
  }
  return i
}

/**
 * sb.c `SBChain_Check` for items[from, to): `out[outAt + j]` = 1 when item `from + j` may be
 * present, 0 when not. Layers must pass {@link kernelServes}.
 * @returns the index of the first item not answered: `to`, or less when an item is too long
 *   for the scratch area (the caller answers it and calls again)
 */
export function hasBatch(
  layers: readonly BloomLayer[],
  items: ItemList,
  from: number,
  to: number,
  out: Uint8Array,
  outAt: number,
): number {
  const home = layers[layers.length - 1]!.home!
  let i = from
  while (i < to) {
    const n = stage(home, items, i, to)
    if (n === 0) break
    checkStaged(layers, n, out, outAt + i - from)
    i += n
  }
  return i
}

/**
 * sb.c `SBChain_Check` for the n items staged in the newest layer's arena: `out[outAt + j]` = 1
 * when staged item j may be present, 0 when not. The newest layer in the call that hashes, then
 * the older ones while items are unanswered.
 */
export function checkStaged(layers: readonly BloomLayer[], n: number, out: Uint8Array, outAt: number): void {
  const newest = layers[layers.length - 1]!
  const home = newest.home!
  let found: number
  if (newest.pieces === undefined)
    found = callHashCheck(home, n, newest.bitmapOffset, newest.bitCount, newest.hashCount)
  else {
    hashStaged(home, n)
    found = checkPieces(home, newest, newest.pieces, n)
  }
  for (let l = layers.length - 2; l >= 0 && found < n; l--) found += checkLayer(home, layers[l]!, n)
  const bytes = home.bytes
  for (let j = 0; j < n; j++) out[outAt + j] = bytes[FLAGS + j] === 2 ? 1 : 0
}

/**
 * sb.c `SBChain_Add` for items[from, to) while the newest layer has room: `out[outAt + j]` = 1
 * when item `from + j` was added, 0 when some layer already had it. Layers must pass
 * {@link kernelServes}, and the newest must not be full.
 * @returns the index of the first item not handled: `to`, or less when the newest layer filled
 *   up (the caller grows the filter) or an item is too long for the scratch area
 */
export function addBatch(
  layers: readonly BloomLayer[],
  items: ItemList,
  from: number,
  to: number,
  out: Uint8Array,
  outAt: number,
): number {
  const newest = layers[layers.length - 1]!
  const home = newest.home!
  let i = from
  while (i < to && newest.items < newest.capacity) {
    const n = stage(home, items, i, to)
    if (n === 0) break
    const done = addStaged(layers, n, out, outAt + i - from)
    i += done
    if (done < n) break
  }
  return i
}

/**
 * sb.c `SBChain_Add` for the n items staged in the newest layer's arena, while that layer has
 * room: `out[outAt + j]` = 1 when staged item j was added, 0 when some layer already had it.
 * @returns how many it handled: n, or less when the newest layer filled up
 */
export function addStaged(layers: readonly BloomLayer[], n: number, out: Uint8Array, outAt: number): number {
  const newest = layers[layers.length - 1]!
  const home = newest.home!
  const words = home.words
  words[RESULT] = 0
  words[RESULT + 1] = 0
  const room = Math.min(newest.capacity - newest.items, 0x7fffffff)
  let done: number
  if (newest.pieces !== undefined) {
    hashStaged(home, n)
    for (let l = layers.length - 2; l >= 0; l--) checkLayer(home, layers[l]!, n)
    done = addPieces(home, newest, newest.pieces, n, room)
  } else if (layers.length === 1) {
    done = callHashAdd(home, n, newest.bitmapOffset, newest.bitCount, newest.hashCount, room)
  } else {
    // The older layers take no writes meanwhile: checking all n items against them up front
    // answers as checking each just before its add.
    hashStaged(home, n)
    for (let l = layers.length - 2; l >= 0; l--) checkLayer(home, layers[l]!, n)
    done = callAdd(home, n, newest.bitmapOffset, newest.bitCount, newest.hashCount, room)
  }
  newest.setBits += words[RESULT]!
  newest.items += words[RESULT + 1]!
  const bytes = home.bytes
  for (let j = 0; j < done; j++) out[outAt + j] = bytes[FLAGS + j] === 1 ? 1 : 0
  return done
}

/**
 * The items staged in `arena`'s scratch area, where they lie there (no view made per item): valid
 * until the next staging in that arena.
 */
export function stagedItems(arena: Arena): ItemList {
  const words = arena.words
  const bytes = arena.bytes
  return {
    bytes: () => bytes,
    start: (j) => words[(DESC >> 2) + 2 * j]!,
    end: (j) => words[(DESC >> 2) + 2 * j]! + words[(DESC >> 2) + 2 * j + 1]!,
  }
}
