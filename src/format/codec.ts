/**
 * The bfs filter file, whole: `encodeFilter` and `decodeFilter` side by side.
 *
 * A v1 file is, little-endian throughout (docs/FORMAT.md has the full tables):
 * ```
 * layer 0:  64-byte header (header.ts) + bitmap     ← a reader of the original layout reads this
 * layer 1:  64-byte header + bitmap
 * ...
 * trailer:  magic "BFST", flags, expansion, name length, name, CRC-32   (file-trailer.ts)
 * ```
 * A file written by the original C library (one header with version byte 0, then its bitmap,
 * nothing after) decodes too.
 */
import type { FilterParts, LayerParts } from '../core/scalable-filter.js'
import { type Checksum, crc32 } from './crc32.js'
import { DecodeError } from './decode-error.js'
import { decodeFileTrailer, encodeFileTrailer, fileTrailerLength } from './file-trailer.js'
import {
  checksumLayerHeader,
  decodeLayerHeader,
  encodeLayerHeader,
  HEADER_BYTES,
  type LayerHeader,
  VERSION_ORIGINAL,
  writeLayerChecksum,
} from './header.js'
import { filterProblem, layerProblem, MAX_NAME_BYTES } from './limits.js'

/** A named filter as stored in one file. */
export interface FilterRecord {
  /** The filter's name (its Redis key): arbitrary bytes, at most 64 KiB. */
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
 * Returns the exact size in bytes of `encodeFilter(record)`: 64 + bitmap bytes per layer, plus
 * 20 + name bytes for the trailer. Does not validate.
 */
export function encodedLength(record: FilterRecord): number {
  let total = fileTrailerLength(record.name.length)
  for (const layer of record.parts.layers) total += HEADER_BYTES + layer.bitCount / 8
  return total
}

/**
 * Encodes a filter as a v1 file, returned as pieces to write in order: for each layer its
 * 64-byte header and then its bitmap (the layer's own array, not a copy), then the trailer.
 * `checksum` computes the CRC-32s (this module's pure one by default; Node's `zlib.crc32` gives the
 * same values). Checksumming reads every bitmap once, synchronously; to write a very large filter
 * without blocking, use the pieces instead: `encodeLayerHeader` → `checksumLayerHeader` →
 * `checksum(slice, crc)` over bitmap slices → `writeLayerChecksum`, then `encodeFileTrailer`.
 * Throws `RangeError` when the record breaks a limit (see limits.ts) or a bitmap's length is not
 * `bitCount / 8`.
 */
export function encodeFilter(record: FilterRecord, checksum: Checksum = crc32): Uint8Array[] {
  const problem = recordProblem(record)
  if (problem !== undefined) throw new RangeError(problem)
  const { parts } = record
  const pieces: Uint8Array[] = []
  parts.layers.forEach((layer, i) => {
    const header = encodeLayerHeader(layer, parts.hashing, i, parts.layers.length)
    writeLayerChecksum(header, checksum(layer.bitmap, checksumLayerHeader(header, checksum)))
    pieces.push(header, layer.bitmap)
  })
  const { expansion, nonScaling } = parts
  pieces.push(encodeFileTrailer({ name: record.name, expansion, nonScaling }, checksum))
  return pieces
}

function sameHashing(a: LayerHeader, b: LayerHeader): boolean {
  if (a.hashing.kind === 'seeded' && b.hashing.kind === 'seeded') return a.hashing.seed === b.hashing.seed
  return a.hashing.kind === b.hashing.kind
}

/**
 * Decodes a whole file: a bfs v1 file, or an original-library file (which becomes a non-scaling,
 * single-layer filter with `seeded` hashing, expansion 0 and an empty name). Every size is checked
 * against `bytes.length` before anything is sliced, and every checksum is verified. The returned
 * bitmaps are views into `bytes` (no copy), so the caller must not reuse `bytes`; the name is a copy.
 *
 * Throws {@link DecodeError}: `bad-magic` (not a filter file), `unknown-version` (a header's version
 * byte is neither 0 nor 1; the message names it), `truncated` (the bytes end early), `checksum`
 * (a layer's or the trailer's CRC-32 does not match), `corrupt` (inconsistent or absurd fields,
 * layers out of order, mixed hashing or versions, bytes after the end).
 */
export function decodeFilter(bytes: Uint8Array, checksum: Checksum = crc32): FilterRecord {
  const first = decodeLayerHeader(bytes, 0)
  if (first.version === VERSION_ORIGINAL) return decodeOriginalFile(bytes, first)

  const layers: LayerParts[] = []
  let offset = 0
  for (let i = 0; i < first.layerCount; i++) {
    const header = i === 0 ? first : decodeLayerHeader(bytes, offset)
    if (header.version !== first.version || header.layerIndex !== i || header.layerCount !== first.layerCount) {
      throw new DecodeError('corrupt', `header at byte ${offset} is not layer ${i} of ${first.layerCount}`)
    }
    if (!sameHashing(header, first)) throw new DecodeError('corrupt', `layer ${i} hashes differently from layer 0`)
    const start = offset + HEADER_BYTES
    const end = start + header.byteCount
    if (end > bytes.length) {
      const left = bytes.length - start
      throw new DecodeError('truncated', `layer ${i} needs ${header.byteCount} bitmap bytes, ${left} left`)
    }
    const bitmap = bytes.subarray(start, end)
    if (checksum(bitmap, checksumLayerHeader(bytes, checksum, offset)) !== header.crc) {
      throw new DecodeError('checksum', `layer ${i}: checksum mismatch`)
    }
    layers.push({ ...header.layer, bitmap })
    offset = end
  }
  const trailer = decodeFileTrailer(bytes, offset, checksum)
  const problem = filterProblem(first.hashing, trailer.expansion, trailer.nonScaling, layers.length)
  if (problem !== undefined) throw new DecodeError('corrupt', problem)
  return {
    name: trailer.name,
    parts: { hashing: first.hashing, expansion: trailer.expansion, nonScaling: trailer.nonScaling, layers },
  }
}

function decodeOriginalFile(bytes: Uint8Array, header: LayerHeader): FilterRecord {
  const end = HEADER_BYTES + header.byteCount
  if (end > bytes.length) {
    throw new DecodeError('truncated', `bitmap needs ${header.byteCount} bytes, ${bytes.length - HEADER_BYTES} left`)
  }
  if (end < bytes.length) throw new DecodeError('corrupt', `${bytes.length - end} bytes follow the bitmap`)
  return {
    name: new Uint8Array(0),
    parts: {
      hashing: header.hashing,
      expansion: 0,
      nonScaling: true,
      layers: [{ ...header.layer, bitmap: bytes.subarray(HEADER_BYTES, end) }],
    },
  }
}
