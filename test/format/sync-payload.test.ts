/**
 * The full-sync payload's framing and its incremental reader (src/format/sync-payload.ts,
 * filter-file-stream.ts): round trips in pieces of every size, and every refusal, each before
 * anything is allocated for the size it refuses.
 */
import { describe, expect, it } from 'vitest'
import { type FilterParts, ScalableBloomFilter } from '../../src/core/scalable-filter.js'
import { encodeFilter, type FilterRecord } from '../../src/format/codec.js'
import { HEADER_BYTES } from '../../src/format/header.js'
import {
  encodeRecordPrefix,
  encodeSyncPayload,
  MAX_SYNC_NAME_BYTES,
  maxFileBytes,
  RECORD_PREFIX_BYTES,
  SYNC_MAGIC,
  syncPayloadLength,
  SyncPayloadReader,
} from '../../src/format/sync-payload.js'
import { MAX_KEY_BYTES } from '../../src/store/registry.js'
import { seededRandom } from '../helpers/seeded-random.js'
import { codeOf, decodeErrorOf, edited } from './corrupt-bytes.js'
import { concat, makeLayer, makeScalable, toHex } from './layer-fixtures.js'

const text = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0))

function manyLayers(count: number): FilterParts {
  const layers = Array.from({ length: count }, (_, i) => makeLayer(1, 0.5 * 0.5 ** (i + 1), 1, i + 1))
  return { hashing: { kind: 'redisbloom' }, expansion: 1, nonScaling: false, layers }
}

const RECORDS: FilterRecord[] = [
  { name: text('scalable'), parts: makeScalable(3) },
  {
    name: text(''),
    parts: { hashing: { kind: 'redisbloom' }, expansion: 2, nonScaling: true, layers: [makeLayer(100, 0.01, 7, 5)] },
  },
  {
    name: text('seeded'),
    parts: {
      hashing: { kind: 'seeded', seed: 1234 },
      expansion: 0,
      nonScaling: true,
      layers: [makeLayer(50, 0.02, 9, 3)],
    },
  },
  { name: text('v2 layers'), parts: manyLayers(70) },
  { name: new Uint8Array(70_000).fill(0xfe), parts: makeScalable(1) },
  { name: Uint8Array.of(0, 13, 10, 255), parts: makeScalable(2, { kind: 'redisbloom' }, 4) },
]

function payloadOf(records: readonly FilterRecord[]): Uint8Array {
  return concat(encodeSyncPayload(records.map((record) => encodeFilter(record))))
}

/** Reads `payload` in pieces cut by `cut` (the length of the next piece); returns what was accepted. */
function read(
  payload: Uint8Array,
  cut: (left: number) => number,
  maxFilterBytes = 0,
): { records: FilterRecord[]; done: boolean } {
  const records: FilterRecord[] = []
  const reader = new SyncPayloadReader({ maxFilterBytes }, (record) => records.push(record))
  for (let at = 0; at < payload.length;) {
    const length = Math.max(1, Math.min(cut(payload.length - at), payload.length - at))
    reader.push(payload.subarray(at, at + length))
    at += length
  }
  return { records, done: reader.done }
}

describe('the full-sync payload', () => {
  it('is the magic, a prefixed record per filter file and the end byte', () => {
    const file = concat(encodeFilter(RECORDS[0]!))
    const payload = payloadOf([RECORDS[0]!])
    expect([...payload.subarray(0, 8)]).toEqual([...text('BFSSYNC1')])
    expect(payload[8]).toBe(1)
    expect(new DataView(payload.buffer).getBigUint64(9, true)).toBe(BigInt(file.length))
    expect(payload.subarray(17, 17 + file.length)).toEqual(file)
    expect(payload.length).toBe(8 + RECORD_PREFIX_BYTES + file.length + 1)
    expect(payload[payload.length - 1]).toBe(0)
    expect(syncPayloadLength([file.length])).toBe(payload.length)
    expect([...payloadOf([])]).toEqual([...SYNC_MAGIC, 0])
  })

  it("frames docs/FORMAT.md's worked example as docs/REPLICATION.md shows it: 120 bytes", () => {
    const filter = new ScalableBloomFilter({ capacity: 10, errorRate: 0.01, expansion: 2, nonScaling: false })
    filter.add(text('hello'))
    const file = concat(encodeFilter({ name: text('bf'), parts: filter.toParts() }))
    expect(file.length).toBe(102)
    const payload = payloadOf([{ name: text('bf'), parts: filter.toParts() }])
    expect(payload.length).toBe(120)
    expect(toHex(payload.subarray(0, 17))).toBe('42465353594e4331' + '01' + '6600000000000000')
    expect(payload.subarray(17, 119)).toEqual(file)
    expect(payload[119]).toBe(0)
  })

  it('reads back every filter, whole or in pieces of any size', () => {
    const payload = payloadOf(RECORDS)
    const random = seededRandom(16)
    for (const cut of [() => payload.length, () => 1, () => 7, () => 4096, () => 1 + Math.floor(random() * 300)]) {
      const { records, done } = read(payload, cut)
      expect(done).toBe(true)
      expect(records.map((record) => [...record.name])).toEqual(RECORDS.map((record) => [...record.name]))
      records.forEach((record, i) => expect(concat(encodeFilter(record))).toEqual(concat(encodeFilter(RECORDS[i]!))))
    }
    expect(read(payloadOf([]), () => 1)).toEqual({ records: [], done: true })
  })

  it('is not done until the end record', () => {
    const payload = payloadOf(RECORDS.slice(0, 2))
    const { records, done } = read(payload.subarray(0, payload.length - 1), () => 100)
    expect(records).toHaveLength(2)
    expect(done).toBe(false)
  })

  it('refuses a wrong magic, an unknown record type and bytes after the end', () => {
    const payload = payloadOf([RECORDS[0]!])
    expect(
      codeOf(() =>
        read(
          edited(payload, (v) => v.setUint8(7, 0x32)),
          () => 3,
        ),
      ),
    ).toBe('bad-magic')
    const typed = decodeErrorOf(() =>
      read(
        edited(payload, (v) => v.setUint8(8, 5)),
        () => 3,
      ),
    )
    expect(typed.message).toMatch(/^unknown record type 5 at byte 8/)
    const reader = new SyncPayloadReader({ maxFilterBytes: 0 }, () => {})
    const refusal = decodeErrorOf(() => reader.push(text('BFSSYNC1\x07')))
    expect(decodeErrorOf(() => reader.push(Uint8Array.of(0)))).toBe(refusal) // and stays refused
    const after = decodeErrorOf(() => read(concat([payload, Uint8Array.of(0)]), () => payload.length))
    expect(after.message).toMatch(/1 bytes after the end record/)
  })

  it('refuses a record length no filter can have, from the prefix alone', () => {
    const prefixOf = (length: bigint): Uint8Array => {
      const prefix = new Uint8Array(RECORD_PREFIX_BYTES)
      prefix[0] = 1
      new DataView(prefix.buffer).setBigUint64(1, length, true)
      return concat([SYNC_MAGIC, prefix])
    }
    for (const length of [0n, 84n, 2n ** 53n, 2n ** 64n - 1n]) {
      expect(decodeErrorOf(() => read(prefixOf(length), () => 100)).message).toMatch(
        /no filter within the limits is a file of/,
      )
    }
    // Past max-filter-bytes with every header and the longest name: refused before a byte of it comes.
    const limit = 1024 * 1024
    expect(codeOf(() => read(prefixOf(BigInt(maxFileBytes({ maxFilterBytes: limit }) + 1)), () => 100, limit))).toBe(
      'corrupt',
    )
    expect(codeOf(() => read(prefixOf(BigInt(maxFileBytes({ maxFilterBytes: limit }))), () => 100, limit))).toBe(
      'no error',
    )
    expect(() => encodeRecordPrefix(84)).toThrow(RangeError)
  })

  it('refuses a layer larger than its record or than max-filter-bytes at its header, before its bitmap', () => {
    const record: FilterRecord = {
      name: text('big'),
      parts: { hashing: { kind: 'redisbloom' }, expansion: 2, nonScaling: true, layers: [makeLayer(1000, 0.01)] },
    }
    const payload = payloadOf([record])
    const headerEnd = SYNC_MAGIC.length + RECORD_PREFIX_BYTES + HEADER_BYTES
    const bitmapBytes = record.parts.layers[0]!.bitmap.length
    // Only the header is given: a refusal then cannot have come from reading the bitmap.
    expect(decodeErrorOf(() => read(payload.subarray(0, headerEnd), () => headerEnd, bitmapBytes - 8)).message).toMatch(
      /more than \d+ bytes of bitmap/,
    )
    expect(codeOf(() => read(payload.subarray(0, headerEnd), () => headerEnd, bitmapBytes))).toBe('no error')
    // A record 100 bytes shorter than its file: the header announces more than the record holds.
    const shortened = edited(payload, (v) => v.setBigUint64(9, v.getBigUint64(9, true) - 100n, true))
    expect(codeOf(() => read(shortened.subarray(0, headerEnd), () => headerEnd))).toBe('truncated')
    // A header claiming 2^40 bytes of bitmap in a record of the real length.
    const huge = edited(payload, (v) => {
      v.setUint32(17 + 60, 0, true)
      v.setUint32(17 + 44, 256, true)
      v.setUint32(17 + 24, 0xffffffff, true)
    })
    expect(codeOf(() => read(huge.subarray(0, headerEnd), () => headerEnd))).toBe('truncated')
  })

  it('refuses a damaged file, a file that does not fill its record and an original-library file', () => {
    const payload = payloadOf([RECORDS[0]!])
    const fileAt = SYNC_MAGIC.length + RECORD_PREFIX_BYTES
    expect(
      codeOf(() =>
        read(
          edited(payload, (v) => v.setUint8(fileAt + HEADER_BYTES + 3, v.getUint8(fileAt + HEADER_BYTES + 3) ^ 1)),
          () => 50,
        ),
      ),
    ).toBe('checksum')
    expect(
      codeOf(() =>
        read(
          edited(payload, (v) => v.setUint8(payload.length - 3, v.getUint8(payload.length - 3) ^ 1)),
          () => 50,
        ),
      ),
    ).toBe('checksum')
    const longer = edited(payload, (v) => v.setBigUint64(9, v.getBigUint64(9, true) + 1n, true))
    expect(decodeErrorOf(() => read(longer, () => 50)).message).toMatch(/is \d+ bytes, the record has \d+ left/)
    // The record is a whole first layer (header + bitmap + room for a trailer) of a 3-layer file.
    const file = concat(encodeFilter(RECORDS[0]!))
    const firstLayer = HEADER_BYTES + RECORDS[0]!.parts.layers[0]!.bitmap.length
    const cut = concat([SYNC_MAGIC, encodeRecordPrefix(firstLayer + 30), file.subarray(0, firstLayer + 30)])
    expect(decodeErrorOf(() => read(cut, () => 64)).message).toMatch(/ends \(\d+ bytes\) inside its own layers/)
    const original = edited(payload, (v) => {
      for (let at = 32; at < 60; at++) v.setUint8(fileAt + at, 0)
    })
    expect(decodeErrorOf(() => read(original, () => 200)).message).toMatch(/original-library file/)
  })

  it('allows names as long as a key can be', () => {
    expect(MAX_SYNC_NAME_BYTES).toBe(MAX_KEY_BYTES)
  })
})
