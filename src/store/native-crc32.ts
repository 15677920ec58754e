/** Node's native CRC-32 (zlib) as a {@link Checksum} for the format/ codecs. */
import zlib from 'node:zlib'
import type { Checksum } from '../format/crc32.js'

/** zlib takes a 32-bit length: a longer array (a layer of 4 GiB or more) is checksummed in pieces. */
const CRC_PIECE_BYTES = 2 ** 30

/** Node's native CRC-32 (zlib), the same values as format/crc32.ts, for arrays of any length. */
export const nativeCrc32: Checksum = (data, previous) => {
  if (data.length <= CRC_PIECE_BYTES) return zlib.crc32(data, previous)
  let crc = previous
  for (let at = 0; at < data.length; at += CRC_PIECE_BYTES) {
    crc = zlib.crc32(data.subarray(at, Math.min(at + CRC_PIECE_BYTES, data.length)), crc)
  }
  return crc
}
