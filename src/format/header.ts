/**
 * The 64-byte layer header: the original C library's header (docs/FORMAT.md, "The 64-byte
 * header"), with bfs's fields in its six reserved words and its checksum word. Every layer of a
 * bfs file starts with one, and its bitmap follows immediately. Version 2 differs from version 1
 * only in offsets 34..35 (a u16 layer count instead of u8 index and count) and in its checksum,
 * which continues from the previous layer's (see {@link chainedCrcStart}).
 *
 * Offsets (all little-endian; "orig" fields keep the original library's meaning):
 * ```
 *  0 u32 magic 0x01464C42 "BLF\x01"  orig   32 u8  version (0 original, 1 bfs v1)
 *  4 u32 seed                        orig   33 u8  flags (bit 0: RedisBloom hashing)
 *  8 u32 count: items, low 32 bits   orig   34 u8  layer index
 * 12 u32 maxItems: capacity, low 32  orig   35 u8  layer count
 * 16 f64 probFalse: error rate       orig   36 u32 items, high 32 bits
 * 24 u32 filterBits (0xFFFFFFFF      orig   40 u32 capacity, high 32 bits
 *        when bits >= 2^32)                 44 u32 bitmap bytes, high 32 bits
 * 28 u32 hashFuncs                   orig   48 f64 bits per entry
 * 60 u32 filterSize: bitmap bytes,   orig   56 u32 CRC-32 of header (this word as 0) + bitmap
 *        low 32 bits
 * ```
 */
import type { Hashing, LayerParts } from '../core/scalable-filter.js'
import { type Checksum, crc32 } from './crc32.js'
import { DecodeError } from './decode-error.js'
import { layerProblem, MAX_LAYERS, MAX_LAYERS_V1 } from './limits.js'
import { high32, join64, low32 } from './uint64.js'

/** Size of one layer header in bytes; the layer's bitmap follows it immediately. */
export const HEADER_BYTES = 64

/** The header magic, read as a little-endian u32: the bytes `42 4C 46 01`, "BLF\x01". */
export const HEADER_MAGIC = 0x01464c42

/** Version byte of a file written by the original C library (all reserved words zero). */
export const VERSION_ORIGINAL = 0

/** Version byte of bfs's first format: up to 64 layers, names up to 64 KiB. */
export const VERSION_1 = 1

/** Version byte of the format bfs writes for more than 64 layers or a name over 64 KiB. */
export const VERSION_2 = 2

/** Flag bit at {@link OFFSET.flags}: items are hashed as RedisBloom 2.4 does (the seed field is 0). */
export const FLAG_REDISBLOOM_HASHING = 0x01

/**
 * Value of the original `filterBits` field when the bit count does not fit in a u32. It is odd, so
 * `filterBits == filterSize * 8` fails and a reader of the original layout refuses the file
 * instead of misreading it; bfs reads the size from filterSize and the high word at offset 44.
 */
export const FILTER_BITS_OVERFLOW = 0xffff_ffff

/** Byte offset of each header field. */
export const OFFSET = {
  magic: 0,
  seed: 4,
  count: 8,
  maxItems: 12,
  probFalse: 16,
  filterBits: 24,
  hashFuncs: 28,
  version: 32,
  flags: 33,
  layerIndex: 34,
  layerCount: 35,
  /** Version 2: u16 layer count at offsets 34..35 (no layer index: the checksums are chained). */
  layerCountV2: 34,
  countHigh: 36,
  maxItemsHigh: 40,
  filterSizeHigh: 44,
  bitsPerEntry: 48,
  fileCrc: 56,
  filterSize: 60,
} as const

/** A layer's numbers without its bitmap: what a header describes. */
export type LayerFields = Omit<LayerParts, 'bitmap'>

/** One decoded layer header: everything needed to read, size-check and verify the bitmap after it. */
export interface LayerHeader {
  /** {@link VERSION_ORIGINAL}, {@link VERSION_1} or {@link VERSION_2}. */
  readonly version: number
  /** How items map to bits; an original-library header is always `seeded`. */
  readonly hashing: Hashing
  /**
   * Position of this layer in the file, from 0 (always 0 in an original-library file); undefined
   * in version 2, whose chained checksums fix the order instead.
   */
  readonly layerIndex: number | undefined
  /** Number of layers in the file (always 1 in an original-library file). */
  readonly layerCount: number
  /** The layer's numbers. */
  readonly layer: LayerFields
  /** Bytes of bitmap that follow the header: `layer.bitCount / 8`. */
  readonly byteCount: number
  /** The stored CRC-32 (0, unchecked, in an original-library file). */
  readonly crc: number
}

const TWO_18 = 0x4_0000 // bitmap bytes <= 2^50 (bits <= 2^53) → high word < 2^18
const TWO_21 = 0x20_0000 // counts <= 2^53 - 1 → high word < 2^21

/**
 * Encodes the header of one layer, in `version` 1 (the default) or 2, with 0 in its checksum
 * word. The layer's bitmap is not read. For a file streamed to disk:
 * ```ts
 * const header = encodeLayerHeader(layer, hashing, i, layers.length, version)
 * let crc = checksumLayerHeader(header, crc32, 0, chainedCrcStart(version, previous))
 * for (const slice of slicesOf(layer.bitmap)) crc = checksum(slice, crc)  // yield between slices
 * writeLayerChecksum(header, crc)                    // then write header, then the bitmap
 * previous = crc
 * ```
 * Throws `RangeError` when the layer's numbers fail {@link layerProblem}, when `layerIndex` is not
 * in [0, layerCount), `layerCount` not in [1, 64] (version 1) or [1, MAX_LAYERS] (version 2), or a
 * seeded hashing's seed not a u32.
 */
export function encodeLayerHeader(
  layer: LayerFields,
  hashing: Hashing,
  layerIndex: number,
  layerCount: number,
  version: typeof VERSION_1 | typeof VERSION_2 = VERSION_1,
): Uint8Array {
  const problem = layerProblem(layer)
  if (problem !== undefined) throw new RangeError(`layer ${layerIndex}: ${problem}`)
  const maxLayers = version === VERSION_1 ? MAX_LAYERS_V1 : MAX_LAYERS
  if (!Number.isInteger(layerCount) || layerCount < 1 || layerCount > maxLayers) {
    throw new RangeError(`layer count ${layerCount} is not in [1, ${maxLayers}]`)
  }
  if (!Number.isInteger(layerIndex) || layerIndex < 0 || layerIndex >= layerCount) {
    throw new RangeError(`layer index ${layerIndex} is not in [0, ${layerCount})`)
  }
  const seed = hashing.kind === 'seeded' ? hashing.seed : 0
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffff_ffff) {
    throw new RangeError(`seed ${seed} is not a u32`)
  }
  const header = new Uint8Array(HEADER_BYTES)
  const view = new DataView(header.buffer)
  const byteCount = layer.bitCount / 8
  view.setUint32(OFFSET.magic, HEADER_MAGIC, true)
  view.setUint32(OFFSET.seed, seed, true)
  view.setUint32(OFFSET.count, low32(layer.items), true)
  view.setUint32(OFFSET.maxItems, low32(layer.capacity), true)
  view.setFloat64(OFFSET.probFalse, layer.errorRate, true)
  view.setUint32(OFFSET.filterBits, layer.bitCount <= 0xffff_ffff ? layer.bitCount : FILTER_BITS_OVERFLOW, true)
  view.setUint32(OFFSET.hashFuncs, layer.hashCount, true)
  view.setUint8(OFFSET.version, version)
  view.setUint8(OFFSET.flags, hashing.kind === 'redisbloom' ? FLAG_REDISBLOOM_HASHING : 0)
  if (version === VERSION_1) {
    view.setUint8(OFFSET.layerIndex, layerIndex)
    view.setUint8(OFFSET.layerCount, layerCount)
  } else {
    view.setUint16(OFFSET.layerCountV2, layerCount, true)
  }
  view.setUint32(OFFSET.countHigh, high32(layer.items), true)
  view.setUint32(OFFSET.maxItemsHigh, high32(layer.capacity), true)
  view.setUint32(OFFSET.filterSizeHigh, high32(byteCount), true)
  view.setFloat64(OFFSET.bitsPerEntry, layer.bitsPerEntry, true)
  view.setUint32(OFFSET.filterSize, low32(byteCount), true)
  return header
}

const ZERO_CRC = new Uint8Array(4)

/**
 * Where a layer's checksum starts: 0 in version 1 (each layer on its own); in version 2 the
 * previous layer's checksum (0 for layer 0), so that layer i's checksum covers the file from its
 * start to the end of layer i, every crc word taken as zero, and layers cannot be reordered.
 */
export function chainedCrcStart(version: number, previousCrc: number): number {
  return version === VERSION_2 ? previousCrc : 0
}

/**
 * Returns the CRC-32 of the 64-byte header at `header[offset..]` with its checksum word taken as
 * zero, continuing from `initial` (see {@link chainedCrcStart}): the start of a layer's checksum,
 * which continues over the layer's bitmap (`checksum(bitmap, checksumLayerHeader(header))`).
 * Reads only; needs 64 bytes at `offset`.
 */
export function checksumLayerHeader(header: Uint8Array, checksum: Checksum = crc32, offset = 0, initial = 0): number {
  let crc = checksum(header.subarray(offset, offset + OFFSET.fileCrc), initial)
  crc = checksum(ZERO_CRC, crc)
  return checksum(header.subarray(offset + OFFSET.fileCrc + 4, offset + HEADER_BYTES), crc)
}

/** Returns a layer's whole checksum: its header (crc word as 0) followed by its bitmap. */
export function layerChecksum(header: Uint8Array, bitmap: Uint8Array, checksum: Checksum = crc32): number {
  return checksum(bitmap, checksumLayerHeader(header, checksum))
}

/** Stores `crc` in the checksum word of a header made by {@link encodeLayerHeader}. */
export function writeLayerChecksum(header: Uint8Array, crc: number): void {
  new DataView(header.buffer, header.byteOffset, HEADER_BYTES).setUint32(OFFSET.fileCrc, crc >>> 0, true)
}

/**
 * Decodes and validates the 64-byte header at `bytes[offset..]`: either an original-library
 * header (version byte 0; the reserved words and checksum must all be zero) or a bfs v1 or v2 header.
 * Reads only the header, so a streaming reader can check `byteCount` against the file's size before
 * it allocates or reads the bitmap; the checksum is not verified here (it covers the bitmap).
 *
 * Throws {@link DecodeError}: `truncated` when fewer than 64 bytes remain; `bad-magic`;
 * `unknown-version` for a version byte other than 0, 1 or 2; `corrupt` when the original
 * `filterBits != filterSize * 8`, when the v1 size words disagree, when flags or the layer
 * index/count are invalid, or when the numbers fail {@link layerProblem} (absurd sizes included).
 *
 * @param at the header's position in its file, for messages (`offset` unless the bytes are a piece)
 */
export function decodeLayerHeader(bytes: Uint8Array, offset = 0, at = offset): LayerHeader {
  if (bytes.length - offset >= 4) {
    const magic = new DataView(bytes.buffer, bytes.byteOffset + offset, 4).getUint32(0, true)
    if (magic !== HEADER_MAGIC) {
      throw new DecodeError('bad-magic', `bad magic 0x${magic.toString(16).padStart(8, '0')} at byte ${at}`)
    }
  }
  if (bytes.length - offset < HEADER_BYTES) {
    const left = Math.max(0, bytes.length - offset)
    throw new DecodeError('truncated', `header at byte ${at} needs ${HEADER_BYTES} bytes, ${left} left`)
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, HEADER_BYTES)
  const version = view.getUint8(OFFSET.version)
  if (version === VERSION_ORIGINAL) return decodeOriginal(view, at)
  if (version === VERSION_1 || version === VERSION_2) return decodeVersion1or2(view, at, version)
  throw new DecodeError('unknown-version', `unknown format version ${version} in header at byte ${at}`)
}

function corrupt(offset: number, why: string): DecodeError {
  return new DecodeError('corrupt', `header at byte ${offset}: ${why}`)
}

function decodeOriginal(view: DataView, offset: number): LayerHeader {
  for (let at = OFFSET.version; at < OFFSET.filterSize; at++) {
    if (view.getUint8(at) !== 0) throw corrupt(offset, 'original-layout header has non-zero reserved bytes')
  }
  const filterBits = view.getUint32(OFFSET.filterBits, true)
  const filterSize = view.getUint32(OFFSET.filterSize, true)
  if (filterBits !== filterSize * 8) {
    throw corrupt(offset, `filterBits ${filterBits} != filterSize ${filterSize} * 8`)
  }
  const capacity = view.getUint32(OFFSET.maxItems, true)
  const layer: LayerFields = {
    capacity,
    errorRate: view.getFloat64(OFFSET.probFalse, true),
    // The original library keeps no bits-per-entry; m / n is what its sizing used.
    bitsPerEntry: filterBits / capacity,
    hashCount: view.getUint32(OFFSET.hashFuncs, true),
    bitCount: filterBits,
    items: view.getUint32(OFFSET.count, true),
  }
  const problem = layerProblem(layer)
  if (problem !== undefined) throw corrupt(offset, problem)
  return {
    version: VERSION_ORIGINAL,
    hashing: { kind: 'seeded', seed: view.getUint32(OFFSET.seed, true) },
    layerIndex: 0,
    layerCount: 1,
    layer,
    byteCount: filterSize,
    crc: 0,
  }
}

function decodeVersion1or2(view: DataView, offset: number, version: number): LayerHeader {
  const flags = view.getUint8(OFFSET.flags)
  if ((flags & ~FLAG_REDISBLOOM_HASHING) !== 0) throw corrupt(offset, `unknown flags 0x${flags.toString(16)}`)
  const seed = view.getUint32(OFFSET.seed, true)
  if (flags & FLAG_REDISBLOOM_HASHING && seed !== 0) throw corrupt(offset, 'RedisBloom hashing with a non-zero seed')
  const { layerIndex, layerCount } = layerPosition(view, offset, version)
  const sizeHigh = view.getUint32(OFFSET.filterSizeHigh, true)
  const countHigh = view.getUint32(OFFSET.countHigh, true)
  const capacityHigh = view.getUint32(OFFSET.maxItemsHigh, true)
  if (sizeHigh > TWO_18 || countHigh >= TWO_21 || capacityHigh >= TWO_21) {
    throw corrupt(offset, 'size or count above 2^53')
  }
  const byteCount = join64(sizeHigh, view.getUint32(OFFSET.filterSize, true))
  const bitCount = byteCount * 8
  const filterBits = view.getUint32(OFFSET.filterBits, true)
  if (filterBits !== (bitCount <= 0xffff_ffff ? bitCount : FILTER_BITS_OVERFLOW)) {
    throw corrupt(offset, `filterBits ${filterBits} does not match a bitmap of ${byteCount} bytes`)
  }
  const layer: LayerFields = {
    capacity: join64(capacityHigh, view.getUint32(OFFSET.maxItems, true)),
    errorRate: view.getFloat64(OFFSET.probFalse, true),
    bitsPerEntry: view.getFloat64(OFFSET.bitsPerEntry, true),
    hashCount: view.getUint32(OFFSET.hashFuncs, true),
    bitCount,
    items: join64(countHigh, view.getUint32(OFFSET.count, true)),
  }
  const problem = layerProblem(layer)
  if (problem !== undefined) throw corrupt(offset, problem)
  return {
    version,
    hashing: flags & FLAG_REDISBLOOM_HASHING ? { kind: 'redisbloom' } : { kind: 'seeded', seed },
    layerIndex,
    layerCount,
    layer,
    byteCount,
    crc: view.getUint32(OFFSET.fileCrc, true),
  }
}

function layerPosition(
  view: DataView,
  offset: number,
  version: number,
): { layerIndex: number | undefined; layerCount: number } {
  if (version === VERSION_2) {
    const layerCount = view.getUint16(OFFSET.layerCountV2, true)
    if (layerCount < 1) throw corrupt(offset, 'layer count 0')
    return { layerIndex: undefined, layerCount }
  }
  const layerIndex = view.getUint8(OFFSET.layerIndex)
  const layerCount = view.getUint8(OFFSET.layerCount)
  if (layerCount < 1 || layerCount > MAX_LAYERS_V1 || layerIndex >= layerCount) {
    throw corrupt(offset, `layer ${layerIndex} of ${layerCount}`)
  }
  return { layerIndex, layerCount }
}
