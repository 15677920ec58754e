/**
 * A layer's bytes, whether one array or pieces (core/pieced-bitmap.ts, whose functions these
 * are: format/ imports only core's types, so it reaches the pieces through the class's methods).
 */
import type { Bitmap } from '../core/pieced-bitmap.js'

/** Views of `bitmap[start, end)` in order, one per piece (all of an array: the array itself). */
export function bitmapSlices(bitmap: Bitmap, start = 0, end = bitmap.length): Uint8Array[] {
  if (!(bitmap instanceof Uint8Array)) return bitmap.slices(start, end)
  return [start === 0 && end === bitmap.length ? bitmap : bitmap.subarray(start, end)]
}

/** `bitmap[start, end)` to read: a view inside one array or piece, else a copy. */
export function bitmapRange(bitmap: Bitmap, start: number, end: number): Uint8Array {
  const slices = bitmapSlices(bitmap, start, end)
  if (slices.length === 1) return slices[0]!
  const copy = new Uint8Array(end - start)
  let at = 0
  for (const slice of slices) {
    copy.set(slice, at)
    at += slice.length
  }
  return copy
}

/** Copies `data` into `bitmap` from byte `offset`, across pieces (RangeError when it does not fit). */
export function writeBitmap(bitmap: Bitmap, data: Uint8Array, offset: number): void {
  if (bitmap instanceof Uint8Array) bitmap.set(data, offset)
  else bitmap.write(data, offset)
}
