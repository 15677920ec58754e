/**
 * Reading one filter file (a snapshot's, or BF.LOAD's) piece by piece: every header, bitmap and
 * trailer is read into its own array once its size has been checked against the file's, so a
 * file larger than one array can be (4 GiB on Node 20) loads; a layer larger than one memory is
 * read into its pieces (core/pieced-bitmap.ts).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { allocateLayerBitmap } from '../core/bitmap.js'
import { type Bitmap, bitmapSlices } from '../core/pieced-bitmap.js'
import { type ByteSource, decodeFilter, type FilterRecord } from '../format/codec.js'
import type { Checksum } from '../format/crc32.js'
import { DecodeError } from '../format/decode-error.js'
import { isWindowFile, type WindowRecord } from '../format/window-file.js'
import { isCuckooFile, type CuckooRecord } from '../format/cuckoo-file.js'
import { decodeWholeFile } from './whole-file.js'

/** Largest single read or write call (node refuses more than 2 GiB - 1 per call). */
export const IO_CHUNK_BYTES = 256 * 1024 * 1024

/** An open file as a {@link ByteSource}: each read is a fresh array. Exported for its tests. */
export class FileBytes implements ByteSource {
  constructor(
    private readonly fd: number,
    readonly length: number,
  ) {}

  read(offset: number, length: number): Uint8Array {
    return this.readInto(new Uint8Array(length), offset)
  }

  /** A bitmap, read into WebAssembly memory where it fits an arena (core/arena.ts). */
  readBitmap(offset: number, length: number): Bitmap {
    const bitmap = allocateLayerBitmap(length)
    let at = offset
    for (const slice of bitmapSlices(bitmap)) {
      this.readInto(slice, at)
      at += slice.length
    }
    return bitmap
  }

  private readInto(bytes: Uint8Array, offset: number): Uint8Array {
    const length = bytes.length
    let done = 0
    while (done < length) {
      const read = readSync(this.fd, bytes, done, Math.min(length - done, IO_CHUNK_BYTES), offset + done)
      if (read === 0) throw new DecodeError('truncated', `file ended at ${offset + done} of ${this.length} bytes`)
      done += read
    }
    return bytes
  }
}

/**
 * Decodes the filter file at `filePath` (codec.ts {@link decodeFilter}), checking its size against
 * `expectedBytes` first when given (a snapshot's MANIFEST records it).
 * @throws DecodeError for a damaged file, Error for one that cannot be read
 */
export function readFilterFile(filePath: string, checksum: Checksum, expectedBytes?: number): FilterRecord {
  const file = readSnapshotFile(filePath, checksum, expectedBytes)
  if (file.kind === 'window') throw new DecodeError('bad-magic', 'a window filter file, not a Bloom filter file')
  if (file.kind === 'cuckoo') throw new DecodeError('bad-magic', 'a Cuckoo filter file, not a Bloom filter file')
  return file.record
}

/** A snapshot's file: a Bloom filter's, a window filter's (format/window-file.ts) or a Cuckoo filter's (format/cuckoo-file.ts), told apart by its magic. */
export type SnapshotFile =
  | { kind: 'bloom'; record: FilterRecord }
  | { kind: 'window'; record: WindowRecord }
  | { kind: 'cuckoo'; record: CuckooRecord }

/** {@link readFilterFile} for either kind of snapshot file. */
export function readSnapshotFile(filePath: string, checksum: Checksum, expectedBytes?: number): SnapshotFile {
  const fd = openSync(filePath, 'r')
  try {
    const { size } = fstatSync(fd)
    if (expectedBytes !== undefined && size !== expectedBytes) {
      throw new DecodeError('truncated', `file is ${size} bytes, the manifest says ${expectedBytes}`)
    }
    const bytes = new FileBytes(fd, size)
    const magic = size >= 4 ? bytes.read(0, 4) : new Uint8Array(0)
    if (isWindowFile(magic) || isCuckooFile(magic)) {
      const record = decodeWholeFile(bytes.read(0, size), checksum)
      return 'subFilters' in record.parts
        ? { kind: 'cuckoo', record: record as CuckooRecord }
        : { kind: 'window', record: record as WindowRecord }
    }
    return { kind: 'bloom', record: decodeFilter(bytes, checksum) }
  } finally {
    closeSync(fd)
  }
}
