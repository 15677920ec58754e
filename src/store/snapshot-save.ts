/**
 * A save of the snapshot: the plan (what to write, captured in one turn of the event loop) and the
 * one commit sequence that SAVE runs synchronously and BGSAVE without blocking:
 *
 * 1. write each changed filter to a NEW numbered file (temp → fsync → rename);
 * 2. fsync the directory;
 * 3. replace MANIFEST (temp → fsync → rename, the commit point → fsync of the directory);
 * 4. delete the files the old MANIFEST listed and the new one does not.
 *
 * The sequence is a generator of steps; {@link runSync} runs it with the blocking file calls and
 * {@link runAsync} with the promise ones ({@link syncSaveIo}, {@link backgroundSaveIo}). Until the
 * MANIFEST rename the previous snapshot is untouched: a failure before it deletes what the save
 * created, and the previous snapshot stays the one that loads.
 */
import { copyBitmap } from '../core/pieced-bitmap.js'
import { renameSync, promises as fsp } from 'node:fs'
import path from 'node:path'
import type { FilterParts } from '../core/scalable-filter.js'
import { encodeFilter, recordProblem } from '../format/codec.js'
import { wholeFileOf } from './whole-file.js'
import { formatManifest, MANIFEST_FILE, type ManifestFile, type ReplicationPosition } from '../format/manifest.js'
import {
  syncDirectory,
  syncDirectorySync,
  tryUnlink,
  tryUnlinkSync,
  writeFileAsync,
  writePiecesSync,
} from './durable-file.js'
import { SLICE_BYTES, writeFilterFileAsync, type SliceWriter } from './filter-file-write.js'
import { nativeCrc32 } from './native-crc32.js'
import { FilterRegistry, type FilterEntry } from './registry.js'
import { captureBegins, LayerCopy } from './layer-copy.js'
import type { BloomLayer } from '../core/bloom-layer.js'
import type { Databases } from './databases.js'

/**
 * Bitmap bytes a background save copies when it begins (whole filters, in registry order, while
 * the budget lasts; each slice step copies 2 MiB anyway). The others are read slice by slice
 * through a copy-on-write of each layer (layer-copy.ts): a write into a piece not written out yet
 * saves that piece first. Either way every filter is saved exactly as it was at the save's start
 * point, the append-only log's `log-from`, counts and bits alike, so the replay of the writes
 * after it gives back the same BF.CARD (an add whose bits were already in the snapshot would
 * replay as 0, and the filter would count fewer items than it holds).
 */
export const START_COPY_BYTES = 4 * SLICE_BYTES

/**
 * The append-only log's side of every save, so that a restart replays only the writes
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
   * the MANIFEST that records it (`log-open`), so a start without it refuses.
   */
  isOpen?(): boolean
  /** Called once the MANIFEST recording `logFrom` is durable: the segments below it may go. */
  committed(logFrom: number): void
  /**
   * At start: whether the log that will be replayed holds every write ever made (appendonly yes
   * and segment 1 still on disk, so no snapshot ever committed and dropped a segment). Filter
   * files without a MANIFEST are then those of a first snapshot that never committed (a crash
   * between its files and its MANIFEST), not data only they hold.
   */
  holdsEveryWrite?(): boolean
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

/** One filter file of the committed snapshot. */
export interface CommittedFile {
  readonly file: string
  readonly bytes: number
  /** The entry's version when its state was captured for this file. */
  readonly version: number
  /** The key's expiry the MANIFEST lists with the file (it is not in the file). */
  readonly expiresAt?: number | undefined
  /** The key's database the MANIFEST lists with the file (absent: 0). */
  readonly db?: number | undefined
}

/** What the committed MANIFEST says. */
export interface CommittedSnapshot {
  /** The file of each filter it lists. */
  readonly files: ReadonlyMap<FilterEntry, CommittedFile>
  /** Whether the MANIFEST on disk says exactly this (false: the next save writes one, changes or not). */
  readonly manifestCurrent: boolean
  /** `log-from`: the first log segment the snapshot does not contain. */
  readonly logFrom: number | undefined
  /** `log-open`: segment `logFrom` was on disk before the MANIFEST. */
  readonly logOpen: boolean
  /** `repl-id` / `repl-offset`: the replication position the data is exactly at (a synchronous save's). */
  readonly repl?: ReplicationPosition | undefined
}

/** Before a load: no snapshot. */
export const NO_SNAPSHOT: CommittedSnapshot = {
  files: new Map(),
  manifestCurrent: false,
  logFrom: undefined,
  logOpen: false,
}

/** A filter to write, captured when the save began: a Bloom filter's parts, or a window or Cuckoo filter's whole file. */
export interface PendingFile {
  readonly entry: FilterEntry
  readonly version: number
  readonly name: Uint8Array
  readonly parts?: FilterParts
  /**
   * A background save's copy-on-write of each of `parts`' layers, when their bitmaps were not
   * copied at the capture: the file is read through them ({@link releasePlan} detaches them).
   */
  readonly copies?: readonly LayerCopy[]
  /** A window or Cuckoo filter's file (whole-file.ts), encoded at the capture: a point-in-time copy. */
  readonly whole?: Uint8Array
  readonly file: string
  /** Bytes of the file, once written. */
  size: number
}

export interface SavePlan {
  /** Every filter of the new snapshot in registry order, by file, with its expiry when captured. */
  readonly records: {
    entry: FilterEntry
    expiresAt: number | undefined
    db: number
    committed?: CommittedFile
    pending?: PendingFile
  }[]
  readonly pending: PendingFile[]
  readonly dirtyAtStart: number
  readonly startedAtMs: number
  /** The first log segment this snapshot does not contain (undefined: no log ever). */
  readonly logFrom: number | undefined
  /** Whether segment `logFrom` is on disk (the log was open and rotated to it). */
  readonly logOpen: boolean
  /** The replication position at the capture (synchronous saves only: a background save's data is not at one point of the stream). */
  readonly repl: ReplicationPosition | undefined
}

/**
 * Captures, synchronously, what the save will write: header values now, bitmaps by reference
 * (a background save copies small ones now, up to {@link START_COPY_BYTES} in all). Unchanged
 * filters (same FilterEntry, same version) keep their file. `newFile` names the next new file.
 */
export function planSave(
  databases: Databases,
  committed: CommittedSnapshot,
  background: boolean,
  newFile: () => string,
  appendLog?: SnapshotLogHooks,
  repl?: ReplicationPosition,
): SavePlan {
  captureBegins()
  const records: SavePlan['records'] = []
  const pending: PendingFile[] = []
  let copyBudget = background ? START_COPY_BYTES : 0
  const guarded: { item: PendingFile; layers: readonly BloomLayer[] }[] = []
  // Keys past their expiry are saved too, with it (as redis's RDB): the load deletes them.
  for (const { db, entry } of databases.allEntries()) {
    const kept = committed.files.get(entry)
    const expiresAt = entry.expiresAt
    if (kept !== undefined && kept.version === entry.version) {
      records.push({ entry, expiresAt, db, committed: kept })
      continue
    }
    const name = FilterRegistry.bytesOf(entry.name)
    if (entry.kind !== 'bloom') {
      const item: PendingFile = {
        entry,
        version: entry.version,
        name,
        whole: wholeFileOf(entry, name, nativeCrc32),
        file: newFile(),
        size: 0,
      }
      pending.push(item)
      records.push({ entry, expiresAt, db, pending: item })
      continue
    }
    let parts = entry.filter.toParts()
    const bitmapBytes = parts.layers.reduce((sum, layer) => sum + layer.bitmap.length, 0)
    const copied = bitmapBytes <= copyBudget
    if (copied) {
      copyBudget -= bitmapBytes
      parts = { ...parts, layers: parts.layers.map((layer) => ({ ...layer, bitmap: copyBitmap(layer.bitmap) })) }
    }
    const problem = recordProblem({ name, parts })
    if (problem !== undefined) {
      throw new Error(`filter ${quotedName(entry.name)} cannot be saved: ${problem}`)
    }
    const item: PendingFile = { entry, version: entry.version, name, parts, file: newFile(), size: 0 }
    pending.push(item)
    records.push({ entry, expiresAt, db, pending: item })
    if (background && !copied) guarded.push({ item, layers: entry.filter.layers })
  }
  // The start point, in the same turn as the capture above: later writes go to a new segment.
  const rotated = appendLog?.rotate()
  // Guards go on once nothing can throw any more (none is left behind), still in the capture's turn.
  for (const { item, layers } of guarded)
    (item as { copies?: LayerCopy[] }).copies = layers.map((layer) => new LayerCopy(layer))
  const logFrom = rotated ?? committed.logFrom
  const logOpen = rotated !== undefined && appendLog?.isOpen?.() === true
  return {
    records,
    pending,
    dirtyAtStart: databases.dirty,
    startedAtMs: Date.now(),
    logFrom,
    logOpen,
    repl: background ? undefined : repl,
  }
}

/** Detaches the copy-on-write of every filter of a background save's plan (its end, committed or not). Idempotent. */
export function releasePlan(plan: SavePlan): void {
  for (const item of plan.pending) for (const copy of item.copies ?? []) copy.detach()
}

/** The snapshot the plan is once its MANIFEST is durable. */
export function committedBy(plan: SavePlan): CommittedSnapshot {
  const files = new Map<FilterEntry, CommittedFile>()
  for (const record of plan.records) {
    const { expiresAt, db } = record
    if (record.committed !== undefined) files.set(record.entry, { ...record.committed, expiresAt, db })
    else {
      const pending = record.pending!
      files.set(record.entry, { file: pending.file, bytes: pending.size, version: pending.version, expiresAt, db })
    }
  }
  return { files, manifestCurrent: true, logFrom: plan.logFrom, logOpen: plan.logOpen, repl: plan.repl }
}

/** The report of a committed save (both paths). */
export function saveReport(background: boolean, plan: SavePlan, removed: number, bytesWritten: number): SaveReport {
  return {
    background,
    written: plan.pending.length,
    kept: plan.records.length - plan.pending.length,
    removed,
    bytesWritten,
    ms: Date.now() - plan.startedAtMs,
  }
}

// ---------------------------------------------------------------- the commit sequence

/** Where a save commits: the snapshot directory, the snapshot committed there, and temp names. */
export interface CommitTarget {
  readonly snapshotDir: string
  readonly committed: CommittedSnapshot
  tempPath(file: string): string
}

/** The file operations of a save: each returns its result (SAVE) or a promise of it (BGSAVE). */
export interface SaveIo {
  /** Writes and fsyncs one filter file; returns its size. */
  writeFilter(temp: string, pending: PendingFile): number | Promise<number>
  /** Writes and fsyncs a whole small file. */
  writeFile(temp: string, data: Uint8Array): void | Promise<void>
  rename(from: string, to: string): void | Promise<void>
  syncDirectory(dir: string): void | Promise<void>
  /** Deletes a file if it can; never fails. */
  remove(file: string): void | Promise<void>
  /** Throws when the save must stop before it commits (a background save at shutdown). */
  checkAbort(): void
}

/** What a commit did, for its {@link SaveReport}. */
export interface CommitResult {
  removed: number
  bytesWritten: number
}

/** One step: yields its value or promise to the runner and gets the result back. */
function* step<T>(result: T | Promise<T>): Generator<unknown, T, unknown> {
  return (yield result) as T
}

/**
 * The save's commit sequence (the module comment's steps 1-4). The caller installs the plan
 * ({@link committedBy}) once it returns: the MANIFEST is durable then.
 */
export function* commitSequence(
  plan: SavePlan,
  target: CommitTarget,
  io: SaveIo,
): Generator<unknown, CommitResult, unknown> {
  const { snapshotDir } = target
  const created: string[] = []
  try {
    let bytesWritten = 0
    for (const pending of plan.pending) {
      const temp = target.tempPath(pending.file)
      created.push(temp)
      pending.size = yield* step(io.writeFilter(temp, pending))
      const finalPath = path.join(snapshotDir, pending.file)
      yield* step(io.rename(temp, finalPath))
      created[created.length - 1] = finalPath
      bytesWritten += pending.size
    }
    io.checkAbort()
    yield* step(io.syncDirectory(snapshotDir))
    io.checkAbort()
    const removed = obsoleteFiles(plan, target.committed)
    const manifest = manifestFor(plan, removed, target.committed)
    if (manifest !== undefined) {
      const temp = target.tempPath(MANIFEST_FILE)
      created.push(temp)
      yield* step(io.writeFile(temp, Buffer.from(manifest, 'latin1')))
      io.checkAbort()
      // The commit point: from here on the new snapshot is the one that loads.
      yield* step(io.rename(temp, path.join(snapshotDir, MANIFEST_FILE)))
      created.length = 0
      yield* step(io.syncDirectory(snapshotDir))
    }
    created.length = 0
    for (const file of removed) yield* step(io.remove(path.join(snapshotDir, file)))
    return { removed: removed.length, bytesWritten }
  } catch (error) {
    for (const file of created) yield* step(io.remove(file))
    throw error
  }
}

/** Runs a sequence whose steps all return values (SAVE). */
export function runSync<T>(steps: Generator<unknown, T, unknown>): T {
  let next = steps.next()
  while (!next.done) {
    next =
      next.value instanceof Promise
        ? steps.throw(new Error('a synchronous save step returned a promise'))
        : steps.next(next.value)
  }
  return next.value
}

/** Runs a sequence whose steps return promises (BGSAVE), handing each result or error back to it. */
export async function runAsync<T>(steps: Generator<unknown, T, unknown>): Promise<T> {
  let next = steps.next()
  while (!next.done) {
    let result: unknown
    try {
      result = await next.value
    } catch (error) {
      next = steps.throw(error)
      continue
    }
    next = steps.next(result)
  }
  return next.value
}

/** SAVE's file operations: blocking. Nothing aborts it. */
export const syncSaveIo: SaveIo = {
  writeFilter: (temp, pending) =>
    writePiecesSync(
      temp,
      pending.whole !== undefined
        ? [pending.whole]
        : encodeFilter({ name: pending.name, parts: pending.parts! }, nativeCrc32),
    ),
  writeFile: (temp, data) => {
    writePiecesSync(temp, [data], 'w')
  },
  rename: renameSync,
  syncDirectory: syncDirectorySync,
  remove: tryUnlinkSync,
  checkAbort: () => {},
}

/** BGSAVE's file operations: filters in slices (yielding between them), the rest as promises. */
export function backgroundSaveIo(job: SliceWriter): SaveIo {
  return {
    writeFilter: (temp, pending) => {
      const whole = pending.whole
      if (whole !== undefined) return writeFileAsync(temp, whole).then(() => whole.length)
      return writeFilterFileAsync(temp, { name: pending.name, parts: pending.parts!, copies: pending.copies }, job)
    },
    writeFile: writeFileAsync,
    rename: fsp.rename,
    syncDirectory,
    remove: tryUnlink,
    checkAbort: () => job.checkAbort(),
  }
}

/** Files of the committed snapshot that the new one no longer lists. */
function obsoleteFiles(plan: SavePlan, committed: CommittedSnapshot): string[] {
  const kept = new Set<string>()
  for (const record of plan.records) if (record.committed !== undefined) kept.add(record.committed.file)
  const obsolete: string[] = []
  for (const file of committed.files.values()) if (!kept.has(file.file)) obsolete.push(file.file)
  return obsolete
}

/**
 * The new MANIFEST text, or undefined when the one on disk already says it all. `removed` is
 * {@link obsoleteFiles} of the plan.
 */
function manifestFor(plan: SavePlan, removed: readonly string[], committed: CommittedSnapshot): string | undefined {
  const unchanged =
    plan.pending.length === 0 &&
    removed.length === 0 &&
    plan.logFrom === committed.logFrom &&
    plan.logOpen === committed.logOpen &&
    plan.records.every(
      (record) => record.expiresAt === record.committed?.expiresAt && record.db === (record.committed?.db ?? 0),
    ) &&
    plan.repl?.replid === committed.repl?.replid &&
    plan.repl?.offset === committed.repl?.offset &&
    plan.repl?.db === committed.repl?.db
  if (unchanged && committed.manifestCurrent) return undefined
  const files = plan.records.map(({ committed: kept, pending, expiresAt, db }): ManifestFile => {
    const file =
      kept !== undefined
        ? { file: kept.file, bytes: kept.bytes, db }
        : { file: pending!.file, bytes: pending!.size, db }
    return expiresAt === undefined ? file : { ...file, expiresAt }
  })
  return formatManifest(files, plan.logFrom, plan.logOpen, plan.repl)
}

/** A filter's name for a message: JSON-quoted, cut after 64 characters (keys may be 512 MiB). */
export function quotedName(name: string): string {
  const shown = 64
  return name.length <= shown
    ? JSON.stringify(name)
    : `${JSON.stringify(name.slice(0, shown))}... (${name.length} bytes)`
}
