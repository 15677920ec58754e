/**
 * Version 2 of the filter file (docs/FORMAT.md, "Version 2"): golden bytes of a small file, its
 * chained checksums recomputed with node:zlib from the description alone, which version each
 * filter gets, and the damage version 2 must still catch.
 */
import { crc32 as zlibCrc32 } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { decodeFilter, encodeFilter, fileVersionFor, type FilterRecord } from '../../src/format/codec.js'
import { decodeLayerHeader, HEADER_BYTES, OFFSET } from '../../src/format/header.js'
import { concat, hex, toHex } from './layer-fixtures.js'
import { codeOf } from './corrupt-bytes.js'

const LN2_SQUARED = 0.480453013918201

// docs/FORMAT.md, "Version 2": two 64-bit layers named "v2", 166 bytes.
const V2_FILE = hex(`
  42 4c 46 01 00 00 00 00 04 00 00 00 04 00 00 00
  00 00 00 00 00 00 d0 3f 40 00 00 00 03 00 00 00
  02 01 02 00 00 00 00 00 00 00 00 00 00 00 00 00
  04 83 2b 65 47 15 07 40 a5 bc 2f ea 08 00 00 00
  11 00 22 00 44 00 88 00 42 4c 46 01 00 00 00 00
  01 00 00 00 04 00 00 00 00 00 00 00 00 00 c0 3f
  40 00 00 00 04 00 00 00 02 01 02 00 00 00 00 00
  00 00 00 00 00 00 00 00 42 a2 e0 8b f5 4f 11 40
  c7 9f 56 fe 08 00 00 00 00 01 00 02 00 04 00 08
  42 46 53 54 00 00 00 00 01 00 00 00 02 00 00 00
  76 32 50 be fc d4`)

const V2_RECORD: FilterRecord = {
  name: new TextEncoder().encode('v2'),
  parts: {
    hashing: { kind: 'redisbloom' },
    expansion: 1,
    nonScaling: false,
    layers: [
      {
        capacity: 4,
        errorRate: 0.25,
        bitsPerEntry: -Math.log(0.25) / LN2_SQUARED,
        hashCount: 3,
        bitCount: 64,
        items: 4,
        bitmap: Uint8Array.of(0x11, 0, 0x22, 0, 0x44, 0, 0x88, 0),
      },
      {
        capacity: 4,
        errorRate: 0.125,
        bitsPerEntry: -Math.log(0.125) / LN2_SQUARED,
        hashCount: 4,
        bitCount: 64,
        items: 1,
        bitmap: Uint8Array.of(0, 1, 0, 2, 0, 4, 0, 8),
      },
    ],
  },
}

const SECOND = HEADER_BYTES + 8 // where layer 1's header starts

/** A layer of 8 bits, for filters of many layers. */
function tinyLayers(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    capacity: 1,
    errorRate: 0.5,
    bitsPerEntry: 1.44,
    hashCount: 1,
    bitCount: 8,
    items: 1,
    bitmap: Uint8Array.of(i & 0xff),
  }))
}

describe('filter file version 2: golden bytes', () => {
  it('encodes the FORMAT.md example byte for byte, and decodes it back', () => {
    expect(toHex(concat(encodeFilter(V2_RECORD, undefined, 2)))).toBe(toHex(V2_FILE))
    expect(decodeFilter(V2_FILE)).toEqual(V2_RECORD)
  })

  it('has version 2 and a u16 layer count at 34..35 in every header, the v1 fields elsewhere', () => {
    for (const at of [0, SECOND]) {
      const view = new DataView(V2_FILE.buffer, at, HEADER_BYTES)
      expect(view.getUint8(OFFSET.version)).toBe(2)
      expect(view.getUint16(34, true)).toBe(2)
      expect(view.getUint32(OFFSET.filterBits, true)).toBe(view.getUint32(OFFSET.filterSize, true) * 8)
    }
  })

  it('stores as layer i checksum the CRC-32 of the file up to the end of layer i, crc words as zeros', () => {
    const zeroed = V2_FILE.slice()
    zeroed.fill(0, OFFSET.fileCrc, OFFSET.fileCrc + 4)
    zeroed.fill(0, SECOND + OFFSET.fileCrc, SECOND + OFFSET.fileCrc + 4)
    const view = new DataView(V2_FILE.buffer)
    expect(view.getUint32(OFFSET.fileCrc, true)).toBe(zlibCrc32(zeroed.subarray(0, SECOND)))
    expect(view.getUint32(SECOND + OFFSET.fileCrc, true)).toBe(zlibCrc32(zeroed.subarray(0, 2 * SECOND)))
  })
})

describe('filter file version 2: which version', () => {
  it('writes version 1 up to 64 layers and 64 KiB of name, version 2 past either', () => {
    expect(fileVersionFor(64, 65536)).toBe(1)
    expect(fileVersionFor(65, 0)).toBe(2)
    expect(fileVersionFor(1, 65537)).toBe(2)
    const versionOf = (record: FilterRecord) => decodeLayerHeader(concat(encodeFilter(record))).version
    const parts = { ...V2_RECORD.parts, layers: tinyLayers(64) }
    expect(versionOf({ name: new Uint8Array(65536), parts })).toBe(1)
    expect(versionOf({ name: new Uint8Array(65537), parts })).toBe(2)
    expect(versionOf({ name: new Uint8Array(1), parts: { ...parts, layers: tinyLayers(65) } })).toBe(2)
  })

  it('reads version 2 for a filter version 1 could hold (a later bfs may write it always)', () => {
    expect(toHex(V2_FILE)).not.toBe(toHex(concat(encodeFilter(V2_RECORD))))
    expect(decodeFilter(concat(encodeFilter(V2_RECORD)))).toEqual(V2_RECORD)
  })
})

describe('filter file version 2: damage', () => {
  it('refuses swapped layers, a dropped last layer and a layer count of 0', () => {
    // Two layers of the same size swapped whole: each header is intact, the chain is not.
    const swapped = concat([
      V2_FILE.subarray(SECOND, 2 * SECOND),
      V2_FILE.subarray(0, SECOND),
      V2_FILE.subarray(2 * SECOND),
    ])
    expect(codeOf(() => decodeFilter(swapped))).toBe('checksum')
    const dropped = concat([V2_FILE.subarray(0, SECOND), V2_FILE.subarray(2 * SECOND)])
    expect(codeOf(() => decodeFilter(dropped))).toBe('bad-magic')
    const none = V2_FILE.slice()
    none[34] = 0
    none[35] = 0
    expect(codeOf(() => decodeFilter(none))).toBe('corrupt')
  })

  it('refuses every single-bit flip', () => {
    const codes = new Set<string>()
    for (let bit = 0; bit < V2_FILE.length * 8; bit++) {
      const copy = V2_FILE.slice()
      copy[bit >> 3]! ^= 1 << (bit & 7)
      const code = codeOf(() => decodeFilter(copy))
      expect(code, `bit ${bit}`).not.toBe('no error')
      codes.add(code)
    }
    expect(codes).toContain('checksum')
    expect(codes).toContain('unknown-version')
  })

  it('holds names past 64 KiB only in version 2: a version 1 file claiming one is corrupt', () => {
    const v1 = concat(encodeFilter({ ...V2_RECORD, name: new Uint8Array(10) }))
    const trailerAt = v1.length - 30
    new DataView(v1.buffer).setUint32(trailerAt + 12, 65537, true)
    expect(codeOf(() => decodeFilter(v1))).toBe('corrupt')
  })
})
