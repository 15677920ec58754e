/**
 * A layer's bitmap larger than one WebAssembly memory (or one typed array: Node 20 caps both at
 * 4 GiB): consecutive pieces of `pieceBytes` bytes each (the last one shorter), each a view of a
 * memory of its own (arena.ts `allocatePieces`). Byte `i` of the bitmap is byte
 * `i mod pieceBytes` of piece `floor(i / pieceBytes)`; bit positions are RedisBloom's over the
 * whole bitmap, so SCANDUMP chunks, files and CRCs are the bytes of one array of that length.
 *
 * Everything that reads or writes a layer's bytes takes a {@link Bitmap} and goes through the
 * functions here ({@link bitmapSlices}, {@link bitmapRange}, {@link writeBitmap}), which serve a
 * plain array and a pieced bitmap alike (format/, which imports only core's types, has the same
 * three in format/bitmap-bytes.ts over the class's methods). Pure: no arena, no I/O.
 */

/** A layer's bitmap: one array, or pieces. */
export type Bitmap = Uint8Array | PiecedBitmap

/** Pieces are whole cache lines (the kernels read 32-bit words, RedisBloom layers 64-bit ones). */
export const PIECE_ALIGN = 64

/**
 * A layer's bitmap in consecutive pieces of {@link PiecedBitmap.pieceBytes} bytes (the last one
 * shorter): what a layer larger than one WebAssembly memory holds, and what `toParts()` hands out
 * for it. Read it with {@link PiecedBitmap.slices} (views in order) rather than as one array.
 */
export class PiecedBitmap {
  /** Bytes of the whole bitmap. */
  readonly length: number

  /**
   * @throws RangeError when `pieceBytes` is not a positive multiple of {@link PIECE_ALIGN}, or a
   *   piece other than the last is not `pieceBytes` long, or the last is empty or longer
   */
  constructor(
    readonly pieces: readonly Uint8Array[],
    readonly pieceBytes: number,
  ) {
    if (!Number.isSafeInteger(pieceBytes) || pieceBytes <= 0 || pieceBytes % PIECE_ALIGN !== 0) {
      throw new RangeError(`bad piece size ${pieceBytes}`)
    }
    if (pieces.length === 0) throw new RangeError('a pieced bitmap needs a piece')
    let length = 0
    pieces.forEach((piece, i) => {
      const last = i === pieces.length - 1
      if (last ? piece.length === 0 || piece.length > pieceBytes : piece.length !== pieceBytes) {
        throw new RangeError(`piece ${i} of ${piece.length} bytes in pieces of ${pieceBytes}`)
      }
      length += piece.length
    })
    this.length = length
  }

  /** Same as {@link length}, as a typed array has it. */
  get byteLength(): number {
    return this.length
  }

  /** Byte `index` (below {@link length}). */
  byteAt(index: number): number {
    const p = Math.floor(index / this.pieceBytes)
    return this.pieces[p]![index - p * this.pieceBytes]!
  }

  /** Views of bytes `[start, end)`, in order, one per piece they lie in. */
  slices(start = 0, end = this.length): Uint8Array[] {
    const slices: Uint8Array[] = []
    const size = this.pieceBytes
    for (let at = start; at < end;) {
      const p = Math.floor(at / size)
      const from = at - p * size
      const to = Math.min(end - p * size, this.pieces[p]!.length)
      slices.push(this.pieces[p]!.subarray(from, to))
      at += to - from
    }
    return slices
  }

  /**
   * Copies `data` in from byte `offset`, across pieces.
   * @throws RangeError when it does not fit
   */
  write(data: Uint8Array, offset: number): void {
    if (offset < 0 || offset + data.length > this.length) {
      throw new RangeError(`${data.length} bytes at ${offset} do not fit a bitmap of ${this.length}`)
    }
    let at = 0
    for (const slice of this.slices(offset, offset + data.length)) {
      slice.set(data.subarray(at, at + slice.length))
      at += slice.length
    }
  }

  /** Sets byte `index` to `value`. */
  setByteAt(index: number, value: number): void {
    const p = Math.floor(index / this.pieceBytes)
    this.pieces[p]![index - p * this.pieceBytes] = value
  }
}

/** Bytes of a bitmap. */
export function bitmapLength(bitmap: Bitmap): number {
  return bitmap.length
}

/**
 * Views of `bitmap[start, end)`, in order, split where pieces meet (one view for an array, or a
 * range inside one piece; all of an array is the array itself). Writing into them writes the bitmap.
 */
export function bitmapSlices(bitmap: Bitmap, start = 0, end = bitmap.length): Uint8Array[] {
  if (!(bitmap instanceof Uint8Array)) return bitmap.slices(start, end)
  return [start === 0 && end === bitmap.length ? bitmap : bitmap.subarray(start, end)]
}

/**
 * `bitmap[start, end)` as one array to read: a view where the range lies in one array or piece,
 * else a copy (a SCANDUMP chunk across two pieces). Never written through.
 */
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

/**
 * Copies `data` into `bitmap` from byte `offset`, across pieces.
 * @throws RangeError when it does not fit
 */
export function writeBitmap(bitmap: Bitmap, data: Uint8Array, offset: number): void {
  if (bitmap instanceof Uint8Array) bitmap.set(data, offset)
  else bitmap.write(data, offset)
}

/** A copy of the whole bitmap, in the same shape (pieces stay pieces, as plain arrays). */
export function copyBitmap(bitmap: Bitmap): Bitmap {
  if (bitmap instanceof Uint8Array) return bitmap.slice()
  return new PiecedBitmap(
    bitmap.pieces.map((piece) => piece.slice()),
    bitmap.pieceBytes,
  )
}

/** Byte `index` of a bitmap. */
export function bitmapByte(bitmap: Bitmap, index: number): number {
  return bitmap instanceof Uint8Array ? bitmap[index]! : bitmap.byteAt(index)
}
