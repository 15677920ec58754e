/**
 * SnapshotStore against a real temporary directory: round trips, incremental saves, deletions,
 * crash leftovers, corrupt files (refused naming the file, or moved aside), binary names, and a
 * background save racing adds (a filter of more than 2^32 bits: huge-filter.test.ts).
 */
import { allocatePieces } from '../../src/core/arena.js'
import { bitmapRange, writeBitmap } from '../../src/core/pieced-bitmap.js'
import { START_COPY_BYTES } from '../../src/store/snapshot-save.js'
import { existsSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'
import { FilterRegistry } from '../../src/store/registry.js'
import {
  formatManifest,
  MANIFEST_FILE,
  parseManifest,
  parseManifestText,
  SLICE_BYTES,
  SnapshotLoadError,
  SnapshotStore,
  SNAPSHOT_DIR,
  type CorruptPolicy,
  type SnapshotLogHooks,
} from '../../src/store/snapshot.js'
import type { Logger } from '../../src/runtime/logger.js'
import { bloomOf } from '../helpers/bloom-of.js'
import { tempDirsRemovedAfterEach } from '../helpers/temp-dir.js'

const tempDir = tempDirsRemovedAfterEach('bfs-snapshot-')

const lines: string[] = []
const log: Logger = {
  debug: () => {},
  verbose: () => {},
  notice: (line) => lines.push(line),
  warning: (line) => lines.push(line),
}

function store(dir: string, onCorrupt: CorruptPolicy = 'refuse'): SnapshotStore {
  return new SnapshotStore({ dir, log, onCorrupt: () => onCorrupt })
}

async function loaded(
  dir: string,
  onCorrupt: CorruptPolicy = 'refuse',
): Promise<{ snapshots: SnapshotStore; registry: FilterRegistry }> {
  const snapshots = store(dir, onCorrupt)
  const registry = new FilterRegistry()
  await snapshots.loadAll(registry)
  return { snapshots, registry }
}

function add(
  registry: FilterRegistry,
  name: string,
  items: Iterable<string>,
  options = { capacity: 100, errorRate: 0.01, expansion: 2, nonScaling: false },
): void {
  const entry = registry.get(name) ?? registry.set(name, new ScalableBloomFilter(options))
  for (const item of items) if (bloomOf(entry).add(Buffer.from(item)) === 1) registry.touch(entry)
}

function range(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${i}`)
}

const snapshotFiles = (dir: string) => readdirSync(path.join(dir, SNAPSHOT_DIR)).sort()

describe('manifest', () => {
  it('round-trips and refuses damage', () => {
    const text = formatManifest([{ file: '000000000001.bf', bytes: 102 }])
    expect(parseManifest(text)).toEqual([{ file: '000000000001.bf', bytes: 102 }])
    expect(() => parseManifest(text.slice(0, -5))).toThrow(/truncated/)
    expect(() => parseManifest(text.replace('102', '103'))).toThrow(/checksum/)
    expect(() => parseManifest('x' + text)).toThrow(/magic/)
  })

  it('carries the log-from line, which is optional and checksummed', () => {
    const text = formatManifest([{ file: '000000000001.bf', bytes: 102 }], 7)
    expect(text.split('\n')[1]).toBe('log-from 7')
    expect(parseManifestText(text)).toEqual({ files: [{ file: '000000000001.bf', bytes: 102 }], logFrom: 7 })
    expect(parseManifest(text)).toEqual([{ file: '000000000001.bf', bytes: 102 }])
    expect(parseManifestText(formatManifest([]))).toEqual({ files: [] })
    expect(() => parseManifestText(text.replace('log-from 7', 'log-from 8'))).toThrow(/checksum/)
  })

  it('carries log-open after log-from when that segment was on disk before it', () => {
    const text = formatManifest([], 7, true)
    expect(text.split('\n').slice(1, 3)).toEqual(['log-from 7', 'log-open'])
    expect(parseManifestText(text)).toEqual({ files: [], logFrom: 7, logOpen: true })
    expect(parseManifestText(formatManifest([], 7, false))).toEqual({ files: [], logFrom: 7 })
  })
})

/** Log hooks that record the order of events, as the server wires them to the append-only log. */
function recordingHooks(events: string[], manifestPath: string): SnapshotLogHooks & { seq: number } {
  return {
    seq: 1,
    rotate() {
      events.push(`rotate ${++this.seq}`)
      return this.seq
    },
    committed(logFrom) {
      events.push(`committed ${logFrom}: ${readFileSync(manifestPath, 'latin1').includes(`log-from ${logFrom}\n`)}`)
    },
  }
}

describe('SnapshotStore and the append-only log', () => {
  it('rotates the log when a save captures its data and releases it once the MANIFEST says log-from', async () => {
    const dir = tempDir()
    const events: string[] = []
    const hooks = recordingHooks(events, path.join(dir, SNAPSHOT_DIR, MANIFEST_FILE))
    const snapshots = new SnapshotStore({ dir, log, appendLog: hooks })
    const registry = new FilterRegistry()
    await snapshots.loadAll(registry)
    expect(snapshots.logFrom).toBeUndefined()
    add(registry, 'a', range('a', 10))
    const job = snapshots.saveAll(registry, { background: true })
    // The rotation happens in the same turn as the capture, before anything else can run.
    expect(events).toEqual(['rotate 2'])
    await job
    expect(events).toEqual(['rotate 2', 'committed 2: true'])
    snapshots.saveSync(registry)
    expect(events.slice(2)).toEqual(['rotate 3', 'committed 3: true'])
    expect(snapshots.logFrom).toBe(3)
    const again = await loaded(dir)
    expect(again.snapshots.logFrom).toBe(3)
    expect(again.snapshots.lastLoad!.logFrom).toBe(3)
  })

  it('a background save holds a small filter exactly as it was at the start point', async () => {
    const dir = tempDir()
    const { snapshots, registry } = await loaded(dir)
    add(registry, 'small', range('before', 100))
    const job = snapshots.saveAll(registry, { background: true })
    add(registry, 'small', range('after', 100)) // what the log replays after log-from
    await job
    const filter = bloomOf((await loaded(dir)).registry.get('small'))
    expect(filter.info().items).toBe(100)
    expect(range('after', 100).filter((item) => filter.has(Buffer.from(item))).length).toBeLessThan(10) // false positives only
  })

  it('a save that fails after its start point keeps the committed log-from and releases nothing', async () => {
    const dir = tempDir()
    const events: string[] = []
    const snapshots = new SnapshotStore({
      dir,
      log,
      appendLog: recordingHooks(events, path.join(dir, SNAPSHOT_DIR, MANIFEST_FILE)),
    })
    const registry = new FilterRegistry()
    await snapshots.loadAll(registry)
    add(registry, 'a', range('a', 10))
    snapshots.saveSync(registry)
    add(registry, 'a', range('b', 10))
    const job = snapshots.saveAll(registry, { background: true })
    await snapshots.abortBackground()
    await expect(job).rejects.toThrow(/aborted/)
    expect(events).toEqual(['rotate 2', 'committed 2: true', 'rotate 3'])
    expect(snapshots.logFrom).toBe(2)
    expect((await loaded(dir)).snapshots.logFrom).toBe(2)
  })

  it('without an open log the last log-from is kept', async () => {
    const dir = tempDir()
    const events: string[] = []
    const hooks = recordingHooks(events, path.join(dir, SNAPSHOT_DIR, MANIFEST_FILE))
    const first = new SnapshotStore({ dir, log, appendLog: hooks })
    const registry = new FilterRegistry()
    await first.loadAll(registry)
    add(registry, 'a', range('a', 10))
    first.saveSync(registry)
    const closed: SnapshotLogHooks = {
      rotate: () => undefined,
      committed: (logFrom) => void events.push(`committed ${logFrom}`),
    }
    const second = new SnapshotStore({ dir, log, appendLog: closed })
    const registry2 = new FilterRegistry()
    await second.loadAll(registry2)
    add(registry2, 'b', range('b', 10))
    second.saveSync(registry2)
    expect(events.at(-1)).toBe('committed 2')
    expect(readFileSync(path.join(dir, SNAPSHOT_DIR, MANIFEST_FILE), 'latin1')).toContain('log-from 2\n')
  })
})

describe('SnapshotStore', () => {
  it('round-trips filters with binary names, several layers and options', async () => {
    const dir = tempDir()
    const a = await loaded(dir)
    const names = ['plain', 'with space/and\nnewline', Buffer.from([0, 0xff, 0xfe, 0x2f]).toString('latin1'), '']
    for (const name of names) add(a.registry, name, range(name, 500))
    add(a.registry, 'fixed', range('f', 50), { capacity: 1000, errorRate: 0.001, expansion: 4, nonScaling: true })
    expect(bloomOf(a.registry.get('plain')).info().layerCount).toBeGreaterThan(2)
    const report = await a.snapshots.saveAll(a.registry, { background: false })
    expect(report.written).toBe(5)
    expect(a.registry.dirty).toBe(0)

    const b = await loaded(dir)
    expect([...b.registry.names()].sort()).toEqual([...a.registry.names()].sort())
    for (const name of a.registry.names()) {
      const before = bloomOf(a.registry.get(name))
      const after = bloomOf(b.registry.get(name))
      expect(after.info()).toEqual(before.info())
      expect(after.toParts().layers.map((l) => Buffer.from(l.bitmap as Uint8Array).toString('hex'))).toEqual(
        before.toParts().layers.map((l) => Buffer.from(l.bitmap as Uint8Array).toString('hex')),
      )
      for (const item of range(name, 600)) expect(after.has(Buffer.from(item))).toBe(before.has(Buffer.from(item)))
    }
    expect(bloomOf(b.registry.get('fixed')).info().expansion).toBeNull()
    expect(b.registry.dirty).toBe(0)
  })

  it('rewrites only changed filters and deletes removed ones at the next save', async () => {
    const dir = tempDir()
    const { snapshots, registry } = await loaded(dir)
    add(registry, 'a', range('a', 10))
    add(registry, 'b', range('b', 10))
    add(registry, 'c', range('c', 10))
    await snapshots.saveAll(registry, { background: false })
    const first = snapshotFiles(dir)
    expect(first).toHaveLength(4) // 3 filters + MANIFEST

    add(registry, 'b', ['new item'])
    registry.delete('c')
    const report = await snapshots.saveAll(registry, { background: true })
    // removed: c's file and b's previous one.
    expect(report).toMatchObject({ written: 1, kept: 1, removed: 2 })
    const second = snapshotFiles(dir)
    expect(second).toHaveLength(3)
    // a's file is the same file; b has a new one; c's is gone.
    const manifest = parseManifest(readFileSync(path.join(dir, SNAPSHOT_DIR, MANIFEST_FILE), 'latin1'))
    expect(manifest.map((m) => m.file)).toContain(first[0])
    expect(second).not.toContain(first[1])
    expect(second).not.toContain(first[2])

    // Nothing changed: nothing written, MANIFEST untouched.
    const mtime = statSync(path.join(dir, SNAPSHOT_DIR, MANIFEST_FILE)).mtimeMs
    const idle = await snapshots.saveAll(registry, { background: false })
    expect(idle).toMatchObject({ written: 0, kept: 2, removed: 0 })
    expect(statSync(path.join(dir, SNAPSHOT_DIR, MANIFEST_FILE)).mtimeMs).toBe(mtime)

    const again = await loaded(dir)
    expect([...again.registry.names()].sort()).toEqual(['a', 'b'])
    expect(bloomOf(again.registry.get('b')).has(Buffer.from('new item'))).toBe(true)
  })

  it('SAVE and BGSAVE run one commit sequence: the same files, the same MANIFEST', async () => {
    const texts: string[] = []
    for (const background of [false, true]) {
      const dir = tempDir()
      const { snapshots, registry } = await loaded(dir)
      add(registry, 'a', range('a', 10))
      add(registry, 'b', range('b', 10))
      await snapshots.saveAll(registry, { background })
      add(registry, 'b', ['new item'])
      registry.delete('a')
      expect(await snapshots.saveAll(registry, { background })).toMatchObject({
        background,
        written: 1,
        kept: 0,
        removed: 2,
      })
      expect(snapshotFiles(dir)).toEqual(['000000000003.bf', MANIFEST_FILE])
      texts.push(readFileSync(path.join(dir, SNAPSHOT_DIR, MANIFEST_FILE), 'latin1'))
    }
    expect(texts[1]).toBe(texts[0])
  })

  it('SAVE after a background save aborted at shutdown still saves', async () => {
    const dir = tempDir()
    const { snapshots, registry } = await loaded(dir)
    add(registry, 'a', range('a', 10))
    const job = snapshots.saveAll(registry, { background: true })
    await snapshots.abortBackground()
    await expect(job).rejects.toThrow(/aborted/)
    expect(snapshots.saveSync(registry)).toMatchObject({ background: false, written: 1 })
    expect(bloomOf((await loaded(dir)).registry.get('a')).has(Buffer.from('a3'))).toBe(true)
  })

  it('loads the previous snapshot when a save died before its MANIFEST, and cleans the leftovers', async () => {
    const dir = tempDir()
    const { snapshots, registry } = await loaded(dir)
    add(registry, 'a', range('a', 10))
    await snapshots.saveAll(registry, { background: false })
    const committed = snapshotFiles(dir)
    // What a kill -9 mid-save leaves: a half-written temp file and a finished but unlisted filter file.
    writeFileSync(path.join(dir, SNAPSHOT_DIR, '000000000099.bf.123-1.tmp'), 'half')
    writeFileSync(
      path.join(dir, SNAPSHOT_DIR, '000000000098.bf'),
      readFileSync(path.join(dir, SNAPSHOT_DIR, committed[0]!)),
    )
    writeFileSync(path.join(dir, SNAPSHOT_DIR, 'MANIFEST.123-2.tmp'), 'half')
    const after = await loaded(dir)
    expect([...after.registry.names()]).toEqual(['a'])
    expect(snapshotFiles(dir)).toEqual(committed)
    expect(after.snapshots.lastLoad!.strayFilesRemoved).toBe(3)
  })

  it('holds every add made before a background save began, while adds go on during it', async () => {
    const dir = tempDir()
    const { snapshots, registry } = await loaded(dir)
    // 2 slices of bitmap or more, so the save yields while we keep adding.
    const capacity = Math.ceil((SLICE_BYTES * 8 * 3) / 11)
    add(registry, 'big', range('before', 20_000), { capacity, errorRate: 0.01, expansion: 2, nonScaling: false })
    const dirtyBefore = registry.dirty
    const job = snapshots.saveAll(registry, { background: true })
    expect(snapshots.inProgress).toBe(true)
    let during = 0
    while (snapshots.inProgress) {
      add(registry, 'big', [`during${during++}`])
      await new Promise((resolve) => setImmediate(resolve))
    }
    await job
    expect(during).toBeGreaterThan(1)
    // Changes made during the save still count for the next one.
    expect(registry.dirty).toBe(during)
    expect(dirtyBefore).toBe(20_001) // the creation counts as one change
    const after = await loaded(dir)
    const filter = bloomOf(after.registry.get('big'))
    for (const item of range('before', 20_000)) expect(filter.has(Buffer.from(item))).toBe(true)
    // The header was captured at the start: the item count is the one BGSAVE saw.
    expect(filter.info().items).toBe(20_000)
  })

  describe('corrupt files', () => {
    async function savedOne(): Promise<{ dir: string; file: string }> {
      const dir = tempDir()
      const { snapshots, registry } = await loaded(dir)
      add(registry, 'victim', range('v', 200))
      add(registry, 'bystander', range('b', 200))
      await snapshots.saveAll(registry, { background: false })
      const file = path.join(dir, SNAPSHOT_DIR, snapshotFiles(dir)[0]!)
      return { dir, file }
    }

    const damages: [string, (file: string) => void, RegExp][] = [
      [
        'a flipped bit in the bitmap',
        (file) => {
          const bytes = readFileSync(file)
          bytes[70]! ^= 0x10
          writeFileSync(file, bytes)
        },
        /checksum/,
      ],
      ['a truncated file', (file) => truncateSync(file, statSync(file).size - 7), /truncated/],
      [
        'a wrong magic',
        (file) => {
          const bytes = readFileSync(file)
          bytes[0] = 0x00
          writeFileSync(file, bytes)
        },
        /bad-magic|bad magic/,
      ],
      [
        'an absurd size (same length kept)',
        (file) => {
          const bytes = readFileSync(file)
          bytes.writeUInt32LE(0x3_0000, 44) // bitmap bytes high word: 2^48 bytes
          writeFileSync(file, bytes)
        },
        /corrupt|truncated/,
      ],
    ]

    it.each(damages)('refuses %s, naming the file', async (_label, damage, reason) => {
      const { dir, file } = await savedOne()
      damage(file)
      const registry = new FilterRegistry()
      const error = await store(dir)
        .loadAll(registry)
        .then(
          () => undefined,
          (e: unknown) => e,
        )
      expect(error).toBeInstanceOf(SnapshotLoadError)
      expect((error as Error).message).toContain(file)
      expect((error as Error).message).toMatch(reason)
      // A refused load refuses to save over the snapshot.
      expect(() => store(dir).saveSync(registry)).toThrow(/not loaded/)
    })

    it('refuses a damaged MANIFEST, naming it', async () => {
      const { dir } = await savedOne()
      const manifest = path.join(dir, SNAPSHOT_DIR, MANIFEST_FILE)
      writeFileSync(manifest, readFileSync(manifest, 'latin1').replace('file ', 'file  '), 'latin1')
      await expect(store(dir).loadAll(new FilterRegistry())).rejects.toThrow(manifest)
    })

    it('with move-aside, a corrupt MANIFEST moves every filter file aside: no later start deletes them as stray', async () => {
      const { dir, file } = await savedOne()
      const manifest = path.join(dir, SNAPSHOT_DIR, MANIFEST_FILE)
      writeFileSync(manifest, readFileSync(manifest, 'latin1').replace('file ', 'file  '), 'latin1')
      const { snapshots, registry } = await loaded(dir, 'move-aside')
      expect(registry.size).toBe(0)
      // The next save writes a valid MANIFEST, which must not prove the unlisted files stray.
      add(registry, 'new', range('n', 10))
      await snapshots.saveAll(registry, { background: false })
      await loaded(dir)
      const kept = readdirSync(path.join(dir, SNAPSHOT_DIR)).filter((name) => name.startsWith(path.basename(file)))
      expect(kept).toHaveLength(1)
      expect(kept[0]).toMatch(/\.corrupt$/)
    })

    it('with move-aside, a file the MANIFEST lists that is gone is skipped, and the rest loads', async () => {
      const { dir, file } = await savedOne()
      rmSync(file)
      const { registry } = await loaded(dir, 'move-aside')
      expect(registry.size).toBe(1)
    })

    it('refuses a missing MANIFEST while filter files are there, and deletes nothing, temp files included', async () => {
      const { dir } = await savedOne()
      const snapshotDir = path.join(dir, SNAPSHOT_DIR)
      rmSync(path.join(snapshotDir, MANIFEST_FILE))
      writeFileSync(path.join(snapshotDir, '000000000009.bf.1-1.tmp'), 'partial')
      const before = readdirSync(snapshotDir).sort()
      await expect(store(dir).loadAll(new FilterRegistry())).rejects.toThrow(/MANIFEST: missing, while 2 filter file/)
      expect(readdirSync(snapshotDir).sort()).toEqual(before)
    })

    it('with move-aside, moves the file aside and loads the rest; the next save forgets it', async () => {
      const { dir, file } = await savedOne()
      damages[0]![1](file)
      const { snapshots, registry } = await loaded(dir, 'move-aside')
      expect(registry.size).toBe(1)
      expect(snapshots.lastLoad!.movedAside).toHaveLength(1)
      expect(existsSync(file)).toBe(false)
      expect(existsSync(snapshots.lastLoad!.movedAside[0]!)).toBe(true)
      await snapshots.saveAll(registry, { background: false })
      const again = await loaded(dir)
      expect(again.registry.size).toBe(1)
    })
  })
})

describe('a layer held in pieces', () => {
  it('is saved in the background as it was when the save began while adds go on, and loads back', async () => {
    const dir = tempDir()
    const { snapshots, registry } = await loaded(dir)
    // Above the bytes a background save copies at its start (so the copy-on-write capture reads
    // it), in pieces of 1,000,064 bytes: not a multiple of the 4 KiB copy unit.
    const plain = new ScalableBloomFilter({ capacity: 10_000_000, errorRate: 0.01, expansion: 2, nonScaling: true })
    for (let i = 0; i < 2000; i++) plain.add(Buffer.from(`p${i}`))
    const parts = plain.toParts()
    const layer = parts.layers[0]!
    expect(layer.bitmap.length).toBeGreaterThan(START_COPY_BYTES)
    const pieces = allocatePieces(layer.bitmap.length, 1_000_064)!
    writeBitmap(pieces, layer.bitmap as Uint8Array, 0)
    const filter = ScalableBloomFilter.fromParts({ ...parts, layers: [{ ...layer, bitmap: pieces }] })
    registry.set('p', filter)
    const job = snapshots.saveAll(registry, { background: true })
    for (let i = 0; i < 2000; i++) filter.add(Buffer.from(`later${i}`))
    await job
    const back = bloomOf((await loaded(dir)).registry.get('p'))
    expect(back.info()).toEqual(plain.info())
    expect(
      Buffer.from(bitmapRange(back.layers[0]!.bitmap, 0, layer.bitmap.length)).equals(layer.bitmap as Uint8Array),
    ).toBe(true)
  })
})

describe('loading into a registry that is not empty', () => {
  it('is refused with a message that says what to do, not as a corrupt file', async () => {
    const registry = new FilterRegistry()
    registry.set('early', new ScalableBloomFilter({ capacity: 10, errorRate: 0.01, expansion: 2, nonScaling: false }))
    await expect(store(tempDir()).loadAll(registry)).rejects.toThrow('add filters after start()')
  })
})
