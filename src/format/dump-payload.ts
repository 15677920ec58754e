/**
 * The payload of DUMP / RESTORE / MIGRATE for a bfs key (docs/MIGRATE.md), framed as redis frames
 * its own (redis 7.0 cluster.c createDumpPayload / verifyDumpPayload):
 * ```
 * 0      u8   kind: 0xB1 a Bloom filter file (docs/FORMAT.md), 0xB2 a window filter file, 0xB3 a
 *             Cuckoo filter file
 * 1      ...  the file, as SAVE writes it, with an empty name (RESTORE names the key)
 * n-10   u16  payload version, little-endian: 0xBF01
 * n-8    u64  CRC-64/Jones (crc64.ts) of bytes 0 .. n-10, little-endian
 * ```
 * redis refuses any payload whose version is above its RDB_VERSION (10 in 7.0), so a real
 * redis-server answers a bfs payload "DUMP payload version or checksum are wrong", and bfs answers a
 * redis payload (version 10 or below) the same: neither misreads the other's bytes.
 */
import { crc64, sameCrc64, writeCrc64 } from './crc64.js'

/** The kind byte of a Bloom filter file payload (not an RDB object type: redis has 0 .. 21). */
export const DUMP_KIND_BLOOM = 0xb1
/** The kind byte of a window filter file payload. */
export const DUMP_KIND_WINDOW = 0xb2
/** The kind byte of a Cuckoo filter file payload. */
export const DUMP_KIND_CUCKOO = 0xb3
/** The footer's version: above any RDB_VERSION redis will reach soon (7.0: 10, 7.4: 12). */
export const DUMP_PAYLOAD_VERSION = 0xbf01
/** Kind byte before, version and CRC-64 after the file. */
export const DUMP_FRAMING_BYTES = 1 + 2 + 8

/** The payload of a file of `kind`, given as pieces (a Bloom filter file's encodeFilter output). */
export function encodeDumpPayload(kind: number, file: readonly Uint8Array[]): Uint8Array {
  let fileBytes = 0
  for (const piece of file) fileBytes += piece.length
  const out = new Uint8Array(fileBytes + DUMP_FRAMING_BYTES)
  out[0] = kind
  let at = 1
  for (const piece of file) {
    out.set(piece, at)
    at += piece.length
  }
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength)
  view.setUint16(at, DUMP_PAYLOAD_VERSION, true)
  writeCrc64(view, at + 2, crc64(out, 0, at + 2))
  return out
}

/**
 * Whether `payload` is a bfs payload whose version and checksum hold (redis verifyDumpPayload:
 * at least 10 bytes, a version this build reads, the CRC-64); false answers "DUMP payload
 * version or checksum are wrong".
 */
export function verifyDumpPayload(payload: Uint8Array): boolean {
  if (payload.length < DUMP_FRAMING_BYTES) return false
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength)
  const footer = payload.length - 10
  if (view.getUint16(footer, true) !== DUMP_PAYLOAD_VERSION) return false
  return sameCrc64(view, footer + 2, crc64(payload, 0, footer + 2))
}

/** The kind byte and the file of a verified payload (a view, not a copy). */
export function dumpPayloadFile(payload: Uint8Array): { kind: number; file: Uint8Array } {
  return { kind: payload[0]!, file: payload.subarray(1, payload.length - 10) }
}
