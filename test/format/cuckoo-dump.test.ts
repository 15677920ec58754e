/** CF.SCANDUMP / CF.LOADCHUNK encoding against RedisBloom 2.4.23's recorded bytes and its bounds. */
import { describe, expect, it } from 'vitest'
import {
  CF_HEADER_BYTES,
  CF_MAX_CHUNK_BYTES,
  cuckooChunkAt,
  cuckooChunkTarget,
  cuckooSubFilterSizes,
  decodeCuckooHeader,
  encodeCuckooHeader,
  type CuckooHeader,
} from '../../src/format/cuckoo-dump.js'

const hex = (text: string): Uint8Array => Uint8Array.from(text.split(' ').map((b) => parseInt(b, 16)))

// CF.SCANDUMP small 0 after CF.RESERVE small 4, CF.ADD small a (the reference file).
const SMALL = hex(
  '01 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 02 00 14 00 01 00',
)
const SMALL_HEADER: CuckooHeader = {
  numItems: 1n,
  numBuckets: 2,
  numDeletes: 0n,
  numFilters: 1,
  bucketSize: 2,
  maxIterations: 20,
  expansion: 1,
}

function withField(offset: number, value: number, width: 2 | 8): Uint8Array {
  const bytes = SMALL.slice()
  const view = new DataView(bytes.buffer)
  if (width === 2) view.setUint16(offset, value, true)
  else view.setBigUint64(offset, BigInt(value), true)
  return bytes
}

describe('the CF.SCANDUMP header', () => {
  it('encodes and decodes the recorded bytes', () => {
    expect(CF_HEADER_BYTES).toBe(38)
    expect([...encodeCuckooHeader(SMALL_HEADER)]).toEqual([...SMALL])
    expect(decodeCuckooHeader(SMALL, 0)).toEqual(SMALL_HEADER)
  })

  it('carries u64 counters whole (numItems wrapped below zero)', () => {
    const header = { ...SMALL_HEADER, numItems: 2n ** 64n - 1n, numDeletes: 1n }
    const bytes = encodeCuckooHeader(header)
    expect([...bytes.subarray(0, 8)]).toEqual(Array(8).fill(0xff))
    expect(decodeCuckooHeader(bytes, 0)).toEqual(header)
  })

  it('refuses what RedisBloom refuses: a bucket count not a power of two, expansion 0 with two sub-filters', () => {
    expect(decodeCuckooHeader(withField(8, 3, 8), 0)).toBe('invalid')
    const twoNoExpansion = withField(24, 2, 8)
    new DataView(twoNoExpansion.buffer).setUint16(36, 0, true)
    expect(decodeCuckooHeader(twoNoExpansion, 0)).toBe('invalid')
    expect(decodeCuckooHeader(withField(8, 0, 8), 0)).toBe('invalid')
    expect(decodeCuckooHeader(withField(24, 0, 8), 0)).toBe('invalid')
    expect(decodeCuckooHeader(withField(32, 0, 2), 0)).toBe('invalid')
    expect(decodeCuckooHeader(withField(32, 256, 2), 0)).toBe('invalid')
    expect(decodeCuckooHeader(withField(34, 0, 2), 0)).toBe('invalid')
    expect(decodeCuckooHeader(SMALL.subarray(0, 37), 0)).toBe('invalid')
  })

  it('refuses what RedisBloom mishandles: an expansion not a power of two, a u16-truncated sub-filter count', () => {
    expect(decodeCuckooHeader(withField(36, 3, 2), 0)).toBe('invalid')
    expect(decodeCuckooHeader(withField(24, 65537, 8), 0)).toBe('invalid')
    expect(decodeCuckooHeader(withField(24, 65535, 8), 0)).toEqual({ ...SMALL_HEADER, numFilters: 65535 })
  })

  it('refuses sizes before anything is allocated', () => {
    expect(decodeCuckooHeader(withField(8, 2 ** 40, 8), 0)).toBe('too-large')
    expect(decodeCuckooHeader(withField(8, 2 ** 31, 8), 0)).toBe('too-large') // 2^31 bytes is the most, bucket size 2
    expect(decodeCuckooHeader(withField(8, 2 ** 30, 8), 0)).not.toBe('too-large')
    expect(decodeCuckooHeader(withField(8, 2 ** 20, 8), 2 ** 21 - 1)).toBe('too-large')
    expect(decodeCuckooHeader(withField(8, 2 ** 20, 8), 2 ** 21)).not.toBe('too-large')
    const growing = withField(24, 40, 8)
    new DataView(growing.buffer).setUint16(36, 32768, true)
    expect(decodeCuckooHeader(growing, 0)).toBe('too-large')
  })
})

describe('chunks', () => {
  it('numbers the sub-filters as one run of bytes', () => {
    expect(cuckooSubFilterSizes({ numBuckets: 4, bucketSize: 1, expansion: 2 }, 3, 0)).toEqual([4, 8, 16])
    expect(cuckooSubFilterSizes({ numBuckets: 4, bucketSize: 1, expansion: 0 }, 1, 0)).toEqual([4])
  })

  it('answers the recorded cursors (the "small" lines)', () => {
    expect(cuckooChunkAt([4], 1)).toEqual({ index: 0, offset: 0, length: 4, next: 5 })
    expect(cuckooChunkAt([4], 5)).toBeUndefined()
    expect(cuckooChunkAt([4], 2)).toEqual({ index: 0, offset: 0, length: 4, next: 6 })
    expect(cuckooChunkAt([4, 8], 5)).toEqual({ index: 1, offset: 0, length: 8, next: 13 })
  })

  it('cuts a sub-filter over 16 MiB into pieces', () => {
    const size = CF_MAX_CHUNK_BYTES * 2 + 10
    expect(cuckooChunkAt([4, size], 5)).toEqual({
      index: 1,
      offset: 0,
      length: CF_MAX_CHUNK_BYTES,
      next: 5 + CF_MAX_CHUNK_BYTES,
    })
    const last = 5 + 2 * CF_MAX_CHUNK_BYTES
    expect(cuckooChunkAt([4, size], last)).toEqual({
      index: 1,
      offset: 2 * CF_MAX_CHUNK_BYTES,
      length: 10,
      next: last + 10,
    })
    expect(cuckooChunkAt([4, size], last + 10)).toBeUndefined()
  })

  it('places a loaded chunk only inside one sub-filter', () => {
    expect(cuckooChunkTarget([4], 5, 4)).toEqual({ index: 0, offset: 0 })
    expect(cuckooChunkTarget([4], 2, 2)).toBeUndefined()
    expect(cuckooChunkTarget([4], 6, 2)).toBeUndefined()
    expect(cuckooChunkTarget([4], -1, 1)).toBeUndefined()
    expect(cuckooChunkTarget([4], 5, 0)).toBeUndefined()
    expect(cuckooChunkTarget([4, 8], 13, 8)).toEqual({ index: 1, offset: 0 })
    expect(cuckooChunkTarget([4, 8], 9, 2)).toEqual({ index: 1, offset: 2 })
    // RedisBloom writes this one into the last sub-filter at the wrong offset.
    expect(cuckooChunkTarget([1024], 1039, 4)).toBeUndefined()
  })
})
