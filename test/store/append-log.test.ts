/**
 * The append-only log without a server: record framing (every cut point, damage offsets), segment
 * loading (truncated tail kept, middle damage refused with its offset), buffering per turn, and
 * the rewrite protocol against an in-memory snapshot store.
 */
import { describe, expect, it, vi } from 'vitest'
import { execFileSync } from 'node:child_process'
import {
  closeSync,
  constants,
  existsSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import path from 'node:path'
import { scanLog } from '../../src/store/log-replay.js'
import { encodeCommand } from '../../src/protocol/command-encoder.js'
import { AppendLog, LogLoadError, listSegments, segmentName, type FsyncPolicy } from '../../src/store/append-log.js'
import { LogRewriter, type SnapshotSaver } from '../../src/store/log-rewrite.js'
import { FilterRegistry } from '../../src/store/registry.js'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'
import type { Logger } from '../../src/runtime/logger.js'
import { bloomOf } from '../helpers/bloom-of.js'
import { tempDirsRemovedAfterEach } from '../helpers/temp-dir.js'

const tempDir = tempDirsRemovedAfterEach('bfs-aof-')

function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = []
  const push = (line: string): void => void lines.push(line)
  return { lines, debug: push, verbose: push, notice: push, warning: push }
}

function openLog(dir: string, policy: FsyncPolicy = 'everysec', logger = memoryLogger()): AppendLog {
  return new AppendLog({ dir, baseName: 'appendonly.aof', fsyncPolicy: () => policy, log: logger })
}

const text = (argv: Buffer[]): string => argv.map((arg) => arg.toString('latin1')).join(' ')
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

const COMMANDS = [
  ['BF.RESERVE', 'f', '0.01', '100', 'EXPANSION', '2'],
  ['BF.ADD', 'f', 'a'],
  ['BF.MADD', 'f', 'b', '', 'line\r\nbreak'],
  ['DEL', 'f'],
]
const LOG = Buffer.concat(COMMANDS.map((argv) => encodeCommand(argv.map((arg) => Buffer.from(arg)))))

describe('records', () => {
  it('encode as RESP multibulk and scan back, binary-safe', () => {
    expect(encodeCommand([Buffer.from('BF.ADD'), Buffer.from('k'), Buffer.from([0, 13, 10])]).toString('latin1')).toBe(
      '*3\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n$3\r\n\x00\r\n\r\n',
    )
    const seen: string[] = []
    const offsets: number[] = []
    const result = scanLog(LOG, (argv, offset) => {
      seen.push(text(argv))
      offsets.push(offset)
    })
    expect(seen).toEqual(COMMANDS.map((argv) => argv.join(' ')))
    expect(result).toEqual({ records: 4, validBytes: LOG.length })
    expect(offsets[0]).toBe(0)
  })

  it('a log cut at any byte loads every whole record before the cut and calls the rest truncated', () => {
    const ends: number[] = []
    scanLog(LOG, () => {})
    let at = 0
    for (const argv of COMMANDS) {
      at += encodeCommand(argv.map((arg) => Buffer.from(arg))).length
      ends.push(at)
    }
    for (let cut = 1; cut < LOG.length; cut++) {
      const whole = ends.filter((end) => end <= cut)
      const result = scanLog(LOG.subarray(0, cut), () => {})
      expect(result.records).toBe(whole.length)
      expect(result.validBytes).toBe(whole.at(-1) ?? 0)
      if (ends.includes(cut)) expect(result.damage).toBeUndefined()
      else expect(result.damage).toMatchObject({ kind: 'truncated', recordOffset: whole.at(-1) ?? 0 })
    }
  })

  it('damage in the middle is reported at the offset of the first bad byte', () => {
    const second = encodeCommand(COMMANDS[0]!.map((arg) => Buffer.from(arg))).length
    for (const [delta, replacement] of [
      [0, 0x21],
      [1, 0x78],
      [5, 0x00],
    ] as const) {
      const damaged = Buffer.from(LOG)
      damaged[second + delta] = replacement
      const result = scanLog(damaged, () => {})
      expect(result.records).toBe(1)
      expect(result.damage).toMatchObject({ kind: 'corrupt', offset: second + delta, recordOffset: second })
    }
    // A bulk whose CRLF is overwritten.
    const damaged = Buffer.from(LOG)
    const crAt = LOG.indexOf('a\r\n', second) + 1
    damaged[crAt] = 0x41
    expect(scanLog(damaged, () => {}).damage).toMatchObject({ kind: 'corrupt', offset: crAt })
  })

  it('trailing zero bytes (a tail extended but never written) count as a truncated tail', () => {
    const result = scanLog(Buffer.concat([LOG, Buffer.alloc(4096)]), () => {})
    expect(result.records).toBe(4)
    expect(result.damage).toMatchObject({ kind: 'truncated', offset: LOG.length })
  })
})

describe('AppendLog', () => {
  it('writes once per event-loop turn, records in the order appended, and replays them on load', async () => {
    const dir = tempDir()
    const log = openLog(dir)
    expect(log.load(() => {}, { allowTruncatedTail: true, allowCorrupt: false })).toMatchObject({
      segments: 0,
      records: 0,
    })
    const file = path.join(dir, segmentName('appendonly.aof', 1))
    for (const argv of COMMANDS) log.append(argv.map((arg) => Buffer.from(arg)))
    expect(statSync(file).size).toBe(0) // buffered until the end of the turn
    expect(log.bufferedBytes).toBe(LOG.length)
    await turn()
    expect(readFileSync(file)).toEqual(LOG)
    log.close()

    const replayed: string[] = []
    const again = openLog(dir)
    expect(
      again.load((argv) => void replayed.push(text(argv)), { allowTruncatedTail: false, allowCorrupt: false }),
    ).toMatchObject({ records: 4, bytes: LOG.length })
    expect(replayed).toEqual(COMMANDS.map((argv) => argv.join(' ')))
    again.close()
  })

  it('a turn bigger than the record buffer (many records, one of 200 KB, arguments short and long) is written whole and in order', async () => {
    const dir = tempDir()
    const log = openLog(dir)
    log.load(() => {}, { allowTruncatedTail: false, allowCorrupt: false })
    const commands: Buffer[][] = []
    for (let i = 0; i < 3000; i++) {
      const item = i === 1500 ? Buffer.alloc(200_000, 0x61 + (i % 26)) : Buffer.from(`item-${i}-`.repeat(1 + (i % 9)))
      commands.push([Buffer.from('BF.ADD'), Buffer.from('f'), item])
    }
    for (const argv of commands) log.append(argv)
    const expected = Buffer.concat(commands.map((argv) => encodeCommand(argv)))
    expect(log.bufferedBytes).toBe(expected.length)
    await turn()
    expect(readFileSync(path.join(dir, segmentName('appendonly.aof', 1)))).toEqual(expected)
    // The next turn starts from an empty buffer again.
    log.append(commands[0]!)
    await turn()
    expect(statSync(path.join(dir, segmentName('appendonly.aof', 1))).size).toBe(
      expected.length + encodeCommand(commands[0]!).length,
    )
    log.close()
  })

  it('always: syncedBytes covers a turn only after its fsync; the fsync is shared by the turn', async () => {
    const dir = tempDir()
    const log = openLog(dir, 'always')
    log.load(() => {}, { allowTruncatedTail: true, allowCorrupt: false })
    log.append([Buffer.from('BF.ADD'), Buffer.from('f'), Buffer.from('x')])
    log.append([Buffer.from('BF.ADD'), Buffer.from('f'), Buffer.from('y')])
    const target = log.appendedBytes
    expect(log.isDurable(target)).toBe(false)
    const deadline = Date.now() + 5000
    while (!log.isDurable(target) && Date.now() < deadline) await turn()
    expect(log.isDurable(target)).toBe(true)
    expect(log.syncedBytes).toBe(target)
    log.close()
  })

  it('a truncated last segment loads up to its last whole record, is cut there, and later appends follow it', async () => {
    const dir = tempDir()
    const file = path.join(dir, segmentName('appendonly.aof', 1))
    writeFileSync(file, LOG.subarray(0, LOG.length - 3))
    const logger = memoryLogger()
    const log = openLog(dir, 'everysec', logger)
    const result = log.load(() => {}, { allowTruncatedTail: true, allowCorrupt: false })
    expect(result.records).toBe(3)
    expect(result.damage).toMatchObject({ kind: 'truncated' })
    expect(logger.lines.some((line) => /short read/.test(line) && /aof-load-truncated/.test(line))).toBe(true)
    log.append([Buffer.from('BF.ADD'), Buffer.from('g'), Buffer.from('z')])
    await turn()
    log.close()
    const seen: string[] = []
    const result2 = openLog(dir).load((argv) => void seen.push(text(argv)), {
      allowTruncatedTail: false,
      allowCorrupt: false,
    })
    expect(result2.damage).toBeUndefined()
    expect(seen.at(-1)).toBe('BF.ADD g z')
    expect(seen).toHaveLength(4)
  })

  it("a cut record followed only by empty segments is the log's tail (a crash just after a rotation)", () => {
    const dir = tempDir()
    writeFileSync(path.join(dir, segmentName('appendonly.aof', 1)), LOG.subarray(0, LOG.length - 3))
    writeFileSync(path.join(dir, segmentName('appendonly.aof', 2)), '')
    writeFileSync(path.join(dir, segmentName('appendonly.aof', 3)), '')
    const logger = memoryLogger()
    const log = openLog(dir, 'everysec', logger)
    const seen: string[] = []
    const result = log.load((argv) => seen.push(text(argv)), { allowTruncatedTail: true, allowCorrupt: false })
    expect(seen).toHaveLength(COMMANDS.length - 1)
    expect(result.damage?.kind).toBe('truncated')
    expect(logger.lines.some((line) => line.includes('short read while loading'))).toBe(true)
    expect(log.segmentSeq).toBe(3)
    log.close()
    // With a record after it, the same cut is damage in the middle.
    writeFileSync(path.join(dir, segmentName('appendonly.aof', 4)), LOG.subarray(0, 10))
    writeFileSync(path.join(dir, segmentName('appendonly.aof', 1)), LOG.subarray(0, LOG.length - 3))
    expect(() => openLog(dir).load(() => {}, { allowTruncatedTail: true, allowCorrupt: false })).toThrow(LogLoadError)
  })

  it('aof-load-truncated no refuses a cut tail', () => {
    const dir = tempDir()
    writeFileSync(path.join(dir, segmentName('appendonly.aof', 1)), LOG.subarray(0, LOG.length - 1))
    expect(() => openLog(dir).load(() => {}, { allowTruncatedTail: false, allowCorrupt: false })).toThrow(
      /truncated at offset \d+/,
    )
  })

  it('damage in the middle is refused with the file and offset, unless aof-load-corrupt', () => {
    const dir = tempDir()
    const file = path.join(dir, segmentName('appendonly.aof', 1))
    const damaged = Buffer.from(LOG)
    const at = LOG.indexOf('*3', 10)
    damaged[at] = 0x3f // ?
    writeFileSync(file, damaged)
    let error: unknown
    try {
      openLog(dir).load(() => {}, { allowTruncatedTail: true, allowCorrupt: false })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(LogLoadError)
    expect((error as Error).message).toContain(`at offset ${at}`)
    expect((error as Error).message).toContain(file)
    expect(statSync(file).size).toBe(LOG.length) // nothing touched

    const logger = memoryLogger()
    const result = openLog(dir, 'everysec', logger).load(() => {}, { allowTruncatedTail: true, allowCorrupt: true })
    expect(result.records).toBe(1)
    expect(existsSync(`${file}.corrupt`)).toBe(true)
    expect(statSync(file).size).toBe(at)
    expect(logger.lines.some((line) => line.includes(`offset ${at}`))).toBe(true)
  })

  it('a cut record in a segment that is not the last is damage in the middle', () => {
    const dir = tempDir()
    writeFileSync(path.join(dir, segmentName('appendonly.aof', 1)), LOG.subarray(0, LOG.length - 2))
    writeFileSync(path.join(dir, segmentName('appendonly.aof', 2)), LOG)
    expect(() => openLog(dir).load(() => {}, { allowTruncatedTail: true, allowCorrupt: false })).toThrow(LogLoadError)
  })

  it('refuses a segment that is not a regular file (a device would be read forever)', () => {
    const dir = tempDir()
    symlinkSync('/dev/zero', path.join(dir, segmentName('appendonly.aof', 1)))
    expect(() => openLog(dir).load(() => {}, { allowTruncatedTail: true, allowCorrupt: true })).toThrow(
      /is not a regular file/,
    )
  })

  it('replays segments in sequence order, numerically', () => {
    const dir = tempDir()
    const record = (item: string): Buffer => encodeCommand(['BF.ADD', 'f', item].map((arg) => Buffer.from(arg)))
    writeFileSync(path.join(dir, segmentName('appendonly.aof', 10)), record('ten'))
    writeFileSync(path.join(dir, segmentName('appendonly.aof', 9)), record('nine'))
    writeFileSync(path.join(dir, 'appendonly.aof.x.incr.aof'), 'ignored')
    const seen: string[] = []
    const log = openLog(dir)
    log.load((argv) => void seen.push(argv[2]!.toString()), {
      allowTruncatedTail: true,
      allowCorrupt: false,
      fromSeq: 9,
    })
    expect(seen).toEqual(['nine', 'ten'])
    expect(log.segmentSeq).toBe(10)
    log.close()
  })

  it('rotate() starts a new segment after the current one has writes, and keeps an empty one', async () => {
    const dir = tempDir()
    const log = openLog(dir)
    log.load(() => {}, { allowTruncatedTail: true, allowCorrupt: false })
    expect(log.rotate()).toBe(1) // nothing written yet: segment 1 still holds nothing a snapshot has
    log.append([Buffer.from('DEL'), Buffer.from('x')])
    // Buffered records go to the segment being left, on disk before the new one takes writes.
    expect(log.rotate()).toBe(2)
    expect(readFileSync(path.join(dir, segmentName('appendonly.aof', 1)), 'latin1')).toContain('DEL')
    expect(log.rotate()).toBe(2)
    log.append([Buffer.from('DEL'), Buffer.from('y')])
    await turn()
    expect(log.rotate()).toBe(3)
    expect(log.dropBelow(3)).toBe(2)
    expect(listSegments(dir, 'appendonly.aof').map((segment) => segment.seq)).toEqual([3])
    expect(log.currentSizeBytes).toBe(0)
    log.close()
  })

  it("load skips and deletes the segments below the snapshot's log-from, and never writes below it", async () => {
    const dir = tempDir()
    const record = (item: string): Buffer => encodeCommand(['BF.ADD', 'f', item].map((arg) => Buffer.from(arg)))
    for (const seq of [1, 2, 3]) writeFileSync(path.join(dir, segmentName('appendonly.aof', seq)), record(`in-${seq}`))
    const logger = memoryLogger()
    const seen: string[] = []
    const log = openLog(dir, 'everysec', logger)
    const result = log.load((argv) => void seen.push(argv[2]!.toString()), {
      allowTruncatedTail: true,
      allowCorrupt: false,
      fromSeq: 3,
    })
    expect(seen).toEqual(['in-3'])
    expect(result).toMatchObject({ segments: 1, skipped: 2, records: 1 })
    expect(listSegments(dir, 'appendonly.aof').map((segment) => segment.seq)).toEqual([3])
    expect(log.currentSizeBytes).toBe(record('in-3').length)
    expect(logger.lines.some((line) => /Removed 2 append only file segment/.test(line))).toBe(true)
    log.close()

    // Every segment gone (deleted after the commit): new writes start at log-from, not at 1.
    rmSync(path.join(dir, segmentName('appendonly.aof', 3)))
    const fresh = openLog(dir)
    fresh.load(() => {}, { allowTruncatedTail: true, allowCorrupt: false, fromSeq: 5 })
    expect(fresh.segmentSeq).toBe(5)
    fresh.append([Buffer.from('DEL'), Buffer.from('x')])
    await turn()
    fresh.close()
    expect(listSegments(dir, 'appendonly.aof').map((segment) => segment.seq)).toEqual([5])
  })
})

/**
 * A snapshot store that keeps deep copies in memory, resolving on a later turn like a background
 * save, and aligns the log as the real one does (SnapshotLogHooks): rotate when the data is
 * captured, drop the older segments once committed.
 */
class MemorySnapshots implements SnapshotSaver {
  saved = new Map<string, ScalableBloomFilter>()
  saves = 0
  constructor(private readonly log: AppendLog) {}
  async saveAll(registry: FilterRegistry): Promise<void> {
    const copy = new Map<string, ScalableBloomFilter>()
    for (const entry of registry.entries()) copy.set(entry.name, cloneFilter(bloomOf(entry)))
    const logFrom = this.log.rotate()
    await new Promise((resolve) => setTimeout(resolve, 20))
    this.saved = copy
    this.saves++
    this.log.dropBelow(logFrom)
  }
  loadAll(registry: FilterRegistry): void {
    for (const [name, filter] of this.saved) registry.set(name, cloneFilter(filter))
  }
}

function cloneFilter(filter: ScalableBloomFilter): ScalableBloomFilter {
  const parts = filter.toParts()
  // Copies of the bitmaps: structuredClone of a view of an arena (a shared memory) shares its bytes.
  return ScalableBloomFilter.fromParts({
    ...parts,
    layers: parts.layers.map((layer) => ({ ...layer, bitmap: (layer.bitmap as Uint8Array).slice() })),
  })
}

describe('LogRewriter', () => {
  it('folds the log into a snapshot, keeps writes made during the rewrite, and drops covered segments', async () => {
    const dir = tempDir()
    const registry = new FilterRegistry()
    const log = openLog(dir)
    log.load(() => {}, { allowTruncatedTail: true, allowCorrupt: false })
    const snapshots = new MemorySnapshots(log)
    const rewriter = new LogRewriter(log, registry, snapshots, memoryLogger())
    const add = (item: string): void => {
      let entry = registry.get('f')
      if (entry === undefined) {
        entry = registry.set(
          'f',
          new ScalableBloomFilter({ capacity: 1000, errorRate: 0.001, expansion: 2, nonScaling: false }),
        )
        log.append(['BF.RESERVE', 'f', '0.001', '1000', 'EXPANSION', '2'].map((arg) => Buffer.from(arg)))
      }
      if (bloomOf(entry).add(Buffer.from(item)) === 1) log.append(['BF.ADD', 'f', item].map((arg) => Buffer.from(arg)))
    }
    for (let i = 0; i < 50; i++) add(`before-${i}`)
    await turn()
    expect(rewriter.start()).toBe('started')
    expect(rewriter.start()).toBe('in-progress')
    for (let i = 0; i < 50; i++) add(`during-${i}`)
    await rewriter.idle()
    expect(rewriter.lastStatus).toBe('ok')
    expect(listSegments(dir, 'appendonly.aof').map((segment) => segment.seq)).toEqual([2])
    for (let i = 0; i < 50; i++) add(`after-${i}`)
    await turn()
    log.close()

    // Restart: the snapshot, then what the log holds after it.
    const restored = new FilterRegistry()
    snapshots.loadAll(restored)
    const replayed: Buffer[][] = []
    // From the segment the rewrite rotated to (its MANIFEST's log-from): segment 1 is gone.
    openLog(dir).load((argv) => void replayed.push(argv), {
      allowTruncatedTail: false,
      allowCorrupt: false,
      fromSeq: 2,
    })
    expect(replayed.some((argv) => argv[2]?.toString() === 'before-0')).toBe(false)
    for (const argv of replayed) {
      if (argv[0]!.toString() === 'BF.ADD') bloomOf(restored.get('f')).add(argv[2]!)
    }
    for (const phase of ['before', 'during', 'after']) {
      for (let i = 0; i < 50; i++) expect(bloomOf(restored.get('f')).has(Buffer.from(`${phase}-${i}`))).toBe(true)
    }
  })

  it('a failed snapshot keeps every segment and reports err', async () => {
    const dir = tempDir()
    const log = openLog(dir)
    log.load(() => {}, { allowTruncatedTail: true, allowCorrupt: false })
    log.append([Buffer.from('DEL'), Buffer.from('x')])
    // Fails after its start point, as a real save fails while writing: the log has rotated.
    const failing: SnapshotSaver = {
      saveAll: () => {
        log.rotate()
        return Promise.reject(new Error('disk full'))
      },
    }
    const rewriter = new LogRewriter(log, new FilterRegistry(), failing, memoryLogger())
    rewriter.start()
    await rewriter.idle()
    expect(rewriter.lastStatus).toBe('err')
    expect(listSegments(dir, 'appendonly.aof').map((segment) => segment.seq)).toEqual([1, 2])
    log.close()
    expect(readFileSync(path.join(dir, segmentName('appendonly.aof', 1))).toString('latin1')).toContain('DEL')
  })

  it('after 3 failures in a row the automatic rewrite waits 1, 2, 4 ... 60 minutes between tries, as redis', async () => {
    const dir = tempDir()
    const log = openLog(dir)
    log.load(() => {}, { allowTruncatedTail: true, allowCorrupt: false })
    let fail = true
    const saver: SnapshotSaver = { saveAll: () => (fail ? Promise.reject(new Error('disk full')) : undefined) }
    const logger = memoryLogger()
    const rewriter = new LogRewriter(log, new FilterRegistry(), saver, logger)
    rewriter.baseSizeBytes = 1000
    log.currentSizeBytes = 5000
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      vi.setSystemTime(1_000_000_000_000)
      for (let i = 1; i <= 3; i++) {
        expect(rewriter.shouldAutoRewrite(100, 0)).toBe(true)
        rewriter.start()
        await rewriter.idle()
        expect(rewriter.consecutiveFailures).toBe(i)
      }
      const minute = 60_000
      const waits: number[] = []
      for (let round = 0; round < 8; round++) {
        expect(rewriter.shouldAutoRewrite(100, 0)).toBe(false) // starts the wait
        const start = Date.now()
        let waited = 0
        while (!rewriter.shouldAutoRewrite(100, 0)) {
          vi.setSystemTime(start + (waited += minute))
          if (waited > 61 * minute) throw new Error('never tried again')
        }
        waits.push(waited / minute)
        rewriter.start()
        await rewriter.idle()
      }
      expect(waits).toEqual([1, 2, 4, 8, 16, 32, 60, 60])
      expect(
        logger.lines.filter((line) =>
          line.includes('repeatedly failed and triggered the limit, will retry in 1 minutes'),
        ),
      ).toHaveLength(1)
      // BGREWRITEAOF is not limited, and a success ends the limit.
      fail = false
      expect(rewriter.start()).toBe('started')
      await rewriter.idle()
      expect([rewriter.consecutiveFailures, rewriter.lastStatus]).toEqual([0, 'ok'])
      expect(rewriter.shouldAutoRewrite(100, 0)).toBe(true)
    } finally {
      vi.useRealTimers()
      log.close()
    }
  })

  it('auto rewrite follows percentage and min size', () => {
    const dir = tempDir()
    const log = openLog(dir)
    log.load(() => {}, { allowTruncatedTail: true, allowCorrupt: false })
    const rewriter = new LogRewriter(log, new FilterRegistry(), { saveAll: () => undefined }, memoryLogger())
    rewriter.baseSizeBytes = 1000
    log.currentSizeBytes = 1500
    expect(rewriter.shouldAutoRewrite(100, 100)).toBe(false)
    log.currentSizeBytes = 2000
    expect(rewriter.shouldAutoRewrite(100, 100)).toBe(true)
    expect(rewriter.shouldAutoRewrite(100, 4096)).toBe(false)
    expect(rewriter.shouldAutoRewrite(0, 0)).toBe(false)
    log.close()
  })
})

describe('a failing disk', () => {
  /** Write syscalls this process made so far (Linux /proc/self/io). */
  const writeCalls = (): number => Number(/^syscw: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1])

  it('gets one retry every 100 ms, however many turns failed (no pile of timers)', () => {
    expect(existsSync('/dev/full')).toBe(true)
    const dir = tempDir()
    symlinkSync('/dev/full', path.join(dir, segmentName('appendonly.aof', 1)))
    const logger = memoryLogger()
    // The retry's timer runs on vitest's clock: its seconds pass at once, and the timers are counted.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const log = openLog(dir, 'everysec', logger)
    try {
      log.openAt(1)
      for (let i = 0; i < 200; i++) {
        log.append([Buffer.from('BF.ADD'), Buffer.from('f'), Buffer.from(`x${i}`)])
        log.flush() // each fails with ENOSPC
      }
      expect(log.failing).toBe(true)
      expect(logger.lines.filter((line) => line.includes('Error writing to the AOF file'))).toHaveLength(1)
      expect(vi.getTimerCount()).toBe(1)
      vi.advanceTimersByTime(300)
      const before = writeCalls()
      vi.advanceTimersByTime(1000)
      // One timer: about ten write attempts a second (a pile of 200 would make thousands).
      expect(writeCalls() - before).toBeGreaterThan(0)
      expect(writeCalls() - before).toBeLessThan(200)
      expect(vi.getTimerCount()).toBe(1)
    } finally {
      vi.useRealTimers()
    }
    expect(() => log.close()).toThrow('cannot write the append only file')
    expect(log.failing).toBe(false)
  })

  /**
   * Runs `body` with segment 1 of `dir` a FIFO that is being read: writes to it succeed, its
   * fdatasync fails (EINVAL on a pipe).
   */
  async function withFifoSegment(body: (dir: string) => void | Promise<void>): Promise<void> {
    const dir = tempDir()
    const fifo = path.join(dir, 'fifo')
    execFileSync('mkfifo', [fifo])
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
    try {
      symlinkSync(fifo, path.join(dir, segmentName('appendonly.aof', 1)))
      await body(dir)
    } finally {
      closeSync(reader)
    }
  }

  it('ignores an fsync result about a file closed meanwhile', async () => {
    await withFifoSegment(async (dir) => {
      const log = openLog(dir, 'always')
      log.openAt(1)
      log.append([Buffer.from('BF.ADD'), Buffer.from('f'), Buffer.from('x')])
      log.flush() // written to the pipe; its fdatasync (EINVAL on a pipe) runs in the background
      expect(() => log.close()).toThrow() // the closing fdatasync fails the same way
      log.openAt(2) // a plain file
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(log.failing).toBe(false)
      log.append([Buffer.from('BF.ADD'), Buffer.from('f'), Buffer.from('y')])
      log.flush()
      log.close()
      expect(readFileSync(path.join(dir, segmentName('appendonly.aof', 2)), 'latin1')).toBe(
        '*3\r\n$6\r\nBF.ADD\r\n$1\r\nf\r\n$1\r\ny\r\n',
      )
    })
  })

  it('a rotation leaves what a failing segment would not take to the snapshot; its commit makes it durable', () => {
    const dir = tempDir()
    symlinkSync('/dev/full', path.join(dir, segmentName('appendonly.aof', 1)))
    const logger = memoryLogger()
    const log = openLog(dir, 'everysec', logger)
    log.openAt(1)
    log.append([Buffer.from('BF.ADD'), Buffer.from('f'), Buffer.from('a')])
    log.flush()
    const held = log.appendedBytes
    expect([log.failing, log.isDurable(held)]).toEqual([true, false])
    // The snapshot's rotation no longer fails: the record is left to the snapshot.
    expect(log.rotate()).toBe(2)
    expect(logger.lines.some((line) => line.includes(`could not take ${held} bytes of records`))).toBe(true)
    expect([log.failing, log.isDurable(held), log.isDurable(0)]).toEqual([true, false, true])
    expect(log.bufferedBytes).toBe(0)
    // The new segment takes later records as usual.
    log.append([Buffer.from('BF.ADD'), Buffer.from('f'), Buffer.from('b')])
    log.flush()
    expect(readFileSync(path.join(dir, segmentName('appendonly.aof', 2)), 'latin1')).toBe(
      '*3\r\n$6\r\nBF.ADD\r\n$1\r\nf\r\n$1\r\nb\r\n',
    )
    // A snapshot whose log-from is below the new segment does not hold the record.
    log.dropBelow(1)
    expect([log.failing, log.isDurable(held)]).toEqual([true, false])
    // One from the new segment on does: the record is durable, the failing segment gone.
    expect(log.dropBelow(2)).toBe(1)
    expect([log.failing, log.isDurable(held), log.lastWriteOk]).toEqual([false, true, true])
    expect(listSegments(dir, 'appendonly.aof').map((segment) => segment.seq)).toEqual([2])
    log.close()
  })

  it('closing before a snapshot held the records left to it is an error, and leaves nothing behind', () => {
    const dir = tempDir()
    symlinkSync('/dev/full', path.join(dir, segmentName('appendonly.aof', 1)))
    const log = openLog(dir)
    log.openAt(1)
    log.append([Buffer.from('BF.ADD'), Buffer.from('f'), Buffer.from('a')])
    log.flush()
    expect(log.rotate()).toBe(2)
    expect(() => log.close()).toThrow(/bytes of records left to a snapshot that was not saved/)
    expect(log.failing).toBe(false)
    log.openAt(3)
    expect(log.failing).toBe(false)
    log.close()
  })

  it('always: records written but not fsynced when the fsync fails are left to the snapshot too', async () => {
    await withFifoSegment((dir) => {
      const logger = memoryLogger()
      const log = openLog(dir, 'always', logger)
      log.openAt(1)
      log.append([Buffer.from('BF.ADD'), Buffer.from('f'), Buffer.from('a')])
      log.flush() // written to the pipe; fdatasync of a pipe fails (EINVAL)
      const held = log.appendedBytes
      expect(log.writtenBytes).toBe(held)
      expect(log.rotate()).toBe(2)
      expect(logger.lines.some((line) => line.includes(`could not take ${held} bytes of records`))).toBe(true)
      expect([log.failing, log.isDurable(held)]).toEqual([true, false])
      log.dropBelow(2)
      expect([log.failing, log.isDurable(held)]).toEqual([false, true])
      log.close()
    })
  })
})
