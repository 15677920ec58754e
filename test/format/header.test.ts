import { crc32 as zlibCrc32 } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import type { Hashing } from '../../src/core/scalable-filter.js'
import {
  checksumLayerHeader,
  decodeLayerHeader,
  encodeLayerHeader,
  FILTER_BITS_OVERFLOW,
  HEADER_BYTES,
  type LayerFields,
  layerChecksum,
  OFFSET,
  writeLayerChecksum,
} from '../../src/format/header.js'
import { hex, toHex } from './layer-fixtures.js'
import { codeOf, edited } from './corrupt-bytes.js'

const REDISBLOOM: Hashing = { kind: 'redisbloom' }
const BPE_0_005 = -Math.log(0.005) / 0.480453013918201

// The layer of `BF.RESERVE bf 0.01 10` (first layer's error rate tightened to 0.005) after one add.
const EXAMPLE: LayerFields = {
  capacity: 10,
  errorRate: 0.005,
  bitsPerEntry: BPE_0_005,
  hashCount: 8,
  bitCount: 128,
  items: 1,
}
const EXAMPLE_BITMAP = hex('20002002000200200020000002000200')

// docs/FORMAT.md, "Worked example": layer 0's header.
const EXAMPLE_HEADER = hex(`
  42 4c 46 01 00 00 00 00 01 00 00 00 0a 00 00 00
  7b 14 ae 47 e1 7a 74 3f 80 00 00 00 08 00 00 00
  01 01 00 01 00 00 00 00 00 00 00 00 00 00 00 00
  e9 86 2f b2 35 0e 26 40 cf a5 3f 95 10 00 00 00`)

// A header exactly as the original C library writes it, built from the table in the shared
// FORMAT.md: seed 0x12345678, one add, n = 10, p = 0.01, m = 128, k = 9, reserved and crc zero.
const ORIGINAL_HEADER = hex(`
  42 4c 46 01 78 56 34 12 01 00 00 00 0a 00 00 00
  7b 14 ae 47 e1 7a 84 3f 80 00 00 00 09 00 00 00
  00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
  00 00 00 00 00 00 00 00 00 00 00 00 10 00 00 00`)

describe('layer header: golden bytes', () => {
  it('encodes the worked example byte for byte', () => {
    const header = encodeLayerHeader(EXAMPLE, REDISBLOOM, 0, 1)
    writeLayerChecksum(header, layerChecksum(header, EXAMPLE_BITMAP))
    expect(toHex(header)).toBe(toHex(EXAMPLE_HEADER))
  })

  it('stores the CRC-32 of the header (crc word zeroed) followed by the bitmap, as zlib computes it', () => {
    const zeroed = EXAMPLE_HEADER.slice()
    zeroed.fill(0, OFFSET.fileCrc, OFFSET.fileCrc + 4)
    const expected = zlibCrc32(EXAMPLE_BITMAP, zlibCrc32(zeroed))
    expect(new DataView(EXAMPLE_HEADER.buffer).getUint32(OFFSET.fileCrc, true)).toBe(expected)
    expect(checksumLayerHeader(EXAMPLE_HEADER)).toBe(zlibCrc32(zeroed))
    expect(layerChecksum(EXAMPLE_HEADER, EXAMPLE_BITMAP, zlibCrc32)).toBe(expected)
  })

  it('keeps the original fields readable at the original offsets', () => {
    const view = new DataView(EXAMPLE_HEADER.buffer)
    expect(view.getUint32(0, true)).toBe(0x01464c42)
    expect(view.getUint32(8, true)).toBe(1) // count
    expect(view.getUint32(12, true)).toBe(10) // maxItems
    expect(view.getFloat64(16, true)).toBe(0.005) // probFalse
    expect(view.getUint32(24, true)).toBe(128) // filterBits
    expect(view.getUint32(28, true)).toBe(8) // hashFuncs
    expect(view.getUint32(60, true)).toBe(16) // filterSize
    expect(view.getUint32(24, true)).toBe(view.getUint32(60, true) * 8)
  })

  it('decodes the example', () => {
    expect(decodeLayerHeader(EXAMPLE_HEADER)).toEqual({
      version: 1,
      hashing: REDISBLOOM,
      layerIndex: 0,
      layerCount: 1,
      layer: EXAMPLE,
      byteCount: 16,
      crc: 0x953fa5cf,
    })
  })

  it('decodes an original-library header', () => {
    expect(decodeLayerHeader(ORIGINAL_HEADER)).toEqual({
      version: 0,
      hashing: { kind: 'seeded', seed: 0x12345678 },
      layerIndex: 0,
      layerCount: 1,
      layer: { capacity: 10, errorRate: 0.01, bitsPerEntry: 12.8, hashCount: 9, bitCount: 128, items: 1 },
      byteCount: 16,
      crc: 0,
    })
  })

  it('decodes a header at an offset inside a larger, unaligned array', () => {
    const big = new Uint8Array(HEADER_BYTES + 5)
    big.set(EXAMPLE_HEADER, 5)
    expect(decodeLayerHeader(big.subarray(1), 4).layer).toEqual(EXAMPLE)
  })
})

describe('layer header: sizes beyond 32 bits', () => {
  const seeded: Hashing = { kind: 'seeded', seed: 0xffffffff }

  it.each([
    ['largest u32 bit count', 2 ** 32 - 8, 2 ** 32 - 8],
    ['2^32 bits', 2 ** 32, FILTER_BITS_OVERFLOW],
    ['2^40 bits', 2 ** 40, FILTER_BITS_OVERFLOW],
    ['2^53 bits', 2 ** 53, FILTER_BITS_OVERFLOW],
  ])('%s round-trips, with filterBits %#', (_name, bitCount, filterBits) => {
    const layer: LayerFields = {
      capacity: Number.MAX_SAFE_INTEGER,
      errorRate: 0.5,
      bitsPerEntry: 1.25,
      hashCount: 2048,
      bitCount,
      items: 2 ** 52 + 3,
    }
    const header = encodeLayerHeader(layer, seeded, 63, 64)
    const view = new DataView(header.buffer)
    expect(view.getUint32(OFFSET.filterBits, true)).toBe(filterBits)
    expect(view.getUint32(OFFSET.filterSize, true)).toBe((bitCount / 8) % 2 ** 32)
    // A reader of the original layout compares filterBits with filterSize * 8 in u32 arithmetic:
    // the file passes only when the bit count really fits.
    const originalCheck =
      view.getUint32(OFFSET.filterBits, true) === Math.imul(view.getUint32(OFFSET.filterSize, true), 8) >>> 0
    expect(originalCheck).toBe(bitCount < 2 ** 32)
    const decoded = decodeLayerHeader(header)
    expect(decoded.layer).toEqual(layer)
    expect(decoded.byteCount).toBe(bitCount / 8)
    expect(decoded.hashing).toEqual(seeded)
    expect([decoded.layerIndex, decoded.layerCount]).toEqual([63, 64])
  })

  it('refuses counts above 2^53 as corrupt', () => {
    const header = encodeLayerHeader(EXAMPLE, REDISBLOOM, 0, 1)
    expect(codeOf(() => decodeLayerHeader(edited(header, (v) => v.setUint32(OFFSET.countHigh, 0x200000, true))))).toBe(
      'corrupt',
    )
    expect(
      codeOf(() => decodeLayerHeader(edited(header, (v) => v.setUint32(OFFSET.maxItemsHigh, 0xffffffff, true)))),
    ).toBe('corrupt')
    const bigBytes = edited(header, (v) => {
      v.setUint32(OFFSET.filterSizeHigh, 0x40001, true) // 2^50 + 2^32 bytes
      v.setUint32(OFFSET.filterBits, FILTER_BITS_OVERFLOW, true)
    })
    expect(codeOf(() => decodeLayerHeader(bigBytes))).toBe('corrupt')
  })
})

describe('layer header: rejections', () => {
  it('refuses a wrong magic, a short header and unknown versions', () => {
    expect(codeOf(() => decodeLayerHeader(edited(EXAMPLE_HEADER, (v) => v.setUint8(3, 2))))).toBe('bad-magic')
    expect(codeOf(() => decodeLayerHeader(EXAMPLE_HEADER.subarray(0, 63)))).toBe('truncated')
    expect(codeOf(() => decodeLayerHeader(EXAMPLE_HEADER.subarray(0, 2)))).toBe('truncated')
    for (const version of [3, 7, 255]) {
      const header = edited(EXAMPLE_HEADER, (v) => v.setUint8(OFFSET.version, version))
      expect(() => decodeLayerHeader(header)).toThrow(`unknown format version ${version}`)
      expect(codeOf(() => decodeLayerHeader(header))).toBe('unknown-version')
    }
  })

  it('refuses an original header whose filterBits != filterSize * 8 or whose reserved words are set', () => {
    expect(
      codeOf(() => decodeLayerHeader(edited(ORIGINAL_HEADER, (v) => v.setUint32(OFFSET.filterSize, 15, true)))),
    ).toBe('corrupt')
    expect(codeOf(() => decodeLayerHeader(edited(ORIGINAL_HEADER, (v) => v.setUint32(OFFSET.fileCrc, 1, true))))).toBe(
      'corrupt',
    )
    expect(codeOf(() => decodeLayerHeader(edited(ORIGINAL_HEADER, (v) => v.setUint8(40, 1))))).toBe('corrupt')
    expect(codeOf(() => decodeLayerHeader(edited(ORIGINAL_HEADER, (v) => v.setUint32(OFFSET.maxItems, 0, true))))).toBe(
      'corrupt',
    )
    expect(
      codeOf(() => decodeLayerHeader(edited(ORIGINAL_HEADER, (v) => v.setUint32(OFFSET.hashFuncs, 0, true)))),
    ).toBe('corrupt')
    const empty = edited(ORIGINAL_HEADER, (v) => {
      v.setUint32(OFFSET.filterBits, 0, true)
      v.setUint32(OFFSET.filterSize, 0, true)
    })
    expect(codeOf(() => decodeLayerHeader(empty))).toBe('corrupt')
  })

  it.each([
    ['unknown flag', (v: DataView) => v.setUint8(OFFSET.flags, 3)],
    ['seed with RedisBloom hashing', (v: DataView) => v.setUint32(OFFSET.seed, 1, true)],
    ['layer count 0', (v: DataView) => v.setUint8(OFFSET.layerCount, 0)],
    ['layer count 65', (v: DataView) => v.setUint8(OFFSET.layerCount, 65)],
    ['index past count', (v: DataView) => v.setUint8(OFFSET.layerIndex, 1)],
    ['filterBits mismatch', (v: DataView) => v.setUint32(OFFSET.filterBits, 136, true)],
    ['error rate 0', (v: DataView) => v.setFloat64(OFFSET.probFalse, 0, true)],
    ['error rate 1', (v: DataView) => v.setFloat64(OFFSET.probFalse, 1, true)],
    ['error rate NaN', (v: DataView) => v.setFloat64(OFFSET.probFalse, NaN, true)],
    ['bits per entry Infinity', (v: DataView) => v.setFloat64(OFFSET.bitsPerEntry, Infinity, true)],
    ['hash count 0', (v: DataView) => v.setUint32(OFFSET.hashFuncs, 0, true)],
    ['hash count 2049', (v: DataView) => v.setUint32(OFFSET.hashFuncs, 2049, true)],
    ['capacity 0', (v: DataView) => v.setUint32(OFFSET.maxItems, 0, true)],
  ])('refuses a v1 header with %s as corrupt', (_name, edit) => {
    expect(codeOf(() => decodeLayerHeader(edited(EXAMPLE_HEADER, edit)))).toBe('corrupt')
  })

  it('throws RangeError when asked to encode what it could not decode', () => {
    expect(() => encodeLayerHeader({ ...EXAMPLE, bitCount: 100 }, REDISBLOOM, 0, 1)).toThrow(RangeError)
    expect(() => encodeLayerHeader({ ...EXAMPLE, bitCount: 2 ** 53 + 8 }, REDISBLOOM, 0, 1)).toThrow(RangeError)
    expect(() => encodeLayerHeader({ ...EXAMPLE, errorRate: 1 }, REDISBLOOM, 0, 1)).toThrow(RangeError)
    expect(() => encodeLayerHeader({ ...EXAMPLE, items: -1 }, REDISBLOOM, 0, 1)).toThrow(RangeError)
    expect(() => encodeLayerHeader(EXAMPLE, REDISBLOOM, 1, 1)).toThrow(RangeError)
    expect(() => encodeLayerHeader(EXAMPLE, REDISBLOOM, 0, 65)).toThrow(RangeError)
    expect(() => encodeLayerHeader(EXAMPLE, { kind: 'seeded', seed: 2 ** 32 }, 0, 1)).toThrow(RangeError)
  })
})
