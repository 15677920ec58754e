import { describe, expect, it } from 'vitest'
import { WindowFilter } from '../../src/core/window-filter.js'
import { decodeWindowFile, encodeWindowFile, isWindowFile } from '../../src/format/window-file.js'
import {
  encodeEndRecord,
  encodeWindowRecordPrefix,
  SYNC_MAGIC,
  SyncPayloadReader,
} from '../../src/format/sync-payload.js'
import type { WindowRecord } from '../../src/format/window-file.js'

const name = new TextEncoder().encode('daily:seen')

function filled(kind: 'count' | 'time'): WindowFilter {
  const filter = new WindowFilter({
    kind,
    errorRate: 0.01,
    capacity: 100,
    windowMs: kind === 'time' ? 10_000 : undefined,
  })
  for (let i = 0; i < 500; i++) {
    const item = new TextEncoder().encode(`i-${i}`)
    filter.add(item, 0, item.length, 1_000_000 + i * 40)
  }
  return filter
}

describe('window filter file', () => {
  it('round-trips both kinds exactly', () => {
    for (const kind of ['count', 'time'] as const) {
      const filter = filled(kind)
      const bytes = encodeWindowFile({ name, parts: filter.toParts() })
      expect(isWindowFile(bytes)).toBe(true)
      const decoded = decodeWindowFile(bytes)
      expect(Buffer.from(decoded.name).toString()).toBe('daily:seen')
      expect(WindowFilter.fromParts(decoded.parts).toParts()).toEqual(filter.toParts())
    }
  })

  it('refuses a flipped bit, a cut file and another magic', () => {
    const bytes = encodeWindowFile({ name, parts: filled('time').toParts() })
    const flipped = bytes.slice()
    flipped[200]! ^= 1
    expect(() => decodeWindowFile(flipped)).toThrow(/checksum/)
    expect(() => decodeWindowFile(bytes.subarray(0, 50))).toThrow()
    const other = bytes.slice()
    other[0] = 0
    expect(() => decodeWindowFile(other)).toThrow(/magic/)
  })

  it('travels in a sync payload as a record of type 3, in pieces of any size', () => {
    const file = encodeWindowFile({ name, parts: filled('count').toParts() })
    const payload = Buffer.concat([SYNC_MAGIC, encodeWindowRecordPrefix(file.length), file, encodeEndRecord()])
    const got: WindowRecord[] = []
    const reader = new SyncPayloadReader(
      { maxFilterBytes: 0 },
      () => {},
      undefined,
      undefined,
      undefined,
      (record) => got.push(record as WindowRecord),
    )
    for (let at = 0; at < payload.length; at += 7) reader.push(payload.subarray(at, at + 7))
    expect(reader.done).toBe(true)
    expect(got.map((record) => record.parts)).toEqual([decodeWindowFile(file).parts])
    const blind = new SyncPayloadReader({ maxFilterBytes: 0 }, () => {})
    expect(() => blind.push(payload)).toThrow(/unknown record type 3/)
  })
})
