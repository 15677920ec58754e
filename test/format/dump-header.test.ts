import { describe, expect, it } from 'vitest'
import type { FilterParts } from '../../src/core/scalable-filter.js'
import { decodeDumpHeader, DUMP_HEADER_BYTES, DUMP_LINK_BYTES, encodeDumpHeader } from '../../src/format/dump-header.js'
import { makeLayer, makeScalable, toHex } from './layer-fixtures.js'
import { codeOf, edited } from './corrupt-bytes.js'

// RedisBloom 2.4: `BF.RESERVE t10 0.01 10` then `BF.SCANDUMP t10 0` → *2 :1 $73 <this>, copied from
// the recorded reply (Python-style escapes, which JavaScript string escapes read the same way).
const T10_HEADER = latin1(
  '\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x05\x00\x00\x00\x02\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00{\x14\xaeG\xe1zt?\xe9\x86/\xb25\x0e&@\x08\x00\x00\x00\n\x00\x00\x00\x00\x00\x00\x00\x00',
)

function latin1(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0))
}

const LINK = DUMP_HEADER_BYTES // offset of layer 0's record

describe('SCANDUMP header: RedisBloom 2.4 golden bytes', () => {
  it('is 73 bytes', () => {
    expect(T10_HEADER.length).toBe(DUMP_HEADER_BYTES + DUMP_LINK_BYTES)
  })

  it('decodes to the t10 filter', () => {
    const parts = decodeDumpHeader(T10_HEADER)
    expect(parts).toEqual({
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
          items: 0,
          bitmap: new Uint8Array(16),
        },
      ],
    })
  })

  it('re-encodes byte for byte', () => {
    expect(toHex(encodeDumpHeader(decodeDumpHeader(T10_HEADER)))).toBe(toHex(T10_HEADER))
  })

  it('is what a layer sized as RedisBloom sizes it encodes to', () => {
    const parts: FilterParts = {
      hashing: { kind: 'redisbloom' },
      expansion: 2,
      nonScaling: false,
      layers: [makeLayer(10, 0.005)],
    }
    expect(toHex(encodeDumpHeader(parts))).toBe(toHex(T10_HEADER))
  })

  it('sets NO_SCALING (options 13) for a non-scaling filter', () => {
    const parts = { ...decodeDumpHeader(T10_HEADER), nonScaling: true }
    const bytes = encodeDumpHeader(parts)
    expect(new DataView(bytes.buffer).getUint32(12, true)).toBe(13)
    expect(decodeDumpHeader(bytes).nonScaling).toBe(true)
  })
})

describe('SCANDUMP header: round trips', () => {
  it('a 5-layer scalable filter keeps every number; bitmaps come back zeroed', () => {
    const parts = makeScalable(5)
    const bytes = encodeDumpHeader(parts)
    expect(bytes.length).toBe(20 + 53 * 5)
    const view = new DataView(bytes.buffer)
    expect(Number(view.getBigUint64(0, true))).toBe(parts.layers.reduce((n, l) => n + l.items, 0))
    const decoded = decodeDumpHeader(bytes)
    expect(decoded).toEqual({
      ...parts,
      layers: parts.layers.map((l) => ({ ...l, bitmap: new Uint8Array(l.bitmap.length) })),
    })
  })

  it('refuses seeded hashing (RedisBloom has no seed)', () => {
    expect(() => encodeDumpHeader(makeScalable(1, { kind: 'seeded', seed: 1 }))).toThrow(RangeError)
  })

  it('accepts n2 when 2^n2 is exactly the bit count (same positions), refuses it otherwise', () => {
    expect(decodeDumpHeader(edited(T10_HEADER, (v) => v.setUint8(LINK + 52, 7))).layers[0]!.bitCount).toBe(128)
    expect(codeOf(() => decodeDumpHeader(edited(T10_HEADER, (v) => v.setUint8(LINK + 52, 6))))).toBe('corrupt')
    expect(codeOf(() => decodeDumpHeader(edited(T10_HEADER, (v) => v.setUint8(LINK + 52, 64))))).toBe('corrupt')
  })
})

describe('SCANDUMP header: rejections', () => {
  it('by length: under 20 or under 20 + 53n is truncated, over is corrupt', () => {
    for (let n = 0; n < T10_HEADER.length; n++) {
      expect(
        codeOf(() => decodeDumpHeader(T10_HEADER.subarray(0, n))),
        `length ${n}`,
      ).toBe('truncated')
    }
    const longer = new Uint8Array(74)
    longer.set(T10_HEADER)
    expect(codeOf(() => decodeDumpHeader(longer))).toBe('corrupt')
  })

  it.each([
    ['nfilters 0', (v: DataView) => v.setUint32(8, 0, true)],
    ['nfilters 65536 (above MAX_LAYERS, before its length is believed)', (v: DataView) => v.setUint32(8, 65536, true)],
    ['unknown option 16', (v: DataView) => v.setUint32(12, 5 | 16, true)],
    ['no FORCE64 (32-bit hashing)', (v: DataView) => v.setUint32(12, 1, true)],
    ['size != sum of layer sizes', (v: DataView) => v.setUint32(0, 1, true)],
    ['size above 2^53', (v: DataView) => v.setUint32(4, 0xffffffff, true)],
    ['bits != bytes * 8', (v: DataView) => v.setUint32(LINK + 8, 136, true)],
    ['bits and bytes 0', (v: DataView) => (v.setUint32(LINK, 0, true), v.setUint32(LINK + 8, 0, true))],
    ['error 0', (v: DataView) => v.setFloat64(LINK + 24, 0, true)],
    ['error 1', (v: DataView) => v.setFloat64(LINK + 24, 1, true)],
    ['error NaN', (v: DataView) => v.setFloat64(LINK + 24, NaN, true)],
    ['hashes != ceil(ln2 * bpe)', (v: DataView) => v.setUint32(LINK + 40, 7, true)],
    ['entries 0', (v: DataView) => v.setUint32(LINK + 44, 0, true)],
    ['entries above 2^53', (v: DataView) => v.setUint32(LINK + 48, 0x00200000, true)],
    ['bytes above 2^53', (v: DataView) => v.setUint32(LINK + 4, 0xffffffff, true)],
  ])('%s is corrupt', (_name, edit) => {
    expect(codeOf(() => decodeDumpHeader(edited(T10_HEADER, edit)))).toBe('corrupt')
  })

  it('accepts growth 0 on a non-scaling filter', () => {
    const bytes = edited(T10_HEADER, (v) => (v.setUint32(12, 13, true), v.setUint32(16, 0, true)))
    expect(decodeDumpHeader(bytes)).toMatchObject({ nonScaling: true, expansion: 0 })
  })

  it('accepts growth 0 on a scaling filter, as BF.RESERVE ... EXPANSION 0 makes one', () => {
    const bytes = edited(T10_HEADER, (v) => v.setUint32(16, 0, true))
    const parts = decodeDumpHeader(bytes)
    expect(parts).toMatchObject({ nonScaling: false, expansion: 0 })
    expect(encodeDumpHeader(parts)).toEqual(bytes)
  })

  it('refuses 2^50 bytes of bitmap and 2^40 bytes over maxBytes, before allocating', () => {
    const claim = (bytesHigh: number) =>
      edited(T10_HEADER, (v) => {
        v.setUint32(LINK + 0, 0, true)
        v.setUint32(LINK + 4, bytesHigh, true)
        v.setUint32(LINK + 8, 0, true)
        v.setUint32(LINK + 12, bytesHigh * 8, true)
      })
    // Not a timing: the bytes of every ArrayBuffer alive, which an allocation of the claim would grow.
    const buffersBefore = process.memoryUsage().arrayBuffers
    expect(codeOf(() => decodeDumpHeader(claim(2 ** 18)))).toBe('corrupt') // 2^53 bits: past the number range
    expect(() => decodeDumpHeader(claim(2 ** 8))).toThrow(/exceed the limit/) // 2^40 bytes
    expect(process.memoryUsage().arrayBuffers - buffersBefore).toBeLessThan(1024 * 1024)
    expect(codeOf(() => decodeDumpHeader(T10_HEADER, { maxBytes: 15 }))).toBe('corrupt')
    expect(decodeDumpHeader(T10_HEADER, { maxBytes: 16 }).layers[0]!.bitmap.length).toBe(16)
  })
})
