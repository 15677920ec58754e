/**
 * CF.SCANDUMP / CF.LOADCHUNK's encoding, as RedisBloom 2.4.23 writes and reads it (src/cf.c,
 * src/cf.h, src/rebloom.c CFScanDump_RedisCommand and CFLoadChunk_RedisCommand).
 *
 * Cursor 0 answers the header: 38 bytes, little-endian, packed: numItems u64, numBuckets u64,
 * numDeletes u64, numFilters u64, bucketSize u16, maxIterations u16, expansion u16. The
 * sub-filters' buckets then count as one run of bytes, the oldest first; a cursor c >= 1 stands
 * for byte c - 1 of that run. A chunk lies inside one sub-filter: a sub-filter of at most 16 MiB
 * is sent whole (even for a cursor inside it: the next cursor is then cursor + its size, as
 * RedisBloom does), a larger one in pieces of 16 MiB. LOADCHUNK takes the cursor SCANDUMP
 * returned with the chunk, so the chunk starts at byte `cursor - length - 1`.
 */
import { MAX_CUCKOO_FILTER_BYTES, MAX_CUCKOO_FILTERS, MAX_CUCKOO_SUB_FILTER_BYTES } from './limits.js'

/** sizeof(CFHeader). */
export const CF_HEADER_BYTES = 38

/** Largest chunk CF.SCANDUMP returns (rebloom.c MAX_SCANDUMP_SIZE). */
export const CF_MAX_CHUNK_BYTES = 16 * 1024 * 1024

/** The header's fields. */
export interface CuckooHeader {
  readonly numItems: bigint
  readonly numBuckets: number
  readonly numDeletes: bigint
  readonly numFilters: number
  readonly bucketSize: number
  readonly maxIterations: number
  readonly expansion: number
}

/** The header's bytes (fillCFHeader). */
export function encodeCuckooHeader(header: CuckooHeader): Uint8Array {
  const bytes = new Uint8Array(CF_HEADER_BYTES)
  const view = new DataView(bytes.buffer)
  view.setBigUint64(0, header.numItems, true)
  view.setBigUint64(8, BigInt(header.numBuckets), true)
  view.setBigUint64(16, header.numDeletes, true)
  view.setBigUint64(24, BigInt(header.numFilters), true)
  view.setUint16(32, header.bucketSize, true)
  view.setUint16(34, header.maxIterations, true)
  view.setUint16(36, header.expansion, true)
  return bytes
}

/**
 * Why a header is refused:
 * - `invalid`: fields RedisBloom's CuckooFilter_ValidateIntegrity refuses (bucket size not in
 *   [1, 255], bucket count 0 or not a power of two, no sub-filter, max iterations 0, expansion 0
 *   with several sub-filters), and what bfs refuses besides: more than 65535 sub-filters (RedisBloom
 *   truncates the u64 to its u16), an expansion that is not a power of two (RedisBloom takes it,
 *   and its later sub-filters then lose items after kicks);
 * - `too-large`: a sub-filter of more than 2^32 bytes, more than 2^31 bytes in all (limits.ts
 *   MAX_CUCKOO_FILTER_BYTES), or more than `maxBytes` in all.
 */
export type CuckooHeaderProblem = 'invalid' | 'too-large'

/**
 * Reads a header of {@link CF_HEADER_BYTES} bytes and checks it before anything is allocated.
 *
 * @param maxBytes most bytes of buckets the filter may hold (0: no limit but the format's)
 */
export function decodeCuckooHeader(bytes: Uint8Array, maxBytes: number): CuckooHeader | CuckooHeaderProblem {
  if (bytes.length !== CF_HEADER_BYTES) return 'invalid'
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const numBuckets = view.getBigUint64(8, true)
  const numFilters = view.getBigUint64(24, true)
  if (numFilters > BigInt(MAX_CUCKOO_FILTERS)) return 'invalid'
  const header: CuckooHeader = {
    numItems: view.getBigUint64(0, true),
    // Powers of two stay exact as doubles; 3 stands for any other count (refused as such below).
    numBuckets: numBuckets !== 0n && (numBuckets & (numBuckets - 1n)) === 0n ? Number(numBuckets) : 3,
    numDeletes: view.getBigUint64(16, true),
    numFilters: Number(numFilters),
    bucketSize: view.getUint16(32, true),
    maxIterations: view.getUint16(34, true),
    expansion: view.getUint16(36, true),
  }
  return cuckooSettingsProblem(header, header.numFilters, maxBytes) ?? header
}

/**
 * Why a filter with these settings and `count` sub-filters cannot be made (see
 * {@link CuckooHeaderProblem}), or undefined. `maxBytes` bounds all its buckets (0: no bound).
 */
export function cuckooSettingsProblem(
  settings: Pick<CuckooHeader, 'numBuckets' | 'bucketSize' | 'maxIterations' | 'expansion'>,
  count: number,
  maxBytes: number,
): CuckooHeaderProblem | undefined {
  const { numBuckets, bucketSize, maxIterations, expansion } = settings
  if (bucketSize < 1 || bucketSize > 255 || maxIterations < 1 || maxIterations > 0xffff) return 'invalid'
  if (!(Number.isInteger(numBuckets) && numBuckets >= 1 && isPowerOfTwo(numBuckets))) return 'invalid'
  if (count < 1 || count > MAX_CUCKOO_FILTERS) return 'invalid'
  if (expansion === 0 ? count > 1 : !(expansion <= 32768 && isPowerOfTwo(expansion))) return 'invalid'
  return cuckooSubFilterSizes(settings, count, maxBytes) === undefined ? 'too-large' : undefined
}

function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && 2 ** Math.round(Math.log2(n)) === n
}

/**
 * Bytes of each of the first `count` sub-filters of a filter with these settings (sub-filter i
 * has numBuckets * expansion^i buckets), or undefined when one passes 2^32 bytes or all of them
 * pass 2^31 bytes or `maxBytes` (0: no limit).
 */
export function cuckooSubFilterSizes(
  settings: Pick<CuckooHeader, 'numBuckets' | 'bucketSize' | 'expansion'>,
  count: number,
  maxBytes: number,
): number[] | undefined {
  const sizes: number[] = []
  let total = 0
  let bytes = settings.numBuckets * settings.bucketSize
  for (let i = 0; i < count; i++) {
    if (bytes > MAX_CUCKOO_SUB_FILTER_BYTES) return undefined
    total += bytes
    if (total > MAX_CUCKOO_FILTER_BYTES || (maxBytes > 0 && total > maxBytes)) return undefined
    sizes.push(bytes)
    bytes *= settings.expansion
  }
  return sizes
}

/** A chunk's place: sub-filter `index`, from byte `offset`, `length` bytes; `next` is the cursor SCANDUMP answers with it. */
export interface CuckooChunk {
  readonly index: number
  readonly offset: number
  readonly length: number
  readonly next: number
}

/** CF_GetEncodedChunk: the chunk at `cursor` (>= 1), or undefined past the last sub-filter. */
export function cuckooChunkAt(sizes: readonly number[], cursor: number): CuckooChunk | undefined {
  let offset = cursor - 1
  for (let index = 0; index < sizes.length; index++) {
    const size = sizes[index]!
    if (offset >= size) {
      offset -= size
      continue
    }
    if (size <= CF_MAX_CHUNK_BYTES) return { index, offset: 0, length: size, next: cursor + size }
    const length = Math.min(CF_MAX_CHUNK_BYTES, size - offset)
    return { index, offset, length, next: cursor + length }
  }
  return undefined
}

/**
 * CF_LoadEncodedChunk: where a chunk of `length` bytes sent with `cursor` goes, or undefined when
 * it does not lie inside one sub-filter. RedisBloom also takes a chunk past the last sub-filter
 * (by up to one sub-filter's size) and writes it into the last one at the wrong offset; refused here.
 */
export function cuckooChunkTarget(
  sizes: readonly number[],
  cursor: number,
  length: number,
): { index: number; offset: number } | undefined {
  if (length === 0 || cursor <= 0 || cursor - 1 < length) return undefined
  let offset = cursor - length - 1
  for (let index = 0; index < sizes.length; index++) {
    const size = sizes[index]!
    if (offset < size) return offset + length <= size ? { index, offset } : undefined
    offset -= size
  }
  return undefined
}
