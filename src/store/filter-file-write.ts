/**
 * Writing one filter file (docs/FORMAT.md): at once (BF.SAVE), or slice by slice without blocking
 * the event loop (a background save).
 */
import { bitmapSlices } from '../core/pieced-bitmap.js'
import { promises as fsp } from 'node:fs'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import type { FilterParts } from '../core/scalable-filter.js'
import { encodeFilter, fileVersionFor, type FilterRecord } from '../format/codec.js'
import { encodeFileTrailer } from '../format/file-trailer.js'
import {
  chainedCrcStart,
  checksumLayerHeader,
  encodeLayerHeader,
  HEADER_BYTES,
  writeLayerChecksum,
} from '../format/header.js'
import { replaceFileSync, TEMP_SUFFIX, writeAllAsync } from './durable-file.js'
import { nativeCrc32 } from './native-crc32.js'
import type { LayerCopy } from './layer-copy.js'

/** Bytes of bitmap copied, checksummed and written per step of a background save. */
export const SLICE_BYTES = 2 * 1024 * 1024

/** The background save writing a file: it may stop it, and learns how long each step took. */
export interface SliceWriter {
  /** Throws when the save must stop (shutdown). */
  checkAbort(): void
  /** The longest main-thread step so far, in ms (raised by each slice). */
  longestStepMs: number
}

/**
 * Writes one filter without blocking: each bitmap slice is copied, checksummed with the native
 * CRC-32 and written; the header, whose checksum covers the bitmap, is written after its bitmap.
 * Header values were captured when the save began. A live filter's bitmaps are read through
 * `copies`, their copy-on-write from that same moment (layer-copy.ts), so the file is the filter
 * as it was then, whatever is added meanwhile. Returns the file's size.
 */
export async function writeFilterFileAsync(
  temp: string,
  pending: {
    readonly name: Uint8Array
    readonly parts: FilterParts
    readonly copies?: readonly LayerCopy[] | undefined
  },
  job: SliceWriter,
): Promise<number> {
  const { parts } = pending
  const handle = await fsp.open(temp, 'w', 0o644)
  try {
    const scratch = Buffer.allocUnsafe(SLICE_BYTES)
    let position = 0
    const version = fileVersionFor(parts.layers.length, pending.name.length)
    let crc = 0
    for (let i = 0; i < parts.layers.length; i++) {
      const layer = parts.layers[i]!
      const header = encodeLayerHeader(layer, parts.hashing, i, parts.layers.length, version)
      crc = checksumLayerHeader(header, nativeCrc32, 0, chainedCrcStart(version, crc))
      const headerAt = position
      position += HEADER_BYTES
      const bitmap = layer.bitmap
      const copy = pending.copies?.[i]
      for (let offset = 0; offset < bitmap.length; offset += SLICE_BYTES) {
        job.checkAbort()
        const sliceStarted = performance.now()
        const length = Math.min(SLICE_BYTES, bitmap.length - offset)
        if (copy === undefined) {
          let at = 0
          for (const bytes of bitmapSlices(bitmap, offset, offset + length)) {
            scratch.set(bytes, at)
            at += bytes.length
          }
        } else {
          let at = 0
          copy.visit(offset, offset + length, (bytes) => {
            scratch.set(bytes, at)
            at += bytes.length
          })
          // Written out: later writes there need no saving.
          copy.readTo(offset + length)
        }
        const slice = scratch.subarray(0, length)
        crc = nativeCrc32(slice, crc)
        job.longestStepMs = Math.max(job.longestStepMs, performance.now() - sliceStarted)
        await writeAllAsync(handle, slice, position)
        position += length
        // A fast disk completes writes without ever leaving the event loop idle: yield explicitly.
        await yieldToLoop()
      }
      writeLayerChecksum(header, crc)
      await writeAllAsync(handle, header, headerAt)
    }
    const trailer = encodeFileTrailer(
      { name: pending.name, expansion: parts.expansion, nonScaling: parts.nonScaling },
      nativeCrc32,
    )
    await writeAllAsync(handle, trailer, position)
    position += trailer.length
    job.checkAbort()
    await handle.sync()
    return position
  } finally {
    await handle.close()
  }
}

/**
 * Writes one filter to `target` atomically and synchronously (BF.SAVE): temp file in the same
 * directory → fsync → rename → fsync of the directory. Returns the bytes written.
 */
export function writeFilterFileSync(target: string, record: FilterRecord): number {
  const pieces = encodeFilter(record, nativeCrc32)
  const temp = `${target}.${process.pid}-${Date.now()}${TEMP_SUFFIX}`
  return replaceFileSync(target, pieces, temp)
}
