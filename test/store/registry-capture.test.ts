/**
 * The full-sync payload end to end in process: captureRegistry (a point-in-time copy read out in
 * pieces) → SyncPayloadDecoder. The payload's files are byte for byte those a SAVE writes into a
 * real temporary directory; writes, deletes, renames and replacements made while a capture is
 * read never show in it; the copy-on-write guards go once the capture is read or released.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { allocatePieces } from '../../src/core/arena.js'
import { countSetBits } from '../../src/core/bitmap.js'
import { writeBitmap } from '../../src/core/pieced-bitmap.js'
import { ScalableBloomFilter, type FilterOptions } from '../../src/core/scalable-filter.js'
import { encodeFilter } from '../../src/format/codec.js'
import { DecodeError } from '../../src/format/decode-error.js'
import { encodeSyncPayload } from '../../src/format/sync-payload.js'
import { COPY_PIECE_BYTES } from '../../src/store/layer-copy.js'
import { captureRegistry, MAX_PIECE_BYTES, type RegistryCapture } from '../../src/store/registry-capture.js'
import { FilterRegistry } from '../../src/store/registry.js'
import { Databases } from '../../src/store/databases.js'
import { WindowFilter } from '../../src/core/window-filter.js'
import { MANIFEST_FILE, nativeCrc32, parseManifest, SnapshotStore, SNAPSHOT_DIR } from '../../src/store/snapshot.js'
import { SyncPayloadDecoder } from '../../src/store/sync-payload-decoder.js'
import { seededRandom } from '../helpers/seeded-random.js'
import { bloomFilter, bloomOf } from '../helpers/bloom-of.js'
import { tempDirsRemovedAfterEach } from '../helpers/temp-dir.js'

const tempDir = tempDirsRemovedAfterEach('bfs-capture-')

const quiet = { debug: () => {}, verbose: () => {}, notice: () => {}, warning: () => {} }
const SCALING: FilterOptions = { capacity: 100, errorRate: 0.01, expansion: 2, nonScaling: false }

function filterOf(options: FilterOptions, items: number, prefix = 'item'): ScalableBloomFilter {
  const filter = new ScalableBloomFilter(options)
  for (let i = 0; i < items; i++) filter.add(Buffer.from(`${prefix}:${i}`))
  return filter
}

/** A filter of more than 64 layers (a version 2 file): one item per layer, bounded. */
function manyLayers(): ScalableBloomFilter {
  const filter = new ScalableBloomFilter({ capacity: 1, errorRate: 0.5, expansion: 1, nonScaling: false })
  for (let i = 0; i < 10_000 && filter.layers.length <= 70; i++) filter.add(Buffer.from(`layer:${i}`))
  expect(filter.layers.length).toBeGreaterThan(64)
  return filter
}

/** Every kind of filter: scalable with layers, non-scaling, seeded, >64 layers, long and binary names. */
function mixedRegistry(): FilterRegistry {
  const registry = new FilterRegistry()
  registry.set('scalable', filterOf(SCALING, 1000))
  registry.set('', filterOf({ ...SCALING, nonScaling: true }, 50))
  registry.set(
    'seeded',
    filterOf(
      { capacity: 500, errorRate: 0.02, expansion: 0, nonScaling: true, hashing: { kind: 'seeded', seed: 99 } },
      200,
    ),
  )
  registry.set('many', manyLayers())
  registry.set('x'.repeat(70_000), filterOf(SCALING, 3))
  registry.set('\x00\r\n\xff', filterOf({ ...SCALING, expansion: 4 }, 500))
  registry.set('empty', new ScalableBloomFilter(SCALING))
  return registry
}

/** Reads a capture to its end, `maxBytes` at a time, calling `between` after each piece. */
function drain(capture: RegistryCapture, maxBytes: number, between: () => void = () => {}): Buffer {
  const pieces: Buffer[] = []
  for (let piece = capture.next(maxBytes); piece !== null; piece = capture.next(maxBytes)) {
    expect(piece.length).toBeLessThanOrEqual(Math.min(maxBytes, MAX_PIECE_BYTES))
    pieces.push(piece)
    between()
  }
  const payload = Buffer.concat(pieces)
  expect(payload.length).toBe(capture.totalBytes)
  return payload
}

/** The payload of `registry` as it is now, from a SAVE into a real directory (files in MANIFEST order). */
async function payloadFromSave(registry: FilterRegistry): Promise<Buffer> {
  const dir = tempDir()
  const store = new SnapshotStore({ dir, log: quiet })
  await store.loadAll(new FilterRegistry())
  store.saveSync(registry)
  const snapshotDir = path.join(dir, SNAPSHOT_DIR)
  const files = parseManifest(readFileSync(path.join(snapshotDir, MANIFEST_FILE), 'latin1'))
  return Buffer.concat(encodeSyncPayload(files.map((file) => [readFileSync(path.join(snapshotDir, file.file))])))
}

/** The payload of `registry` as it is now, encoded whole (what the capture must send). */
function payloadNow(registry: FilterRegistry): Buffer {
  const files = [...registry.entries()].map((entry) => {
    const parts = bloomOf(entry).toParts()
    const copy = {
      ...parts,
      layers: parts.layers.map((layer) => ({ ...layer, bitmap: (layer.bitmap as Uint8Array).slice() })),
    }
    return encodeFilter({ name: FilterRegistry.bytesOf(entry.name), parts: copy }, nativeCrc32).map((piece) =>
      piece.slice(),
    )
  })
  return Buffer.concat(encodeSyncPayload(files))
}

function decode(payload: Buffer, chunk: number, maxFilterBytes = 0): SyncPayloadDecoder {
  const decoder = new SyncPayloadDecoder({ maxFilterBytes })
  for (let at = 0; at < payload.length; at += chunk) decoder.push(payload.subarray(at, at + chunk))
  return decoder
}

function guards(registry: FilterRegistry): number {
  let count = 0
  for (const entry of registry.entries())
    for (const layer of bloomOf(entry).layers) if (layer.writeGuard !== null) count++
  return count
}

describe('captureRegistry', () => {
  it('sends every filter byte for byte as SAVE writes it, and the replica decodes them all', async () => {
    const registry = mixedRegistry()
    const expected = await payloadFromSave(registry)
    for (const maxBytes of [100, 1000, 65_536, 2 ** 40]) {
      const capture = captureRegistry(registry)
      expect(capture.totalBytes).toBe(expected.length)
      expect(drain(capture, maxBytes).equals(expected)).toBe(true)
    }
    const decoder = decode(expected, 3000)
    expect(decoder.done).toBe(true)
    const decoded = [...decoder.filters()]
    expect(decoded.map((f) => f.name.toString('latin1'))).toEqual([...registry.names()])
    for (const { name, filter: stored } of decoded) {
      const filter = bloomFilter(stored)
      const live = bloomOf(registry.get(name.toString('latin1')))
      expect(filter.info()).toEqual(live.info())
      expect(filter.hashing).toEqual(live.hashing)
      filter.layers.forEach((layer, i) => {
        expect(Buffer.from(layer.bitmap as Uint8Array).equals(live.layers[i]!.bitmap as Uint8Array)).toBe(true)
        expect(layer.setBits).toBe(live.layers[i]!.setBits) // counted chunk by chunk as the bytes came
        expect(layer.setBits).toBe(countSetBits(layer.bitmap))
      })
      expect(filter.has(Buffer.from('item:7'))).toBe(live.has(Buffer.from('item:7')))
    }
    expect(guards(registry)).toBe(0)
  })

  it('carries each expiry in a record after its file, expired keys too, and the replica gets them', () => {
    const registry = new FilterRegistry()
    registry.set('lasting', filterOf(SCALING, 10))
    registry.set('expiring', filterOf(SCALING, 10, 'e'))
    registry.set('expired', filterOf(SCALING, 10, 'x'))
    registry.setExpiry(registry.get('expiring')!, 4_102_444_800_000)
    const expired = [...registry.allEntries()].find((entry) => entry.name === 'expired')!
    registry.setExpiry(expired, 1000) // long past: a replica keeps it until its master's DEL comes
    const capture = captureRegistry(registry)
    const payload = drain(capture, 777)
    const decoded = [...decode(payload, 50).filters()]
    expect(decoded.map((f) => [f.name.toString('latin1'), f.expiresAt])).toEqual([
      ['lasting', undefined],
      ['expiring', 4_102_444_800_000],
      ['expired', 1000],
    ])
    // The record: type 2 and the time as u64le, right after the file it belongs to.
    const record = Buffer.alloc(9)
    record[0] = 2
    record.writeBigUInt64LE(4_102_444_800_000n, 1)
    expect(payload.includes(record)).toBe(true)
    // An expiry record with no filter before it is refused.
    expect(() => decode(Buffer.concat([Buffer.from('BFSSYNC1', 'latin1'), record, Buffer.of(0)]), 4)).toThrow(
      /expiry record that follows no filter/,
    )
  })

  it('puts a database record before the filters of another database than the one before; the replica decodes each in its database', () => {
    const databases = new Databases(16)
    databases.db(0).set('a', filterOf(SCALING, 3))
    databases.db(5).set('a', filterOf(SCALING, 3, 'five'))
    databases.db(5).set('b', filterOf(SCALING, 3))
    databases.db(12).set('c', filterOf(SCALING, 3))
    // A window filter (record type 3) in a database of its own and after a Bloom filter in one.
    const window = new WindowFilter({ kind: 'count', errorRate: 0.01, capacity: 100 })
    window.add(Buffer.from('w1'), 0, 2, 0)
    databases.db(7).set('w', window)
    databases.db(12).set('w', new WindowFilter({ kind: 'count', errorRate: 0.01, capacity: 100 }))
    const payload = drain(captureRegistry(databases.allEntries()), 333)
    const decoded = [...decode(payload, 41).filters()]
    expect(decoded.map((f) => [f.db, f.name.toString('latin1')])).toEqual([
      [0, 'a'],
      [5, 'a'],
      [5, 'b'],
      [7, 'w'],
      [12, 'c'],
      [12, 'w'],
    ])
    expect(bloomFilter(decoded[1]!.filter).has(Buffer.from('five:0'))).toBe(true)
    expect(decoded[3]!.filter).toBeInstanceOf(WindowFilter)
    expect((decoded[3]!.filter as WindowFilter).has(Buffer.from('w1'), 0, 2, 0)).toBe(true)
    expect(decoded[5]!.filter).toBeInstanceOf(WindowFilter)
    // The record: type 4 (3 is the window filter's) and the database as u64le, once per change of database.
    const record = (db: number): Buffer =>
      Buffer.concat([Buffer.of(4), Buffer.from(new BigUint64Array([BigInt(db)]).buffer)])
    expect(payload.indexOf(record(5))).toBeGreaterThan(0)
    expect(payload.indexOf(record(5), payload.indexOf(record(5)) + 1)).toBe(-1)
    expect(payload.includes(record(12))).toBe(true)
    // Database 0 alone: no record, the payload of a server before databases.
    const only0 = new Databases(16)
    only0.db(0).set('a', filterOf(SCALING, 3))
    const payload0 = drain(captureRegistry(only0.allEntries()), 333)
    expect(payload0[8]).toBe(1) // the first record after the magic is the filter's
    expect(payload0.length).toBe(
      8 +
        9 +
        encodeFilter({ name: Buffer.from('a'), parts: bloomOf(only0.db(0).get('a')).toParts() }, nativeCrc32).reduce(
          (n, p) => n + p.length,
          0,
        ) +
        1,
    )
    // A replica with fewer databases refuses the payload.
    const small = new SyncPayloadDecoder({ maxFilterBytes: 0 }, 8)
    expect(() => small.push(payload)).toThrow('the payload holds database 12, and this server has 8 (databases)')
  })

  it('sends the magic and the end record alone for an empty registry', () => {
    const capture = captureRegistry(new FilterRegistry())
    expect(drain(capture, 100).toString('latin1')).toBe('BFSSYNC1\x00')
    expect(capture.next(100)).toBeNull()
    expect([...decode(Buffer.from('BFSSYNC1\x00', 'latin1'), 1).filters()]).toEqual([])
  })

  it('sends the registry as it was at the capture while adds, chunks, deletes, renames and replacements go on', () => {
    const registry = new FilterRegistry()
    registry.set('big', filterOf({ capacity: 200_000, errorRate: 0.01, expansion: 2, nonScaling: false }, 1000))
    registry.set('grows', filterOf(SCALING, 150))
    registry.set('doomed', filterOf(SCALING, 20))
    registry.set('moved', filterOf(SCALING, 30))
    registry.set('replaced', filterOf(SCALING, 40))
    const expected = payloadNow(registry)
    const counts = [...registry.entries()].map((entry) => bloomOf(entry).info().items)
    const capture = captureRegistry(registry)
    const random = seededRandom(7)
    let n = 0
    const payload = drain(capture, 20_000, () => {
      for (let i = 0; i < 40; i++) bloomOf(registry.get('big')).add(Buffer.from(`later:${n++}`))
      for (let i = 0; i < 20; i++) bloomOf(registry.get('grows')).add(Buffer.from(`later:${n++}`))
      const layer = bloomOf(registry.get('big')).layers[0]!
      const chunk = Uint8Array.from({ length: 3000 }, () => Math.floor(random() * 256))
      layer.writeBytes(chunk, Math.floor(random() * (layer.bitmap.length - chunk.length)))
      if (n === 60) {
        registry.delete('doomed')
        registry.rename('moved', 'elsewhere')
        registry.set('replaced', filterOf(SCALING, 5, 'new'))
      }
    })
    expect(n).toBeGreaterThan(500) // writes really went on during the capture
    expect(bloomOf(registry.get('grows')).layers.length).toBeGreaterThan(2)
    expect(payload.equals(expected)).toBe(true)
    expect([...decode(payload, 65_536).filters()].map((f) => bloomFilter(f.filter).info().items)).toEqual(counts)
    expect(guards(registry)).toBe(0)
  })

  it('sends a layer held in pieces as it was at the capture, byte for byte as one array, while adds go on', () => {
    // Pieces of 4160 bytes (not a multiple of the 4 KiB copy-on-write unit): a saved unit can
    // straddle two pieces, and the capture's slices cross them.
    const options = { capacity: 20_000, errorRate: 0.01, expansion: 2, nonScaling: true }
    const plain = filterOf(options, 3000)
    const parts = plain.toParts()
    const layer0 = parts.layers[0]!
    const pieces = allocatePieces(layer0.bitmap.length, 4160)!
    writeBitmap(pieces, layer0.bitmap as Uint8Array, 0)
    const pieced = ScalableBloomFilter.fromParts({ ...parts, layers: [{ ...layer0, bitmap: pieces }] })
    expect(pieced.layers[0]!.pieces!.length).toBeGreaterThan(5)
    const registry = new FilterRegistry()
    registry.set('pieced', pieced)
    const reference = new FilterRegistry()
    reference.set('pieced', plain)
    const expected = payloadNow(reference)
    const capture = captureRegistry(registry)
    let n = 0
    const payload = drain(capture, 1000, () => {
      for (let i = 0; i < 30; i++) pieced.add(Buffer.from(`later:${n++}`))
    })
    expect(n).toBeGreaterThan(600) // adds really went on during the capture
    expect(payload.equals(expected)).toBe(true)
    const [decoded] = [...decode(payload, 5000).filters()]
    expect(bloomFilter(decoded!.filter).info()).toEqual(plain.info())
    expect(guards(registry)).toBe(0)
  })

  it('copies only the pieces a write touches before they are sent', () => {
    const registry = new FilterRegistry()
    const filter = filterOf({ capacity: 1_000_000, errorRate: 0.01, expansion: 2, nonScaling: false }, 10)
    registry.set('f', filter)
    const layer = filter.layers[0]!
    const capture = captureRegistry(registry)
    const copy = () => (layer.writeGuard as unknown as { copies: { savedBytes: number }[] }).copies[0]!
    layer.writeBytes(Uint8Array.of(1), 5)
    layer.writeBytes(Uint8Array.of(1), 6) // the same piece: saved once
    expect(copy().savedBytes).toBe(COPY_PIECE_BYTES)
    layer.writeBytes(new Uint8Array(COPY_PIECE_BYTES + 2), 3 * COPY_PIECE_BYTES - 1) // across three pieces
    expect(copy().savedBytes).toBe(4 * COPY_PIECE_BYTES)
    capture.release()
    expect(layer.writeGuard).toBeNull()
  })

  it('stops at release: next() answers null, the guards go, release again is harmless', () => {
    const registry = mixedRegistry()
    const capture = captureRegistry(registry)
    expect(guards(registry)).toBeGreaterThan(70)
    expect(capture.next(1000)!.length).toBe(1000)
    capture.release()
    expect(guards(registry)).toBe(0)
    expect(capture.next(1000)).toBeNull()
    capture.release()
    expect(capture.next(1000)).toBeNull()
  })

  it('serves two captures at once, each its own point in time', () => {
    const registry = new FilterRegistry()
    registry.set('a', filterOf({ capacity: 50_000, errorRate: 0.01, expansion: 2, nonScaling: false }, 500))
    const first = captureRegistry(registry)
    const firstExpected = payloadNow(registry)
    for (let i = 0; i < 500; i++) bloomOf(registry.get('a')).add(Buffer.from(`second:${i}`))
    const secondExpected = payloadNow(registry)
    const second = captureRegistry(registry)
    const pieces: [Buffer[], Buffer[]] = [[], []]
    let i = 0
    for (let done = 0; done < 2;) {
      done = 0
      for (const [k, capture] of [first, second].entries()) {
        const piece = capture.next(10_000)
        if (piece === null) done++
        else pieces[k]!.push(piece)
      }
      bloomOf(registry.get('a')).add(Buffer.from(`third:${i++}`))
    }
    expect(Buffer.concat(pieces[0]).equals(firstExpected)).toBe(true)
    expect(Buffer.concat(pieces[1]).equals(secondExpected)).toBe(true)
    expect(guards(registry)).toBe(0)
  })

  it('refuses, leaving no guard, a filter it cannot encode', () => {
    const registry = new FilterRegistry()
    registry.set('fine', filterOf(SCALING, 1))
    const bad = filterOf(SCALING, 1)
    ;(bad as unknown as { expansion: number }).expansion = -1
    registry.set('bad', bad)
    expect(() => captureRegistry(registry)).toThrow(/filter "bad" cannot be sent: expansion -1/)
    expect(guards(registry)).toBe(0)
  })
})

describe('SyncPayloadDecoder', () => {
  it('refuses a name given twice, layers no filter can have, and answers filters() only once done', () => {
    const one = filterOf(SCALING, 3).toParts()
    const file = encodeFilter({ name: Buffer.from('k'), parts: one })
    expect(() => decode(Buffer.concat(encodeSyncPayload([file, file])), 100)).toThrow(/two filters named "k"/)
    const badHashes = { ...one, layers: one.layers.map((layer) => ({ ...layer, hashCount: layer.hashCount + 1 })) }
    const refused = () =>
      decode(Buffer.concat(encodeSyncPayload([encodeFilter({ name: Buffer.from('h'), parts: badHashes })])), 100)
    expect(refused).toThrow(DecodeError)
    expect(refused).toThrow(/filter "h": layer 0: hashCount/)
    const partial = decode(Buffer.concat(encodeSyncPayload([file])).subarray(0, 50), 10)
    expect(partial.done).toBe(false)
    expect(() => partial.filters()).toThrow(/not complete/)
  })

  it('applies max-filter-bytes to each filter (0: no limit)', () => {
    const registry = new FilterRegistry()
    registry.set('f', filterOf({ capacity: 10_000, errorRate: 0.01, expansion: 2, nonScaling: false }, 10))
    const payload = drain(captureRegistry(registry), 65_536)
    const bytes = registry.bitmapBytes()
    expect(() => decode(payload, 4096, bytes - 1)).toThrow(/more than \d+ bytes of bitmap/)
    expect([...decode(payload, 4096, bytes).filters()]).toHaveLength(1)
    expect([...decode(payload, 4096, 0).filters()]).toHaveLength(1)
  })
})

describe('captureRegistry next(maxBytes, maxWork)', () => {
  it('checksums and copies at most maxWork bitmap bytes per call, the payload the same', () => {
    const registry = new FilterRegistry()
    const filter = new ScalableBloomFilter({ capacity: 1_000_000, errorRate: 0.01, expansion: 2, nonScaling: true }) // about 1.1 MiB
    for (let i = 0; i < 1000; i++) filter.add(Buffer.from(`w${i}`))
    registry.set('f', filter)
    const readOut = (maxWork?: number): { pieces: number; bytes: Buffer } => {
      const capture = captureRegistry(registry)
      const pieces: Buffer[] = []
      let calls = 0
      for (
        let piece = capture.next(MAX_PIECE_BYTES, maxWork);
        piece !== null;
        piece = capture.next(MAX_PIECE_BYTES, maxWork)
      ) {
        calls++
        pieces.push(piece)
        if (maxWork !== undefined) expect(piece.length).toBeLessThanOrEqual(maxWork + 4096) // the bitmap part, with the small framing around it
      }
      return { pieces: calls, bytes: Buffer.concat(pieces) }
    }
    const whole = readOut()
    const small = readOut(64 * 1024)
    expect(small.bytes.equals(whole.bytes)).toBe(true)
    // The bitmap is read twice (checksum, then copy), 64 KiB per call at most.
    expect(small.pieces).toBeGreaterThanOrEqual(Math.floor((2 * filter.bitmapBytes()) / (64 * 1024)))
  })
})
