/**
 * The bounds every decoder applies before it believes a size, and the encoder applies before it
 * writes one: a file that passes them can be allocated and used; one that does not is refused as
 * `corrupt` (decoders) or with a `RangeError` (encoders, where it is a programmer error).
 */
import type { Hashing, LayerParts } from '../core/scalable-filter.js'

/**
 * Most layers a filter may have: what a version 2 file's u16 layer count holds. Adds cannot get
 * near it: each layer halves the error rate, which reaches 0 (no new layer: `too-large`) after
 * at most about 1075 layers. BF.LOADCHUNK, which could declare more, refuses more at its header.
 */
export const MAX_LAYERS = 0xffff

/** Most layers a version 1 file holds (a file with more is written as version 2). */
export const MAX_LAYERS_V1 = 64

/**
 * Longest filter name, in bytes: what a u32 name length holds. Names are Redis keys, at most
 * `proto-max-bulk-len` bytes, and held as strings, which V8 keeps under 2^29 characters.
 */
export const MAX_NAME_BYTES = 0xffff_ffff

/** Longest name a version 1 file holds (a file with a longer one is written as version 2). */
export const MAX_NAME_BYTES_V1 = 64 * 1024

/** Largest bit count of one layer: 2^53, so every bit index is an exact JavaScript number. */
export const MAX_BIT_COUNT = 2 ** 53

/**
 * Most hash functions (bit positions per item) in one layer. Not 64: RedisBloom sets
 * `hashes = ceil(ln 2 · bpe)`, which is 67 for an error rate of 1e-20 and reaches 1075 at the
 * smallest positive double, and tightened layers of a scalable filter get there quickly.
 */
export const MAX_HASH_COUNT = 2048

/** Largest capacity or item count: counts above 2^53 - 1 would lose precision as numbers. */
export const MAX_ITEMS = Number.MAX_SAFE_INTEGER

/** Largest expansion (growth) value: it is stored as a u32 both by bfs and by RedisBloom. */
export const MAX_EXPANSION = 0xffff_ffff

function isCount(value: number, min: number, max: number): boolean {
  return Number.isSafeInteger(value) && value >= min && value <= max
}

/**
 * Returns why the numeric fields of `layer` cannot be stored or loaded, or `undefined` when they
 * are fine. Checks: bitCount a multiple of 8 in [8, 2^53]; hashCount in [1, MAX_HASH_COUNT];
 * capacity in [1, MAX_ITEMS]; items in [0, MAX_ITEMS]; errorRate in (0, 1); bitsPerEntry finite
 * and positive. The bitmap itself is not looked at.
 */
export function layerProblem(layer: Omit<LayerParts, 'bitmap'>): string | undefined {
  // Not isCount: 2^53 itself is allowed (exact as a double; its highest bit index is 2^53 - 1).
  const bits = layer.bitCount
  if (!(Number.isInteger(bits) && bits >= 8 && bits <= MAX_BIT_COUNT && bits % 8 === 0)) {
    return `bit count ${layer.bitCount} is not a multiple of 8 in [8, 2^53]`
  }
  if (!isCount(layer.hashCount, 1, MAX_HASH_COUNT)) {
    return `hash count ${layer.hashCount} is not in [1, ${MAX_HASH_COUNT}]`
  }
  if (!isCount(layer.capacity, 1, MAX_ITEMS)) return `capacity ${layer.capacity} is not in [1, 2^53)`
  if (!isCount(layer.items, 0, MAX_ITEMS)) return `item count ${layer.items} is not in [0, 2^53)`
  if (!(layer.errorRate > 0 && layer.errorRate < 1)) {
    return `error rate ${layer.errorRate} is not in (0, 1)`
  }
  if (!(Number.isFinite(layer.bitsPerEntry) && layer.bitsPerEntry > 0)) {
    return `bits per entry ${layer.bitsPerEntry} is not a positive finite number`
  }
  return undefined
}

/**
 * Returns why a filter-level setting cannot be stored or loaded, or `undefined`: the layer count
 * must be in [1, MAX_LAYERS], expansion a u32 (0 included: RedisBloom accepts `EXPANSION 0`, and
 * bfs then treats the filter as non-scaling once full), and a seeded hashing's seed a u32.
 */
export function filterProblem(
  hashing: Hashing,
  expansion: number,
  nonScaling: boolean,
  layerCount: number,
): string | undefined {
  if (!isCount(layerCount, 1, MAX_LAYERS)) return `layer count ${layerCount} is not in [1, ${MAX_LAYERS}]`
  if (!isCount(expansion, 0, MAX_EXPANSION)) return `expansion ${expansion} is not a u32`
  if (hashing.kind === 'seeded' && !isCount(hashing.seed, 0, 0xffff_ffff)) {
    return `seed ${hashing.seed} is not a u32`
  }
  return undefined
}

/**
 * Largest Cuckoo sub-filter, in bytes: RedisBloom's SubCF_GetIndex computes a bucket's offset as
 * a `uint32_t` (core/cuckoo-buckets.ts MAX_SUB_FILTER_BYTES, the same bound).
 */
export const MAX_CUCKOO_SUB_FILTER_BYTES = 2 ** 32

/**
 * Most bytes of buckets one Cuckoo filter holds, all sub-filters together: its file, a DUMP
 * payload and a full-sync record are each one array, which Node 20 caps at 2^32 bytes
 * (core/cuckoo-filter.ts MAX_CUCKOO_BYTES, the same bound).
 */
export const MAX_CUCKOO_FILTER_BYTES = 2 ** 31

/** Most sub-filters of a Cuckoo filter: a u16 in RedisBloom (its SCANDUMP header holds a u64). */
export const MAX_CUCKOO_FILTERS = 0xffff
