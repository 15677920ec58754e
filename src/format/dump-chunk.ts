/**
 * BF.SCANDUMP / BF.LOADCHUNK chunk iteration, as RedisBloom 2.4 does it (src/sb.c `getLinkPos`,
 * `SBChain_GetEncodedChunk`, `SBChain_LoadEncodedChunk`; src/rebloom.c `BFScanDump_RedisCommand`).
 *
 * The layers' bitmaps are numbered as one run of bytes, layer 0 first. An iterator is a byte
 * position in that run plus one: SCANDUMP `1` starts at byte 0. A chunk never crosses from one
 * layer into the next and holds at most 16 MiB. SCANDUMP returns the iterator just past its chunk,
 * and LOADCHUNK takes that same iterator with the chunk, so the chunk's first byte is at position
 * `iterator - data.length - 1`.
 */
import type { FilterParts, LayerParts } from '../core/scalable-filter.js'
import { bitmapRange, writeBitmap } from './bitmap-bytes.js'
import { encodeDumpHeader } from './dump-header.js'

/** Largest chunk BF.SCANDUMP returns: src/rebloom.c `#define MAX_SCANDUMP_SIZE (1024 * 1024 * 16)`. */
export const MAX_DUMP_CHUNK_BYTES = 16 * 1024 * 1024

/** The iterator that asks for the first bitmap chunk (src/sb.h `SB_CHUNKITER_INIT`). */
export const DUMP_ITER_INIT = 1

/** The iterator SCANDUMP returns once every chunk has been sent (src/sb.h `SB_CHUNKITER_DONE`). */
export const DUMP_ITER_DONE = 0

/** One SCANDUMP reply: the iterator to send next (0 when done) and the chunk's bytes. */
export interface DumpChunk {
  /** The iterator for the next call; {@link DUMP_ITER_DONE} (0) when there is nothing more. */
  readonly next: number
  /** The chunk: a view into a layer's bitmap (no copy), the header, or empty at the end. */
  readonly data: Uint8Array
}

/**
 * Why BF.LOADCHUNK refused a chunk for an existing filter; the wire text is RedisBloom's:
 * - `bad-data`: iterator <= 0 or smaller than the chunk → `ERR received bad data` (src/sb.c, since v2.4.8);
 * - `no-link`: the chunk's start is not inside any layer → `ERR invalid offset - no link found`;
 * - `too-big`: the chunk runs past the end of its layer → `ERR invalid chunk - Too big for current filter`.
 */
export type DumpChunkError = 'bad-data' | 'no-link' | 'too-big'

const EMPTY = new Uint8Array(0)

interface LinkPosition {
  readonly layer: LayerParts
  /** The layer's place in the chain, oldest 0. */
  readonly index: number
  readonly offset: number
}

/** Copies a chunk into layer `index` of a filter at byte `offset` (the bytes are known to fit). */
type ChunkWriter = (index: number, offset: number, data: Uint8Array) => void

// src/sb.c getLinkPos: iterator - 1 is a position in the concatenated bitmaps; < 1 finds nothing.
function linkPosition(parts: FilterParts, iterator: number): LinkPosition | undefined {
  if (!Number.isSafeInteger(iterator) || iterator < 1) return undefined
  let position = iterator - 1
  for (let index = 0; index < parts.layers.length; index++) {
    const layer = parts.layers[index]!
    const byteCount = layer.bitCount / 8
    if (position < byteCount) return { layer, index, offset: position }
    position -= byteCount
  }
  return undefined
}

/**
 * Returns what `BF.SCANDUMP key iterator` replies for the filter `parts`:
 * - iterator 0: `{ next: 1, data: encodeDumpHeader(parts) }` (throws that function's RangeError);
 * - an iterator inside the bitmaps: up to `maxChunkBytes` bytes from there, stopping at the end of
 *   the layer, with `next = iterator + data.length`;
 * - anything else (negative, past the end, not a safe integer): `{ next: 0, data: empty }`.
 * Throws `RangeError` when `maxChunkBytes` is not a positive integer.
 */
export function dumpChunkAt(parts: FilterParts, iterator: number, maxChunkBytes = MAX_DUMP_CHUNK_BYTES): DumpChunk {
  if (!Number.isSafeInteger(maxChunkBytes) || maxChunkBytes < 1) {
    throw new RangeError(`chunk size ${maxChunkBytes} is not a positive integer`)
  }
  if (iterator === 0) return { next: DUMP_ITER_INIT, data: encodeDumpHeader(parts) }
  const at = linkPosition(parts, iterator)
  if (at === undefined) return { next: DUMP_ITER_DONE, data: EMPTY }
  const length = Math.min(maxChunkBytes, at.layer.bitCount / 8 - at.offset)
  return { next: iterator + length, data: bitmapRange(at.layer.bitmap, at.offset, at.offset + length) }
}

/**
 * Copies a BF.LOADCHUNK chunk into an existing filter's bitmaps, as `SBChain_LoadEncodedChunk`:
 * `iterator` is the value SCANDUMP returned with `data`. Returns `'ok'` after copying, or the
 * {@link DumpChunkError} (and changes nothing). An empty chunk at a valid position is `'ok'`.
 * The first LOADCHUNK of a missing key (iterator 1, the header) is not this function's: decode it
 * with `decodeDumpHeader`. `write` does the copy (a live filter's layers keep their count of set
 * bits that way); by default the bytes go straight into `parts`' bitmap.
 */
export function applyDumpChunk(
  parts: FilterParts,
  iterator: number,
  data: Uint8Array,
  write: ChunkWriter = (index, offset, bytes) => writeBitmap(parts.layers[index]!.bitmap, bytes, offset),
): 'ok' | DumpChunkError {
  if (!(iterator > 0) || iterator < data.length) return 'bad-data'
  const at = linkPosition(parts, iterator - data.length)
  if (at === undefined) return 'no-link'
  if (data.length > at.layer.bitCount / 8 - at.offset) return 'too-big'
  write(at.index, at.offset, data)
  return 'ok'
}
