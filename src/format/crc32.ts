/**
 * CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), the checksum of zlib, gzip and PNG.
 *
 * Pure JavaScript, slice-by-8. It gives the same result as Node's `zlib.crc32(data, previous)`, so
 * the store may pass that (faster, native) function wherever this module's codecs take a
 * {@link Checksum}; the file format does not depend on which one computed the value.
 */

/**
 * A CRC-32 function: the checksum of `data`, continuing from the checksum `previous` of the bytes
 * before it (0 to start). `checksum(b, checksum(a, 0)) === checksum(a ++ b, 0)`.
 */
export type Checksum = (data: Uint8Array, previous: number) => number

const POLYNOMIAL = 0xedb88320

// TABLES[k * 256 + n] is the CRC register after byte n followed by k zero bytes (slice-by-8).
const TABLES = buildTables()

function buildTables(): Int32Array {
  const tables = new Int32Array(8 * 256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let bit = 0; bit < 8; bit++) c = c & 1 ? POLYNOMIAL ^ (c >>> 1) : c >>> 1
    tables[n] = c
  }
  for (let k = 1; k < 8; k++) {
    for (let n = 0; n < 256; n++) {
      const prev = tables[(k - 1) * 256 + n]
      tables[k * 256 + n] = (prev >>> 8) ^ tables[prev & 0xff]
    }
  }
  return tables
}

/**
 * Returns the CRC-32 of `data` as an unsigned 32-bit integer, continuing from `previous` (the
 * CRC-32 of the bytes before `data`; 0 to start). Feeding a long array slice by slice gives the
 * same result as one call over the whole array. Rejects nothing; `previous` is taken modulo 2^32.
 */
export function crc32(data: Uint8Array, previous = 0): number {
  const t = TABLES
  let crc = ~previous | 0
  let i = 0
  const end8 = data.length - (data.length % 8)
  while (i < end8) {
    const a = crc ^ (data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24))
    const b = data[i + 4] | (data[i + 5] << 8) | (data[i + 6] << 16) | (data[i + 7] << 24)
    crc =
      t[1792 + (a & 0xff)] ^
      t[1536 + ((a >>> 8) & 0xff)] ^
      t[1280 + ((a >>> 16) & 0xff)] ^
      t[1024 + (a >>> 24)] ^
      t[768 + (b & 0xff)] ^
      t[512 + ((b >>> 8) & 0xff)] ^
      t[256 + ((b >>> 16) & 0xff)] ^
      t[b >>> 24]
    i += 8
  }
  while (i < data.length) {
    crc = t[(crc ^ data[i]) & 0xff] ^ (crc >>> 8)
    i++
  }
  return ~crc >>> 0
}
