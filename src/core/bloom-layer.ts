/**
 * One layer of a scalable filter: a bitmap plus its sizing, with RedisBloom's probe loop
 * (deps/bloom/bloom.c `CHECK_ADD_FUNC`, `bloom_check_add_compat`) over a precomputed hash pair.
 */

import type { Arena } from './arena.js'
import { arenaOf, pieceList } from './arena.js'
import { allocateLayerBitmap, countSetBits } from './bitmap.js'
import { carryOut, mod64, twoPow64Mod } from './hashing.js'
import { type Bitmap, PiecedBitmap, writeBitmap } from './pieced-bitmap.js'
import { MAX_BIT_COUNT } from './sizing.js'
import type { LayerGeometry } from './sizing.js'

/** Upper bound on a layer's hash count: far above any real one (about 1075 at error 5e-324). */
export const MAX_HASH_COUNT = 4096

/**
 * A layer's counts in shared memory ({@link BloomLayer.share}): four int32 words from an index.
 * RESERVED is ITEMS plus the room other threads claimed for adds still under way (they claim it
 * before setting bits, and give back what an add did not take); ITEMS and SET_BITS are what
 * {@link BloomLayer.items} and {@link BloomLayer.setBits} read; FOREIGN_ADDS counts the items
 * other threads added (0 when shared), for the layer's owner to learn that they changed it.
 */
export const SHARED_RESERVED = 0
export const SHARED_ITEMS = 1
export const SHARED_SET_BITS = 2
export const SHARED_FOREIGN_ADDS = 3
export const SHARED_COUNT_WORDS = 4
/** The largest capacity and bit count a layer's counts may be shared for: int32 words. */
export const MAX_SHARED_COUNT = 0x7fffffff

/** Everything that defines a layer; the bitmap is shared, never copied. */
export interface BloomLayerInit {
  /** Items the layer is planned for (RedisBloom `entries`, original library `maxItems`). */
  readonly capacity: number
  /** The layer's own target error rate (already tightened for scalable filters). */
  readonly errorRate: number
  /** Bits per entry as RedisBloom stores it (informational). */
  readonly bitsPerEntry: number
  /** Bit positions per item (k); 0 is allowed (original library with p near 1: all items present). */
  readonly hashCount: number
  /** Bits in the bitmap: exactly `bitmap.length * 8`. */
  readonly bitCount: number
  /** Items stored so far (RedisBloom `SBLink.size`, original library `count`). */
  readonly items: number
  /** The bits, LSB first within each byte: one array, or pieces (pieced-bitmap.ts). */
  readonly bitmap: Bitmap
  /** Set bits of `bitmap`, when the caller knows them (0 for a new one); counted when absent. */
  readonly setBits?: number
}

/**
 * Told before a layer's bitmap changes while a point-in-time copy of the layer is still being
 * read (store/registry-capture.ts, the full-sync payload): it copies the bytes the capture has not
 * read yet, so the capture sees the bitmap as it was. Only {@link BloomLayer.addHashed} and
 * {@link BloomLayer.writeBytes} change a bitmap, and both call it first.
 */
export interface WriteGuard {
  /** Bytes `[start, end)` of the bitmap are about to change. */
  beforeWrite(start: number, end: number): void
}

/**
 * One Bloom filter layer. It neither hashes nor decides about growth: it tests and sets the
 * positions of an (a, b) pair produced by hashing.ts.
 */
export class BloomLayer {
  /** Items the layer is planned for; a scalable filter grows once `items` reaches it. */
  readonly capacity: number
  /** The layer's own error rate. */
  readonly errorRate: number
  /** Bits per entry (RedisBloom `bpe`). */
  readonly bitsPerEntry: number
  /** Bit positions per item. */
  readonly hashCount: number
  /** Bits in the bitmap. */
  readonly bitCount: number
  /** Items added to this layer, while its counts are its own. */
  private ownItems: number
  /** The bitmap itself (shared with toParts / the codec): one array, or pieces. */
  readonly bitmap: Bitmap
  /** Set bits of the bitmap, while its counts are its own. */
  private ownSetBits: number
  /** Shared words holding the counts instead ({@link share}), or undefined. */
  private counts: Int32Array | undefined = undefined
  private countsAt = 0
  /**
   * The capture reading this layer, if any (null nearly always: then a write costs one field
   * check more). Set and cleared by store/registry-capture.ts only.
   */
  writeGuard: WriteGuard | null
  /**
   * The arena holding the bitmap (arena.ts), whose kernel filter-batch.ts runs; undefined for a
   * plain array (a layer too large for one memory, or bytes a caller handed in).
   */
  readonly arena: Arena | undefined
  /** Where the bitmap starts in its arena's memory (`bitmap.byteOffset`, read once). */
  readonly bitmapOffset: number
  /**
   * A bitmap larger than one memory: its pieces, each with the arena holding it (the kernel runs
   * once per piece), when every piece is in an arena; undefined otherwise.
   */
  readonly pieces: readonly LayerPiece[] | undefined
  /** The arena the kernel stages this layer's items in: its own, or its first piece's. */
  readonly home: Arena | undefined
  /** 2^64 mod bitCount: what a wrap of the C uint64 `a + i*b` removes from a position. */
  private readonly wrap: number

  /**
   * Wraps existing parts (the bitmap is used in place).
   *
   * @throws RangeError when the parts are inconsistent: bitCount not equal to bitmap.length * 8 or
   *   out of [8, 2^51], capacity or items not safe non-negative integers (capacity ≥ 1), errorRate
   *   not in (0, 1), bitsPerEntry not finite and ≥ 0, hashCount not an integer in [0, 4096]
   */
  constructor(init: BloomLayerInit) {
    const { capacity, errorRate, bitsPerEntry, hashCount, bitCount, items, bitmap } = init
    if (!(bitmap instanceof Uint8Array || bitmap instanceof PiecedBitmap)) {
      throw new RangeError('bitmap must be a Uint8Array or a PiecedBitmap')
    }
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`bad layer capacity ${capacity}`)
    if (!(errorRate > 0 && errorRate < 1)) throw new RangeError(`bad layer errorRate ${errorRate}`)
    if (!(Number.isFinite(bitsPerEntry) && bitsPerEntry >= 0)) {
      throw new RangeError(`bad layer bitsPerEntry ${bitsPerEntry}`)
    }
    if (!Number.isInteger(hashCount) || hashCount < 0 || hashCount > MAX_HASH_COUNT) {
      throw new RangeError(`bad layer hashCount ${hashCount}`)
    }
    if (!Number.isSafeInteger(bitCount) || bitCount < 8 || bitCount > MAX_BIT_COUNT) {
      throw new RangeError(`bad layer bitCount ${bitCount}`)
    }
    if (bitCount !== bitmap.length * 8) {
      throw new RangeError(`layer bitCount ${bitCount} does not match a bitmap of ${bitmap.length} bytes`)
    }
    if (!Number.isSafeInteger(items) || items < 0) throw new RangeError(`bad layer items ${items}`)
    this.capacity = capacity
    this.errorRate = errorRate
    this.bitsPerEntry = bitsPerEntry
    this.hashCount = hashCount
    this.bitCount = bitCount
    this.ownItems = items
    this.bitmap = bitmap
    this.ownSetBits = init.setBits ?? countSetBits(bitmap)
    this.writeGuard = null
    this.arena = bitmap instanceof Uint8Array ? arenaOf(bitmap) : undefined
    this.bitmapOffset = bitmap instanceof Uint8Array ? bitmap.byteOffset : 0
    this.pieces = bitmap instanceof PiecedBitmap ? layerPieces(bitmap) : undefined
    this.home = this.arena ?? this.pieces?.[0]!.arena
    this.wrap = twoPow64Mod(bitCount)
  }

  /**
   * A new, empty layer with a freshly allocated (zeroed) bitmap.
   *
   * @throws RangeError when the geometry is invalid or the bitmap cannot be allocated
   */
  static create(capacity: number, errorRate: number, geometry: LayerGeometry): BloomLayer {
    return new BloomLayer({
      capacity,
      errorRate,
      bitsPerEntry: geometry.bitsPerEntry,
      hashCount: geometry.hashCount,
      bitCount: geometry.bitCount,
      items: 0,
      bitmap: allocateLayerBitmap(geometry.byteCount),
      setBits: 0,
    })
  }

  /** Items added to this layer (incremented by {@link addHashed} when it changes the bitmap). */
  get items(): number {
    return this.counts === undefined ? this.ownItems : this.counts[this.countsAt + SHARED_ITEMS]!
  }

  set items(value: number) {
    if (this.counts === undefined) {
      this.ownItems = value
      return
    }
    Atomics.store(this.counts, this.countsAt + SHARED_ITEMS, value)
    Atomics.store(this.counts, this.countsAt + SHARED_RESERVED, value)
  }

  /**
   * Set bits of the bitmap, kept current without a scan: counted once when a bitmap is installed
   * (the constructor), then by each bit {@link addHashed} flips and over the range
   * {@link writeBytes} replaces. Anything writing into `bitmap` directly must go through those.
   */
  get setBits(): number {
    return this.counts === undefined ? this.ownSetBits : this.counts[this.countsAt + SHARED_SET_BITS]!
  }

  set setBits(value: number) {
    if (this.counts === undefined) this.ownSetBits = value
    else Atomics.store(this.counts, this.countsAt + SHARED_SET_BITS, value)
  }

  /** Whether {@link share} can hold this layer's counts (int32 words). */
  get shareable(): boolean {
    return this.capacity <= MAX_SHARED_COUNT && this.bitCount <= MAX_SHARED_COUNT && this.bitmap instanceof Uint8Array
  }

  /**
   * Keeps the counts in `words` from index `at` ({@link SHARED_COUNT_WORDS} of them) from now on,
   * where other threads add to them (server/thread-answers.ts) while this thread does not run.
   * Only for a {@link shareable} layer.
   */
  share(words: Int32Array, at: number): void {
    if (this.counts !== undefined) this.unshare()
    Atomics.store(words, at + SHARED_ITEMS, this.ownItems)
    Atomics.store(words, at + SHARED_RESERVED, this.ownItems)
    Atomics.store(words, at + SHARED_SET_BITS, this.ownSetBits)
    Atomics.store(words, at + SHARED_FOREIGN_ADDS, 0)
    this.counts = words
    this.countsAt = at
  }

  /** The counts are the layer's own again, as the shared words left them. */
  unshare(): void {
    const counts = this.counts
    if (counts === undefined) return
    this.ownItems = Atomics.load(counts, this.countsAt + SHARED_ITEMS)
    this.ownSetBits = Atomics.load(counts, this.countsAt + SHARED_SET_BITS)
    this.counts = undefined
  }

  /** Whether the layer has reached its capacity (sb.c: `cur->size >= cur->inner.entries`). */
  isFull(): boolean {
    return this.items >= this.capacity
  }

  /**
   * Whether all positions of the pair are set (bloom.c `bloom_check_h`). Stops at the first clear
   * bit. Allocates nothing.
   *
   * @param pair `[aHi, aLo, bHi, bLo]` from hashing.ts
   */
  hasHashed(pair: Uint32Array): boolean {
    const m = this.bitCount
    const bitmap = this.bitmap
    if (!(bitmap instanceof Uint8Array)) return this.probePieced(bitmap, pair, false) === 0
    const bHi = pair[2]
    const bLo = pair[3]
    let xHi = pair[0]
    let xLo = pair[1]
    if (m >= INT32_STEP_BITS) {
      for (let i = this.hashCount; i > 0; i--) {
        const pos = mod64(xHi, xLo, m)
        if ((bitmap[Math.floor(pos / 8)] & (1 << (pos & 7))) === 0) return false
        const lo = (xLo + bLo) >>> 0
        xHi = (xHi + bHi + carryOut(xLo, bLo, lo)) >>> 0
        xLo = lo
      }
      return true
    }
    const step = mod64(bHi, bLo, m)
    const wrap = this.wrap
    let pos = mod64(xHi, xLo, m)
    for (let i = this.hashCount; i > 0; i--) {
      if ((bitmap[pos >>> 3] & (1 << (pos & 7))) === 0) return false
      const lo = (xLo + bLo) | 0
      const hi = (xHi + bHi + carryOut(xLo, bLo, lo)) | 0
      pos = nextPosition(pos, step, wrap & -carryOut(xHi, bHi, hi), m)
      xLo = lo
      xHi = hi
    }
    return true
  }

  /**
   * Sets all positions of the pair (bloom.c `bloom_add_h`). When at least one bit was clear, the
   * item counts as new and `items` is incremented (sb.c `SBChain_AddToLink`). Allocates nothing.
   *
   * @param pair `[aHi, aLo, bHi, bLo]` from hashing.ts
   * @returns true when the bitmap changed (the item was not already present)
   */
  addHashed(pair: Uint32Array): boolean {
    if (this.writeGuard !== null) this.guardProbes(this.writeGuard, pair)
    const m = this.bitCount
    const bitmap = this.bitmap
    if (!(bitmap instanceof Uint8Array)) return this.counted(this.probePieced(bitmap, pair, true))
    const bHi = pair[2]
    const bLo = pair[3]
    let xHi = pair[0]
    let xLo = pair[1]
    // No branch on the bit's old value: for a new item it is a coin toss, and each mispredicted
    // branch would wait for its cache miss before the next probe's load could start. `flipped`
    // counts the bits this item turns on (a probe repeating an earlier one reads it set).
    let flipped = 0
    if (m >= INT32_STEP_BITS) {
      for (let i = this.hashCount; i > 0; i--) {
        const pos = mod64(xHi, xLo, m)
        const byte = Math.floor(pos / 8)
        const mask = 1 << (pos & 7)
        const old = bitmap[byte]
        bitmap[byte] = old | mask
        flipped += ((old >>> (pos & 7)) & 1) ^ 1
        const lo = (xLo + bLo) >>> 0
        xHi = (xHi + bHi + carryOut(xLo, bLo, lo)) >>> 0
        xLo = lo
      }
    } else {
      const step = mod64(bHi, bLo, m)
      const wrap = this.wrap
      let pos = mod64(xHi, xLo, m)
      for (let i = this.hashCount; i > 0; i--) {
        const byte = pos >>> 3
        const mask = 1 << (pos & 7)
        const old = bitmap[byte]
        bitmap[byte] = old | mask
        flipped += ((old >>> (pos & 7)) & 1) ^ 1
        const lo = (xLo + bLo) | 0
        const hi = (xHi + bHi + carryOut(xLo, bLo, lo)) | 0
        pos = nextPosition(pos, step, wrap & -carryOut(xHi, bHi, hi), m)
        xLo = lo
        xHi = hi
      }
    }
    return this.counted(flipped)
  }

  /** An add that turned `flipped` bits on: counted as a new item when that is not 0. */
  private counted(flipped: number): boolean {
    if (flipped === 0) return false
    this.setBits += flipped
    this.items++
    return true
  }

  /**
   * How many of the pair's positions are clear (0: the layer has the item), reading every one of
   * them with no branch on the data, so that their cache misses are all in flight at once: the
   * read before {@link orHashed}, which then finds the bytes in cache. A whole bitmap only.
   */
  clearHashed(pair: Uint32Array): number {
    const m = this.bitCount
    const bitmap = this.bitmap as Uint8Array
    const bHi = pair[2]
    const bLo = pair[3]
    let xHi = pair[0]
    let xLo = pair[1]
    let clear = 0
    if (m >= INT32_STEP_BITS) {
      for (let i = this.hashCount; i > 0; i--) {
        const pos = mod64(xHi, xLo, m)
        clear += ((bitmap[Math.floor(pos / 8)]! >>> (pos & 7)) & 1) ^ 1
        const lo = (xLo + bLo) >>> 0
        xHi = (xHi + bHi + carryOut(xLo, bLo, lo)) >>> 0
        xLo = lo
      }
      return clear
    }
    const step = mod64(bHi, bLo, m)
    const wrap = this.wrap
    let pos = mod64(xHi, xLo, m)
    for (let i = this.hashCount; i > 0; i--) {
      clear += ((bitmap[pos >>> 3]! >>> (pos & 7)) & 1) ^ 1
      const lo = (xLo + bLo) | 0
      const hi = (xHi + bHi + carryOut(xLo, bLo, lo)) | 0
      pos = nextPosition(pos, step, wrap & -carryOut(xHi, bHi, hi), m)
      xLo = lo
      xHi = hi
    }
    return clear
  }

  /**
   * {@link addHashed}'s bits, each clear one set with an atomic OR, so that threads setting bits
   * of the same bitmap at once lose none; counts nothing (the caller claimed the room). A set bit
   * is only read: an atomic OR waits for its cache line, one after the other, where plain reads
   * overlap (call {@link clearHashed} first). A whole bitmap in a shared memory only.
   *
   * @returns the bits it turned on: 0 when the item was present already
   */
  orHashed(pair: Uint32Array): number {
    const m = this.bitCount
    const bitmap = this.bitmap as Uint8Array
    const bHi = pair[2]
    const bLo = pair[3]
    let xHi = pair[0]
    let xLo = pair[1]
    let flipped = 0
    if (m >= INT32_STEP_BITS) {
      for (let i = this.hashCount; i > 0; i--) {
        const pos = mod64(xHi, xLo, m)
        flipped += orBit(bitmap, Math.floor(pos / 8), pos & 7)
        const lo = (xLo + bLo) >>> 0
        xHi = (xHi + bHi + carryOut(xLo, bLo, lo)) >>> 0
        xLo = lo
      }
      return flipped
    }
    const step = mod64(bHi, bLo, m)
    const wrap = this.wrap
    let pos = mod64(xHi, xLo, m)
    for (let i = this.hashCount; i > 0; i--) {
      flipped += orBit(bitmap, pos >>> 3, pos & 7)
      const lo = (xLo + bLo) | 0
      const hi = (xHi + bHi + carryOut(xLo, bLo, lo)) | 0
      pos = nextPosition(pos, step, wrap & -carryOut(xHi, bHi, hi), m)
      xLo = lo
      xHi = hi
    }
    return flipped
  }

  /**
   * The probe loop over a pieced bitmap, each position `(a + i * b) mod 2^64 mod m` taken
   * directly (the kernel's piece passes serve these layers; this way serves a layer outside the
   * arenas and adds during a capture). A check (`write` false) returns 1 at the first clear bit,
   * else 0; an add returns the bits it turned on.
   */
  private probePieced(bitmap: PiecedBitmap, pair: Uint32Array, write: boolean): number {
    const m = this.bitCount
    const bHi = pair[2]
    const bLo = pair[3]
    let xHi = pair[0]
    let xLo = pair[1]
    let flipped = 0
    for (let i = this.hashCount; i > 0; i--) {
      const pos = mod64(xHi, xLo, m)
      const byte = Math.floor(pos / 8)
      const old = bitmap.byteAt(byte)
      const clear = ((old >>> (pos & 7)) & 1) ^ 1
      if (write) {
        bitmap.setByteAt(byte, old | (1 << (pos & 7)))
        flipped += clear
      } else if (clear === 1) return 1
      const lo = (xLo + bLo) >>> 0
      xHi = (xHi + bHi + carryOut(xLo, bLo, lo)) >>> 0
      xLo = lo
    }
    return flipped
  }

  /**
   * Tells `guard` each byte {@link addHashed} is about to set for `pair`. The positions are
   * bloom.c's `(a + i * b) mod 2^64 mod m` taken directly, which the int32 stepping of the
   * probe loops reproduces exactly (test/core/bloom-layer.test.ts checks both sizes).
   */
  private guardProbes(guard: WriteGuard, pair: Uint32Array): void {
    const m = this.bitCount
    const bHi = pair[2]
    const bLo = pair[3]
    let xHi = pair[0]
    let xLo = pair[1]
    for (let i = this.hashCount; i > 0; i--) {
      const byte = Math.floor(mod64(xHi, xLo, m) / 8)
      guard.beforeWrite(byte, byte + 1)
      const lo = (xLo + bLo) >>> 0
      xHi = (xHi + bHi + carryOut(xLo, bLo, lo)) >>> 0
      xLo = lo
    }
  }

  /**
   * Copies `data` into the bitmap at byte `offset` (a BF.LOADCHUNK chunk), keeping
   * {@link setBits} right by counting only the replaced range, before and after.
   *
   * @throws RangeError when the bytes do not fit at `offset`
   */
  writeBytes(data: Uint8Array, offset: number): void {
    const end = offset + data.length
    if (!Number.isSafeInteger(offset) || offset < 0 || end > this.bitmap.length) {
      throw new RangeError(`${data.length} bytes at ${offset} do not fit a bitmap of ${this.bitmap.length}`)
    }
    if (this.writeGuard !== null) this.writeGuard.beforeWrite(offset, end)
    const before = countSetBits(this.bitmap, offset, end)
    writeBitmap(this.bitmap, data, offset)
    this.setBits += countSetBits(this.bitmap, offset, end) - before
  }
}

/** One piece of a pieced layer as the kernel sees it (filter-batch.ts). */
export interface LayerPiece {
  /** The arena holding the piece. */
  readonly arena: Arena
  /** Where the piece starts in that arena's memory. */
  readonly offset: number
  /** Where the arena's list area starts (arena.ts PIECE_LIST_BYTES). */
  readonly list: number
  /** The layer's first bit in this piece. */
  readonly firstBit: number
  /** Bits in this piece. */
  readonly bits: number
}

/** The pieces of `bitmap` with their arenas, or undefined when one is not in a piece's arena. */
function layerPieces(bitmap: PiecedBitmap): LayerPiece[] | undefined {
  const pieces: LayerPiece[] = []
  for (let p = 0; p < bitmap.pieces.length; p++) {
    const piece = bitmap.pieces[p]!
    const arena = arenaOf(piece)
    const list = arena === undefined ? undefined : pieceList(arena)
    if (arena === undefined || list === undefined) return undefined
    pieces.push({ arena, offset: piece.byteOffset, list, firstBit: p * bitmap.pieceBytes * 8, bits: piece.length * 8 })
  }
  return pieces
}

/**
 * Below this many bits (128 MiB layers, nearly all of them), the probe loops step positions in
 * int32 arithmetic with no branch on the data: the carries of x += b and the wrap of the 64-bit
 * sum are 0 or 1 computed from bits, and the position is brought back into [0, m) with sign
 * masks. A branch there would be a coin toss, and each misprediction throws away the loads of
 * the probes after it; this way the loads of all k probes are in flight together (MEXISTS ×10
 * +14% at -P 16). A larger layer takes each position from x itself, as bloom.c does,
 * `(a + i * b) mod 2^64 mod m` with {@link mod64}: a few divisions per probe, next to the cache
 * and TLB misses of a bitmap that size.
 */
const INT32_STEP_BITS = 2 ** 30

/** Sets bit `bit` of `bitmap[byte]` with an atomic OR unless it reads set: 1 when this call turned it on. */
function orBit(bitmap: Uint8Array, byte: number, bit: number): number {
  if (((bitmap[byte]! >>> bit) & 1) === 1) return 0
  return ((Atomics.or(bitmap, byte, 1 << bit) >>> bit) & 1) ^ 1
}

/**
 * `(pos + step - minus) mod m` for pos, step and minus in [0, m), m < 2^30: the sum is in
 * (-m, 2m), so subtracting m when it is ≥ m and adding m when it is negative, by masks, lands in [0, m).
 */
function nextPosition(pos: number, step: number, minus: number, m: number): number {
  let p = (pos + step - minus) | 0
  p -= m & ~((p - m) >> 31)
  p += m & (p >> 31)
  return p
}
