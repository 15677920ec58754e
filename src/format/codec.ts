/**
 * The bfs filter file, whole: `encodeFilter` and `decodeFilter` side by side.
 *
 * A file is, little-endian throughout (docs/FORMAT.md has the full tables):
 * ```
 * layer 0:  64-byte header (header.ts) + bitmap     ← a reader of the original layout reads this
 * layer 1:  64-byte header + bitmap
 * ...
 * trailer:  magic "BFST", flags, expansion, name length, name, CRC-32   (file-trailer.ts)
 * ```
 * Version 1 holds up to 64 layers and names up to 64 KiB; version 2, written only for a filter
 * past either, holds up to 65535 layers and names up to 4 GiB - 1. A file written by the original
 * C library (one header with version byte 0, then its bitmap, nothing after) decodes too.
 */
import type { Bitmap } from '../core/pieced-bitmap.js'
import type { FilterParts, LayerParts } from '../core/scalable-filter.js'
import { bitmapSlices } from './bitmap-bytes.js'
import { type Checksum, crc32 } from './crc32.js'
import { DecodeError } from './decode-error.js'
import {
  decodeFileTrailer,
  decodeFileTrailerLength,
  encodeFileTrailer,
  fileTrailerLength,
  TRAILER_FIXED_BYTES,
} from './file-trailer.js'
import {
  chainedCrcStart,
  checksumLayerHeader,
  decodeLayerHeader,
  encodeLayerHeader,
  HEADER_BYTES,
  type LayerHeader,
  VERSION_1,
  VERSION_2,
  VERSION_ORIGINAL,
  writeLayerChecksum,
} from './header.js'
import { filterProblem, layerProblem, MAX_LAYERS_V1, MAX_NAME_BYTES, MAX_NAME_BYTES_V1 } from './limits.js'

/** A named filter as stored in one file. */
export interface FilterRecord {
  /** The filter's name (its Redis key): arbitrary bytes. */
  name: Uint8Array
  /** The filter itself. */
  parts: FilterParts
}

/**
 * Returns why `record` cannot be encoded, or `undefined` when it can: every limit in limits.ts, and
 * each layer's `bitmap.length === bitCount / 8`. What {@link encodeFilter} throws as a `RangeError`;
 * the snapshot checks it before it writes anything.
 */
export function recordProblem(record: FilterRecord): string | undefined {
  const { name, parts } = record
  const problem = filterProblem(parts.hashing, parts.expansion, parts.nonScaling, parts.layers.length)
  if (problem !== undefined) return problem
  if (name.length > MAX_NAME_BYTES) return `name of ${name.length} bytes exceeds ${MAX_NAME_BYTES}`
  for (let i = 0; i < parts.layers.length; i++) {
    const layer = parts.layers[i]!
    const layerIssue = layerProblem(layer)
    if (layerIssue !== undefined) return `layer ${i}: ${layerIssue}`
    if (layer.bitmap.length !== layer.bitCount / 8) {
      return `layer ${i}: bitmap of ${layer.bitmap.length} bytes for ${layer.bitCount} bits`
    }
  }
  return undefined
}

/**
 * The version a filter of `layerCount` layers named by `nameBytes` bytes is written in: 1 when it
 * fits version 1's limits (64 layers, 64 KiB of name), so that older bfs still read it; else 2.
 */
export function fileVersionFor(layerCount: number, nameBytes: number): typeof VERSION_1 | typeof VERSION_2 {
  return layerCount <= MAX_LAYERS_V1 && nameBytes <= MAX_NAME_BYTES_V1 ? VERSION_1 : VERSION_2
}

/**
 * Returns the exact size in bytes of `encodeFilter(record)`: 64 + bitmap bytes per layer, plus
 * 20 + name bytes for the trailer. Does not validate.
 */
export function encodedLength(record: FilterRecord): number {
  let total = fileTrailerLength(record.name.length)
  for (const layer of record.parts.layers) total += HEADER_BYTES + layer.bitCount / 8
  return total
}

/**
 * Encodes a filter as a file of {@link fileVersionFor}'s version, returned as pieces to write in order: for each layer its
 * 64-byte header and then its bitmap (the layer's own array, not a copy), then the trailer.
 * `checksum` computes the CRC-32s (this module's pure one by default; Node's `zlib.crc32` gives the
 * same values). Checksumming reads every bitmap once, synchronously; to write a very large filter
 * without blocking, use the pieces instead: `encodeLayerHeader` → `checksumLayerHeader` →
 * `checksum(slice, crc)` over bitmap slices → `writeLayerChecksum`, then `encodeFileTrailer`
 * (header.ts `encodeLayerHeader` shows the loop, chained checksums included).
 * `version` is {@link fileVersionFor}'s unless given (2 is always possible; 1 only within its limits).
 * Throws `RangeError` when the record breaks a limit (see limits.ts), a bitmap's length is not
 * `bitCount / 8`, or version 1 is asked for a filter past its limits.
 */
export function encodeFilter(
  record: FilterRecord,
  checksum: Checksum = crc32,
  version = fileVersionFor(record.parts.layers.length, record.name.length),
): Uint8Array[] {
  const problem = recordProblem(record)
  if (problem !== undefined) throw new RangeError(problem)
  const { parts } = record
  if (version === VERSION_1 && fileVersionFor(parts.layers.length, record.name.length) !== VERSION_1) {
    throw new RangeError('version 1 holds at most 64 layers and a name of 64 KiB')
  }
  const pieces: Uint8Array[] = []
  let crc = 0
  parts.layers.forEach((layer, i) => {
    const header = encodeLayerHeader(layer, parts.hashing, i, parts.layers.length, version)
    const slices = bitmapSlices(layer.bitmap)
    crc = checksumLayerHeader(header, checksum, 0, chainedCrcStart(version, crc))
    for (const slice of slices) crc = checksum(slice, crc)
    writeLayerChecksum(header, crc)
    pieces.push(header, ...slices)
  })
  const { expansion, nonScaling } = parts
  pieces.push(encodeFileTrailer({ name: record.name, expansion, nonScaling }, checksum))
  return pieces
}

/** Whether two layer headers hash alike (same scheme; same seed for `seeded`): every layer of a file must. */
export function sameHashing(a: LayerHeader, b: LayerHeader): boolean {
  if (a.hashing.kind === 'seeded' && b.hashing.kind === 'seeded') return a.hashing.seed === b.hashing.seed
  return a.hashing.kind === b.hashing.kind
}

/**
 * Where {@link decodeFilter} reads a file's bytes: one array, or a file read piece by piece
 * (store/filter-file.ts), so that no single array has to hold the whole file.
 */
export interface ByteSource {
  /** Total bytes. */
  readonly length: number
  /**
   * Bytes `[offset, offset + length)`, within the source: a view or a fresh array, which the
   * decoded filter may keep (bitmaps are not copied again).
   */
  read(offset: number, length: number): Uint8Array
  /** A layer's bitmap (the source may place it where the core wants bitmaps); {@link read} when absent. */
  readBitmap?(offset: number, length: number): Bitmap
}

/** An array as a {@link ByteSource}: reads are views into it. */
function arraySource(bytes: Uint8Array): ByteSource {
  return { length: bytes.length, read: (offset, length) => bytes.subarray(offset, offset + length) }
}

/**
 * Decodes a whole file: a bfs v1 or v2 file, or an original-library file (which becomes a non-scaling,
 * single-layer filter with `seeded` hashing, expansion 0 and an empty name). Every size is checked
 * against the source's length before anything is read or allocated, and every checksum is
 * verified. From an array, the returned bitmaps are views into it (no copy), so the caller must
 * not reuse it; from a file each bitmap is read into its own array. The name is a copy.
 *
 * Throws {@link DecodeError}: `bad-magic` (not a filter file), `unknown-version` (a header's version
 * byte is not 0, 1 or 2; the message names it), `truncated` (the bytes end early), `checksum`
 * (a layer's or the trailer's CRC-32 does not match), `corrupt` (inconsistent or absurd fields,
 * layers out of order, mixed hashing or versions, bytes after the end).
 */
export function decodeFilter(bytes: Uint8Array | ByteSource, checksum: Checksum = crc32): FilterRecord {
  const source = bytes instanceof Uint8Array ? arraySource(bytes) : bytes
  const total = source.length
  const headerAt = (offset: number): Uint8Array =>
    source.read(offset, Math.min(HEADER_BYTES, Math.max(0, total - offset)))
  const firstHeader = headerAt(0)
  const first = decodeLayerHeader(firstHeader, 0)
  if (first.version === VERSION_ORIGINAL) return decodeOriginalFile(source, first)

  const layers: LayerParts[] = []
  let offset = 0
  let crc = 0
  for (let i = 0; i < first.layerCount; i++) {
    const headerBytes = i === 0 ? firstHeader : headerAt(offset)
    const header = i === 0 ? first : decodeLayerHeader(headerBytes, 0, offset)
    const index = header.layerIndex ?? i // version 2 has no index: its chained checksums fix the order
    if (header.version !== first.version || index !== i || header.layerCount !== first.layerCount) {
      throw new DecodeError('corrupt', `header at byte ${offset} is not layer ${i} of ${first.layerCount}`)
    }
    if (!sameHashing(header, first)) throw new DecodeError('corrupt', `layer ${i} hashes differently from layer 0`)
    const start = offset + HEADER_BYTES
    const end = start + header.byteCount
    if (end > total) {
      const left = total - start
      throw new DecodeError('truncated', `layer ${i} needs ${header.byteCount} bitmap bytes, ${left} left`)
    }
    const bitmap = readBitmap(source, start, header.byteCount, i)
    crc = checksumLayerHeader(headerBytes, checksum, 0, chainedCrcStart(first.version, crc))
    for (const slice of bitmapSlices(bitmap)) crc = checksum(slice, crc)
    if (crc !== header.crc) throw new DecodeError('checksum', `layer ${i}: checksum mismatch`)
    layers.push({ ...header.layer, bitmap })
    offset = end
  }
  // The trailer's length comes from its fixed part, checked against what is left before it is read.
  const rest = total - offset
  const maxName = first.version === VERSION_1 ? MAX_NAME_BYTES_V1 : MAX_NAME_BYTES
  const trailerLength = decodeFileTrailerLength(
    source.read(offset, Math.min(TRAILER_FIXED_BYTES, rest)),
    0,
    offset,
    maxName,
  )
  if (rest < trailerLength) throw new DecodeError('truncated', `file trailer at byte ${offset} is cut short`)
  if (rest > trailerLength) throw new DecodeError('corrupt', `${rest - trailerLength} bytes follow the file trailer`)
  const trailer = decodeFileTrailer(source.read(offset, trailerLength), 0, checksum, offset, maxName)
  const problem = filterProblem(first.hashing, trailer.expansion, trailer.nonScaling, layers.length)
  if (problem !== undefined) throw new DecodeError('corrupt', problem)
  return {
    name: trailer.name,
    parts: { hashing: first.hashing, expansion: trailer.expansion, nonScaling: trailer.nonScaling, layers },
  }
}

/** A layer's bitmap; one this JavaScript engine cannot hold in one array is a DecodeError. */
function readBitmap(source: ByteSource, start: number, byteCount: number, layer: number): Bitmap {
  try {
    return source.readBitmap !== undefined ? source.readBitmap(start, byteCount) : source.read(start, byteCount)
  } catch (error) {
    if (error instanceof RangeError) {
      throw new DecodeError('corrupt', `layer ${layer} of ${byteCount} bytes cannot be allocated here`)
    }
    throw error
  }
}

function decodeOriginalFile(source: ByteSource, header: LayerHeader): FilterRecord {
  const end = HEADER_BYTES + header.byteCount
  if (end > source.length) {
    throw new DecodeError('truncated', `bitmap needs ${header.byteCount} bytes, ${source.length - HEADER_BYTES} left`)
  }
  if (end < source.length) throw new DecodeError('corrupt', `${source.length - end} bytes follow the bitmap`)
  return {
    name: new Uint8Array(0),
    parts: {
      hashing: header.hashing,
      expansion: 0,
      nonScaling: true,
      layers: [{ ...header.layer, bitmap: readBitmap(source, HEADER_BYTES, header.byteCount, 0) }],
    },
  }
}
