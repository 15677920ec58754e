/**
 * RedisBloom 2.4's SCANDUMP header: the first chunk of `BF.SCANDUMP key 0` and the first
 * `BF.LOADCHUNK key 1 <data>`. It is the packed little-endian struct `dumpedChainHeader` of
 * RedisBloom's src/sb.c (v2.4.x, `SBChain_GetEncodedHeader` / `SB_NewChainFromHeader`):
 * ```
 * header, 20 bytes:      0 u64 size (items, all layers)   8 u32 nfilters
 *                       12 u32 options                    16 u32 growth (expansion)
 * per layer, 53 bytes:   0 u64 bytes   8 u64 bits   16 u64 size (items)   24 f64 error
 *                       32 f64 bpe    40 u32 hashes 44 u64 entries (capacity)  52 u8 n2
 * ```
 * options: 1 NOROUND, 2 ENTS_IS_BITS, 4 FORCE64, 8 NO_SCALING (deps/bloom/bloom.h).
 */
import type { Bitmap } from '../core/pieced-bitmap.js'
import type { FilterParts, LayerParts } from '../core/scalable-filter.js'
import { DecodeError } from './decode-error.js'
import { filterProblem, layerProblem, MAX_LAYERS } from './limits.js'
import { readUint64, writeUint64 } from './uint64.js'

/** Bytes of the fixed part of the dump header. */
export const DUMP_HEADER_BYTES = 20

/** Bytes of one layer's record (`dumpedChainLink`) in the dump header. */
export const DUMP_LINK_BYTES = 53

/** RedisBloom option: do not round the bit count to a power of two (`BLOOM_OPT_NOROUND`). */
export const OPT_NOROUND = 1
/** RedisBloom option: `entries` was given as a bit count (`BLOOM_OPT_ENTS_IS_BITS`). */
export const OPT_ENTS_IS_BITS = 2
/** RedisBloom option: 64-bit MurmurHash64A hashing (`BLOOM_OPT_FORCE64`); always set by 2.4's BF.RESERVE. */
export const OPT_FORCE64 = 4
/** RedisBloom option: a non-scaling filter (`BLOOM_OPT_NO_SCALING`). */
export const OPT_NO_SCALING = 8

const KNOWN_OPTIONS = OPT_NOROUND | OPT_ENTS_IS_BITS | OPT_FORCE64 | OPT_NO_SCALING

/** Default for `maxBytes` in {@link decodeDumpHeader}: 1 GiB of bitmaps in all. */
export const DEFAULT_MAX_DUMP_BYTES = 1024 * 1024 * 1024

// deps/bloom/bloom.c: #define LN2 (0.693147180559945); bloom_validate_integrity checks
// hashes == (int)ceil(LN2 * bpe).
const LN2 = 0.693147180559945

/** Options for {@link decodeDumpHeader}. */
export interface DecodeDumpOptions {
  /** Largest total of bitmap bytes (all layers) the caller will allocate; default 1 GiB. */
  maxBytes?: number
  /** Allocates a zeroed bitmap (core/bitmap.ts `allocateLayerBitmap`); a plain array by default. */
  allocate?: (byteCount: number) => Bitmap
}

/**
 * Encodes `parts` as RedisBloom 2.4's SCANDUMP header, 20 + 53 × layers bytes, exactly as
 * `SBChain_GetEncodedHeader` would for the same filter: size = sum of layer items, options =
 * NOROUND | FORCE64 (| NO_SCALING), growth = expansion, n2 = 0 (bfs never rounds to a power of two).
 * Throws `RangeError` for `seeded` hashing (RedisBloom has no seed to carry it) and for parts that
 * break a limit in limits.ts.
 */
export function encodeDumpHeader(parts: FilterParts): Uint8Array {
  if (parts.hashing.kind !== 'redisbloom') {
    throw new RangeError('only a filter with RedisBloom hashing has a SCANDUMP header')
  }
  const problem = filterProblem(parts.hashing, parts.expansion, parts.nonScaling, parts.layers.length)
  if (problem !== undefined) throw new RangeError(problem)
  const out = new Uint8Array(DUMP_HEADER_BYTES + DUMP_LINK_BYTES * parts.layers.length)
  const view = new DataView(out.buffer)
  let items = 0
  parts.layers.forEach((layer, i) => {
    const layerIssue = layerProblem(layer)
    if (layerIssue !== undefined) throw new RangeError(`layer ${i}: ${layerIssue}`)
    const at = DUMP_HEADER_BYTES + DUMP_LINK_BYTES * i
    writeUint64(view, at, layer.bitCount / 8)
    writeUint64(view, at + 8, layer.bitCount)
    writeUint64(view, at + 16, layer.items)
    view.setFloat64(at + 24, layer.errorRate, true)
    view.setFloat64(at + 32, layer.bitsPerEntry, true)
    view.setUint32(at + 40, layer.hashCount, true)
    writeUint64(view, at + 44, layer.capacity)
    view.setUint8(at + 52, 0)
    items += layer.items
  })
  if (!Number.isSafeInteger(items)) throw new RangeError(`total items ${items} above 2^53`)
  writeUint64(view, 0, items)
  view.setUint32(8, parts.layers.length, true)
  view.setUint32(12, OPT_NOROUND | OPT_FORCE64 | (parts.nonScaling ? OPT_NO_SCALING : 0), true)
  view.setUint32(16, parts.expansion, true)
  return out
}

/**
 * Decodes a SCANDUMP header into a filter with RedisBloom hashing and all-zero bitmaps, ready for
 * the chunks that follow. It applies every check of RedisBloom 2.4.x's `SB_NewChainFromHeader`
 * (each of which replies `ERR received bad data` there) and bfs's own: FORCE64 must be set (bfs
 * has no 32-bit hashing), n2 must be 0 or give exactly `bits == 2^n2` (the same bit positions),
 * and the limits in limits.ts. Bitmaps are allocated only after every layer has been validated and
 * the total of their bytes is within `maxBytes`.
 *
 * Throws {@link DecodeError}: `truncated` (under 20 bytes, or under 20 + 53 × nfilters), `corrupt`
 * (longer than 20 + 53 × nfilters, nfilters 0 or above 64, unknown options, no FORCE64,
 * bits != bytes × 8, bits 0, n2 > 63 or bits != 2^n2, error outside (0, 1),
 * hashes != ceil(ln 2 × bpe), item totals that disagree, any count above 2^53, total bytes above
 * `maxBytes`).
 */
export function decodeDumpHeader(bytes: Uint8Array, options: DecodeDumpOptions = {}): FilterParts {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_DUMP_BYTES
  const allocate = options.allocate ?? ((byteCount: number) => new Uint8Array(byteCount))
  if (bytes.length < DUMP_HEADER_BYTES) {
    throw new DecodeError('truncated', `dump header of ${bytes.length} bytes, need ${DUMP_HEADER_BYTES}`)
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length)
  const corrupt = (why: string) => new DecodeError('corrupt', `dump header: ${why}`)
  const layerCount = view.getUint32(8, true)
  if (layerCount === 0 || layerCount > MAX_LAYERS) throw corrupt(`nfilters ${layerCount} not in [1, ${MAX_LAYERS}]`)
  const expected = DUMP_HEADER_BYTES + DUMP_LINK_BYTES * layerCount
  if (bytes.length < expected) {
    throw new DecodeError('truncated', `dump header of ${bytes.length} bytes, ${layerCount} layers need ${expected}`)
  }
  if (bytes.length > expected) throw corrupt(`${bytes.length} bytes, ${layerCount} layers need ${expected}`)
  const flags = view.getUint32(12, true)
  if ((flags & ~KNOWN_OPTIONS) !== 0) throw corrupt(`unknown options 0x${flags.toString(16)}`)
  if ((flags & OPT_FORCE64) === 0) throw corrupt('32-bit hashing (no FORCE64) is not supported')
  const nonScaling = (flags & OPT_NO_SCALING) !== 0
  const expansion = view.getUint32(16, true)
  const totalItems = readUint64(view, 0)
  if (totalItems === undefined) throw corrupt('size above 2^53')

  const fields: Omit<LayerParts, 'bitmap'>[] = []
  let itemSum = 0
  let byteSum = 0
  for (let i = 0; i < layerCount; i++) {
    const at = DUMP_HEADER_BYTES + DUMP_LINK_BYTES * i
    const byteCount = readUint64(view, at)
    const bitCount = readUint64(view, at + 8)
    const items = readUint64(view, at + 16)
    const errorRate = view.getFloat64(at + 24, true)
    const bitsPerEntry = view.getFloat64(at + 32, true)
    const hashCount = view.getUint32(at + 40, true)
    const capacity = readUint64(view, at + 44)
    const n2 = view.getUint8(at + 52)
    if (byteCount === undefined || bitCount === undefined || items === undefined || capacity === undefined) {
      throw corrupt(`layer ${i}: a count above 2^53`)
    }
    // deps/bloom/bloom.c bloom_validate_integrity
    if (bitCount === 0 || bitCount !== byteCount * 8) {
      throw corrupt(`layer ${i}: bits ${bitCount} != bytes ${byteCount} * 8`)
    }
    if (n2 > 63) throw corrupt(`layer ${i}: n2 ${n2} > 63`)
    // With n2 set RedisBloom maps positions modulo 2^n2, bfs modulo bits: the same only when equal.
    if (n2 !== 0 && bitCount !== 2 ** n2) throw corrupt(`layer ${i}: bits ${bitCount} != 2^${n2}`)
    if (hashCount !== Math.ceil(LN2 * bitsPerEntry)) {
      throw corrupt(`layer ${i}: hashes ${hashCount} != ceil(ln2 * bpe)`)
    }
    const layer = { capacity, errorRate, bitsPerEntry, hashCount, bitCount, items }
    const problem = layerProblem(layer)
    if (problem !== undefined) throw corrupt(`layer ${i}: ${problem}`)
    fields.push(layer)
    itemSum += items
    byteSum += byteCount
  }
  // src/sb.c SB_ValidateIntegrity: the chain's size is the sum of its links' sizes.
  if (itemSum !== totalItems) throw corrupt(`size ${totalItems} != sum of layer sizes ${itemSum}`)
  const problem = filterProblem({ kind: 'redisbloom' }, expansion, nonScaling, layerCount)
  if (problem !== undefined) throw corrupt(problem)
  if (byteSum > maxBytes) throw corrupt(`${byteSum} bitmap bytes exceed the limit of ${maxBytes}`)
  return {
    hashing: { kind: 'redisbloom' },
    expansion,
    nonScaling,
    layers: fields.map((layer) => ({ ...layer, bitmap: allocate(layer.bitCount / 8) })),
  }
}
