import { crc32 as zlibCrc32 } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import type { FilterParts } from '../../src/core/scalable-filter.js'
import {
  type ByteSource,
  decodeFilter,
  encodedLength,
  encodeFilter,
  type FilterRecord,
} from '../../src/format/codec.js'
import { DecodeError } from '../../src/format/decode-error.js'
import {
  decodeFileTrailer,
  decodeFileTrailerLength,
  encodeFileTrailer,
  TRAILER_FIXED_BYTES,
} from '../../src/format/file-trailer.js'
import {
  checksumLayerHeader,
  decodeLayerHeader,
  encodeLayerHeader,
  FILTER_BITS_OVERFLOW,
  HEADER_BYTES,
  OFFSET,
  writeLayerChecksum,
} from '../../src/format/header.js'
import { MAX_LAYERS, MAX_NAME_BYTES, MAX_NAME_BYTES_V1 } from '../../src/format/limits.js'
import { concat, hex, makeScalable, toHex } from './layer-fixtures.js'
import { codeOf } from './corrupt-bytes.js'

const utf8 = (text: string) => new TextEncoder().encode(text)

// docs/FORMAT.md, "Worked example": `BF.RESERVE bf 0.01 10` then `BF.ADD bf hello`, 102 bytes.
const EXAMPLE_FILE = hex(`
  42 4c 46 01 00 00 00 00 01 00 00 00 0a 00 00 00
  7b 14 ae 47 e1 7a 74 3f 80 00 00 00 08 00 00 00
  01 01 00 01 00 00 00 00 00 00 00 00 00 00 00 00
  e9 86 2f b2 35 0e 26 40 cf a5 3f 95 10 00 00 00
  20 00 20 02 00 02 00 20 00 20 00 00 02 00 02 00
  42 46 53 54 00 00 00 00 02 00 00 00 02 00 00 00
  62 66 eb 47 63 7d`)

const EXAMPLE_RECORD: FilterRecord = {
  name: utf8('bf'),
  parts: {
    hashing: { kind: 'redisbloom' },
    expansion: 2,
    nonScaling: false,
    layers: [
      {
        capacity: 10,
        errorRate: 0.005,
        bitsPerEntry: -Math.log(0.005) / 0.480453013918201,
        hashCount: 8,
        bitCount: 128,
        items: 1,
        // MurmurHash64A positions of "hello" (h1 + i·h2) mod 128, i = 0..7: 25 61 97 5 41 77 113 21
        bitmap: hex('20002002000200200020000002000200'),
      },
    ],
  },
}

// An original-library file built by hand from the shared FORMAT.md table: seed 0x12345678, one
// add, n = 10, p = 0.01, m = 128, k = 9, then 16 bytes of bitmap.
const ORIGINAL_FILE = hex(`
  42 4c 46 01 78 56 34 12 01 00 00 00 0a 00 00 00
  7b 14 ae 47 e1 7a 84 3f 80 00 00 00 09 00 00 00
  00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
  00 00 00 00 00 00 00 00 00 00 00 00 10 00 00 00
  01 02 04 08 10 20 40 80 ff 00 00 00 00 00 00 aa`)

function encodeBytes(record: FilterRecord): Uint8Array {
  return concat(encodeFilter(record))
}

/** Re-checksums layer `i`'s header after an edit, so a test reaches the check behind the CRC. */
function resealLayer(file: Uint8Array, headerAt: number): void {
  const byteCount = decodeLayerHeader(file, headerAt).byteCount
  const bitmap = file.subarray(headerAt + HEADER_BYTES, headerAt + HEADER_BYTES + byteCount)
  const header = file.subarray(headerAt, headerAt + HEADER_BYTES)
  writeLayerChecksum(header, zlibCrc32(bitmap, checksumLayerHeader(header)))
}

describe('filter file: the worked example', () => {
  it('encodes byte for byte', () => {
    expect(toHex(encodeBytes(EXAMPLE_RECORD))).toBe(toHex(EXAMPLE_FILE))
    expect(encodedLength(EXAMPLE_RECORD)).toBe(102)
  })

  it('decodes to the same record', () => {
    expect(decodeFilter(EXAMPLE_FILE)).toEqual(EXAMPLE_RECORD)
  })

  it('ends with a trailer whose CRC-32 is zlib.crc32 of its first 18 bytes', () => {
    const trailer = EXAMPLE_FILE.subarray(80)
    expect(new DataView(trailer.buffer, trailer.byteOffset).getUint32(18, true)).toBe(
      zlibCrc32(trailer.subarray(0, 18)),
    )
  })

  it('gives the same bytes with node:zlib crc32 as the checksum', () => {
    expect(toHex(concat(encodeFilter(EXAMPLE_RECORD, zlibCrc32)))).toBe(toHex(EXAMPLE_FILE))
    expect(decodeFilter(EXAMPLE_FILE, zlibCrc32)).toEqual(EXAMPLE_RECORD)
  })
})

describe('filter file: original-library files', () => {
  it('decode as a non-scaling single-layer seeded filter with no name', () => {
    const record = decodeFilter(ORIGINAL_FILE)
    expect(record).toEqual({
      name: new Uint8Array(0),
      parts: {
        hashing: { kind: 'seeded', seed: 0x12345678 },
        expansion: 0,
        nonScaling: true,
        layers: [
          {
            capacity: 10,
            errorRate: 0.01,
            bitsPerEntry: 12.8,
            hashCount: 9,
            bitCount: 128,
            items: 1,
            bitmap: ORIGINAL_FILE.subarray(64),
          },
        ],
      },
    })
  })

  it('reject truncation at every length, trailing bytes, a wrong magic', () => {
    for (let n = 0; n < ORIGINAL_FILE.length; n++) {
      expect(
        codeOf(() => decodeFilter(ORIGINAL_FILE.subarray(0, n))),
        `length ${n}`,
      ).toBe('truncated')
    }
    expect(codeOf(() => decodeFilter(concat([ORIGINAL_FILE, new Uint8Array(1)])))).toBe('corrupt')
    const bad = ORIGINAL_FILE.slice()
    bad[0] = 0x43
    expect(codeOf(() => decodeFilter(bad))).toBe('bad-magic')
  })

  it('a seeded single-layer bfs file reads back through the original fields', () => {
    const record = decodeFilter(ORIGINAL_FILE)
    const file = encodeBytes(record)
    const view = new DataView(file.buffer)
    // What a reader of the original layout looks at: magic, seed, count, n, p, m, k, filterSize.
    expect(toHex(file.subarray(0, 32))).toBe(toHex(ORIGINAL_FILE.subarray(0, 32)))
    expect(view.getUint32(60, true)).toBe(16)
    expect(toHex(file.subarray(64, 80))).toBe(toHex(ORIGINAL_FILE.subarray(64)))
    expect(decodeFilter(file)).toEqual(record)
  })
})

describe('filter file: round trips', () => {
  const cases: [string, FilterRecord][] = [
    ['scalable, 4 layers, RedisBloom hashing', { name: utf8('filter:1'), parts: makeScalable(4) }],
    [
      'seeded hashing, expansion 4',
      { name: utf8('s'), parts: makeScalable(3, { kind: 'seeded', seed: 0xdeadbeef }, 4) },
    ],
    ['non-scaling', { name: utf8('ns'), parts: { ...makeScalable(1), nonScaling: true, expansion: 0 } }],
    [
      'scaling with expansion 0 (BF.RESERVE ... EXPANSION 0)',
      { name: utf8('e0'), parts: { ...makeScalable(1), expansion: 0 } },
    ],
    ['empty name', { name: new Uint8Array(0), parts: makeScalable(2) }],
    [
      'binary name, every byte value',
      { name: Uint8Array.from({ length: 512 }, (_, i) => (i * 7) & 0xff), parts: makeScalable(1) },
    ],
    ['longest version 1 name', { name: new Uint8Array(MAX_NAME_BYTES_V1).fill(0x61), parts: makeScalable(1) }],
    [
      'a name one byte longer (version 2)',
      { name: new Uint8Array(MAX_NAME_BYTES_V1 + 1).fill(0x62), parts: makeScalable(2) },
    ],
    ['a 100,000-byte name (version 2)', { name: new Uint8Array(100_000).fill(0xfe), parts: makeScalable(1) }],
    [
      '64 layers of 8 bits',
      {
        name: utf8('many'),
        parts: {
          hashing: { kind: 'redisbloom' },
          expansion: 1,
          nonScaling: false,
          layers: Array.from({ length: 64 }, (_, i) => ({
            capacity: 1,
            errorRate: 0.5,
            bitsPerEntry: 1.44,
            hashCount: 1,
            bitCount: 8,
            items: i % 2,
            bitmap: Uint8Array.of(i),
          })),
        },
      },
    ],
  ]

  for (const count of [65, 300, 1100]) {
    cases.push([
      `${count} layers of 8 bits (version 2)`,
      {
        name: utf8('deep'),
        parts: {
          hashing: { kind: 'redisbloom' },
          expansion: 1,
          nonScaling: false,
          layers: Array.from({ length: count }, (_, i) => ({
            capacity: 1,
            errorRate: 0.5,
            bitsPerEntry: 1.44,
            hashCount: 1,
            bitCount: 8,
            items: i % 2,
            bitmap: Uint8Array.of(i),
          })),
        },
      },
    ])
  }

  it.each(cases)('%s', (_name, record) => {
    const pieces = encodeFilter(record)
    const file = concat(pieces)
    expect(file.length).toBe(encodedLength(record))
    expect(decodeFilter(file)).toEqual(record)
  })

  it('hands out the bitmaps without copying, both ways', () => {
    const record: FilterRecord = { name: utf8('x'), parts: makeScalable(3) }
    const pieces = encodeFilter(record)
    expect(pieces).toHaveLength(7)
    record.parts.layers.forEach((layer, i) => expect(pieces[2 * i + 1]).toBe(layer.bitmap))
    const file = concat(pieces)
    const decoded = decodeFilter(file)
    for (const layer of decoded.parts.layers) expect((layer.bitmap as Uint8Array).buffer).toBe(file.buffer)
    expect(decoded.name.buffer).not.toBe(file.buffer)
  })

  it('the pieces a streaming writer would use give the same file', () => {
    const record: FilterRecord = { name: utf8('stream'), parts: makeScalable(3) }
    const { hashing, layers } = record.parts
    const pieces: Uint8Array[] = []
    layers.forEach((layer, i) => {
      const header = encodeLayerHeader(layer, hashing, i, layers.length)
      let crc = checksumLayerHeader(header)
      for (let at = 0; at < (layer.bitmap as Uint8Array).length; at += 5)
        crc = zlibCrc32((layer.bitmap as Uint8Array).subarray(at, at + 5), crc)
      writeLayerChecksum(header, crc)
      pieces.push(header, layer.bitmap as Uint8Array)
    })
    pieces.push(encodeFileTrailer({ name: record.name, expansion: record.parts.expansion, nonScaling: false }))
    expect(toHex(concat(pieces))).toBe(toHex(encodeBytes(record)))
  })

  it('refuses to encode what it could not decode', () => {
    const good = makeScalable(2)
    const bad =
      (parts: FilterParts, name = utf8('n')) =>
      () =>
        encodeFilter({ name, parts })
    expect(bad({ ...good, layers: [] })).toThrow(RangeError)
    expect(bad({ ...good, layers: Array.from({ length: MAX_LAYERS + 1 }, () => good.layers[0]!) })).toThrow(RangeError)
    expect(() =>
      encodeFilter(
        { name: utf8('n'), parts: { ...good, layers: Array.from({ length: 65 }, () => good.layers[0]!) } },
        undefined,
        1,
      ),
    ).toThrow(RangeError)
    expect(bad({ ...good, layers: [{ ...good.layers[0]!, bitmap: new Uint8Array(3) }] })).toThrow(RangeError)
    expect(bad({ ...good, expansion: -1 })).toThrow(RangeError)
    expect(bad({ ...good, expansion: 2 ** 32 })).toThrow(RangeError)
    // A stand-in: only the length of the name is looked at before the refusal.
    expect(bad(good, { length: MAX_NAME_BYTES + 1 } as unknown as Uint8Array<ArrayBuffer>)).toThrow(RangeError)
  })
})

describe('filter file: damage', () => {
  const multi = encodeBytes({ name: utf8('k\u00ff'), parts: makeScalable(3) })

  it.each([
    ['the worked example', EXAMPLE_FILE],
    ['a 3-layer file', multi],
  ])('every single-bit flip in %s is refused', (_name, file) => {
    const codes = new Set<string>()
    for (let bit = 0; bit < file.length * 8; bit++) {
      const damaged = file.slice()
      damaged[bit >> 3]! ^= 1 << (bit & 7)
      let code = 'no error'
      try {
        decodeFilter(damaged)
      } catch (error) {
        if (!(error instanceof DecodeError)) throw error
        code = error.code
      }
      expect(code, `bit ${bit}`).not.toBe('no error')
      codes.add(code)
    }
    expect(codes).toContain('checksum')
  })

  it.each([
    ['the worked example', EXAMPLE_FILE],
    ['a 3-layer file', multi],
  ])('every truncation of %s is refused as truncated', (_name, file) => {
    for (let n = 0; n < file.length; n++) {
      expect(
        codeOf(() => decodeFilter(file.subarray(0, n))),
        `length ${n}`,
      ).toBe('truncated')
    }
  })

  it('refuses trailing bytes, a wrong magic and an unknown version naming it', () => {
    expect(codeOf(() => decodeFilter(concat([EXAMPLE_FILE, Uint8Array.of(0)])))).toBe('corrupt')
    const magic = EXAMPLE_FILE.slice()
    magic[1] = 0
    expect(codeOf(() => decodeFilter(magic))).toBe('bad-magic')
    const future = EXAMPLE_FILE.slice()
    future[OFFSET.version] = 9
    expect(() => decodeFilter(future)).toThrow(/version 9/)
    expect(codeOf(() => decodeFilter(future))).toBe('unknown-version')
    expect(codeOf(() => decodeFilter(new Uint8Array(0)))).toBe('truncated')
  })

  it('refuses layers out of order, mixed hashing, a later layer with another version', () => {
    const file = multi.slice()
    const second = HEADER_BYTES + decodeLayerHeader(file).byteCount
    const edit = (at: number, value: number, where = second) => {
      const copy = file.slice()
      copy[where + at] = value
      resealLayer(copy, where)
      return copy
    }
    expect(codeOf(() => decodeFilter(edit(OFFSET.layerIndex, 2)))).toBe('corrupt')
    expect(codeOf(() => decodeFilter(edit(OFFSET.layerCount, 4)))).toBe('corrupt')
    expect(codeOf(() => decodeFilter(edit(OFFSET.flags, 0)))).toBe('corrupt')
    expect(codeOf(() => decodeFilter(edit(OFFSET.version, 0)))).toBe('corrupt')
    expect(codeOf(() => decodeFilter(edit(OFFSET.version, 2)))).toBe('corrupt')
    expect(codeOf(() => decodeFilter(edit(OFFSET.version, 3)))).toBe('unknown-version')
  })

  it('refuses absurd sizes without allocating them', () => {
    // A sealed header claiming 2^50 bitmap bytes (2^53 bits): valid fields, but the file is 102 bytes.
    const huge = EXAMPLE_FILE.slice()
    const view = new DataView(huge.buffer)
    view.setUint32(OFFSET.filterSizeHigh, 2 ** 18, true)
    view.setUint32(OFFSET.filterSize, 0, true)
    view.setUint32(OFFSET.filterBits, FILTER_BITS_OVERFLOW, true)
    writeLayerChecksum(huge, 0)
    // Not a timing: the bytes of every ArrayBuffer alive, which an allocation of the claim would grow.
    const buffersBefore = process.memoryUsage().arrayBuffers
    expect(codeOf(() => decodeFilter(huge))).toBe('truncated')
    expect(process.memoryUsage().arrayBuffers - buffersBefore).toBeLessThan(1024 * 1024)
    // Past 2^53 bits, or a layer count of 200: corrupt before any length is believed.
    view.setUint32(OFFSET.filterSizeHigh, 2 ** 18 + 1, true)
    expect(codeOf(() => decodeFilter(huge))).toBe('corrupt')
    const layers = EXAMPLE_FILE.slice()
    layers[OFFSET.layerCount] = 200
    expect(codeOf(() => decodeFilter(layers))).toBe('corrupt')
  })

  it('refuses a trailer claiming a 4 GiB name, a bad trailer magic, trailing bytes', () => {
    const trailerAt = 80
    const name = EXAMPLE_FILE.slice()
    new DataView(name.buffer).setUint32(trailerAt + 12, 0xffffffff, true)
    expect(codeOf(() => decodeFilter(name))).toBe('corrupt')
    expect(codeOf(() => decodeFileTrailerLength(name, trailerAt))).toBe('corrupt')
    const magic = EXAMPLE_FILE.slice()
    magic[trailerAt] = 0
    expect(codeOf(() => decodeFilter(magic))).toBe('corrupt')
    expect(decodeFileTrailerLength(EXAMPLE_FILE, trailerAt)).toBe(22)
    expect(codeOf(() => decodeFileTrailer(EXAMPLE_FILE.subarray(0, 101), trailerAt))).toBe('truncated')
    expect(
      codeOf(() => decodeFileTrailer(EXAMPLE_FILE.subarray(0, trailerAt + TRAILER_FIXED_BYTES - 1), trailerAt)),
    ).toBe('truncated')
  })
})

describe('decodeFilter from a ByteSource (a file read piece by piece)', () => {
  /** A source over `bytes` that records every read and can pretend to be far longer. */
  function recording(bytes: Uint8Array, length = bytes.length) {
    const reads: [number, number][] = []
    const source: ByteSource = {
      length,
      read(offset, count) {
        reads.push([offset, count])
        if (offset + count > bytes.length) {
          if (count > 2 ** 31) throw new RangeError('Invalid typed array length: ' + count)
          const out = new Uint8Array(count)
          out.set(bytes.subarray(offset, Math.min(offset + count, bytes.length)))
          return out
        }
        return bytes.slice(offset, offset + count)
      },
    }
    return { source, reads }
  }
  const record: FilterRecord = { name: utf8('pieces'), parts: makeScalable(3) }
  const whole = concat(encodeFilter(record))

  it('reads each header, bitmap and the trailer once, nothing more, and gives the same record', () => {
    const { source, reads } = recording(whole)
    expect(decodeFilter(source)).toEqual(decodeFilter(whole))
    expect(reads.reduce((sum, [, count]) => sum + count, 0)).toBe(whole.length + TRAILER_FIXED_BYTES)
    for (const [offset, count] of reads) expect(offset + count).toBeLessThanOrEqual(whole.length)
  })

  it("refuses bytes after the trailer reading only the trailer's fixed part of them", () => {
    const { source, reads } = recording(whole, whole.length + 5 * 2 ** 30)
    const error = (() => {
      try {
        decodeFilter(source)
      } catch (caught) {
        return caught as DecodeError
      }
      throw new Error('no error')
    })()
    expect([error.code, error.message]).toEqual(['corrupt', `${5 * 2 ** 30} bytes follow the file trailer`])
    expect(Math.max(...reads.map(([, count]) => count))).toBeLessThan(whole.length)
  })

  it('turns a bitmap that cannot be allocated into a DecodeError', () => {
    const huge = EXAMPLE_FILE.slice(0, HEADER_BYTES)
    const view = new DataView(huge.buffer)
    view.setUint32(OFFSET.filterSizeHigh, 1, true) // 4 GiB + the low word
    view.setUint32(OFFSET.filterBits, FILTER_BITS_OVERFLOW, true)
    const { source } = recording(huge, HEADER_BYTES + 2 ** 33)
    let caught: unknown
    try {
      decodeFilter(source)
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(DecodeError)
    expect((caught as DecodeError).code).toBe('corrupt')
    expect((caught as DecodeError).message).toMatch(/^layer 0 of \d+ bytes cannot be allocated here$/)
  })
})
