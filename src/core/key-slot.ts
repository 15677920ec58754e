/**
 * Redis Cluster's key → hash slot (redis 7.0 cluster.c keyHashSlot): CRC16-XMODEM (polynomial
 * 0x1021, initial 0, no reflection) of the key, or of its hash tag, modulo 16384. The hash tag is
 * the bytes between the first `{` and the first `}` after it, when there are any; an empty `{}`
 * (or a `{` with no `}` after it) hashes the whole key. npm's cluster-key-slot 1.1.1 (ioredis)
 * gets the empty-tag case wrong; this is the server's rule, byte for byte.
 */

/** How many hash slots a cluster has (redis CLUSTER_SLOTS). */
export const CLUSTER_SLOTS = 16384

const TABLE = buildTable()

function buildTable(): Uint16Array {
  const table = new Uint16Array(256)
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
    table[byte] = crc
  }
  return table
}

/** CRC16-XMODEM of bytes[start, end): crc16("123456789") = 0x31C3. */
export function crc16(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0
  for (let i = start; i < end; i++) crc = ((crc << 8) & 0xff00) ^ TABLE[((crc >> 8) ^ bytes[i]!) & 0xff]!
  return crc
}

/** The hash slot of the key held in bytes[start, end) (0 .. 16383). */
export function keyHashSlot(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let open = start
  while (open < end && bytes[open] !== 0x7b) open++ // '{'
  if (open < end) {
    let close = open + 1
    while (close < end && bytes[close] !== 0x7d) close++ // '}'
    if (close < end && close > open + 1) return crc16(bytes, open + 1, close) & (CLUSTER_SLOTS - 1)
  }
  return crc16(bytes, start, end) & (CLUSTER_SLOTS - 1)
}

const UTF8 = new TextEncoder()

/** The hash slot of a key given as a string (UTF-8, as a client sends it) or bytes. */
export function slotOf(key: string | Uint8Array): number {
  return keyHashSlot(typeof key === 'string' ? UTF8.encode(key) : key)
}
