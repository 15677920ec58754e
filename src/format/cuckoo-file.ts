/**
 * The Cuckoo filter file: one Cuckoo filter (core/cuckoo-filter.ts) with its name, as a snapshot
 * stores it, the full-sync payload carries it and DUMP frames it (docs/FORMAT.md, "Cuckoo filter
 * file"). Little-endian throughout:
 * ```
 *  0  4  magic "BFSC"                 16  8  buckets of the first sub-filter
 *  4  1  version (1)                  24  8  items (u64, as RedisBloom's numItems: it may wrap)
 *  5  1  0                            32  8  deletes since the last compaction (u64)
 *  6  2  bucket size                  40  4  name length N
 *  8  2  max iterations               44  N  name
 * 10  2  expansion (0 or a power of two)   then F sub-filters, oldest first, each:
 * 12  4  sub-filter count F                 u64 byte length B (buckets * bucket size), B bytes
 *                                     then u32 CRC-32 of every byte before it
 * ```
 * A snapshot tells it from the other files by its first four bytes.
 */
import type { CuckooParts } from '../core/cuckoo-filter.js'
import { type Checksum, crc32 } from './crc32.js'
import { cuckooSettingsProblem } from './cuckoo-dump.js'
import { DecodeError } from './decode-error.js'
import { readUint64, writeUint64 } from './uint64.js'

/** "BFSC" as the file's first four bytes. */
export const CUCKOO_FILE_MAGIC = Uint8Array.of(0x42, 0x46, 0x53, 0x43)
export const CUCKOO_FILE_VERSION = 1
const FIXED_BYTES = 44

/** A named Cuckoo filter as stored. */
export interface CuckooRecord {
  name: Uint8Array
  parts: CuckooParts
}

/** Whether `bytes` starts as a Cuckoo filter file does. */
export function isCuckooFile(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && CUCKOO_FILE_MAGIC.every((byte, i) => bytes[i] === byte)
}

/** Exact bytes of {@link encodeCuckooFile}'s result. */
export function cuckooFileLength(record: CuckooRecord): number {
  let total = FIXED_BYTES + record.name.length + 4
  for (const data of record.parts.subFilters) total += 8 + data.length
  return total
}

/** Encodes a Cuckoo filter with its name: one array, the buckets copied (a point-in-time copy). */
export function encodeCuckooFile(record: CuckooRecord, checksum: Checksum = crc32): Uint8Array {
  const { name, parts } = record
  const out = new Uint8Array(cuckooFileLength(record))
  const view = new DataView(out.buffer)
  out.set(CUCKOO_FILE_MAGIC, 0)
  view.setUint8(4, CUCKOO_FILE_VERSION)
  view.setUint16(6, parts.bucketSize, true)
  view.setUint16(8, parts.maxIterations, true)
  view.setUint16(10, parts.expansion, true)
  view.setUint32(12, parts.subFilters.length, true)
  writeUint64(view, 16, parts.numBuckets)
  view.setBigUint64(24, parts.numItems, true)
  view.setBigUint64(32, parts.numDeletes, true)
  view.setUint32(40, name.length, true)
  out.set(name, FIXED_BYTES)
  let at = FIXED_BYTES + name.length
  for (const data of parts.subFilters) {
    writeUint64(view, at, data.length)
    out.set(data, at + 8)
    at += 8 + data.length
  }
  view.setUint32(at, checksum(out.subarray(0, at), 0) >>> 0, true)
  return out
}

function need(bytes: Uint8Array, end: number): void {
  if (end > bytes.length)
    throw new DecodeError('truncated', `the file ends at byte ${bytes.length}, before byte ${end}`)
}

/**
 * Decodes a Cuckoo filter file. The buckets are views into `bytes`. The settings are checked as
 * CF.LOADCHUNK checks a header (bucket size, a power-of-two bucket count, expansion 0 or a power of
 * two, at most 65535 sub-filters of at most 2^32 bytes), and each sub-filter's length against them.
 * @throws DecodeError for a bad magic, version, checksum, truncation, length or setting
 */
export function decodeCuckooFile(bytes: Uint8Array, checksum: Checksum = crc32): CuckooRecord {
  if (!isCuckooFile(bytes)) throw new DecodeError('bad-magic', 'not a Cuckoo filter file (magic "BFSC")')
  need(bytes, FIXED_BYTES + 4)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (view.getUint8(4) !== CUCKOO_FILE_VERSION)
    throw new DecodeError('unknown-version', `unknown Cuckoo file version ${view.getUint8(4)}`)
  const end = bytes.length - 4
  if (checksum(bytes.subarray(0, end), 0) >>> 0 !== view.getUint32(end, true))
    throw new DecodeError('checksum', 'Cuckoo filter file checksum mismatch')
  const numBuckets = readUint64(view, 16)
  const settings = {
    numBuckets: numBuckets ?? Infinity,
    bucketSize: view.getUint16(6, true),
    maxIterations: view.getUint16(8, true),
    expansion: view.getUint16(10, true),
  }
  const count = view.getUint32(12, true)
  const problem = cuckooSettingsProblem(settings, count, 0)
  if (problem !== undefined) throw new DecodeError('corrupt', `Cuckoo filter settings refused: ${problem}`)
  const nameLength = view.getUint32(40, true)
  need(bytes, FIXED_BYTES + nameLength)
  const name = bytes.subarray(FIXED_BYTES, FIXED_BYTES + nameLength)
  const subFilters: Uint8Array[] = []
  let at = FIXED_BYTES + nameLength
  for (
    let i = 0, expected = settings.numBuckets * settings.bucketSize;
    i < count;
    i++, expected *= settings.expansion
  ) {
    need(bytes, at + 8)
    const length = readUint64(view, at)
    if (length !== expected)
      throw new DecodeError(
        'corrupt',
        `sub-filter ${i} is ${length ?? 'over 2^53'} bytes, its settings make it ${expected}`,
      )
    need(bytes, at + 8 + length)
    subFilters.push(bytes.subarray(at + 8, at + 8 + length))
    at += 8 + length
  }
  if (at !== end) throw new DecodeError('corrupt', `${end - at} bytes after the last sub-filter`)
  const parts: CuckooParts = {
    ...settings,
    numItems: view.getBigUint64(24, true),
    numDeletes: view.getBigUint64(32, true),
    subFilters,
  }
  return { name, parts }
}
