/**
 * How many bitmap bytes a SCANDUMP header declares, read without decoding or allocating: what
 * BF.LOADCHUNK checks against 'max-filter-bytes' before it decodes, and what bfs-copy shows as a
 * filter's size.
 */
import { DUMP_HEADER_BYTES, DUMP_LINK_BYTES } from './dump-header.js'
import { readUint64 } from './uint64.js'

/**
 * Returns the sum of the layers' `bytes` fields of a SCANDUMP header whose length matches its
 * layer count (20 + 53 × nfilters), or `undefined` when it does not (decodeDumpHeader refuses
 * those). A field past 2^53 counts as `Infinity`. Nothing else is checked.
 */
export function dumpHeaderBitmapBytes(header: Uint8Array): number | undefined {
  if (header.length < DUMP_HEADER_BYTES) return undefined
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength)
  const layerCount = view.getUint32(8, true)
  if (header.length !== DUMP_HEADER_BYTES + DUMP_LINK_BYTES * layerCount) return undefined
  let total = 0
  for (let i = 0; i < layerCount; i++) total += readUint64(view, DUMP_HEADER_BYTES + DUMP_LINK_BYTES * i) ?? Infinity
  return total
}
