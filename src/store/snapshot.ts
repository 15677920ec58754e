/**
 * Snapshots: every filter in `<dir>/snapshot/`, one header-plus-bitmap file each (docs/FORMAT.md),
 * tied together by a MANIFEST that is written last. The only module that calls fs for the dataset.
 *
 * ```
 * <dir>/snapshot/MANIFEST          which files make up the snapshot, and the first segment of the
 *                                  append-only log it does not contain (text, CRC-32 at the end)
 *                                  with `log-open` when that segment was on disk before it
 * <dir>/snapshot/000000000007.bf   one filter: layers + trailer with its name and options
 * <dir>/snapshot/*.tmp             a save in progress (deleted at start)
 * <dir>/snapshot/*.corrupt         files moved aside by `snapshot-on-corrupt move-aside`
 * ```
 * A save writes each changed filter to a NEW numbered file (temp → fsync → rename), fsyncs the
 * directory, then replaces MANIFEST the same way (temp → fsync → rename → fsync dir), and only then
 * deletes the files the old MANIFEST listed and the new one does not. Until the MANIFEST rename the
 * previous snapshot is untouched, so a crash (kill -9) at any moment leaves it loadable; files of an
 * unfinished save are unreferenced and deleted at the next start. Only a valid MANIFEST proves a
 * filter file stray: without one (lost, or corrupt and moved aside) a start refuses, or with
 * `snapshot-on-corrupt move-aside` moves every filter file aside; it never deletes one. Unchanged
 * filters (same FilterEntry, same version) keep their file and cost nothing.
 *
 * Names are arbitrary bytes and live inside each file's trailer; file names are only numbers.
 *
 * Every save is an alignment point of the append-only log ({@link SnapshotLogHooks}): when the
 * save captures its data the log starts a new segment, whose seq the MANIFEST records as
 * `log-from`; once the MANIFEST is durable the older segments are deleted. At start only segments
 * from `log-from` on are replayed over the snapshot.
 */
import {
  closeSync, fsyncSync, openSync, promises as fsp, renameSync, unlinkSync, writeSync,
} from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { ScalableBloomFilter, type FilterParts } from '../core/scalable-filter.js'
import { encodeFilter, fileVersionFor, recordProblem, type FilterRecord } from '../format/codec.js'
import { IO_CHUNK_BYTES, readFilterFile } from './filter-file.js'
import type { Checksum } from '../format/crc32.js'
import { DecodeError } from '../format/decode-error.js'
import { encodeFileTrailer } from '../format/file-trailer.js'
import { chainedCrcStart, checksumLayerHeader, encodeLayerHeader, HEADER_BYTES, writeLayerChecksum } from '../format/header.js'
import type { Logger } from '../commands/context.js'
import { FilterRegistry, type FilterEntry } from './registry.js'
import { parseSaveRules, shouldSave } from './save-schedule.js'

/** The snapshot's directory under `dir`. BF.SAVE and BF.LOAD may not reach into it. */
export const SNAPSHOT_DIR = 'snapshot'
/** The file that says which filter files make up the snapshot; replaced atomically, last. */
export const MANIFEST_FILE = 'MANIFEST'
/** Top-level names under `dir` that belong to bfs (the append-only log may add its own). */
export const RESERVED_NAMES: string[] = [SNAPSHOT_DIR]

const MANIFEST_MAGIC = 'bfs-manifest 1'
const FILE_PATTERN = /^(\d{12})\.bf$/
const TEMP_SUFFIX = '.tmp'
const CORRUPT_SUFFIX = '.corrupt'

/** Bytes of bitmap copied, checksummed and written per step of a background save. */
export const SLICE_BYTES = 2 * 1024 * 1024
/**
 * Bitmap bytes a background save copies when it begins (whole filters, in registry order, while
 * the budget lasts; each slice step copies 2 MiB anyway). Those filters are saved exactly as they
 * were at the save's start point, the append-only log's `log-from`, so the replay of the writes
 * after it gives back the same BF.CARD. Larger ones are copied slice by slice while writes go on:
 * bits of adds made during the save may be in the snapshot too, and such an add replays as 0
 * after a restart (nothing lost, but BF.CARD does not count it again).
 */
export const START_COPY_BYTES = 4 * SLICE_BYTES

/** zlib takes a 32-bit length: a longer array (a layer of 4 GiB or more) is checksummed in pieces. */
const CRC_PIECE_BYTES = 2 ** 30

/** Node's native CRC-32 (zlib), the same values as format/crc32.ts, for arrays of any length. */
export const nativeCrc32: Checksum = (data, previous) => {
  if (data.length <= CRC_PIECE_BYTES) return zlib.crc32(data, previous)
  let crc = previous
  for (let at = 0; at < data.length; at += CRC_PIECE_BYTES) {
    crc = zlib.crc32(data.subarray(at, Math.min(at + CRC_PIECE_BYTES, data.length)), crc)
  }
  return crc
}

/** What to do with a corrupt snapshot file at start. */
export type CorruptPolicy = 'refuse' | 'move-aside'

/**
 * The append-only log's side of every save (issue 5), so that a restart replays only the writes
 * made after the snapshot's start point.
 */
export interface SnapshotLogHooks {
  /**
   * Called synchronously at the moment a save captures its data (no command runs in between):
   * starts a new log segment for later writes and returns its seq — the first segment the
   * snapshot does not contain, recorded as the MANIFEST's `log-from` — or undefined when no log
   * is open (the last `log-from` is kept).
   */
  rotate(): number | undefined
  /**
   * Whether the log is open: the seq rotate() returned is then a segment on disk, created before
   * the MANIFEST that records it (`log-open`), so a start without it refuses (issue 15).
   */
  isOpen?(): boolean
  /** Called once the MANIFEST recording `logFrom` is durable: the segments below it may go. */
  committed(logFrom: number): void
}

export interface SnapshotOptions {
  /** The data directory (`dir`); the snapshot lives in its `snapshot/` subdirectory. */
  dir: string
  log: Logger
  /** Read when loading: refuse to start (redis's behaviour with a bad RDB) or move the file aside. */
  onCorrupt?: () => CorruptPolicy
  /** The append-only log, when there is one: rotated at each save's start, trimmed at its commit. */
  appendLog?: SnapshotLogHooks
}

export interface LoadReport {
  filters: number
  /** Bytes of snapshot files read. */
  bytes: number
  ms: number
  /** Files moved aside (move-aside policy), as paths. */
  movedAside: string[]
  /** Stray files of an unfinished save that were deleted. */
  strayFilesRemoved: number
  /** The MANIFEST's `log-from`: the first log segment the snapshot does not contain. */
  logFrom?: number
  /** The MANIFEST says segment `logFrom` was on disk before it (`log-open`). */
  logOpen?: boolean
}

export interface SaveReport {
  background: boolean
  /** Filters written because they changed; filters whose file was kept; files deleted. */
  written: number
  kept: number
  removed: number
  bytesWritten: number
  ms: number
}

/** A snapshot file that cannot be loaded; the message names the file. */
export class SnapshotLoadError extends Error {
  constructor(readonly file: string, readonly reason: string) {
    super(`Bad snapshot file ${file}: ${reason}`)
    this.name = 'SnapshotLoadError'
  }
}

/** A background save stopped by shutdown before it committed. */
class SaveAborted extends Error {
  constructor() {
    super('background save aborted')
  }
}

/** One filter file of the committed snapshot. */
interface CommittedFile {
  readonly file: string
  readonly bytes: number
  /** The entry's version when its state was captured for this file. */
  readonly version: number
}

/** A filter to write, captured when the save began. */
interface PendingFile {
  readonly entry: FilterEntry
  readonly version: number
  readonly name: Uint8Array
  readonly parts: FilterParts
  readonly file: string
  /** Bytes of the file, once written. */
  size: number
}

interface SavePlan {
  /** Every filter of the new snapshot in registry order, by file. */
  readonly records: { entry: FilterEntry; committed?: CommittedFile; pending?: PendingFile }[]
  readonly pending: PendingFile[]
  readonly dirtyAtStart: number
  readonly startedAtMs: number
  /** The first log segment this snapshot does not contain (undefined: no log ever). */
  readonly logFrom: number | undefined
  /** Whether segment `logFrom` is on disk (the log was open and rotated to it). */
  readonly logOpen: boolean
}

/**
 * The snapshot of a registry on disk. One save at a time: `saveAll({ background: true })` (BGSAVE)
 * writes in slices and yields; `saveAll({ background: false })` / {@link saveSync} (SAVE) blocks.
 */
export class SnapshotStore {
  readonly dir: string
  readonly snapshotDir: string
  private readonly log: Logger
  private readonly options: SnapshotOptions
  private committed = new Map<FilterEntry, CommittedFile>()
  private manifestExists = false
  /** `log-from` of the committed MANIFEST. */
  private committedLogFrom: number | undefined
  /** `log-open` of the committed MANIFEST. */
  private committedLogOpen = false
  private nextFileNumber = 1
  private nextTempNumber = 1
  private job: Promise<SaveReport> | undefined
  private abortRequested = false

  /** When the last successful save finished (start time until then), ms since the epoch. */
  lastSaveMs = Date.now()
  /** Successful saves since start (INFO rdb_saves). */
  saves = 0
  lastBgsaveStatus: 'ok' | 'err' = 'ok'
  /** Seconds the last background save took, -1 before the first. */
  lastBgsaveSeconds = -1
  /**
   * The longest stretch of main-thread work of the last successful background save, in ms: its
   * plan, or one slice's copy and CRC-32. What the save itself can add to a command's latency.
   */
  lastBgsaveLongestStepMs = 0
  private longestStepMs = 0
  /** When the running background save started, or undefined. */
  bgsaveStartedMs: number | undefined
  lastAttemptMs: number | undefined
  lastAttemptFailed = false
  /** A BGSAVE SCHEDULE waiting for the running save to end. */
  scheduled = false
  lastLoad: LoadReport | undefined
  /**
   * Whether loadAll succeeded. Saves are refused before: a server whose load failed must never
   * replace a good snapshot with its empty dataset.
   */
  loaded = false

  constructor(options: SnapshotOptions) {
    this.options = options
    this.dir = path.resolve(options.dir)
    this.snapshotDir = path.join(this.dir, SNAPSHOT_DIR)
    this.log = options.log
  }

  /** Whether a background save is running. */
  get inProgress(): boolean {
    return this.job !== undefined
  }

  /** The committed snapshot's `log-from`: the log is replayed from this segment on. */
  get logFrom(): number | undefined {
    return this.committedLogFrom
  }

  /** Whether the committed MANIFEST says segment {@link logFrom} was on disk before it. */
  get logFromOnDisk(): boolean {
    return this.committedLogOpen
  }

  /** Changes are counted by the registry; this is what INFO reports as bytes on disk. */
  get committedBytes(): number {
    let total = 0
    for (const file of this.committed.values()) total += file.bytes
    return total
  }

  // ---------------------------------------------------------------- load

  /**
   * Loads the snapshot into `registry` (which should be empty): reads MANIFEST, then every filter
   * file it lists, then deletes the files it proves stray and the temp files of unfinished saves.
   * Throws {@link SnapshotLoadError} naming the file on a bad magic, checksum, truncation or
   * inconsistency, and naming the MANIFEST when it is missing while filter files are there (it
   * alone says which of them hold the data), unless the policy is 'move-aside'.
   */
  async loadAll(registry: FilterRegistry): Promise<LoadReport> {
    // The snapshot fills an empty dataset; a filter stored before start() would collide with its copy.
    if (registry.size > 0) throw new Error('the registry must be empty when the snapshot loads: add filters after start()')
    const started = performance.now()
    const policy = this.options.onCorrupt?.() ?? 'refuse'
    await fsp.mkdir(this.snapshotDir, { recursive: true })
    const report: LoadReport = { filters: 0, bytes: 0, ms: 0, movedAside: [], strayFilesRemoved: 0 }
    const names = await fsp.readdir(this.snapshotDir)
    for (const name of names) {
      const number = /^(\d+)/.exec(name)
      if (number) this.nextFileNumber = Math.max(this.nextFileNumber, Number(number[1]) + 1)
    }

    const manifestPath = path.join(this.snapshotDir, MANIFEST_FILE)
    const manifest = await this.readManifest(manifestPath, policy, report)
    const files = manifest?.files ?? []
    const logFrom = manifest?.logFrom
    if (manifest === undefined) await this.orphanedFiles(names, manifestPath, policy, report)
    else this.manifestExists = true

    const loaded = new Map<FilterEntry, CommittedFile>()
    for (const { file, bytes } of files) {
      const filePath = path.join(this.snapshotDir, file)
      let record: FilterRecord
      let filter: ScalableBloomFilter
      try {
        record = readFilterFile(filePath, nativeCrc32, bytes)
        // No byte limit of its own: a filter over max-filter-bytes loads whole, and the commands refuse
        // its growth (filter-budget.ts scaleUpRefusal) as they do for any filter.
        filter = ScalableBloomFilter.fromParts(record.parts)
      } catch (error) {
        const reason = describeLoadError(error)
        if (policy !== 'move-aside') throw new SnapshotLoadError(filePath, reason)
        report.movedAside.push(await this.moveAside(filePath, reason))
        continue
      }
      const name = FilterRegistry.nameOf(record.name)
      if (registry.has(name)) {
        const reason = `a second filter named ${JSON.stringify(name)}`
        if (policy !== 'move-aside') throw new SnapshotLoadError(filePath, reason)
        report.movedAside.push(await this.moveAside(filePath, reason))
        continue
      }
      const entry = registry.set(name, filter)
      loaded.set(entry, { file, bytes, version: entry.version })
      report.filters++
      report.bytes += bytes
    }

    // Only now, the snapshot loaded: a refused start deletes nothing. A valid MANIFEST proves the
    // filter files it does not list stray; temp files are saves that never committed.
    const listed = new Set(files.map((entry) => entry.file))
    for (const name of names) {
      if (name.endsWith(TEMP_SUFFIX) || (manifest !== undefined && FILE_PATTERN.test(name) && !listed.has(name))) {
        await fsp.rm(path.join(this.snapshotDir, name), { force: true })
        report.strayFilesRemoved++
      }
    }
    if (report.strayFilesRemoved > 0) {
      this.log.notice(`Removed ${report.strayFilesRemoved} stray file(s) of an unfinished save from ${this.snapshotDir}`)
    }
    this.committed = loaded
    this.committedLogFrom = logFrom
    this.committedLogOpen = manifest?.logOpen === true
    report.logFrom = logFrom
    report.logOpen = this.committedLogOpen
    // A manifest listing a moved-aside file must be rewritten at the next save.
    if (report.movedAside.length > 0) this.manifestExists = false
    registry.dirty = 0
    this.lastSaveMs = Date.now()
    report.ms = performance.now() - started
    this.lastLoad = report
    this.loaded = true
    return report
  }

  /**
   * The MANIFEST's contents, or undefined when there is none or (policy move-aside) it was corrupt
   * and moved aside.
   * @throws SnapshotLoadError naming it when it is corrupt and the policy is refuse
   */
  private async readManifest(manifestPath: string, policy: CorruptPolicy, report: LoadReport): Promise<ReturnType<typeof parseManifestText> | undefined> {
    let text: string
    try {
      text = await fsp.readFile(manifestPath, 'latin1')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
    try {
      return parseManifestText(text)
    } catch (error) {
      const reason = (error as Error).message
      if (policy !== 'move-aside') throw new SnapshotLoadError(manifestPath, reason)
      report.movedAside.push(await this.moveAside(manifestPath, reason))
      return undefined
    }
  }

  /**
   * Without a valid MANIFEST nothing proves a filter file stray, nor says which ones hold the
   * data: with any there, refuse to start naming the MANIFEST, or (move-aside) move each aside,
   * kept for inspection. Never deleted: a later save's MANIFEST would prove them stray otherwise.
   * @throws SnapshotLoadError naming the missing MANIFEST when the policy is refuse
   */
  private async orphanedFiles(names: readonly string[], manifestPath: string, policy: CorruptPolicy, report: LoadReport): Promise<void> {
    const orphans = names.filter((name) => FILE_PATTERN.test(name))
    if (orphans.length === 0) return
    const shown = orphans.slice(0, 3).join(', ') + (orphans.length > 3 ? ', ...' : '')
    if (policy !== 'move-aside') {
      throw new SnapshotLoadError(
        manifestPath,
        `missing, while ${orphans.length} filter file(s) are there (${shown}): only the MANIFEST says which hold the data. ` +
          'Restore it, or set snapshot-on-corrupt move-aside to start without them (they are moved aside, not deleted)',
      )
    }
    const reason = report.movedAside.length > 0 ? 'not listed by a valid MANIFEST (it was corrupt)' : 'not listed by a MANIFEST (there is none)'
    for (const name of orphans) report.movedAside.push(await this.moveAside(path.join(this.snapshotDir, name), reason))
  }

  private async moveAside(filePath: string, reason: string): Promise<string> {
    const aside = `${filePath}.${Date.now()}${CORRUPT_SUFFIX}`
    try {
      await fsp.rename(filePath, aside)
    } catch (error) {
      // A file the MANIFEST lists that is not there: nothing to move, the start goes on without it.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      this.log.warning(`Bad snapshot file ${filePath}: ${reason}; starting without it`)
      return filePath
    }
    this.log.warning(`Bad snapshot file ${filePath}: ${reason}; moved aside to ${aside}`)
    return aside
  }

  // ---------------------------------------------------------------- save

  /**
   * Saves every filter that changed since the last save, deletes the files of removed filters,
   * and commits with a new MANIFEST. `background: true` (BGSAVE) writes in slices of
   * {@link SLICE_BYTES}, yielding to the event loop between them; the snapshot holds every change
   * made before the call (when one is already running, this one starts after it). `background:
   * false` (SAVE) blocks until done and rejects while a background save runs. Rejects on any I/O
   * error; the previous snapshot then stays in place.
   */
  saveAll(registry: FilterRegistry, options: { background: boolean; rewrite?: boolean }): Promise<SaveReport> {
    if (!options.background) {
      try {
        return Promise.resolve(this.saveSync(registry))
      } catch (error) {
        return Promise.reject(error)
      }
    }
    // A second background save (a log rewrite during BGSAVE) starts once the running one ends, so
    // that it holds every change made before this call.
    const running = this.job
    if (running !== undefined) return running.catch(() => {}).then(() => this.saveAll(registry, options))
    let plan: SavePlan
    const planStarted = performance.now()
    try {
      plan = this.plan(registry, true)
      this.longestStepMs = performance.now() - planStarted
    } catch (error) {
      this.lastAttemptMs = Date.now()
      this.afterFailure(true, error, options.rewrite === true)
      return Promise.reject(error)
    }
    this.abortRequested = false
    this.bgsaveStartedMs = plan.startedAtMs
    this.lastAttemptMs = plan.startedAtMs
    const job = this.runBackground(registry, plan, options.rewrite === true).finally(() => {
      this.job = undefined
      this.bgsaveStartedMs = undefined
    })
    this.job = job
    return job
  }

  /** SAVE: the whole save, synchronously. Throws when a background save is running or on I/O errors. */
  saveSync(registry: FilterRegistry): SaveReport {
    if (this.job !== undefined) throw new Error('Background save already in progress')
    this.lastAttemptMs = Date.now()
    const created: string[] = []
    try {
      const plan = this.plan(registry, false)
      let bytesWritten = 0
      for (const pending of plan.pending) {
        const temp = this.tempPath(pending.file)
        created.push(temp)
        pending.size = writePiecesSync(temp, encodeFilter({ name: pending.name, parts: pending.parts }, nativeCrc32))
        const finalPath = path.join(this.snapshotDir, pending.file)
        renameSync(temp, finalPath)
        created[created.length - 1] = finalPath
        bytesWritten += pending.size
      }
      const report = this.commitSync(registry, plan, bytesWritten)
      this.afterSuccess(false, plan)
      return report
    } catch (error) {
      for (const file of created) tryUnlinkSync(file)
      this.afterFailure(false, error)
      throw error
    }
  }

  private async runBackground(registry: FilterRegistry, plan: SavePlan, rewrite: boolean): Promise<SaveReport> {
    const created: string[] = []
    try {
      let bytesWritten = 0
      for (const pending of plan.pending) {
        const temp = this.tempPath(pending.file)
        created.push(temp)
        pending.size = await this.writeFilterFileAsync(temp, pending)
        const finalPath = path.join(this.snapshotDir, pending.file)
        await fsp.rename(temp, finalPath)
        created[created.length - 1] = finalPath
        bytesWritten += pending.size
      }
      this.checkAbort()
      await syncDirectory(this.snapshotDir)
      this.checkAbort()
      const removed = this.obsoleteFiles(plan)
      const manifest = this.manifestFor(plan, removed)
      if (manifest !== undefined) {
        const temp = this.tempPath(MANIFEST_FILE)
        created.push(temp)
        const handle = await fsp.open(temp, 'w', 0o644)
        try {
          await writeAllAsync(handle, Buffer.from(manifest, 'latin1'), 0)
          await handle.sync()
        } finally {
          await handle.close()
        }
        this.checkAbort()
        // The commit point: from here on the new snapshot is the one that loads.
        await fsp.rename(temp, path.join(this.snapshotDir, MANIFEST_FILE))
        created.length = 0
        await syncDirectory(this.snapshotDir)
      }
      created.length = 0
      for (const file of removed) await fsp.rm(path.join(this.snapshotDir, file), { force: true })
      this.install(registry, plan)
      const report = saveReport(true, plan, removed.length, bytesWritten)
      this.afterSuccess(true, plan)
      return report
    } catch (error) {
      for (const file of created) await fsp.rm(file, { force: true }).catch(() => {})
      this.afterFailure(true, error, rewrite)
      throw error
    }
  }

  /** Stops a running background save at its next slice (before it commits) and waits for it. */
  async abortBackground(): Promise<void> {
    const job = this.job
    if (job === undefined) return
    this.abortRequested = true
    await job.catch(() => {})
  }

  /** Resolves when no background save is running. */
  async idle(): Promise<void> {
    while (this.job !== undefined) await this.job.catch(() => {})
  }

  /**
   * The periodic check (redis serverCron): starts a background save when a `save` rule fires, or
   * when a BGSAVE SCHEDULE is waiting. Returns the save started, if any.
   */
  tick(registry: FilterRegistry, rulesText: string, nowMs = Date.now()): Promise<SaveReport> | undefined {
    if (this.job !== undefined) return undefined
    let due = this.scheduled
    if (!due) {
      let rules
      try {
        rules = parseSaveRules(rulesText)
      } catch {
        return undefined
      }
      due = shouldSave(rules, {
        nowMs,
        lastSaveMs: this.lastSaveMs,
        dirty: registry.dirty,
        lastAttemptMs: this.lastAttemptMs,
        lastAttemptFailed: this.lastAttemptFailed,
      })
      if (due) this.log.notice(`${registry.dirty} changes since the last save. Saving...`)
    }
    if (!due) return undefined
    this.scheduled = false
    this.log.notice('Background saving started')
    const job = this.saveAll(registry, { background: true })
    job.catch(() => {})
    return job
  }

  // ---------------------------------------------------------------- steps

  /**
   * Captures, synchronously, what the save will write: header values now, bitmaps by reference
   * (a background save copies small ones now, up to {@link START_COPY_BYTES} in all).
   */
  private plan(registry: FilterRegistry, background: boolean): SavePlan {
    if (!this.loaded) throw new Error('the snapshot in dir was not loaded; refusing to overwrite it')
    const records: SavePlan['records'] = []
    const pending: PendingFile[] = []
    let copyBudget = background ? START_COPY_BYTES : 0
    for (const entry of registry.entries()) {
      const committed = this.committed.get(entry)
      if (committed !== undefined && committed.version === entry.version) {
        records.push({ entry, committed })
        continue
      }
      const name = FilterRegistry.bytesOf(entry.name)
      let parts = entry.filter.toParts()
      const bitmapBytes = parts.layers.reduce((sum, layer) => sum + layer.bitmap.length, 0)
      if (bitmapBytes <= copyBudget) {
        copyBudget -= bitmapBytes
        parts = { ...parts, layers: parts.layers.map((layer) => ({ ...layer, bitmap: layer.bitmap.slice() })) }
      }
      const problem = recordProblem({ name, parts })
      if (problem !== undefined) {
        throw new Error(`filter ${quotedName(entry.name)} cannot be saved: ${problem}`)
      }
      const file = `${String(this.nextFileNumber++).padStart(12, '0')}.bf`
      const item: PendingFile = { entry, version: entry.version, name, parts, file, size: 0 }
      pending.push(item)
      records.push({ entry, pending: item })
    }
    // The start point, in the same turn as the capture above: later writes go to a new segment.
    const rotated = this.options.appendLog?.rotate()
    const logFrom = rotated ?? this.committedLogFrom
    const logOpen = rotated !== undefined && this.options.appendLog?.isOpen?.() === true
    return { records, pending, dirtyAtStart: registry.dirty, startedAtMs: Date.now(), logFrom, logOpen }
  }

  /**
   * The new MANIFEST text, or undefined when the one on disk already says it all. `removed` is
   * {@link obsoleteFiles} of the plan.
   */
  private manifestFor(plan: SavePlan, removed: readonly string[]): string | undefined {
    const unchanged =
      plan.pending.length === 0 && removed.length === 0 && plan.logFrom === this.committedLogFrom && plan.logOpen === this.committedLogOpen
    if (unchanged && this.manifestExists) return undefined
    const files = plan.records.map((record) => {
      if (record.committed !== undefined) return { file: record.committed.file, bytes: record.committed.bytes }
      return { file: record.pending!.file, bytes: record.pending!.size }
    })
    return formatManifest(files, plan.logFrom, plan.logOpen)
  }

  /** Files of the committed snapshot that the new one no longer lists. */
  private obsoleteFiles(plan: SavePlan): string[] {
    const kept = new Set<string>()
    for (const record of plan.records) if (record.committed !== undefined) kept.add(record.committed.file)
    const obsolete: string[] = []
    for (const file of this.committed.values()) if (!kept.has(file.file)) obsolete.push(file.file)
    return obsolete
  }

  private commitSync(registry: FilterRegistry, plan: SavePlan, bytesWritten: number): SaveReport {
    syncDirectorySync(this.snapshotDir)
    const removed = this.obsoleteFiles(plan)
    const manifest = this.manifestFor(plan, removed)
    if (manifest !== undefined) {
      const temp = this.tempPath(MANIFEST_FILE)
      writePiecesSync(temp, [Buffer.from(manifest, 'latin1')], 'w')
      renameSync(temp, path.join(this.snapshotDir, MANIFEST_FILE))
      syncDirectorySync(this.snapshotDir)
    }
    for (const file of removed) tryUnlinkSync(path.join(this.snapshotDir, file))
    this.install(registry, plan)
    return saveReport(false, plan, removed.length, bytesWritten)
  }

  /** Makes the plan, whose MANIFEST is durable, the committed snapshot; the log may drop what it holds. */
  private install(registry: FilterRegistry, plan: SavePlan): void {
    const committed = new Map<FilterEntry, CommittedFile>()
    for (const record of plan.records) {
      if (record.committed !== undefined) committed.set(record.entry, record.committed)
      else {
        const pending = record.pending!
        committed.set(record.entry, { file: pending.file, bytes: pending.size, version: pending.version })
      }
    }
    this.committed = committed
    this.manifestExists = true
    this.committedLogFrom = plan.logFrom
    this.committedLogOpen = plan.logOpen
    if (plan.logFrom !== undefined && this.options.appendLog !== undefined) {
      try {
        this.options.appendLog.committed(plan.logFrom)
      } catch (error) {
        // The snapshot is committed all the same; a start skips the segments it holds.
        this.log.warning(`Error deleting append only file segments below ${plan.logFrom}: ${(error as Error).message}`)
      }
    }
    // Changes made while a background save ran stay counted (redis: dirty - dirty_before_bgsave).
    registry.dirty = Math.max(0, registry.dirty - plan.dirtyAtStart)
  }

  private afterSuccess(background: boolean, plan: SavePlan): void {
    const now = Date.now()
    this.lastSaveMs = now
    this.saves++
    this.lastBgsaveStatus = 'ok'
    this.lastAttemptFailed = false
    if (background) {
      this.lastBgsaveSeconds = Math.round((now - plan.startedAtMs) / 1000)
      this.lastBgsaveLongestStepMs = this.longestStepMs
      this.log.notice('Background saving terminated with success')
    } else {
      this.log.notice('DB saved on disk')
    }
  }

  private afterFailure(background: boolean, error: unknown, rewrite = false): void {
    // As redis: only a background save's failure sets the status that stop-writes-on-bgsave-error
    // acts on; a failed SAVE is answered with an error and changes nothing else, and a failed log
    // rewrite (a snapshot here) only sets aof_last_bgrewrite_status.
    if (background && !rewrite) {
      this.lastBgsaveStatus = 'err'
      this.lastAttemptFailed = true
    }
    if (error instanceof SaveAborted) {
      this.log.warning('Background saving aborted (shutdown)')
      return
    }
    const message = (error as Error)?.message ?? String(error)
    this.log.warning(`${background ? 'Background saving' : 'Saving'} error: ${message}`)
  }

  private checkAbort(): void {
    if (this.abortRequested) throw new SaveAborted()
  }

  private tempPath(file: string): string {
    return path.join(this.snapshotDir, `${file}.${process.pid}-${this.nextTempNumber++}${TEMP_SUFFIX}`)
  }

  /**
   * Writes one filter without blocking: each bitmap slice is copied (the live bitmap keeps
   * changing; bits are only ever set, so every earlier add is in the copy), checksummed with the
   * native CRC-32 and written; the header, whose checksum covers the bitmap, is written after its
   * bitmap. Header values were captured when the save began. Returns the file's size.
   */
  private async writeFilterFileAsync(temp: string, pending: PendingFile): Promise<number> {
    const { parts } = pending
    const handle = await fsp.open(temp, 'w', 0o644)
    try {
      const scratch = Buffer.allocUnsafe(SLICE_BYTES)
      let position = 0
      const version = fileVersionFor(parts.layers.length, pending.name.length)
      let crc = 0
      for (let i = 0; i < parts.layers.length; i++) {
        const layer = parts.layers[i]!
        const header = encodeLayerHeader(layer, parts.hashing, i, parts.layers.length, version)
        crc = checksumLayerHeader(header, nativeCrc32, 0, chainedCrcStart(version, crc))
        const headerAt = position
        position += HEADER_BYTES
        const bitmap = layer.bitmap
        for (let offset = 0; offset < bitmap.length; offset += SLICE_BYTES) {
          this.checkAbort()
          const sliceStarted = performance.now()
          const length = Math.min(SLICE_BYTES, bitmap.length - offset)
          scratch.set(bitmap.subarray(offset, offset + length))
          const slice = scratch.subarray(0, length)
          crc = nativeCrc32(slice, crc)
          this.longestStepMs = Math.max(this.longestStepMs, performance.now() - sliceStarted)
          await writeAllAsync(handle, slice, position)
          position += length
          // A fast disk completes writes without ever leaving the event loop idle: yield explicitly.
          await yieldToLoop()
        }
        writeLayerChecksum(header, crc)
        await writeAllAsync(handle, header, headerAt)
      }
      const trailer = encodeFileTrailer({ name: pending.name, expansion: parts.expansion, nonScaling: parts.nonScaling }, nativeCrc32)
      await writeAllAsync(handle, trailer, position)
      position += trailer.length
      this.checkAbort()
      await handle.sync()
      return position
    } finally {
      await handle.close()
    }
  }
}

/**
 * Writes pieces one after another to a file, new unless `flags` says otherwise, and fsyncs it;
 * returns the file's size.
 */
function writePiecesSync(file: string, pieces: readonly Uint8Array[], flags: 'wx' | 'w' = 'wx'): number {
  const fd = openSync(file, flags, 0o644)
  let total = 0
  try {
    for (const piece of pieces) {
      writeAllSync(fd, piece, total)
      total += piece.length
    }
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  return total
}

/** The report of a committed save (both paths). */
function saveReport(background: boolean, plan: SavePlan, removed: number, bytesWritten: number): SaveReport {
  return {
    background,
    written: plan.pending.length,
    kept: plan.records.length - plan.pending.length,
    removed,
    bytesWritten,
    ms: Date.now() - plan.startedAtMs,
  }
}

function describeLoadError(error: unknown): string {
  if (error instanceof DecodeError) return `${error.code}: ${error.message}`
  if (error instanceof RangeError) return `corrupt: ${error.message}`
  const code = (error as NodeJS.ErrnoException)?.code
  const message = String((error as Error)?.message ?? error)
  // Node's own messages already start with their code ("EISDIR: illegal operation ...").
  return code !== undefined && !message.startsWith(`${code}:`) ? `${code}: ${message}` : message
}

// ---------------------------------------------------------------- manifest

/**
 * MANIFEST text: a magic line, `log-from <seq>` when there is a log (the first segment of the
 * append-only log the snapshot does not contain), then `log-open` when that segment was on disk
 * before this MANIFEST (the log was open: a start without it refuses), `file <name> <bytes>`
 * lines, and `end <count> <crc32 hex>`.
 */
export function formatManifest(files: readonly { file: string; bytes: number }[], logFrom?: number, logOpen = false): string {
  let body = `${MANIFEST_MAGIC}\n`
  if (logFrom !== undefined) body += `log-from ${logFrom}\n${logOpen ? 'log-open\n' : ''}`
  for (const { file, bytes } of files) body += `file ${file} ${bytes}\n`
  const crc = zlib.crc32(Buffer.from(body, 'latin1'), 0)
  return `${body}end ${files.length} ${crc.toString(16).padStart(8, '0')}\n`
}

/** Parses MANIFEST text; throws Error saying what is wrong (truncated, checksum, syntax). */
export function parseManifest(text: string): { file: string; bytes: number }[] {
  return parseManifestText(text).files
}

/** Parses MANIFEST text, `log-from` included; throws Error saying what is wrong. */
export function parseManifestText(text: string): { files: { file: string; bytes: number }[]; logFrom?: number; logOpen?: true } {
  if (!text.startsWith(`${MANIFEST_MAGIC}\n`)) throw new Error('bad manifest magic')
  const endAt = text.lastIndexOf('end ')
  if (endAt < 0 || !text.endsWith('\n')) throw new Error('truncated manifest')
  const body = text.slice(0, endAt)
  const end = /^end (\d+) ([0-9a-f]{8})\n$/.exec(text.slice(endAt))
  if (!end) throw new Error('truncated manifest')
  if (zlib.crc32(Buffer.from(body, 'latin1'), 0) !== parseInt(end[2]!, 16)) throw new Error('manifest checksum mismatch')
  const files: { file: string; bytes: number }[] = []
  const seen = new Set<string>()
  let lines = body.split('\n').slice(1, -1)
  let logFrom: number | undefined
  const logLine = /^log-from ([1-9]\d{0,15})$/.exec(lines[0] ?? '')
  let logOpen = false
  if (logLine) {
    logFrom = Number(logLine[1])
    lines = lines.slice(1)
    logOpen = lines[0] === 'log-open'
    if (logOpen) lines = lines.slice(1)
  }
  for (const line of lines) {
    const match = /^file (\d{12}\.bf) (\d+)$/.exec(line)
    if (!match || seen.has(match[1]!)) throw new Error(`bad manifest line ${JSON.stringify(line)}`)
    seen.add(match[1]!)
    files.push({ file: match[1]!, bytes: Number(match[2]) })
  }
  if (files.length !== Number(end[1])) throw new Error('manifest count mismatch')
  if (logFrom === undefined) return { files }
  return logOpen ? { files, logFrom, logOpen } : { files, logFrom }
}

// ---------------------------------------------------------------- I/O helpers

async function writeAllAsync(handle: fsp.FileHandle, data: Uint8Array, position: number): Promise<void> {
  let done = 0
  while (done < data.length) {
    const length = Math.min(data.length - done, IO_CHUNK_BYTES)
    const { bytesWritten } = await handle.write(data, done, length, position + done)
    done += bytesWritten
  }
}

function writeAllSync(fd: number, data: Uint8Array, position: number): void {
  let done = 0
  while (done < data.length) {
    done += writeSync(fd, data, done, Math.min(data.length - done, IO_CHUNK_BYTES), position + done)
  }
}

/** A filter's name for a message: JSON-quoted, cut after 64 characters (keys may be 512 MiB). */
function quotedName(name: string): string {
  const shown = 64
  return name.length <= shown ? JSON.stringify(name) : `${JSON.stringify(name.slice(0, shown))}... (${name.length} bytes)`
}

/**
 * Writes one filter to `target` atomically and synchronously (BF.SAVE): temp file in the same
 * directory → fsync → rename → fsync of the directory. Returns the bytes written.
 */
export function writeFilterFileSync(target: string, record: FilterRecord): number {
  const pieces = encodeFilter(record, nativeCrc32)
  const temp = `${target}.${process.pid}-${Date.now()}${TEMP_SUFFIX}`
  let total: number
  try {
    total = writePiecesSync(temp, pieces)
    renameSync(temp, target)
  } catch (error) {
    tryUnlinkSync(temp)
    throw error
  }
  syncDirectorySync(path.dirname(target))
  return total
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

function syncDirectorySync(dir: string): void {
  const fd = openSync(dir, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

function tryUnlinkSync(file: string): void {
  try {
    unlinkSync(file)
  } catch {
    // already gone
  }
}
