/**
 * One filter file (docs/FORMAT.md, version 1 or 2) decoded as its bytes arrive, in pieces of any
 * size: what a replica does with each record of a full-sync payload (sync-payload.ts). It checks
 * everything {@link decodeFilter} checks, in the same order, but never holds the file whole: each
 * header is validated before its bitmap is allocated, each bitmap is allocated once at its exact
 * size and filled as bytes come, its checksum computed as it fills. So a record's length that no
 * filter can have, a header announcing more than the record holds or more than the filter may
 * have, is refused before anything is allocated for it.
 *
 * The file's length is known up front (the record gives it): the decoder takes exactly that many
 * bytes and refuses a file whose own sizes do not add up to it.
 */
import type { Bitmap } from '../core/pieced-bitmap.js'
import type { LayerParts } from '../core/scalable-filter.js'
import { writeBitmap } from './bitmap-bytes.js'
import { type FilterRecord, sameHashing } from './codec.js'
import { type Checksum, crc32 } from './crc32.js'
import { DecodeError } from './decode-error.js'
import { decodeFileTrailer, decodeFileTrailerLength, fileTrailerLength, TRAILER_FIXED_BYTES } from './file-trailer.js'
import {
  chainedCrcStart,
  checksumLayerHeader,
  decodeLayerHeader,
  HEADER_BYTES,
  type LayerHeader,
  VERSION_1,
  VERSION_ORIGINAL,
} from './header.js'
import { filterProblem, MAX_NAME_BYTES, MAX_NAME_BYTES_V1 } from './limits.js'

/** The smallest file there is: one header, one byte of bitmap, a trailer with an empty name. */
export const MIN_FILE_BYTES = HEADER_BYTES + 1 + fileTrailerLength(0)

/** What one file may hold. */
export interface FileStreamLimits {
  /** Most bitmap bytes, all layers together; 0: no limit (as `max-filter-bytes 0`). */
  readonly maxBitmapBytes: number
  /** Longest name, in bytes. */
  readonly maxNameBytes: number
  /** Allocates a zeroed bitmap (core/bitmap.ts `allocateLayerBitmap`); a plain array by default. */
  readonly allocate?: (byteCount: number) => Bitmap
}

/**
 * Counts the set bits of some bytes (core/bitmap.ts `countSetBits`, which format/ may not import):
 * given, each layer's count is taken as its bytes arrive and handed on as `setBits` beside the
 * layer, so that building the filter need not scan the whole bitmap again in one go.
 */
export type BitCounter = (bytes: Uint8Array) => number

/** A decoded layer, with its count of set bits when a {@link BitCounter} was given. */
export type StreamedLayer = LayerParts & { setBits?: number }

/** Decodes one filter file of a known length from pieces: {@link write} them in order. */
export class FilterFileStream {
  private offset = 0
  private readonly header = new Uint8Array(HEADER_BYTES)
  private headerFill = 0
  private first: LayerHeader | undefined
  private current: LayerHeader | undefined
  private bitmap: Bitmap | undefined
  private bitmapFill = 0
  private crc = 0
  private bitmapBytes = 0
  private setBits = 0
  private readonly layers: StreamedLayer[] = []
  private trailer: Uint8Array[] | undefined
  private trailerFill = 0
  private record: FilterRecord | undefined

  /**
   * @param length the file's bytes (the record's length), checked by the caller against
   *   {@link MIN_FILE_BYTES} and its own bound
   * @param at the file's position in the payload, for messages
   */
  constructor(
    private readonly length: number,
    private readonly limits: FileStreamLimits,
    private readonly at = 0,
    private readonly checksum: Checksum = crc32,
    private readonly countBits?: BitCounter,
  ) {}

  /** Whether the whole file was taken and found valid: {@link result} is then ready. */
  get done(): boolean {
    return this.record !== undefined
  }

  /** The decoded filter (bitmaps are arrays of their own; the name is a copy). */
  result(): FilterRecord {
    if (this.record === undefined) throw new Error('the filter file is not complete')
    return this.record
  }

  /**
   * Takes bytes `chunk[start, end)`, at most what the file still lacks. Returns how many it took.
   * @throws DecodeError when the bytes so far cannot begin a valid file of this length
   */
  write(chunk: Uint8Array, start: number, end: number): number {
    let at = start
    while (at < end && this.offset < this.length) {
      const room = Math.min(end - at, this.length - this.offset)
      const taken =
        this.bitmap !== undefined
          ? this.takeBitmap(chunk, at, room)
          : this.trailer !== undefined
            ? this.takeTrailer(chunk, at, room)
            : this.takeHeader(chunk, at, room)
      at += taken
      this.offset += taken
    }
    if (this.offset === this.length && this.record === undefined) {
      throw new DecodeError(
        'corrupt',
        `the filter file at byte ${this.at} ends (${this.length} bytes) inside its own layers`,
      )
    }
    return at - start
  }

  private where(): number {
    return this.at + this.offset
  }

  private takeHeader(chunk: Uint8Array, at: number, room: number): number {
    const taken = Math.min(room, HEADER_BYTES - this.headerFill)
    this.header.set(chunk.subarray(at, at + taken), this.headerFill)
    this.headerFill += taken
    if (this.headerFill === HEADER_BYTES) this.startLayer(this.offset + taken - HEADER_BYTES)
    return taken
  }

  /** A whole header at file offset `offset`: checked, then its bitmap allocated. */
  private startLayer(offset: number): void {
    const header = decodeLayerHeader(this.header, 0, this.at + offset)
    const index = this.layers.length
    const first = this.first ?? header
    if (header.version === VERSION_ORIGINAL) {
      throw new DecodeError('corrupt', `byte ${this.at}: an original-library file, not a bfs file with its name`)
    }
    if (
      header.version !== first.version ||
      (header.layerIndex ?? index) !== index ||
      header.layerCount !== first.layerCount
    ) {
      throw new DecodeError(
        'corrupt',
        `header at byte ${this.at + offset} is not layer ${index} of ${first.layerCount}`,
      )
    }
    if (!sameHashing(header, first)) throw new DecodeError('corrupt', `layer ${index} hashes differently from layer 0`)
    const left = this.length - offset - HEADER_BYTES - fileTrailerLength(0)
    if (header.byteCount > left) {
      throw new DecodeError(
        'truncated',
        `layer ${index} needs ${header.byteCount} bitmap bytes, the file holds ${Math.max(0, left)} more`,
      )
    }
    const max = this.limits.maxBitmapBytes
    if (max > 0 && this.bitmapBytes + header.byteCount > max) {
      throw new DecodeError('corrupt', `filter at byte ${this.at} has more than ${max} bytes of bitmap`)
    }
    this.first = first
    this.current = header
    this.bitmapBytes += header.byteCount
    this.crc = checksumLayerHeader(this.header, this.checksum, 0, chainedCrcStart(first.version, this.crc))
    this.bitmap = allocate(header.byteCount, index, this.limits.allocate)
    this.bitmapFill = 0
    this.headerFill = 0
  }

  private takeBitmap(chunk: Uint8Array, at: number, room: number): number {
    const bitmap = this.bitmap!
    const taken = Math.min(room, bitmap.length - this.bitmapFill)
    const piece = chunk.subarray(at, at + taken)
    writeBitmap(bitmap, piece, this.bitmapFill)
    this.crc = this.checksum(piece, this.crc)
    if (this.countBits !== undefined) this.setBits += this.countBits(piece)
    this.bitmapFill += taken
    if (this.bitmapFill === bitmap.length) this.endLayer()
    return taken
  }

  private endLayer(): void {
    const header = this.current!
    const index = this.layers.length
    if (this.crc !== header.crc)
      throw new DecodeError('checksum', `layer ${index} of the filter at byte ${this.at}: checksum mismatch`)
    const layer: StreamedLayer = { ...header.layer, bitmap: this.bitmap! }
    if (this.countBits !== undefined) layer.setBits = this.setBits
    this.layers.push(layer)
    this.setBits = 0
    this.bitmap = undefined
    this.current = undefined
    if (this.layers.length === this.first!.layerCount) this.trailer = []
  }

  private takeTrailer(chunk: Uint8Array, at: number, room: number): number {
    const pieces = this.trailer!
    const before = this.trailerFill
    pieces.push(chunk.slice(at, at + room))
    this.trailerFill += room
    const trailerAt = this.offset - before
    const expected = this.length - trailerAt
    if (before < TRAILER_FIXED_BYTES && this.trailerFill >= TRAILER_FIXED_BYTES) {
      // The name's length, known from the fixed part, must be exactly what the record has left.
      const announced = decodeFileTrailerLength(
        concat(pieces, TRAILER_FIXED_BYTES),
        0,
        this.at + trailerAt,
        this.maxName(),
      )
      if (announced !== expected) {
        throw new DecodeError(
          'corrupt',
          `file trailer at byte ${this.at + trailerAt} is ${announced} bytes, the record has ${expected} left`,
        )
      }
    }
    if (this.trailerFill === expected) this.finish(concat(pieces, expected), trailerAt)
    return room
  }

  private maxName(): number {
    const ofVersion = this.first!.version === VERSION_1 ? MAX_NAME_BYTES_V1 : MAX_NAME_BYTES
    return Math.min(ofVersion, this.limits.maxNameBytes)
  }

  private finish(bytes: Uint8Array, trailerAt: number): void {
    const trailer = decodeFileTrailer(bytes, 0, this.checksum, this.at + trailerAt, this.maxName())
    const first = this.first!
    const problem = filterProblem(first.hashing, trailer.expansion, trailer.nonScaling, this.layers.length)
    if (problem !== undefined) throw new DecodeError('corrupt', `filter at byte ${this.at}: ${problem}`)
    this.trailer = undefined
    this.record = {
      name: trailer.name,
      parts: {
        hashing: first.hashing,
        expansion: trailer.expansion,
        nonScaling: trailer.nonScaling,
        layers: this.layers,
      },
    }
  }
}

/** A zeroed bitmap; one this engine cannot hold in one array is a DecodeError. */
function allocate(byteCount: number, layer: number, allocator?: (byteCount: number) => Bitmap): Bitmap {
  try {
    return allocator !== undefined ? allocator(byteCount) : new Uint8Array(byteCount)
  } catch (error) {
    if (error instanceof RangeError) {
      throw new DecodeError('corrupt', `layer ${layer} of ${byteCount} bytes cannot be allocated here`)
    }
    throw error
  }
}

/** The first `length` bytes of `pieces` as one array. */
function concat(pieces: readonly Uint8Array[], length: number): Uint8Array {
  if (pieces.length === 1 && pieces[0]!.length >= length) return pieces[0]!.subarray(0, length)
  const out = new Uint8Array(length)
  let at = 0
  for (const piece of pieces) {
    if (at >= length) break
    const part = piece.subarray(0, length - at)
    out.set(part, at)
    at += part.length
  }
  return out
}
