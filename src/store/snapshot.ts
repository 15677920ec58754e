/**
 * Snapshots: every filter in `<dir>/snapshot/`, one header-plus-bitmap file each (docs/FORMAT.md),
 * tied together by a MANIFEST that is written last. With its parts — snapshot-load.ts (the load's
 * steps), snapshot-save.ts (the plan and the one commit sequence of SAVE and BGSAVE),
 * filter-file-write.ts, durable-file.ts and format/manifest.ts — the only code that calls fs for
 * the dataset.
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
import path from 'node:path'
import type { Logger } from '../runtime/logger.js'
import { filterFileName, type ReplicationPosition } from '../format/manifest.js'
import { TEMP_SUFFIX } from './durable-file.js'
import type { SliceWriter } from './filter-file-write.js'
import { Databases, type Dataset } from './databases.js'
import { parseSaveRules, shouldSave } from './save-schedule.js'
import { loadSnapshot, type CorruptPolicy, type LoadReport } from './snapshot-load.js'
import {
  backgroundSaveIo,
  commitSequence,
  committedBy,
  NO_SNAPSHOT,
  planSave,
  releasePlan,
  runAsync,
  runSync,
  saveReport,
  syncSaveIo,
  type CommitTarget,
  type CommittedSnapshot,
  type SavePlan,
  type SaveReport,
  type SnapshotLogHooks,
} from './snapshot-save.js'

// The snapshot's parts, exported here as the one entry point for the rest of bfs.
export { formatManifest, MANIFEST_FILE, parseManifest, parseManifestText } from '../format/manifest.js'
export { SLICE_BYTES, writeFilterFileSync } from './filter-file-write.js'
export { nativeCrc32 } from './native-crc32.js'
export { SnapshotLoadError, type CorruptPolicy, type LoadReport } from './snapshot-load.js'
export { START_COPY_BYTES, type SaveReport, type SnapshotLogHooks } from './snapshot-save.js'

/** The snapshot's directory under `dir`. BF.SAVE and BF.LOAD may not reach into it (store/owned-files.ts). */
export const SNAPSHOT_DIR = 'snapshot'

export interface SnapshotOptions {
  /** The data directory (`dir`); the snapshot lives in its `snapshot/` subdirectory. */
  dir: string
  log: Logger
  /** Read when loading: refuse to start (redis's behaviour with a bad RDB) or move the file aside. */
  onCorrupt?: () => CorruptPolicy
  /** The append-only log, when there is one: rotated at each save's start, trimmed at its commit. */
  appendLog?: SnapshotLogHooks
  /** The replication position a synchronous save records in its MANIFEST (the data is exactly at it). */
  replicationPosition?: () => ReplicationPosition
}

/** A background save stopped by shutdown before it committed. */
class SaveAborted extends Error {
  constructor() {
    super('background save aborted')
  }
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
  /** What the committed MANIFEST says. */
  private committed: CommittedSnapshot = NO_SNAPSHOT
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

  /** The replication position the committed snapshot's MANIFEST records (a synchronous save's), if any. */
  get replicationPosition(): ReplicationPosition | undefined {
    return this.committed.repl
  }

  /** The committed snapshot's `log-from`: the log is replayed from this segment on. */
  get logFrom(): number | undefined {
    return this.committed.logFrom
  }

  /** Whether the committed MANIFEST says segment {@link logFrom} was on disk before it. */
  get logFromOnDisk(): boolean {
    return this.committed.logOpen
  }

  /** Changes are counted by the registry; this is what INFO reports as bytes on disk. */
  get committedBytes(): number {
    let total = 0
    for (const file of this.committed.files.values()) total += file.bytes
    return total
  }

  // ---------------------------------------------------------------- load

  /**
   * Loads the snapshot into `registry` (which should be empty): reads MANIFEST, then every filter
   * file it lists, then deletes the files it proves stray and the temp files of unfinished saves
   * (snapshot-load.ts). Throws {@link SnapshotLoadError} naming the file on a bad magic, checksum,
   * truncation or inconsistency, and naming the MANIFEST when it is missing while filter files are
   * there (it alone says which of them hold the data), unless the policy is 'move-aside'.
   */
  async loadAll(dataset: Dataset): Promise<LoadReport> {
    // The snapshot fills an empty dataset; a filter stored before start() would collide with its copy.
    if (dataset.size > 0)
      throw new Error('the registry must be empty when the snapshot loads: add filters after start()')
    const policy = this.options.onCorrupt?.() ?? 'refuse'
    const uncommittedOnly = this.options.appendLog?.holdsEveryWrite?.() === true
    const { committed, nextFileNumber, report } = await loadSnapshot(
      this.snapshotDir,
      Databases.of(dataset),
      policy,
      this.log,
      uncommittedOnly,
    )
    this.committed = committed
    this.nextFileNumber = Math.max(this.nextFileNumber, nextFileNumber)
    dataset.dirty = 0
    this.lastSaveMs = Date.now()
    this.lastLoad = report
    this.loaded = true
    return report
  }

  // ---------------------------------------------------------------- save

  /**
   * Saves every filter that changed since the last save, deletes the files of removed filters,
   * and commits with a new MANIFEST (snapshot-save.ts). `background: true` (BGSAVE) writes in
   * slices of {@link SLICE_BYTES}, yielding to the event loop between them; the snapshot holds
   * every change made before the call (when one is already running, this one starts after it).
   * `background: false` (SAVE) blocks until done and rejects while a background save runs.
   * Rejects on any I/O error; the previous snapshot then stays in place.
   */
  saveAll(dataset: Dataset, options: { background: boolean; rewrite?: boolean }): Promise<SaveReport> {
    if (!options.background) {
      try {
        return Promise.resolve(this.saveSync(dataset))
      } catch (error) {
        return Promise.reject(error)
      }
    }
    // A second background save (a log rewrite during BGSAVE) starts once the running one ends, so
    // that it holds every change made before this call.
    const running = this.job
    if (running !== undefined) return running.catch(() => {}).then(() => this.saveAll(dataset, options))
    let plan: SavePlan
    const planStarted = performance.now()
    try {
      plan = this.plan(dataset, true)
    } catch (error) {
      this.lastAttemptMs = Date.now()
      this.afterFailure(true, error, options.rewrite === true)
      return Promise.reject(error)
    }
    const writer: SliceWriter = { checkAbort: () => this.checkAbort(), longestStepMs: performance.now() - planStarted }
    this.abortRequested = false
    this.bgsaveStartedMs = plan.startedAtMs
    this.lastAttemptMs = plan.startedAtMs
    const job = this.runBackground(dataset, plan, writer, options.rewrite === true).finally(() => {
      this.job = undefined
      this.bgsaveStartedMs = undefined
    })
    this.job = job
    return job
  }

  /** SAVE: the whole save, synchronously. Throws when a background save is running or on I/O errors. */
  saveSync(dataset: Dataset): SaveReport {
    if (this.job !== undefined) throw new Error('Background save already in progress')
    this.lastAttemptMs = Date.now()
    try {
      const plan = this.plan(dataset, false)
      const { removed, bytesWritten } = runSync(commitSequence(plan, this.commitTarget(), syncSaveIo))
      this.install(dataset, plan)
      const report = saveReport(false, plan, removed, bytesWritten)
      this.afterSuccess(false, plan)
      return report
    } catch (error) {
      this.afterFailure(false, error)
      throw error
    }
  }

  private async runBackground(
    dataset: Dataset,
    plan: SavePlan,
    writer: SliceWriter,
    rewrite: boolean,
  ): Promise<SaveReport> {
    try {
      const { removed, bytesWritten } = await runAsync(
        commitSequence(plan, this.commitTarget(), backgroundSaveIo(writer)),
      )
      this.install(dataset, plan)
      const report = saveReport(true, plan, removed, bytesWritten)
      this.lastBgsaveLongestStepMs = writer.longestStepMs
      this.afterSuccess(true, plan)
      return report
    } catch (error) {
      this.afterFailure(true, error, rewrite)
      throw error
    } finally {
      releasePlan(plan)
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
  tick(dataset: Dataset, rulesText: string, nowMs = Date.now()): Promise<SaveReport> | undefined {
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
        dirty: dataset.dirty,
        lastAttemptMs: this.lastAttemptMs,
        lastAttemptFailed: this.lastAttemptFailed,
      })
      if (due) this.log.notice(`${dataset.dirty} changes since the last save. Saving...`)
    }
    if (!due) return undefined
    this.scheduled = false
    this.log.notice('Background saving started')
    const job = this.saveAll(dataset, { background: true })
    job.catch(() => {})
    return job
  }

  // ---------------------------------------------------------------- steps

  /** The save's plan (snapshot-save.ts planSave); refused until the snapshot on disk was loaded. */
  private plan(dataset: Dataset, background: boolean): SavePlan {
    if (!this.loaded) throw new Error('the snapshot in dir was not loaded; refusing to overwrite it')
    const repl = background ? undefined : this.options.replicationPosition?.()
    return planSave(
      Databases.of(dataset),
      this.committed,
      background,
      () => filterFileName(this.nextFileNumber++),
      this.options.appendLog,
      repl,
    )
  }

  private commitTarget(): CommitTarget {
    return { snapshotDir: this.snapshotDir, committed: this.committed, tempPath: (file) => this.tempPath(file) }
  }

  /** Makes the plan, whose MANIFEST is durable, the committed snapshot; the log may drop what it holds. */
  private install(dataset: Dataset, plan: SavePlan): void {
    this.committed = committedBy(plan)
    if (plan.logFrom !== undefined && this.options.appendLog !== undefined) {
      try {
        this.options.appendLog.committed(plan.logFrom)
      } catch (error) {
        // The snapshot is committed all the same; a start skips the segments it holds.
        this.log.warning(`Error deleting append only file segments below ${plan.logFrom}: ${(error as Error).message}`)
      }
    }
    // Changes made while a background save ran stay counted (redis: dirty - dirty_before_bgsave).
    dataset.dirty = Math.max(0, dataset.dirty - plan.dirtyAtStart)
  }

  private afterSuccess(background: boolean, plan: SavePlan): void {
    const now = Date.now()
    this.lastSaveMs = now
    this.saves++
    this.lastBgsaveStatus = 'ok'
    this.lastAttemptFailed = false
    if (background) {
      this.lastBgsaveSeconds = Math.round((now - plan.startedAtMs) / 1000)
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
}
