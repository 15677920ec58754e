/**
 * Bitmaps in WebAssembly memory: arenas (one `WebAssembly.Memory` each, with an instance of the
 * Bloom kernel, bloom-kernel.wat, bound to it) and the allocator that places layers in them.
 *
 * Which bitmap goes where ({@link allocateBitmap} in bitmap.ts asks {@link allocateArenaBitmap}):
 * - below {@link OWN_ARENA_BYTES} (64 MiB): a region of a shared arena of
 *   {@link SHARED_ARENA_BYTES}; freed regions are reused for bitmaps of the same size, and an
 *   arena whose regions are all free starts over (and is dropped when another one has room);
 * - from 64 MiB up to {@link MAX_ARENA_BITMAP_BYTES} (4 GiB less the scratch area): an arena of
 *   its own, sized to the bitmap, which the garbage collector returns to the system once the
 *   filter is gone (DEL, FLUSHALL, an overwrite): a memory cannot shrink, but it can be dropped;
 * - larger: a Bloom layer is split in pieces of {@link PIECE_BYTES}, each in an arena of its own
 *   ({@link allocatePieces}, bitmap.ts allocateLayerBitmap; core/pieced-bitmap.ts), on every Node
 *   version; a window slice that large stays a plain `Uint8Array` (Node 24 only);
 * - when the engine refuses a memory up to that size: a plain `Uint8Array`, probed by the
 *   JavaScript loops of bloom-layer.ts, as before arenas (a layer in pieces is refused instead).
 *
 * Stale views cannot exist: an arena is created at its final size (`initial` = `maximum`, and the
 * kernel has no `memory.grow`), so its `ArrayBuffer` is never detached and a view of it stays
 * valid as long as it is held. The engine commits pages only as they are first written, so the
 * unused part of an arena costs address space, not memory.
 *
 * A region's lifetime is its bitmap view's: the region is freed when the garbage collector has
 * collected the one `Uint8Array` {@link allocateArenaBitmap} returned (a `FinalizationRegistry`),
 * so whatever still holds the bitmap (a layer, a capture reading a deleted filter, a snapshot
 * being written) keeps its bytes. Code must not keep a `subarray` of a bitmap past the turn in
 * which it took it without also keeping the bitmap itself.
 */

import { BITMAP_OPS_MODULE } from './bitmap-ops-module.js'
import { BLOOM_KERNEL_MODULE } from './bloom-kernel-module.js'
import { CUCKOO_KERNEL_MODULE } from './cuckoo-kernel-module.js'
import { PiecedBitmap } from './pieced-bitmap.js'

// lib.dom.d.ts declares WebAssembly; this project compiles against ES2022 and Node's types only.
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> }
  Memory: new (descriptor: { initial: number; maximum: number; shared?: boolean }) => { buffer: ArrayBufferLike }
}

/** A WebAssembly page. */
export const PAGE_BYTES = 65536

/** Bytes at the start of every arena for the kernel's scratch area (filter-batch.ts). */
export const SCRATCH_BYTES = 256 * 1024

/** Bitmaps this large or larger get an arena of their own. */
export const OWN_ARENA_BYTES = 64 * 1024 * 1024

/** Size of the largest shared arena (scratch area included). */
export const SHARED_ARENA_BYTES = 128 * 1024 * 1024

/**
 * Size of the smallest shared arena: a new shared arena is four times the bitmap it is made for
 * (a power of two), from 4 MiB to {@link SHARED_ARENA_BYTES}. An arena's whole size counts as
 * `external` memory in `process.memoryUsage()` from its creation, touched or not (INFO
 * used_memory counts its live regions instead: {@link arenaMemory}), and costs address space.
 */
const MIN_SHARED_ARENA_BYTES = 4 * 1024 * 1024

/** The most pages one memory holds on Node 20 (4 GiB). */
const MAX_PAGES = 65536

/** Largest bitmap an arena holds: 4 GiB less the scratch area. */
export const MAX_ARENA_BITMAP_BYTES = MAX_PAGES * PAGE_BYTES - SCRATCH_BYTES

/**
 * Bytes before each piece of a layer in pieces, after the scratch area: where the kernel lists the
 * positions that fall in the piece (bloom-kernel.wat checkPiece, addPiece), 8 bytes each.
 */
export const PIECE_LIST_BYTES = 256 * 1024

/**
 * A layer larger than {@link MAX_ARENA_BITMAP_BYTES} is split in pieces of this many bytes, each
 * in an arena of its own (the largest one memory holds on every Node version beside the scratch
 * and list areas, a whole number of cache lines): a 5 GiB layer is two pieces, a 12 GB one three.
 * The kernel runs once per piece (filter-batch.ts).
 */
export const PIECE_BYTES = MAX_ARENA_BITMAP_BYTES - PIECE_LIST_BYTES

/** Regions start on a cache line. */
const ALIGN = 64

/** The kernel's exports (see bloom-kernel.wat). */
export interface BloomKernel {
  hashItems(desc: number, n: number, pairs: number): void
  checkLayer(pairs: number, flags: number, n: number, bitmap: number, bitCount: number, hashCount: number): number
  addLayer(
    pairs: number,
    flags: number,
    from: number,
    n: number,
    bitmap: number,
    bitCount: number,
    hashCount: number,
    room: number,
    result: number,
  ): number
  /** hashItems, the n flags cleared, then checkLayer: a one-layer filter's check in one call. */
  hashCheck(
    desc: number,
    n: number,
    pairs: number,
    flags: number,
    bitmap: number,
    bitCount: number,
    hashCount: number,
  ): number
  /** hashItems, the n flags cleared, then addLayer from item 0: a one-layer filter's add in one call. */
  hashAdd(
    desc: number,
    n: number,
    pairs: number,
    flags: number,
    bitmap: number,
    bitCount: number,
    hashCount: number,
    room: number,
    result: number,
  ): number
  /** A check's pass over one piece of a layer (bits [lo, lo + span) at `bitmap`): flag 0 → 3 when absent there. */
  checkPiece(
    pairs: number,
    flags: number,
    n: number,
    bitCount: number,
    hashCount: number,
    lo: number,
    span: number,
    list: number,
    bitmap: number,
  ): void
  /** Before a check's passes: flag 0 → 3 for the items whose first position is in the piece and clear. */
  checkFirst(
    pairs: number,
    flags: number,
    n: number,
    bitCount: number,
    lo: number,
    span: number,
    list: number,
    bitmap: number,
  ): void
  /** An add's pass over one piece: flag → 1 when it turned a bit on there (flag 2 left alone); the bits turned on. */
  addPiece(
    pairs: number,
    flags: number,
    n: number,
    bitCount: number,
    hashCount: number,
    lo: number,
    span: number,
    list: number,
    bitmap: number,
  ): number
}

/** The exports of bitmap-ops.wat (bitmap-ops.ts calls them). */
export interface BitmapOps {
  orInto(dst: number, src: number, len: number): void
  countBits(p: number, len: number): number
  windowHas(desc: number, pair: number, table: number, k: number, live: number): number
  windowAdd(desc: number, pair: number, table: number, k: number, live: number): number
}

/** The exports of cuckoo-kernel.wat (cuckoo-batch.ts calls them). */
export interface CuckooKernel {
  cfCheck(desc: number, n: number, table: number, filters: number, size: number, out: number): number
  cfCount(desc: number, n: number, table: number, filters: number, size: number, out: number): void
  cfDelete(desc: number, n: number, table: number, filters: number, size: number, out: number, limit: number): number
  cfAdd(
    desc: number,
    n: number,
    table: number,
    filters: number,
    size: number,
    maxIterations: number,
    out: number,
  ): number
  cfCompactOne(table: number, index: number, size: number, out: number): number
}

let compiled: object | undefined
let compiledOps: object | undefined
let compiledCuckoo: object | undefined

/** One memory, its kernel and its allocation state. */
export class Arena {
  /** All of the memory, never detached (the memory never grows). */
  readonly bytes: Uint8Array
  /** The same memory as 32-bit words (the kernel's result words). */
  readonly words: Uint32Array
  /** The kernel bound to this memory. */
  readonly kernel: BloomKernel
  /** The other bitmap operations (bitmap-ops.wat), bound to this memory and kernel. */
  readonly ops: BitmapOps
  /** The Cuckoo kernel (cuckoo-kernel.wat), bound to this memory: Cuckoo buckets live in arenas too. */
  readonly cuckoo: CuckooKernel
  /** Regions handed out and not freed yet. */
  live = 0
  /** Bytes of those regions. */
  liveBytes = 0
  /** Where never-used space begins (everything from here on is zero). */
  private top = SCRATCH_BYTES
  /** Freed regions by size: offsets to reuse (their bytes must be zeroed first). */
  private readonly freeBySize = new Map<number, number[]>()

  constructor(
    readonly byteLength: number,
    readonly own: boolean,
  ) {
    const pages = byteLength / PAGE_BYTES
    // Shared (its buffer a SharedArrayBuffer), as both kernels import it, so that a second thread
    // could run them on the same bitmaps (docs/WASM.md, "Shared memory"); Node 20 and 24 allow it.
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true })
    compiled ??= new WebAssembly.Module(BLOOM_KERNEL_MODULE)
    const instance = new WebAssembly.Instance(compiled, { env: { memory } })
    this.kernel = instance.exports as unknown as BloomKernel
    compiledOps ??= new WebAssembly.Module(BITMAP_OPS_MODULE)
    const ops = new WebAssembly.Instance(compiledOps, { env: { memory }, bloom: { hashItems: this.kernel.hashItems } })
    this.ops = ops.exports as unknown as BitmapOps
    compiledCuckoo ??= new WebAssembly.Module(CUCKOO_KERNEL_MODULE)
    this.cuckoo = new WebAssembly.Instance(compiledCuckoo, { env: { memory } }).exports as unknown as CuckooKernel
    this.bytes = new Uint8Array(memory.buffer)
    this.words = new Uint32Array(memory.buffer)
  }

  /** A zeroed region of `size` bytes, or undefined when the arena has no room for it. */
  take(size: number): number | undefined {
    const rounded = roundUp(size)
    const reusable = this.freeBySize.get(rounded)
    let offset: number
    if (reusable !== undefined && reusable.length > 0) {
      offset = reusable.pop()!
      this.bytes.fill(0, offset, offset + size)
    } else if (this.top + rounded <= this.byteLength) {
      offset = this.top
      this.top += rounded
    } else {
      return undefined
    }
    this.live++
    this.liveBytes += rounded
    return offset
  }

  /** Gives back a region {@link take} returned. When none is left, the whole arena starts over. */
  release(offset: number, size: number): void {
    const rounded = roundUp(size)
    this.live--
    this.liveBytes -= rounded
    if (this.live === 0) {
      // Everything below `top` may hold old bits: zero it now, once, and start from the scratch.
      this.bytes.fill(0, SCRATCH_BYTES, this.top)
      this.top = SCRATCH_BYTES
      this.freeBySize.clear()
      return
    }
    let list = this.freeBySize.get(rounded)
    if (list === undefined) this.freeBySize.set(rounded, (list = []))
    list.push(offset)
  }
}

function roundUp(size: number): number {
  return Math.max(ALIGN, Math.ceil(size / ALIGN) * ALIGN)
}

/** The arena a bitmap lives in, by its buffer. */
const ARENA_OF = new WeakMap<ArrayBufferLike, Arena>()
/** The bitmaps {@link allocateArenaBitmap} returned: only these are used by the kernel. */
const ARENA_BITMAPS = new WeakSet<Uint8Array>()
/** Shared arenas, oldest first. */
const shared: Arena[] = []

interface HeldRegion {
  readonly arena: Arena
  readonly offset: number
  readonly size: number
}

const REGIONS = new FinalizationRegistry<HeldRegion>((region) =>
  releaseGate(() => {
    region.arena.release(region.offset, region.size)
    if (region.arena.live === 0) dropIfSpare(region.arena)
  }),
)

/**
 * When a collected bitmap's region is given back for reuse: at once, unless another thread may be
 * reading it still (server/thread-plane.ts holds it until every reader that could have seen the
 * bitmap moved on). Reuse zeroes a region and hands it to another filter, so a reader still on it
 * would read another filter's bits.
 */
export type ReleaseGate = (release: () => void) => void

const RELEASE_AT_ONCE: ReleaseGate = (release) => release()
let releaseGate: ReleaseGate = RELEASE_AT_ONCE

/** Sets the gate collected regions go through ({@link ReleaseGate}); undefined: released at once. */
export function gateReleases(gate: ReleaseGate | undefined): void {
  releaseGate = gate ?? RELEASE_AT_ONCE
}

/** Drops an empty shared arena when another shared arena exists. */
function dropIfSpare(arena: Arena): void {
  if (shared.length < 2) return
  const index = shared.indexOf(arena)
  if (index >= 0) shared.splice(index, 1)
}

/**
 * A zeroed bitmap of `byteCount` bytes in an arena (see the module comment for which), or
 * undefined when it takes the plain-array path: too large for a memory, or the engine refused one.
 * A shared arena holding `near` is tried first (a window filter's new slice beside the others).
 */
export function allocateArenaBitmap(byteCount: number, near?: Uint8Array): Uint8Array | undefined {
  if (byteCount === 0 || byteCount > MAX_ARENA_BITMAP_BYTES) return undefined
  if (byteCount < OWN_ARENA_BYTES) return takeShared(byteCount, 1, near)?.[0]
  try {
    const arena = new Arena(Math.ceil((SCRATCH_BYTES + byteCount) / PAGE_BYTES) * PAGE_BYTES, true)
    return handOut(arena, arena.take(byteCount)!, byteCount)
  } catch (error) {
    if (error instanceof RangeError) return undefined // no memory (or address space) for an arena
    throw error
  }
}

/**
 * A zeroed bitmap of `byteCount` bytes in pieces of `pieceBytes` (the last one shorter), each in
 * an arena of its own: a layer larger than one memory. Undefined when the engine refused a
 * memory (the pieces taken so far go with the garbage collector).
 */
export function allocatePieces(byteCount: number, pieceBytes = PIECE_BYTES): PiecedBitmap | undefined {
  const pieces: Uint8Array[] = []
  try {
    for (let at = 0; at < byteCount; at += pieceBytes) {
      const size = Math.min(pieceBytes, byteCount - at)
      const arena = new Arena(Math.ceil((SCRATCH_BYTES + PIECE_LIST_BYTES + size) / PAGE_BYTES) * PAGE_BYTES, true)
      arena.take(PIECE_LIST_BYTES) // at SCRATCH_BYTES: the list area (pieceList)
      PIECE_ARENAS.add(arena)
      pieces.push(handOut(arena, arena.take(size)!, size))
    }
  } catch (error) {
    if (error instanceof RangeError) return undefined // no memory (or address space) for an arena
    throw error
  }
  return new PiecedBitmap(pieces, pieceBytes)
}

/**
 * Most bytes one layer in pieces may have: the machine's memory, told by the server at start
 * (store/databases.ts); unbounded before. Each piece is a memory of its own, which the kernel
 * commits only page by page as it is written, so nothing else stops a reserve of terabytes that
 * the first adds would then take the machine down with (RedisBloom #699).
 */
let maxPiecedBytes = Infinity

/** Sets the bound of {@link allocatePieces} (Infinity: none). */
export function limitPiecedLayers(bytes: number): void {
  maxPiecedBytes = bytes
}

/** The bound {@link limitPiecedLayers} set. */
export function piecedLayerLimit(): number {
  return maxPiecedBytes
}

/** The arenas {@link allocatePieces} made: each has a list area at {@link SCRATCH_BYTES}. */
const PIECE_ARENAS = new WeakSet<Arena>()

/** Where the list area of a piece's arena starts, or undefined for an arena without one. */
export function pieceList(arena: Arena): number | undefined {
  return PIECE_ARENAS.has(arena) ? SCRATCH_BYTES : undefined
}

/**
 * `count` zeroed bitmaps of `byteCount` bytes, all in one shared arena: a window filter's slices,
 * which the window kernel serves only while they share an arena (bitmap-ops.ts windowTable). One
 * by one, the first slices could fill the open arena's last room and the rest land in another.
 * Undefined when together they are too large for a shared arena or the engine refused one (then
 * each takes {@link allocateArenaBitmap}'s way).
 */
export function allocateArenaBitmapGroup(byteCount: number, count: number): Uint8Array[] | undefined {
  if (byteCount === 0 || count === 0 || roundUp(byteCount) * count >= OWN_ARENA_BYTES) return undefined
  return takeShared(byteCount, count)
}

/**
 * `count` regions of `byteCount` bytes from one shared arena, as bitmaps: the arena of `near`
 * first when it is shared, then the others oldest first, then a new one. Undefined when the
 * engine refused a new arena.
 */
function takeShared(byteCount: number, count: number, near?: Uint8Array): Uint8Array[] | undefined {
  try {
    const preferred = near === undefined ? undefined : ARENA_OF.get(near.buffer)
    for (const candidate of preferred !== undefined && !preferred.own ? [preferred, ...shared] : shared) {
      const offsets = takeAll(candidate, byteCount, count)
      if (offsets !== undefined) return offsets.map((offset) => handOut(candidate, offset, byteCount))
    }
    const arena = new Arena(sharedArenaBytes(roundUp(byteCount) * count), false)
    shared.push(arena)
    return takeAll(arena, byteCount, count)!.map((offset) => handOut(arena, offset, byteCount))
  } catch (error) {
    if (error instanceof RangeError) return undefined // no memory (or address space) for an arena
    throw error
  }
}

/** The bitmap of a region just taken from `arena`, known to the kernel and freed with it. */
function handOut(arena: Arena, offset: number, byteCount: number): Uint8Array {
  const bitmap = new Uint8Array(arena.bytes.buffer, offset, byteCount)
  ARENA_OF.set(arena.bytes.buffer, arena)
  ARENA_BITMAPS.add(bitmap)
  noteArena(arena)
  // An own arena goes with its bitmap (nothing else holds it strongly: ARENA_OF is weak); a
  // shared arena's region is given back when the bitmap is collected.
  if (!arena.own) REGIONS.register(bitmap, { arena, offset, size: byteCount })
  return bitmap
}

/** `count` regions of `size` bytes from `arena`, or none (what was taken is given back). */
function takeAll(arena: Arena, size: number, count: number): number[] | undefined {
  const offsets: number[] = []
  for (let i = 0; i < count; i++) {
    const offset = arena.take(size)
    if (offset === undefined) {
      for (const taken of offsets) arena.release(taken, size)
      return undefined
    }
    offsets.push(offset)
  }
  return offsets
}

function sharedArenaBytes(byteCount: number): number {
  let size = MIN_SHARED_ARENA_BYTES
  while (size < 4 * (byteCount + SCRATCH_BYTES) && size < SHARED_ARENA_BYTES) size *= 2
  return size
}

/** The arena of a bitmap {@link allocateArenaBitmap} returned; undefined for any other array. */
export function arenaOf(bitmap: Uint8Array): Arena | undefined {
  return ARENA_BITMAPS.has(bitmap) ? ARENA_OF.get(bitmap.buffer) : undefined
}

/**
 * The arena whose memory `view` is a view of (any view: a bitmap, a subarray of one, a chunk), or
 * undefined for an array outside the arenas.
 */
export function arenaOfView(view: Uint8Array): Arena | undefined {
  return ARENA_OF.get(view.buffer)
}

/** What the arenas hold now (for INFO and the memory bench). */
export interface ArenaStats {
  /** Shared arenas alive. */
  sharedArenas: number
  /** Bytes of live regions in shared arenas. */
  sharedLiveBytes: number
}

/** Counts of the shared arenas (own arenas are one per large layer, counted by the layers). */
export function arenaStats(): ArenaStats {
  let sharedLiveBytes = 0
  for (const arena of shared) sharedLiveBytes += arena.liveBytes
  return { sharedArenas: shared.length, sharedLiveBytes }
}

// ---- Accounting: the arenas' sizes and what they hand out (INFO used_memory) ----

/** The arenas {@link allocateArenaBitmap} made, for as long as each lives. */
const NOTED = new WeakSet<Arena>()
let noted: WeakRef<Arena>[] = []

function noteArena(arena: Arena): void {
  if (NOTED.has(arena)) return
  NOTED.add(arena)
  noted.push(new WeakRef(arena))
}

/** Bytes of the arenas. */
export interface ArenaBytes {
  /** The arenas' whole sizes: what the engine may count as external memory. */
  reserved: number
  /** What they hand out: live regions, and the scratch area of an arena holding any. */
  used: number
}

/** The arenas alive now (every one a shared memory: its buffer is a `SharedArrayBuffer`). */
export function arenaMemory(): ArenaBytes {
  const bytes = { reserved: 0, used: 0 }
  const alive: WeakRef<Arena>[] = []
  for (const ref of noted) {
    const arena = ref.deref()
    if (arena === undefined) continue
    alive.push(ref)
    bytes.reserved += arena.byteLength
    if (arena.live > 0) bytes.used += SCRATCH_BYTES + arena.liveBytes
  }
  noted = alive
  return bytes
}

/**
 * A fresh memory of 64 pages (4 MiB), shared as arenas are, held by nobody: INFO measures once
 * with it whether the engine counts such a memory in `external` (Node 20 does not count a shared
 * one; it counts a plain one's whole size from its creation).
 */
export function probeArenaMemory(): object {
  return new WebAssembly.Memory({ initial: 64, maximum: 64, shared: true })
}
