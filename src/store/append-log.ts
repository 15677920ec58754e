/**
 * The append-only log: every write as the RESP multibulk a client would send, in the order it was
 * applied, between snapshots. Records are buffered and written once per event-loop turn; fsync
 * follows `appendfsync` (always: before the replies of that turn's writes go out, grouped per
 * turn; everysec: once a second in the background; no: left to the kernel).
 *
 * On disk (in `dir`), like redis 7.0's multi-part AOF with the snapshot as its base:
 *   <appendfilename>.<seq>.incr.aof   segments, replayed in increasing <seq> order
 * Every snapshot (SAVE, BGSAVE, the save rules, shutdown, BGREWRITEAOF) is an alignment point: at
 * the moment it captures its data the log rotates ({@link AppendLog.rotate}: new writes go to a new
 * segment), the snapshot's MANIFEST records that segment's seq as `log-from`, and once the MANIFEST
 * is durable the older segments are deleted ({@link AppendLog.dropBelow}). At start only segments
 * from `log-from` on are replayed; older ones (left by a crash between the commit and the deletion)
 * are deleted unread. Without `log-from` (no snapshot) every segment is replayed.
 *
 * This file is the log while it runs: appending, the write and fsync of each turn, their retries,
 * rotation and close. Segment names and listing are log-segments.ts; loading them at start,
 * log-load.ts; the record format, log-replay.ts (read) and protocol/command-encoder.ts (written).
 */
import { performance } from 'node:perf_hooks'
import type { LatencyMonitor } from '../runtime/latency-monitor.js'
import { closeSync, fdatasync, fdatasyncSync, openSync, statSync, fstatSync, ftruncateSync, writeSync } from 'node:fs'
import path from 'node:path'
import type { Logger } from '../runtime/logger.js'
import { scanLog } from './log-replay.js'
import { commandSize, writeCommand } from '../protocol/command-encoder.js'
import { CommandArgs } from '../protocol/command-args.js'
import { cutToWholeRecords, deleteSegmentsBelow, listSegments, segmentName, segmentsSize } from './log-segments.js'
import { syncDirectorySync, tryUnlinkSync } from './durable-file.js'
import { checkNoGap, replaySegments, type LoadOptions, type LoadResult } from './log-load.js'

export { listSegments, segmentName } from './log-segments.js'
export { LogGapError, LogLoadError, type LoadOptions, type LoadResult } from './log-load.js'

export type FsyncPolicy = 'always' | 'everysec' | 'no'

export interface AppendLogOptions {
  dir: string
  /** `appendfilename`: the prefix of every segment's name. */
  baseName: string
  /** Read at each use, so CONFIG SET appendfsync applies at once. */
  fsyncPolicy: () => FsyncPolicy
  log: Logger
  /** Called whenever more of the log was written or fsynced (the server releases waiting replies). */
  onProgress?: () => void
  /** LATENCY's events `aof-write` (a turn's write) and `aof-fsync-always` (an fsync replies wait for). */
  latency?: LatencyMonitor
}

const SELECT = Buffer.from('SELECT')
/** The record buffer's first size; it doubles as a turn needs, and goes back after a big turn. */
const INITIAL_BUFFER_BYTES = 64 * 1024
const KEEP_BUFFER_BYTES = 1024 * 1024

export class AppendLog {
  private fd = -1
  private seq = 0
  /** Records appended this turn and not yet written: `buffer[0, bufferLength)`. */
  private buffer: Buffer = Buffer.allocUnsafe(INITIAL_BUFFER_BYTES)
  private bufferLength = 0
  /** The record {@link append} just queued, in place: `bytes[start, end)` (valid until the next append or write; none: closed). */
  readonly lastRecord: { bytes: Buffer | undefined; start: number; end: number } = {
    bytes: undefined,
    start: 0,
    end: 0,
  }
  private flushScheduled = false
  private fsyncInFlight = false
  /** fds of rotated-out segments, closed once the fsync that may still use them returns. */
  private readonly retired: number[] = []
  /** Logical offsets over the life of the process, across segments. */
  appendedBytes = 0
  writtenBytes = 0
  syncedBytes = 0
  /** Bytes of every live segment (INFO aof_current_size). */
  currentSizeBytes = 0
  /** Bytes written to the open segment (0: nothing in it yet, a rotation can reuse it). */
  private segmentBytes = 0
  /**
   * The open segment ends inside a record: a write was cut short and cutting it back failed too.
   * The buffer then starts with the rest of that record. Normally false: see {@link flush}.
   */
  private partialTail = false
  lastWriteOk = true
  lastFsyncOk = true
  /** The pending retry of a failed write or fsync, if any (one at a time). */
  private retryTimer: NodeJS.Timeout | undefined
  /** Bumped when the log closes: results of an fsync started before are ignored. */
  private generation = 0
  /** The errno code (`ENOSPC`, `EIO`, ...) of the last failed write or fsync (redis aof_last_write_errno). */
  lastErrorCode = ''
  /**
   * Records the log could not take when a snapshot rotated it ({@link rotate}): appended offsets
   * (from, to], held by that snapshot (and any later one) rather than by a segment. Until one
   * whose `log-from` is `seq` or later commits, they are durable nowhere: their replies wait, and
   * writes stay refused so that nothing acknowledged can depend on them.
   */
  private leftToSnapshot: { from: number; to: number; seq: number } | undefined
  /** Whether the last write or fsync failed (redis aof_last_write_status:err): writes get -MISCONF. */
  get failing(): boolean {
    return !(this.lastWriteOk && this.lastFsyncOk) || this.leftToSnapshot !== undefined
  }

  /** fsyncs the everysec timer skipped because one was still running (INFO aof_delayed_fsync). */
  delayedFsyncs = 0
  private selectedDb = -1 // the open segment's last record's database (-1: unknown; redis aof_selected_db)

  constructor(private readonly options: AppendLogOptions) {}

  get isOpen(): boolean {
    return this.fd >= 0
  }

  get segmentSeq(): number {
    return this.seq
  }

  /** Bytes appended but not yet written to the file (INFO aof_buffer_length). */
  get bufferedBytes(): number {
    return this.appendedBytes - this.writtenBytes
  }

  /**
   * Replays every segment from `fromSeq` on through `apply`, oldest first, then opens the newest
   * for appending (creating segment `fromSeq`, or 1, when there is none). Segments below
   * `fromSeq` are deleted unread. A tolerated damaged segment is copied aside to
   * `<file>.corrupt` and cut at the last whole record, so that later appends follow valid bytes.
   * @throws LogLoadError for damage the options do not allow; nothing is opened then.
   */
  load(apply: (argv: Buffer[], file: string, offset: number) => void, options: LoadOptions): LoadResult {
    const { dir, baseName, log } = this.options
    const fromSeq = options.fromSeq ?? 1
    const all = listSegments(dir, baseName)
    const segments = all.filter((segment) => segment.seq >= fromSeq)
    const skipped = all.length - segments.length
    if (skipped > 0) {
      // A crash after the snapshot's MANIFEST was committed, before these were deleted.
      this.dropBelow(fromSeq)
      log.notice(
        `Removed ${skipped} append only file segment(s) below ${fromSeq}: the snapshot already holds their writes`,
      )
    }
    checkNoGap(segments, fromSeq, options, (seq) => segmentName(baseName, seq), log)
    const { result, size } = replaySegments(segments, skipped, apply, options, log)
    const last = segments[segments.length - 1]
    this.openSegment(Math.max(last?.seq ?? 1, fromSeq))
    this.currentSizeBytes = size
    if (last !== undefined && last.seq === this.seq) this.segmentBytes = statSync(last.file).size
    return result
  }

  /**
   * Queues one command of database `db` (-1: of none), written at the end of this event-loop turn,
   * after `SELECT db` when the segment's last record was of another database (redis
   * aof_selected_db; a segment starts in database 0, as its replay does).
   */
  append(argv: CommandArgs | readonly Uint8Array[], db = -1): void {
    this.lastRecord.bytes = undefined
    if (this.fd < 0) return
    if (db >= 0 && db !== this.selectedDb) {
      this.selectedDb = db
      this.append([SELECT, Buffer.from(String(db))])
    }
    const args = argv instanceof CommandArgs ? argv : CommandArgs.of(argv)
    const size = commandSize(args)
    this.reserve(size)
    const last = this.lastRecord
    last.start = this.bufferLength
    this.bufferLength = last.end = writeCommand(args, this.buffer, this.bufferLength)
    last.bytes = this.buffer
    this.appendedBytes += size
    if (!this.flushScheduled) {
      this.flushScheduled = true
      setImmediate(() => this.flush())
    }
  }

  private reserve(bytes: number): void {
    const needed = this.bufferLength + bytes
    if (needed <= this.buffer.length) return
    const grown = Buffer.allocUnsafe(Math.max(needed, this.buffer.length * 2))
    this.buffer.copy(grown, 0, 0, this.bufferLength)
    this.buffer = grown
  }

  /**
   * Writes what is buffered in one write and, under `always`, starts the fsync that replies wait
   * for. A failed write keeps the records for the next try (redis: aof_last_write_status:err).
   */
  flush(): void {
    this.flushScheduled = false
    const length = this.bufferLength
    if (this.fd < 0 || length === 0) return
    const data = this.buffer
    let written = 0
    // Clock reads only while the latency monitor is on.
    const latency = this.options.latency
    const startedMs = latency !== undefined && latency.threshold() > 0 ? performance.now() : -1
    try {
      while (written < length) written += writeSync(this.fd, data, written, length - written)
      if (startedMs >= 0) latency!.note('aof-write', performance.now() - startedMs)
      this.bufferLength = 0
      if (data.length > KEEP_BUFFER_BYTES) this.buffer = Buffer.allocUnsafe(INITIAL_BUFFER_BYTES)
      if (!this.lastWriteOk) this.options.log.warning('AOF write error looks solved, Redis can write again.')
      this.lastWriteOk = true
      this.partialTail = false
    } catch (error) {
      // A write cut short leaves part of a record at the end: cut the segment back to its last
      // whole record at once, so that it never ends inside one (a rotation may put a new segment
      // after it, and a start refuses a cut record anywhere but at the very end).
      if (written > 0 && !this.partialTail) {
        const whole = scanLog(data.subarray(0, written), () => {}).validBytes
        if (whole < written) {
          try {
            ftruncateSync(this.fd, this.segmentBytes + whole)
            written = whole
          } catch {
            this.partialTail = true
          }
        }
      }
      // What was not written moves to the front and goes first next time.
      data.copyWithin(0, written, length)
      this.bufferLength = length - written
      if (this.lastWriteOk) this.options.log.warning(`Error writing to the AOF file: ${(error as Error).message}`)
      this.lastWriteOk = false
      this.lastErrorCode = (error as NodeJS.ErrnoException).code ?? ''
      this.retryLater()
      // What waits on this log is looked at again: while it fails, only a client's own records hold it.
      this.options.onProgress?.()
    }
    this.writtenBytes += written
    this.currentSizeBytes += written
    this.segmentBytes += written
    if (this.options.fsyncPolicy() === 'always') this.sync()
    else if (written > 0) this.options.onProgress?.()
  }

  /** Starts a background fdatasync of everything written, unless one runs (it re-runs when done). */
  sync(): void {
    if (this.fsyncInFlight || this.fd < 0 || this.syncedBytes >= this.writtenBytes) return
    this.fsyncInFlight = true
    const target = this.writtenBytes
    const generation = this.generation
    const latency = this.options.latency
    const startedMs =
      latency !== undefined && latency.threshold() > 0 && this.options.fsyncPolicy() === 'always'
        ? performance.now()
        : -1
    fdatasync(this.fd, (error) => {
      this.fsyncInFlight = false
      // In a thread of its own (redis fsyncs `always` in its main thread): the time the replies waited.
      if (startedMs >= 0) latency!.note('aof-fsync-always', performance.now() - startedMs)
      this.closeRetired()
      // The log was closed (and maybe opened again) meanwhile: this result is about a file that
      // no longer counts. Writes to the current one that waited for this fsync to end get theirs.
      if (generation !== this.generation) {
        if (this.options.fsyncPolicy() === 'always') this.sync()
        return
      }
      if (error) {
        if (this.lastFsyncOk) this.options.log.warning(`Error syncing the AOF file: ${error.message}`)
        this.lastFsyncOk = false
        this.lastErrorCode = error.code ?? ''
        this.retryLater()
        this.options.onProgress?.()
        return
      }
      this.lastFsyncOk = true
      if (target > this.syncedBytes) this.syncedBytes = target
      this.options.onProgress?.()
      // Writes made while this fsync ran form the next group.
      if (this.options.fsyncPolicy() === 'always') this.sync()
    })
  }

  /** One retry of a failed write or fsync 100 ms from now, however many failures asked for it. */
  private retryLater(): void {
    if (this.retryTimer !== undefined) return
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined
      this.flush()
      this.sync()
    }, 100)
    this.retryTimer.unref()
  }

  /** The everysec tick: one fsync a second, skipped (and counted) while the last one still runs. */
  tick(): void {
    if (this.fd < 0 || this.options.fsyncPolicy() !== 'everysec') return
    if (this.fsyncInFlight) {
      this.delayedFsyncs++
      return
    }
    this.sync()
  }

  /**
   * Whether a reply that depends on the first `offset` appended bytes may go out now: once they
   * are written (as redis writes the AOF before replies in beforeSleep, so a killed process loses
   * nothing it acknowledged), and under `always` once they are fsynced too.
   */
  isDurable(offset: number): boolean {
    if (this.fd < 0) return true
    const left = this.leftToSnapshot
    if (left !== undefined && offset > left.from && offset <= left.to) return false
    return (this.options.fsyncPolicy() === 'always' ? this.syncedBytes : this.writtenBytes) >= offset
  }

  /** Writes and fsyncs everything now, blocking (rotation, shutdown). */
  syncNow(): void {
    if (this.fd < 0) return
    this.flush()
    if (this.bufferLength > 0) throw new Error('cannot write the append only file')
    fdatasyncSync(this.fd)
    this.syncedBytes = this.writtenBytes
    this.options.onProgress?.()
  }

  /**
   * A snapshot's start point: what is buffered goes to the current segment, which is made
   * durable, and every later append goes to a new one. Returns the seq of the segment new writes
   * go to — the first one a snapshot capturing its data in this same turn does not contain (its
   * `log-from`). An empty current segment is kept rather than followed by another.
   *
   * When the current segment cannot be written or fsynced, the records it could not take are left
   * to the snapshot, which captures them in this same turn: they leave the log (the segment is cut
   * back to its last whole record), and their replies wait until a snapshot holding them commits
   * ({@link dropBelow}). A failing disk so no longer stops BGSAVE, BGREWRITEAOF or a shutdown's save.
   * @throws Error when the new segment cannot be opened (the snapshot fails; nothing changed)
   */
  rotate(): number {
    if (this.fd < 0) throw new Error('the append only file is not open')
    if (this.segmentBytes === 0 && this.bufferLength === 0) return this.seq
    let failure: Error | undefined
    try {
      this.syncNow()
    } catch (error) {
      failure = error as Error
    }
    // Open before giving anything up: if even that fails, the records stay, retried as before.
    const next = path.join(this.options.dir, segmentName(this.options.baseName, this.seq + 1))
    const fd = openSync(next, 'a')
    try {
      // The new name survives a power loss before anything is given up to it, or the rotation fails.
      syncDirectorySync(this.options.dir)
    } catch (error) {
      closeSync(fd)
      tryUnlinkSync(next)
      throw error
    }
    if (failure !== undefined && this.partialTail) {
      // The segment left must end with a whole record once another follows it (a start takes a
      // cut record only at the end of the log). Cutting it back drops the rest of that record,
      // which is fine only because every buffered record is given up below.
      this.trimToWholeRecords()
      if (this.partialTail) {
        closeSync(fd)
        tryUnlinkSync(next)
        throw failure
      }
    }
    if (failure !== undefined) this.leaveToSnapshot(failure)
    this.openSegment(this.seq + 1, fd)
    return this.seq
  }

  /** Whether records wait for a snapshot to hold them (see {@link rotate}): the server retries one. */
  get awaitsSnapshot(): boolean {
    return this.leftToSnapshot !== undefined
  }

  /** The part of {@link rotate} for a current segment that failed: see there. */
  private leaveToSnapshot(failure: Error): void {
    const durable = this.options.fsyncPolicy() === 'always' ? this.syncedBytes : this.writtenBytes
    const left = this.leftToSnapshot
    this.leftToSnapshot = { from: Math.min(left?.from ?? durable, durable), to: this.appendedBytes, seq: this.seq + 1 }
    this.options.log.warning(
      `The append only file could not take ${this.appendedBytes - durable} bytes of records (${failure.message}): ` +
        'the snapshot now being taken holds them, and their replies wait until it is on disk',
    )
    this.bufferLength = 0
    this.writtenBytes = this.syncedBytes = this.appendedBytes
    // Results of fsyncs of the segment left behind no longer count, nor does its retry.
    this.generation++
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer)
    this.retryTimer = undefined
  }

  /**
   * The alignment point of a snapshot taken while the log is closed (`appendonly no`): the segment
   * after the newest one on disk, so that segments left by an earlier run with the log on are not
   * replayed over this newer snapshot later. Undefined when there are none.
   */
  nextSeqOnDisk(): number | undefined {
    const segments = listSegments(this.options.dir, this.options.baseName)
    return segments.length === 0 ? undefined : segments[segments.length - 1]!.seq + 1
  }

  /**
   * Deletes the segments below `seq` (a durable snapshot holds their writes), then fsyncs the
   * directory. Never the open one. A segment that cannot be deleted is left with a warning: the
   * next start skips it all the same. Records a failing segment left to the snapshot are durable
   * now, and so are their replies.
   */
  dropBelow(seq: number): number {
    const { dir, baseName, log } = this.options
    const left = this.leftToSnapshot
    if (left !== undefined && seq >= left.seq) {
      this.leftToSnapshot = undefined
      if (this.bufferLength === 0) {
        this.lastWriteOk = this.lastFsyncOk = true
        log.warning(
          'AOF write error looks solved, Redis can write again: a snapshot holds what the failing segment could not take.',
        )
      }
      this.options.onProgress?.()
    }
    const { dropped, bytes } = deleteSegmentsBelow(dir, baseName, seq, this.fd >= 0 ? this.seq : undefined, log)
    if (this.fd >= 0) this.currentSizeBytes -= bytes
    return dropped
  }

  /**
   * Opens segment `seq` for appending, the log having been closed until now (CONFIG SET
   * appendonly yes). Segments below it are left to the next snapshot to retire.
   * @throws Error when the file cannot be opened; the log stays closed then
   */
  openAt(seq: number): void {
    if (this.fd >= 0) throw new Error('the append only file is already open')
    this.openSegment(seq)
    // Segments of an earlier time with the log on are live until the next snapshot retires them
    // (dropBelow subtracts them then).
    this.currentSizeBytes = segmentsSize(this.options.dir, this.options.baseName)
  }

  /**
   * Final write and fsync, then closes the file (shutdown, CONFIG SET appendonly no). Records the
   * file would not take are dropped with it (the error is rethrown), and so are records left to a
   * snapshot that has not committed (an error too): a closed log holds nothing back, and one
   * opened later starts clean.
   */
  close(): void {
    if (this.fd < 0) return
    // Records left to a snapshot stay not durable while the last write and fsync run: closing
    // does not make them so (their replies are refused, or released by the caller).
    const left = this.leftToSnapshot
    try {
      this.syncNow()
      if (left !== undefined) {
        throw new Error(
          `cannot write the append only file: ${left.to - left.from} bytes of records left to a snapshot that was not saved`,
        )
      }
    } finally {
      this.leftToSnapshot = undefined
      // A failed write may have left part of a record at the end: cut it off, or a log opened
      // later would follow it with a new segment and the start would find the damage mid-log.
      if (this.partialTail) this.trimToWholeRecords()
      this.retired.push(this.fd)
      this.fd = -1
      if (!this.fsyncInFlight) this.closeRetired()
      this.generation++
      if (this.retryTimer !== undefined) clearTimeout(this.retryTimer)
      this.retryTimer = undefined
      this.bufferLength = 0
      this.writtenBytes = this.syncedBytes = this.appendedBytes
      this.lastWriteOk = this.lastFsyncOk = true
    }
  }

  /** Truncates the open segment after its last whole record (best effort: the disk is failing). */
  private trimToWholeRecords(): void {
    const cut = cutToWholeRecords(
      this.fd,
      path.join(this.options.dir, segmentName(this.options.baseName, this.seq)),
      this.options.log,
    )
    if (cut === undefined) return
    this.partialTail = false
    this.currentSizeBytes -= cut.before - cut.after
    this.segmentBytes = cut.after
  }

  /**
   * Opens segment `seq` for appending (or takes `fd`, open on it, its name already synced by
   * {@link rotate}); the one open until now (if any) is retired.
   * @throws Error when the file cannot be opened or the directory fsync fails (nothing changed then)
   */
  private openSegment(seq: number, fd?: number): void {
    if (fd === undefined) {
      fd = openSync(path.join(this.options.dir, segmentName(this.options.baseName, seq)), 'a')
      try {
        syncDirectorySync(this.options.dir)
      } catch (error) {
        closeSync(fd)
        throw error
      }
    }
    if (this.fd >= 0) this.retired.push(this.fd)
    this.fd = fd
    this.seq = seq
    // A replay starts each segment in database 0; one written to before may end in any.
    this.selectedDb = fstatSync(fd).size === 0 ? 0 : -1
    this.segmentBytes = 0
    this.partialTail = false
    if (!this.fsyncInFlight) this.closeRetired()
  }

  private closeRetired(): void {
    for (const fd of this.retired.splice(0)) closeSync(fd)
  }
}
