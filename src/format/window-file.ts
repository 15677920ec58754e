/**
 * The window filter file: one sliding-window filter (core/window-filter.ts) with its name, as a
 * snapshot stores it and the full-sync payload carries it (docs/FORMAT.md, "Window filter file").
 * Little-endian throughout:
 * ```
 *  0  4  magic "BFSW"               48  8  inserts
 *  4  1  version (1)                56  8  generation count
 *  5  1  kind: 1 COUNT, 2 TIME      64  8  generation limit
 *  6  2  k (hash functions)         72  8  generation start + 1 (0: none yet)
 *  8  2  l (generations)            80  8  clock + 1 (0: none yet)
 * 10  2  0                          88  4  name length N
 * 12  4  slice count S              92  N  name
 * 16  8  error rate (f64)           then S slices, newest first, each:
 * 24  8  capacity                     u16 hash index, u16 0, u32 0, u64 count, u64 added,
 * 32  8  window in ms (0: COUNT)      u64 last add + 1 (0: none), u64 bitmap bytes B, B bytes
 * 40  8  target items per generation then u32 CRC-32 of every byte before it
 * ```
 * A snapshot tells it from a Bloom filter file by its first four bytes ("BLF\x01" there).
 */
import type { WindowKind, WindowParts } from '../core/window-filter.js'
import type { SliceParts } from '../core/window-slice.js'
import { type Checksum, crc32 } from './crc32.js'
import { DecodeError } from './decode-error.js'
import { readUint64, writeUint64 } from './uint64.js'

/** "BFSW" as the file's first four bytes. */
export const WINDOW_FILE_MAGIC = Uint8Array.of(0x42, 0x46, 0x53, 0x57)
export const WINDOW_FILE_VERSION = 1
const FIXED_BYTES = 92
const SLICE_HEADER_BYTES = 40
const KINDS: readonly WindowKind[] = ['count', 'time']

/** A named window filter as stored. */
export interface WindowRecord {
  name: Uint8Array
  parts: WindowParts
}

/** Whether `bytes` starts as a window filter file does. */
export function isWindowFile(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && WINDOW_FILE_MAGIC.every((byte, i) => bytes[i] === byte)
}

/** Exact bytes of {@link encodeWindowFile}'s result. */
export function windowFileLength(record: WindowRecord): number {
  let total = FIXED_BYTES + record.name.length + 4
  for (const slice of record.parts.slices) total += SLICE_HEADER_BYTES + slice.bitmap.length
  return total
}

/** Encodes a window filter with its name: one array, the bitmaps copied (a point-in-time copy). */
export function encodeWindowFile(record: WindowRecord, checksum: Checksum = crc32): Uint8Array {
  const { name, parts } = record
  const out = new Uint8Array(windowFileLength(record))
  const view = new DataView(out.buffer)
  out.set(WINDOW_FILE_MAGIC, 0)
  view.setUint8(4, WINDOW_FILE_VERSION)
  view.setUint8(5, KINDS.indexOf(parts.kind) + 1)
  view.setUint16(6, parts.k, true)
  view.setUint16(8, parts.l, true)
  view.setUint32(12, parts.slices.length, true)
  view.setFloat64(16, parts.errorRate, true)
  const fields = [
    parts.capacity,
    parts.windowMs,
    parts.target,
    parts.inserts,
    parts.genCount,
    parts.genLimit,
    parts.genStart + 1,
    parts.clock + 1,
  ]
  fields.forEach((value, i) => writeUint64(view, 24 + 8 * i, value))
  view.setUint32(88, name.length, true)
  out.set(name, FIXED_BYTES)
  let at = FIXED_BYTES + name.length
  for (const slice of parts.slices) {
    view.setUint16(at, slice.hashIndex, true)
    writeUint64(view, at + 8, slice.count)
    writeUint64(view, at + 16, slice.added)
    writeUint64(view, at + 24, slice.lastAdd + 1)
    writeUint64(view, at + 32, slice.bitmap.length)
    out.set(slice.bitmap, at + SLICE_HEADER_BYTES)
    at += SLICE_HEADER_BYTES + slice.bitmap.length
  }
  view.setUint32(at, checksum(out.subarray(0, at), 0) >>> 0, true)
  return out
}

function u64(view: DataView, offset: number, what: string): number {
  const value = readUint64(view, offset)
  if (value === undefined) throw new DecodeError('corrupt', `${what} at byte ${offset} is past 2^53`)
  return value
}

function need(bytes: Uint8Array, end: number): void {
  if (end > bytes.length)
    throw new DecodeError('truncated', `the file ends at byte ${bytes.length}, before byte ${end}`)
}

/**
 * Decodes a window filter file. The bitmaps are views into `bytes`. The parts are checked as far
 * as the format goes; core/window-filter.ts `fromParts` checks the rest.
 * @throws DecodeError for a bad magic, version, checksum, truncation or length
 */
export function decodeWindowFile(bytes: Uint8Array, checksum: Checksum = crc32): WindowRecord {
  if (!isWindowFile(bytes)) throw new DecodeError('bad-magic', 'not a window filter file (magic "BFSW")')
  need(bytes, FIXED_BYTES + 4)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (view.getUint8(4) !== WINDOW_FILE_VERSION)
    throw new DecodeError('unknown-version', `unknown window file version ${view.getUint8(4)}`)
  const end = bytes.length - 4
  if (checksum(bytes.subarray(0, end), 0) >>> 0 !== view.getUint32(end, true))
    throw new DecodeError('checksum', 'window filter file checksum mismatch')
  const kind = KINDS[view.getUint8(5) - 1]
  if (kind === undefined) throw new DecodeError('corrupt', `unknown window kind ${view.getUint8(5)}`)
  const [capacity, windowMs, target, inserts, genCount, genLimit, genStart, clock] = [0, 1, 2, 3, 4, 5, 6, 7].map((i) =>
    u64(view, 24 + 8 * i, 'a field'),
  )
  const nameLength = view.getUint32(88, true)
  need(bytes, FIXED_BYTES + nameLength)
  const name = bytes.subarray(FIXED_BYTES, FIXED_BYTES + nameLength)
  const sliceCount = view.getUint32(12, true)
  const slices: SliceParts[] = []
  let at = FIXED_BYTES + nameLength
  for (let i = 0; i < sliceCount; i++) {
    need(bytes, at + SLICE_HEADER_BYTES)
    const length = u64(view, at + 32, 'a slice length')
    need(bytes, at + SLICE_HEADER_BYTES + length)
    slices.push({
      hashIndex: view.getUint16(at, true),
      count: u64(view, at + 8, 'a slice count'),
      added: u64(view, at + 16, 'a slice count'),
      lastAdd: u64(view, at + 24, 'a slice time') - 1,
      bitmap: bytes.subarray(at + SLICE_HEADER_BYTES, at + SLICE_HEADER_BYTES + length),
    })
    at += SLICE_HEADER_BYTES + length
  }
  if (at !== end) throw new DecodeError('corrupt', `${end - at} bytes after the last slice`)
  const parts: WindowParts = {
    kind,
    errorRate: view.getFloat64(16, true),
    capacity,
    windowMs,
    k: view.getUint16(6, true),
    l: view.getUint16(8, true),
    target,
    inserts,
    genCount,
    genLimit,
    genStart: genStart - 1,
    clock: clock - 1,
    slices,
  }
  return { name, parts }
}
