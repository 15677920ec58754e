/**
 * The filters a snapshot, the full-sync payload and DUMP carry as one whole file, encoded at the
 * capture (a point-in-time copy, as their buckets and slices are small and few): window filters
 * (format/window-file.ts) and Cuckoo filters (format/cuckoo-file.ts). Bloom filters are written
 * layer by layer instead (format/codec.ts). The two files are told apart by their magic.
 */
import { CuckooFilter } from '../core/cuckoo-filter.js'
import { WindowFilter } from '../core/window-filter.js'
import type { Checksum } from '../format/crc32.js'
import { decodeCuckooFile, encodeCuckooFile, isCuckooFile, type CuckooRecord } from '../format/cuckoo-file.js'
import { decodeWindowFile, encodeWindowFile, type WindowRecord } from '../format/window-file.js'
import type { FilterEntry } from './registry.js'

/** The whole file of a window or Cuckoo filter entry under `name`; undefined for a Bloom filter. */
export function wholeFileOf(entry: FilterEntry, name: Uint8Array, checksum: Checksum): Uint8Array | undefined {
  if (entry.kind === 'window') return encodeWindowFile({ name, parts: entry.filter.toParts() }, checksum)
  if (entry.kind === 'cuckoo') return encodeCuckooFile({ name, parts: entry.filter.toParts() }, checksum)
  return undefined
}

/** A decoded whole file: a window filter's record or a Cuckoo filter's. */
export type WholeFileRecord = WindowRecord | CuckooRecord

/** Decodes a window or Cuckoo filter file (by its magic). @throws DecodeError */
export function decodeWholeFile(bytes: Uint8Array, checksum: Checksum): WholeFileRecord {
  return isCuckooFile(bytes) ? decodeCuckooFile(bytes, checksum) : decodeWindowFile(bytes, checksum)
}

/** The filter a decoded whole file holds. @throws RangeError for parts no filter can be built from */
export function filterOfWholeFile(record: WholeFileRecord): WindowFilter | CuckooFilter {
  return 'subFilters' in record.parts ? CuckooFilter.fromParts(record.parts) : WindowFilter.fromParts(record.parts)
}
