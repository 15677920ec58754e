/**
 * Copy-on-write of one layer's bitmap, for a point-in-time capture (registry-capture.ts): the
 * capture reads the live bitmap front to back, and until it has read a piece, a write into that
 * piece first saves the piece as it was. The capture thus reads the bitmap as it was at the
 * capture, while the filter keeps taking writes, and nothing is copied that no write touches.
 *
 * The layer learns of it through its `writeGuard` (core/bloom-layer.ts), which is null whenever
 * no capture is reading the layer: a write then costs one field check more.
 */
import { type Bitmap, bitmapRange, bitmapSlices } from '../core/pieced-bitmap.js'
import type { BloomLayer, WriteGuard } from '../core/bloom-layer.js'

/**
 * The unit of copy-on-write: a write saves the 4 KiB piece around each byte it changes (a page,
 * as a forked redis-server copies), so that an add during a capture copies at most k pages.
 */
export const COPY_PIECE_BYTES = 4 * 1024

/**
 * Saved pieces are cut from arrays of this size, filled in the order pieces are saved: a few
 * large allocations instead of one per piece, whose memory is touched only as pieces fill it.
 */
const SLAB_BYTES = 1024 * 1024

/** `visit` with the live bytes `[start, end)` of a bitmap, a view per piece they lie in. */
function visitLive(bitmap: Bitmap, start: number, end: number, visit: (bytes: Uint8Array) => void): void {
  for (const bytes of bitmapSlices(bitmap, start, end)) visit(bytes)
}

/** Copies watching a layer now, of every capture. */
let attachedCopies = 0
let captureHook: (() => void) | undefined

/**
 * `hook` runs as a capture begins, before it reads any filter: server/thread-plane.ts stops the
 * other threads' adds there and counts them in, so that the capture is of one point. Undefined: none.
 */
export function beforeCaptures(hook: (() => void) | undefined): void {
  captureHook = hook
}

/** A capture begins (store/snapshot-save.ts planSave, registry-capture.ts captureRegistry). */
export function captureBegins(): void {
  captureHook?.()
}

/** Whether a capture still reads a layer through a copy (writes must tell it first). */
export function copiesAttached(): boolean {
  return attachedCopies > 0
}

/** The guard a layer holds: every capture still reading it (usually one). */
class LayerGuard implements WriteGuard {
  readonly copies: LayerCopy[] = []

  beforeWrite(start: number, end: number): void {
    for (const copy of this.copies) copy.save(start, end)
  }
}

/** One capture's view of one layer: the bitmap as it was when the capture was taken. */
export class LayerCopy {
  readonly byteLength: number
  /** Pieces saved before a write changed them, by index; only pieces not wholly read yet. */
  private readonly saved = new Map<number, Uint8Array>()
  /** Bytes below this are read for good (sent): writes there no longer save anything. */
  private readEnd = 0
  private attached = true
  /** Where the next saved piece goes: the rest of the current slab. */
  private slab = new Uint8Array(0)
  private slabFill = 0

  /** Starts watching `layer` (its numbers are the caller's to capture). */
  constructor(private readonly layer: BloomLayer) {
    this.byteLength = layer.bitmap.length
    const guard = layer.writeGuard instanceof LayerGuard ? layer.writeGuard : new LayerGuard()
    guard.copies.push(this)
    layer.writeGuard = guard
    attachedCopies++
  }

  /** Saves the pieces of `[start, end)` that are not read yet and not saved yet. */
  save(start: number, end: number): void {
    const bitmap = this.layer.bitmap
    const last = Math.floor((end - 1) / COPY_PIECE_BYTES)
    for (let piece = Math.floor(start / COPY_PIECE_BYTES); piece <= last; piece++) {
      const pieceStart = piece * COPY_PIECE_BYTES
      if (pieceStart + COPY_PIECE_BYTES <= this.readEnd || this.saved.has(piece)) continue
      this.saved.set(
        piece,
        this.keep(bitmapRange(bitmap, pieceStart, Math.min(pieceStart + COPY_PIECE_BYTES, bitmap.length))),
      )
    }
  }

  /** A copy of `bytes` in the current slab (a new slab when it is full). */
  private keep(bytes: Uint8Array): Uint8Array {
    if (this.slabFill + bytes.length > this.slab.length) {
      this.slab = new Uint8Array(Math.min(SLAB_BYTES, this.byteLength))
      this.slabFill = 0
    }
    const copy = this.slab.subarray(this.slabFill, this.slabFill + bytes.length)
    copy.set(bytes)
    this.slabFill += bytes.length
    return copy
  }

  /**
   * Calls `visit` with the captured bytes of `[start, end)` in order, as views (of the live
   * bitmap where no write came, of saved pieces elsewhere): use them before returning.
   */
  visit(start: number, end: number, visit: (bytes: Uint8Array) => void): void {
    const bitmap = this.layer.bitmap
    if (this.saved.size === 0) {
      if (end > start) visitLive(bitmap, start, end, visit)
      return
    }
    let live = start // start of the run of live bytes not visited yet
    for (let at = start; at < end;) {
      const piece = Math.floor(at / COPY_PIECE_BYTES)
      const pieceStart = piece * COPY_PIECE_BYTES
      const stop = Math.min(pieceStart + COPY_PIECE_BYTES, end)
      const saved = this.saved.get(piece)
      if (saved !== undefined) {
        if (at > live) visitLive(bitmap, live, at, visit)
        visit(saved.subarray(at - pieceStart, stop - pieceStart))
        live = stop
      }
      at = stop
    }
    if (end > live) visitLive(bitmap, live, end, visit)
  }

  /** Records that bytes below `end` are read for good: their saved pieces go. */
  readTo(end: number): void {
    for (let piece = Math.floor(this.readEnd / COPY_PIECE_BYTES); (piece + 1) * COPY_PIECE_BYTES <= end; piece++) {
      this.saved.delete(piece)
    }
    this.readEnd = end
    if (end >= this.byteLength) this.detach()
  }

  /** Bytes held in saved pieces (for tests and reports). */
  get savedBytes(): number {
    let total = 0
    for (const piece of this.saved.values()) total += piece.length
    return total
  }

  /** Stops watching the layer and drops the saved pieces. Idempotent. */
  detach(): void {
    if (!this.attached) return
    this.attached = false
    attachedCopies--
    this.saved.clear()
    this.slab = new Uint8Array(0)
    const guard = this.layer.writeGuard
    if (!(guard instanceof LayerGuard)) return
    const index = guard.copies.indexOf(this)
    if (index >= 0) guard.copies.splice(index, 1)
    if (guard.copies.length === 0) this.layer.writeGuard = null
  }
}
