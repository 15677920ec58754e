/**
 * CRC-64/Jones, the checksum of redis's DUMP payload footer and RDB files (redis src/crc64.c:
 * reflected polynomial 0xad93d23594c935a9, initial value 0, no final xor): crc64("123456789") =
 * 0xe9c6d914c4b8d9ca. Computed on two 32-bit halves with a byte table (no BigInt per byte).
 */

/** The table as two halves: entry n is HIGH[n] * 2^32 + LOW[n]. */
const HIGH = new Uint32Array(256)
const LOW = new Uint32Array(256)

{
  const reflected = 0x95ac9329ac4bc9b5n // 0xad93d23594c935a9 with its 64 bits reversed
  for (let n = 0; n < 256; n++) {
    let crc = BigInt(n)
    for (let bit = 0; bit < 8; bit++) crc = crc & 1n ? (crc >> 1n) ^ reflected : crc >> 1n
    HIGH[n] = Number(crc >> 32n)
    LOW[n] = Number(crc & 0xffffffffn)
  }
}

/** A running CRC-64 as its two 32-bit halves. */
export interface Crc64 {
  high: number
  low: number
}

/** Continues `crc` (start with {high: 0, low: 0}) over bytes[start, end); returns it. */
export function crc64Update(crc: Crc64, bytes: Uint8Array, start = 0, end = bytes.length): Crc64 {
  let high = crc.high
  let low = crc.low
  for (let i = start; i < end; i++) {
    const index = (low ^ bytes[i]!) & 0xff
    low = ((low >>> 8) | (high << 24)) ^ LOW[index]!
    high = (high >>> 8) ^ HIGH[index]!
  }
  crc.high = high >>> 0
  crc.low = low >>> 0
  return crc
}

/** The CRC-64 of bytes[start, end), as redis crc64(0, p, len). */
export function crc64(bytes: Uint8Array, start = 0, end = bytes.length): Crc64 {
  return crc64Update({ high: 0, low: 0 }, bytes, start, end)
}

/** Writes `crc` little-endian at `offset` (redis memrev64ifbe: the footer is little-endian). */
export function writeCrc64(view: DataView, offset: number, crc: Crc64): void {
  view.setUint32(offset, crc.low, true)
  view.setUint32(offset + 4, crc.high, true)
}

/** Whether the little-endian CRC-64 at `offset` is `crc`. */
export function sameCrc64(view: DataView, offset: number, crc: Crc64): boolean {
  return view.getUint32(offset, true) === crc.low && view.getUint32(offset + 4, true) === crc.high
}
