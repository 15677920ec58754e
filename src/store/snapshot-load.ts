/**
 * Loading the snapshot at start, in named steps ({@link loadSnapshot}): scan the directory, read
 * the MANIFEST, deal with filter files no MANIFEST vouches for, load the listed filter files, and
 * only then — the load having succeeded — delete the files the MANIFEST proves stray and the temp
 * files of unfinished saves. A refused start deletes nothing.
 */
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { ScalableBloomFilter } from '../core/scalable-filter.js'
import { filterOfWholeFile } from './whole-file.js'
import { DecodeError } from '../format/decode-error.js'
import {
  isFilterFileName,
  MANIFEST_FILE,
  parseManifestText,
  type Manifest,
  type ManifestFile,
} from '../format/manifest.js'
import type { Logger } from '../runtime/logger.js'
import { TEMP_SUFFIX } from './durable-file.js'
import { readSnapshotFile } from './filter-file.js'
import { nativeCrc32 } from './native-crc32.js'
import { FilterRegistry, type FilterEntry, type StoredFilter } from './registry.js'
import type { Databases } from './databases.js'
import { quotedName, type CommittedFile, type CommittedSnapshot } from './snapshot-save.js'

const CORRUPT_SUFFIX = '.corrupt'

/** What to do with a corrupt snapshot file at start. */
export type CorruptPolicy = 'refuse' | 'move-aside'

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

/** A snapshot file that cannot be loaded; the message names the file. */
export class SnapshotLoadError extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`Bad snapshot file ${file}: ${reason}`)
    this.name = 'SnapshotLoadError'
  }
}

/** What a load found: the committed snapshot, the number for the next new file, the report. */
export interface LoadedSnapshot {
  readonly committed: CommittedSnapshot
  readonly nextFileNumber: number
  readonly report: LoadReport
}

/** The load under way: where, with which policy, and its report so far. */
interface Load {
  readonly snapshotDir: string
  readonly policy: CorruptPolicy
  readonly log: Logger
  readonly report: LoadReport
}

/**
 * Loads the snapshot in `snapshotDir` into `registry` (empty). Throws {@link SnapshotLoadError}
 * naming the file on a bad magic, checksum, truncation or inconsistency, and naming the MANIFEST
 * when it is missing while filter files are there (it alone says which of them hold the data),
 * unless the policy is 'move-aside'.
 */
export async function loadSnapshot(
  snapshotDir: string,
  databases: Databases,
  policy: CorruptPolicy,
  log: Logger,
  logHoldsEveryWrite = false,
): Promise<LoadedSnapshot> {
  const started = performance.now()
  const load: Load = {
    snapshotDir,
    policy,
    log,
    report: { filters: 0, bytes: 0, ms: 0, movedAside: [], strayFilesRemoved: 0 },
  }
  const { names, nextFileNumber } = await scanDirectory(snapshotDir)
  const manifestPath = path.join(snapshotDir, MANIFEST_FILE)
  const manifest = await readManifest(load, manifestPath)
  if (manifest === undefined) await moveAsideUnlisted(load, names, manifestPath, logHoldsEveryWrite)
  const files = await loadFilterFiles(load, manifest?.files ?? [], databases)
  await removeStrayFiles(load, names, manifest)
  const logOpen = manifest?.logOpen === true
  const { report } = load
  report.logFrom = manifest?.logFrom
  report.logOpen = logOpen
  report.ms = performance.now() - started
  // A manifest listing a moved-aside file must be rewritten at the next save.
  const manifestCurrent = manifest !== undefined && report.movedAside.length === 0
  return {
    committed: { files, manifestCurrent, logFrom: manifest?.logFrom, logOpen, repl: manifest?.repl },
    nextFileNumber,
    report,
  }
}

/** Creates the directory if need be; its names, and the number after the highest one there. */
async function scanDirectory(snapshotDir: string): Promise<{ names: string[]; nextFileNumber: number }> {
  await fsp.mkdir(snapshotDir, { recursive: true })
  const names = await fsp.readdir(snapshotDir)
  let nextFileNumber = 1
  for (const name of names) {
    const number = /^(\d+)/.exec(name)
    if (number) nextFileNumber = Math.max(nextFileNumber, Number(number[1]) + 1)
  }
  return { names, nextFileNumber }
}

/**
 * The MANIFEST's contents, or undefined when there is none or (policy move-aside) it was corrupt
 * and moved aside.
 * @throws SnapshotLoadError naming it when it is corrupt and the policy is refuse
 */
async function readManifest(load: Load, manifestPath: string): Promise<Manifest | undefined> {
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
    if (load.policy !== 'move-aside') throw new SnapshotLoadError(manifestPath, reason)
    load.report.movedAside.push(await moveAside(load, manifestPath, reason))
    return undefined
  }
}

/**
 * Without a valid MANIFEST nothing proves a filter file stray, nor says which ones hold the
 * data: with any there, refuse to start naming the MANIFEST, or (move-aside) move each aside,
 * kept for inspection. Never deleted: a later save's MANIFEST would prove them stray otherwise.
 * When the log holds every write (`logHoldsEveryWrite`), they are a first snapshot that never
 * committed: moved aside whatever the policy, and the start goes on.
 * @throws SnapshotLoadError naming the missing MANIFEST when the policy is refuse
 */
async function moveAsideUnlisted(
  load: Load,
  names: readonly string[],
  manifestPath: string,
  logHoldsEveryWrite: boolean,
): Promise<void> {
  const orphans = names.filter(isFilterFileName)
  if (orphans.length === 0) return
  const shown = orphans.slice(0, 3).join(', ') + (orphans.length > 3 ? ', ...' : '')
  if (logHoldsEveryWrite) {
    // A first snapshot that never committed: the log replayed next holds every write. Kept aside.
    const reason =
      'a first snapshot that never committed (no MANIFEST; the append only file from segment 1 holds every write)'
    for (const name of orphans)
      load.report.movedAside.push(await moveAside(load, path.join(load.snapshotDir, name), reason))
    return
  }
  if (load.policy !== 'move-aside') {
    throw new SnapshotLoadError(
      manifestPath,
      `missing, while ${orphans.length} filter file(s) are there (${shown}): only the MANIFEST says which hold the data. ` +
        'Restore it, or set snapshot-on-corrupt move-aside to start without them (they are moved aside, not deleted)',
    )
  }
  const { movedAside } = load.report
  const reason =
    movedAside.length > 0
      ? 'not listed by a valid MANIFEST (it was corrupt)'
      : 'not listed by a MANIFEST (there is none)'
  for (const name of orphans) movedAside.push(await moveAside(load, path.join(load.snapshotDir, name), reason))
}

/**
 * Loads each listed filter file into its database; a bad one (or a second filter of the same name
 * in one database) is refused or, policy move-aside, moved aside. Returns the file of each filter
 * loaded. A filter of a database this server does not have refuses the start whatever the policy
 * (redis rdbLoad: "FATAL: Data file was created with a Redis server configured to handle more than
 * N databases"): the file is sound, and moving it aside would drop it.
 */
async function loadFilterFiles(
  load: Load,
  files: readonly ManifestFile[],
  databases: Databases,
): Promise<Map<FilterEntry, CommittedFile>> {
  const loaded = new Map<FilterEntry, CommittedFile>()
  const { report } = load
  for (const { file, bytes, expiresAt, db = 0 } of files) {
    const filePath = path.join(load.snapshotDir, file)
    if (!databases.has(db)) {
      throw new SnapshotLoadError(
        filePath,
        `its key is of database ${db}, and this server has ${databases.count} databases (raise databases to load it)`,
      )
    }
    const registry = databases.db(db)
    let record: { name: Uint8Array }
    let filter: StoredFilter
    try {
      const read = readSnapshotFile(filePath, nativeCrc32, bytes)
      record = read.record
      // No byte limit of its own: a filter over max-filter-bytes loads whole, and the commands refuse
      // its growth (filter-budget.ts scaleUpRefusal) as they do for any filter.
      filter = read.kind === 'bloom' ? ScalableBloomFilter.fromParts(read.record.parts) : filterOfWholeFile(read.record)
    } catch (error) {
      await refuseOrMoveAside(load, filePath, describeLoadError(error))
      continue
    }
    const name = FilterRegistry.nameOf(record.name)
    if (registry.peek(name) !== undefined) {
      await refuseOrMoveAside(load, filePath, `a second filter named ${quotedName(name)}`)
      continue
    }
    const entry = registry.set(name, filter)
    // Kept even when past: the log may still touch the key; the server deletes it once loaded.
    if (expiresAt !== undefined) registry.setExpiry(entry, expiresAt)
    loaded.set(entry, { file, bytes, version: entry.version, expiresAt, db })
    report.filters++
    report.bytes += bytes
  }
  return loaded
}

/**
 * Only once the snapshot loaded: a valid MANIFEST proves the filter files it does not list stray;
 * temp files are saves that never committed.
 */
async function removeStrayFiles(load: Load, names: readonly string[], manifest: Manifest | undefined): Promise<void> {
  const { report, snapshotDir } = load
  const listed = new Set((manifest?.files ?? []).map((entry) => entry.file))
  for (const name of names) {
    if (name.endsWith(TEMP_SUFFIX) || (manifest !== undefined && isFilterFileName(name) && !listed.has(name))) {
      await fsp.rm(path.join(snapshotDir, name), { force: true })
      report.strayFilesRemoved++
    }
  }
  if (report.strayFilesRemoved > 0) {
    load.log.notice(`Removed ${report.strayFilesRemoved} stray file(s) of an unfinished save from ${snapshotDir}`)
  }
}

/** @throws SnapshotLoadError naming the file, unless the policy is move-aside: then it is moved aside. */
async function refuseOrMoveAside(load: Load, filePath: string, reason: string): Promise<void> {
  if (load.policy !== 'move-aside') throw new SnapshotLoadError(filePath, reason)
  load.report.movedAside.push(await moveAside(load, filePath, reason))
}

async function moveAside(load: Load, filePath: string, reason: string): Promise<string> {
  const aside = `${filePath}.${Date.now()}${CORRUPT_SUFFIX}`
  try {
    await fsp.rename(filePath, aside)
  } catch (error) {
    // A file the MANIFEST lists that is not there: nothing to move, the start goes on without it.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    load.log.warning(`Bad snapshot file ${filePath}: ${reason}; starting without it`)
    return filePath
  }
  load.log.warning(`Bad snapshot file ${filePath}: ${reason}; moved aside to ${aside}`)
  return aside
}

function describeLoadError(error: unknown): string {
  if (error instanceof DecodeError) return `${error.code}: ${error.message}`
  if (error instanceof RangeError) return `corrupt: ${error.message}`
  const code = (error as NodeJS.ErrnoException)?.code
  const message = String((error as Error)?.message ?? error)
  // Node's own messages already start with their code ("EISDIR: illegal operation ...").
  return code !== undefined && !message.startsWith(`${code}:`) ? `${code}: ${message}` : message
}
