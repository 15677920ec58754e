/**
 * The file-level part of a bfs v1 or v2 file (the same layout in both): the filter's name and the options a reload must restore.
 * It follows the last layer, so that a file still starts with a 64-byte header a reader of the
 * original layout understands.
 *
 * Layout (little-endian), 20 + nameLength bytes:
 * ```
 *  0       u32  magic 0x54534642, the bytes 42 46 53 54 "BFST"
 *  4       u32  flags: bit 0 non-scaling; all other bits zero
 *  8       u32  expansion
 * 12       u32  nameLength (at most 64 KiB in a version 1 file)
 * 16       ...  name: nameLength bytes, any binary
 * 16 + n   u32  CRC-32 of bytes 0 .. 16 + n of the trailer
 * ```
 */
import { type Checksum, crc32 } from './crc32.js'
import { DecodeError } from './decode-error.js'
import { MAX_EXPANSION, MAX_NAME_BYTES, MAX_NAME_BYTES_V1 } from './limits.js'

/** The trailer magic, read as a little-endian u32: the bytes `42 46 53 54`, "BFST". */
export const TRAILER_MAGIC = 0x54534642

/** Bytes of the trailer before the name: magic, flags, expansion, nameLength. */
export const TRAILER_FIXED_BYTES = 16

/** Bytes of the checksum that ends the trailer. */
export const TRAILER_CRC_BYTES = 4

/** Trailer flag bit: the filter never adds layers. */
export const TRAILER_FLAG_NON_SCALING = 0x01

/** What the trailer carries. */
export interface FileTrailer {
  /** The filter's name (a Redis key): arbitrary bytes, at most {@link MAX_NAME_BYTES}. */
  readonly name: Uint8Array
  /** Growth factor of each new layer's capacity; 0 allowed only for a non-scaling filter. */
  readonly expansion: number
  /** True when the filter never adds layers. */
  readonly nonScaling: boolean
}

/** Returns the encoded size of a trailer carrying a name of `nameBytes` bytes. */
export function fileTrailerLength(nameBytes: number): number {
  return TRAILER_FIXED_BYTES + nameBytes + TRAILER_CRC_BYTES
}

/**
 * Encodes the trailer, checksum included. Throws `RangeError` when the name is longer than
 * {@link MAX_NAME_BYTES} or expansion is not a u32. A name over 64 KiB needs a version 2 file: the
 * caller (codec.ts `fileVersionFor`) chooses the headers' version.
 */
export function encodeFileTrailer(trailer: FileTrailer, checksum: Checksum = crc32): Uint8Array {
  const { name, expansion, nonScaling } = trailer
  if (name.length > MAX_NAME_BYTES) throw new RangeError(`name of ${name.length} bytes exceeds ${MAX_NAME_BYTES}`)
  if (!Number.isInteger(expansion) || expansion < 0 || expansion > MAX_EXPANSION) {
    throw new RangeError(`expansion ${expansion} is not a u32`)
  }
  const out = new Uint8Array(fileTrailerLength(name.length))
  const view = new DataView(out.buffer)
  view.setUint32(0, TRAILER_MAGIC, true)
  view.setUint32(4, nonScaling ? TRAILER_FLAG_NON_SCALING : 0, true)
  view.setUint32(8, expansion, true)
  view.setUint32(12, name.length, true)
  out.set(name, TRAILER_FIXED_BYTES)
  const end = TRAILER_FIXED_BYTES + name.length
  view.setUint32(end, checksum(out.subarray(0, end), 0), true)
  return out
}

/**
 * Reads the fixed 16 bytes of a trailer at `bytes[offset..]` and returns the trailer's whole length
 * (`20 + nameLength`), so a streaming reader can check it against the file's size first.
 * Throws {@link DecodeError}: `truncated` (fewer than 16 bytes), `corrupt` (wrong trailer magic,
 * unknown flags, a name longer than `maxNameBytes`: 64 KiB, the version 1 limit, by default).
 */
export function decodeFileTrailerLength(
  bytes: Uint8Array,
  offset = 0,
  at = offset,
  maxNameBytes = MAX_NAME_BYTES_V1,
): number {
  if (bytes.length - offset < TRAILER_FIXED_BYTES) {
    throw new DecodeError('truncated', `file trailer at byte ${at} is cut short`)
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, TRAILER_FIXED_BYTES)
  const fail = (why: string) => new DecodeError('corrupt', `file trailer at byte ${at}: ${why}`)
  if (view.getUint32(0, true) !== TRAILER_MAGIC) throw fail('bad trailer magic')
  const flags = view.getUint32(4, true)
  if ((flags & ~TRAILER_FLAG_NON_SCALING) !== 0) throw fail(`unknown flags 0x${flags.toString(16)}`)
  const nameLength = view.getUint32(12, true)
  if (nameLength > maxNameBytes) throw fail(`name of ${nameLength} bytes exceeds ${maxNameBytes}`)
  return fileTrailerLength(nameLength)
}

/**
 * Decodes and verifies the trailer at `bytes[offset..]`, which must run exactly to the end of
 * `bytes`. The name is copied out. Throws {@link DecodeError}: as {@link decodeFileTrailerLength},
 * plus `truncated` when the name or checksum is cut short, `corrupt` when bytes follow the trailer,
 * and `checksum` when the CRC-32 does not match. `at` is the trailer's position in its file, for
 * messages (`offset` unless the bytes are a piece).
 */
export function decodeFileTrailer(
  bytes: Uint8Array,
  offset = 0,
  checksum: Checksum = crc32,
  at = offset,
  maxNameBytes = MAX_NAME_BYTES_V1,
): FileTrailer {
  const length = decodeFileTrailerLength(bytes, offset, at, maxNameBytes)
  const remaining = bytes.length - offset
  if (remaining < length) throw new DecodeError('truncated', `file trailer at byte ${at} is cut short`)
  if (remaining > length) {
    throw new DecodeError('corrupt', `${remaining - length} bytes follow the file trailer`)
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, length)
  const end = length - TRAILER_CRC_BYTES
  if (checksum(bytes.subarray(offset, offset + end), 0) !== view.getUint32(end, true)) {
    throw new DecodeError('checksum', `file trailer at byte ${at}: checksum mismatch`)
  }
  return {
    name: bytes.slice(offset + TRAILER_FIXED_BYTES, offset + end),
    expansion: view.getUint32(8, true),
    nonScaling: (view.getUint32(4, true) & TRAILER_FLAG_NON_SCALING) !== 0,
  }
}
