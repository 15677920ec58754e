/** The Cuckoo filter file (docs/FORMAT.md): its exact bytes, round trips, and what it refuses. */
import { describe, expect, it } from 'vitest'
import { CuckooFilter, reserveSettings, type CuckooParts } from '../../src/core/cuckoo-filter.js'
import { decodeCuckooFile, encodeCuckooFile, isCuckooFile } from '../../src/format/cuckoo-file.js'
import { isWindowFile } from '../../src/format/window-file.js'

const name = new TextEncoder().encode('cf')
const SMALL: CuckooParts = {
  numBuckets: 2,
  bucketSize: 2,
  maxIterations: 20,
  expansion: 1,
  numItems: 1n,
  numDeletes: 0n,
  subFilters: [Uint8Array.of(0, 0, 0xc4, 0)],
}

// The file of CF.RESERVE cf 4, CF.ADD cf a: every field at its documented offset.
const GOLDEN = [
  '42 46 53 43 01 00 02 00 14 00 01 00 01 00 00 00', // magic, version, 0, bucket size, max iterations, expansion, sub-filters
  '02 00 00 00 00 00 00 00', // buckets of the first sub-filter
  '01 00 00 00 00 00 00 00', // items
  '00 00 00 00 00 00 00 00', // deletes
  '02 00 00 00 63 66', // name length, name
  '04 00 00 00 00 00 00 00 00 00 c4 00', // sub-filter 0: length, buckets
  '9a 37 1e b4', // CRC-32 (zlib's crc32) of the bytes before
].join(' ')

function hex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(' ')
}

function grown(): CuckooFilter {
  const filter = new CuckooFilter(reserveSettings(4, 1, 1, 2))
  for (let i = 0; i < 40; i++) {
    const item = new TextEncoder().encode(`g${i}`)
    filter.add(item, 0, item.length, false)
  }
  const gone = new TextEncoder().encode('g7')
  filter.delete(gone, 0, gone.length)
  return filter
}

describe('Cuckoo filter file', () => {
  it('has the documented bytes', () => {
    expect(hex(encodeCuckooFile({ name, parts: SMALL }))).toBe(GOLDEN)
  })

  it('round-trips a grown filter and u64 counters exactly', () => {
    const filter = grown()
    expect(filter.numFilters).toBeGreaterThan(2)
    filter.numItems = 2n ** 64n - 1n
    const bytes = encodeCuckooFile({ name, parts: filter.toParts() })
    expect(isCuckooFile(bytes)).toBe(true)
    expect(isWindowFile(bytes)).toBe(false)
    const decoded = decodeCuckooFile(bytes)
    expect(Buffer.from(decoded.name).toString()).toBe('cf')
    expect(CuckooFilter.fromParts(decoded.parts).toParts()).toEqual(filter.toParts())
  })

  it('refuses a flipped bit, a cut file, another magic or version', () => {
    const bytes = encodeCuckooFile({ name, parts: grown().toParts() })
    const flipped = bytes.slice()
    flipped[60]! ^= 1
    expect(() => decodeCuckooFile(flipped)).toThrow(/checksum/)
    expect(() => decodeCuckooFile(bytes.subarray(0, 30))).toThrow()
    const other = bytes.slice()
    other[0] = 0
    expect(() => decodeCuckooFile(other)).toThrow(/magic/)
    const version = bytes.slice()
    version[4] = 2
    expect(() => decodeCuckooFile(version)).toThrow(/version/)
  })

  it('refuses settings CF.LOADCHUNK refuses and sub-filters of the wrong length, before reading them', () => {
    const cases: Partial<CuckooParts>[] = [
      { expansion: 3 },
      { numBuckets: 3, subFilters: [new Uint8Array(6)] },
      { bucketSize: 0, subFilters: [new Uint8Array(0)] },
      { maxIterations: 0 },
      { subFilters: [new Uint8Array(5)] },
      { expansion: 0, subFilters: [new Uint8Array(4), new Uint8Array(4)] },
    ]
    for (const change of cases) {
      const bytes = encodeCuckooFile({ name, parts: { ...SMALL, ...change } })
      expect(
        () => decodeCuckooFile(bytes),
        JSON.stringify(change, (_, v) => (typeof v === 'bigint' ? String(v) : v)),
      ).toThrow(/refused|bytes/)
    }
  })
})

describe('in a sync payload', () => {
  it('travels as a record of type 3 (a whole file, told by its magic), in pieces of any size', async () => {
    const { SYNC_MAGIC, SyncPayloadReader, encodeEndRecord, encodeWindowRecordPrefix } =
      await import('../../src/format/sync-payload.js')
    const small = encodeCuckooFile({ name, parts: SMALL })
    const big = encodeCuckooFile({ name, parts: grown().toParts() })
    const payload = Buffer.concat([
      SYNC_MAGIC,
      encodeWindowRecordPrefix(small.length),
      small,
      encodeWindowRecordPrefix(big.length),
      big,
      encodeEndRecord(),
    ])
    const got: unknown[] = []
    const reader = new SyncPayloadReader(
      { maxFilterBytes: 0 },
      () => {},
      undefined,
      undefined,
      undefined,
      (record) => got.push(record.parts),
    )
    for (let at = 0; at < payload.length; at += 5) reader.push(payload.subarray(at, at + 5))
    expect(reader.done).toBe(true)
    expect(got).toEqual([decodeCuckooFile(small).parts, decodeCuckooFile(big).parts])
  })
})
