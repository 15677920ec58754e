/**
 * A bitmap is a plain Uint8Array. Bit `i` is bit `i % 8` (least significant first) of byte
 * `floor(i / 8)`, as in RedisBloom's bloom.c and the original library's files.
 *
 * Indexes may exceed 2^32 (a bitmap may hold up to 2^35 bits), so byte offsets use `Math.floor`
 * and not `>>> 3`; `i & 7` stays correct for every integer below 2^53 because 2^32 is a multiple of 8.
 */

import {
  allocateArenaBitmap,
  allocateArenaBitmapGroup,
  allocatePieces,
  MAX_ARENA_BITMAP_BYTES,
  piecedLayerLimit,
} from './arena.js'
import { countArenaBits } from './bitmap-ops.js'
import { type Bitmap, bitmapSlices } from './pieced-bitmap.js'

/**
 * Allocates a zeroed bitmap of `byteCount` bytes: in WebAssembly memory (arena.ts) where it fits
 * one, a plain array otherwise. A shared arena holding `near` is tried first.
 *
 * @throws RangeError when `byteCount` is not a non-negative safe integer or the runtime cannot
 *   allocate that much
 */
export function allocateBitmap(byteCount: number, near?: Uint8Array): Uint8Array {
  checkByteCount(byteCount)
  return allocateArenaBitmap(byteCount, near) ?? new Uint8Array(byteCount)
}

/**
 * A zeroed bitmap for a Bloom layer: {@link allocateBitmap}'s up to one memory's size, pieces in
 * memories of their own beyond it (arena.ts allocatePieces), on every Node version.
 *
 * @throws RangeError when `byteCount` is bad, larger than the machine's memory (arena.ts
 *   limitPiecedLayers), or the engine refused a memory for a piece (the message says which):
 *   never a silent fallback to another path
 */
export function allocateLayerBitmap(byteCount: number): Bitmap {
  checkByteCount(byteCount)
  if (byteCount <= MAX_ARENA_BITMAP_BYTES) return allocateBitmap(byteCount)
  if (byteCount > piecedLayerLimit()) {
    throw new RangeError(
      `a layer of ${byteCount} bytes is larger than this machine's memory (${piecedLayerLimit()} bytes)`,
    )
  }
  const pieces = allocatePieces(byteCount)
  if (pieces === undefined) {
    throw new RangeError(`the runtime refused a WebAssembly memory for a layer of ${byteCount} bytes`)
  }
  return pieces
}

/**
 * `count` zeroed bitmaps of `byteCount` bytes, in one arena when they fit in a shared one
 * (arena.ts allocateArenaBitmapGroup), else each as {@link allocateBitmap} places it.
 */
export function allocateBitmaps(byteCount: number, count: number): Uint8Array[] {
  checkByteCount(byteCount)
  return allocateArenaBitmapGroup(byteCount, count) ?? Array.from({ length: count }, () => allocateBitmap(byteCount))
}

function checkByteCount(byteCount: number): void {
  if (!Number.isSafeInteger(byteCount) || byteCount < 0) {
    throw new RangeError(`byteCount must be a non-negative integer, got ${byteCount}`)
  }
}

/** @returns whether bit `index` is set. `index` must be below `bitmap.length * 8`. */
export function testBit(bitmap: Uint8Array, index: number): boolean {
  return (bitmap[Math.floor(index / 8)] & (1 << (index & 7))) !== 0
}

/**
 * Sets bit `index`.
 *
 * @returns true when the bit was clear before (the bitmap changed), false when it was already set
 */
export function setBit(bitmap: Uint8Array, index: number): boolean {
  const byte = Math.floor(index / 8)
  const mask = 1 << (index & 7)
  const old = bitmap[byte]
  if ((old & mask) !== 0) return false
  bitmap[byte] = old | mask
  return true
}

/** Set bits of one 32-bit word (the SWAR popcount). */
function wordBits(v: number): number {
  v = v - ((v >>> 1) & 0x55555555)
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333)
  return Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24
}

/** Set bits of one byte. */
function byteBits(v: number): number {
  v = v - ((v >>> 1) & 0x55)
  v = (v & 0x33) + ((v >>> 2) & 0x33)
  return (v + (v >>> 4)) & 0x0f
}

/**
 * @returns the number of set bits in `bitmap[start, end)` (the whole bitmap by default): by the
 *   arena's kernel (bitmap-ops.ts) for a view of an arena (piece by piece for a pieced bitmap),
 *   else counted four bytes at a time where
 *   the bytes are aligned.
 */
export function countSetBits(bitmap: Bitmap, start = 0, end = bitmap.length): number {
  if (!(bitmap instanceof Uint8Array)) {
    let count = 0
    for (const slice of bitmapSlices(bitmap, start, end)) count += countSetBits(slice)
    return count
  }
  return countArenaBits(bitmap, start, end) ?? countSetBitsLoop(bitmap, start, end)
}

/** {@link countSetBits} by the JavaScript loop, for any array (bench/bitmap-ops.mjs compares them). */
export function countSetBitsLoop(bitmap: Uint8Array, start = 0, end = bitmap.length): number {
  let count = 0
  let i = start
  while (i < end && ((bitmap.byteOffset + i) & 3) !== 0) count += byteBits(bitmap[i++])
  const words = Math.floor((end - i) / 4)
  if (words > 0) {
    const view = new Uint32Array(bitmap.buffer, bitmap.byteOffset + i, words)
    for (let w = 0; w < words; w++) count += wordBits(view[w])
    i += words * 4
  }
  while (i < end) count += byteBits(bitmap[i++])
  return count
}
