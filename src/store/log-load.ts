/**
 * Loading the append-only log's segments at start: each read and replayed through `apply`, oldest
 * first, damage tolerated or refused as the configuration says (append-log.ts opens the log after).
 */
import { copyFileSync, readFileSync, statSync, truncateSync } from 'node:fs'
import type { Logger } from '../runtime/logger.js'
import { scanLog, type LogDamage } from './log-replay.js'

export interface LoadOptions {
  /** `aof-load-truncated`: load a last segment cut inside its last record, with a warning. */
  allowTruncatedTail: boolean
  /** `aof-load-corrupt`: load up to damage in the middle, with a warning, instead of refusing. */
  allowCorrupt: boolean
  /**
   * The snapshot's `log-from`: the first segment it does not contain. Segments below it are
   * deleted without being read, and new writes never go to a segment below it.
   */
  fromSeq?: number
  /**
   * The snapshot's MANIFEST says segment `fromSeq` was on disk before it (`log-open`): a start
   * without it refuses. Otherwise it may be missing only when no later segment exists.
   */
  fromSeqOnDisk?: boolean
}

export interface LoadResult {
  /** Segments replayed. */
  segments: number
  /** Segments below `fromSeq` that were deleted unread (their writes are in the snapshot). */
  skipped: number
  records: number
  bytes: number
  /** Damage found and tolerated, with the segment it was in. */
  damage?: LogDamage & { file: string }
}

/** Damage the configuration does not allow: startup stops with this message. */
export class LogLoadError extends Error {
  override name = 'LogLoadError'
  constructor(
    readonly file: string,
    readonly damage: LogDamage,
  ) {
    super(
      damage.kind === 'truncated'
        ? `Bad file format reading the append only file ${file}: truncated at offset ${damage.offset} ` +
            `(${damage.reason}). Set aof-load-truncated yes to load up to offset ${damage.recordOffset}.`
        : `Bad file format reading the append only file ${file} at offset ${damage.offset}: ${damage.reason}. ` +
            `Records from offset ${damage.recordOffset} on cannot be read; fix or move the file, ` +
            `or set aof-load-corrupt yes to load what precedes the damage.`,
    )
  }
}

/**
 * Replays `segments` (those from `fromSeq` on, oldest first) through `apply`. A tolerated damaged
 * segment is copied aside to `<file>.corrupt` and cut at the last whole record.
 * @returns what was loaded, and the bytes the segments hold once cut
 * @throws LogLoadError for damage the options do not allow
 */
export function replaySegments(
  segments: readonly { seq: number; file: string }[],
  skipped: number,
  apply: (argv: Buffer[], file: string, offset: number) => void,
  options: LoadOptions,
  log: Logger,
): { result: LoadResult; size: number } {
  const result: LoadResult = { segments: segments.length, skipped, records: 0, bytes: 0 }
  let size = 0
  // The log's end is its last segment with anything in it: a crash just after a rotation created
  // the next segment, before the one left was cut back to its last whole record, leaves a cut
  // record followed only by empty segments.
  const stats = segments.map(({ file }) => statSync(file))
  let tailIndex = segments.length - 1
  while (tailIndex > 0 && stats[tailIndex]!.isFile() && stats[tailIndex]!.size === 0) tailIndex--
  segments.forEach(({ file }, index) => {
    // A device or pipe in a segment's place would be read forever (/dev/zero never ends).
    if (!stats[index]!.isFile()) throw new Error(`The append only file ${file} is not a regular file`)
    const bytes = readFileSync(file)
    const scan = scanLog(bytes, (argv, offset) => apply(argv, file, offset))
    result.records += scan.records
    result.bytes += scan.validBytes
    size += bytes.length
    const damage = scan.damage
    if (damage === undefined) return
    const isTail = index >= tailIndex && damage.kind === 'truncated'
    if (isTail ? !options.allowTruncatedTail : !options.allowCorrupt) throw new LogLoadError(file, damage)
    if (isTail) {
      log.warning(
        `!!! Warning: short read while loading the AOF file ${file}!!! ` +
          `AOF loaded anyway because aof-load-truncated is enabled: ${bytes.length - scan.validBytes} ` +
          `bytes dropped after offset ${scan.validBytes} (the last record was cut short).`,
      )
    } else {
      copyFileSync(file, `${file}.corrupt`)
      log.warning(
        `!!! Warning: the AOF file ${file} is damaged at offset ${damage.offset} (${damage.reason}). ` +
          `Loaded the ${scan.records} records before offset ${damage.recordOffset} because aof-load-corrupt ` +
          `is enabled; the rest is dropped (a copy of the whole file is in ${file}.corrupt).`,
      )
    }
    truncateSync(file, scan.validBytes)
    size -= bytes.length - scan.validBytes
    result.damage = { ...damage, file }
  })
  return { result, size }
}

/** A segment the log cannot do without is missing, and aof-load-corrupt is no: startup stops. */
export class LogGapError extends Error {
  override name = 'LogGapError'
}

/**
 * The log runs from `fromSeq` (1 without a snapshot's log-from) to its last segment with no
 * segment missing: every segment after the first was created by a rotation while the one before
 * it was on disk, and only a committed snapshot deletes segments, the ones below its log-from. A
 * missing one held acknowledged writes (as redis 7.0 refuses an AOF manifest naming a file that
 * is not there: "The append log file %s doesn't exist", aof.c loadSingleAppendOnlyFile).
 * @throws LogGapError naming the missing segments, unless `allowCorrupt` (then a warning)
 */
export function checkNoGap(
  segments: readonly { seq: number }[],
  fromSeq: number,
  options: LoadOptions,
  name: (seq: number) => string,
  log: Logger,
): void {
  const missing: string[] = []
  let expected = fromSeq
  if (segments.length === 0 && options.fromSeqOnDisk === true) missing.push(name(fromSeq))
  for (const { seq } of segments) {
    if (seq > expected) missing.push(seq === expected + 1 ? name(expected) : `${name(expected)} to ${name(seq - 1)}`)
    expected = seq + 1
  }
  if (missing.length === 0) return
  const what =
    `The append only file ${missing.join(', ')} doesn't exist: the log runs from segment ${fromSeq}` +
    `${options.fromSeq === undefined ? ' (no snapshot MANIFEST says otherwise)' : " (the snapshot's MANIFEST says so)"}` +
    `${segments.length > 0 ? ` to segment ${segments[segments.length - 1]!.seq}` : ''}, and the writes it held would be lost.`
  if (!options.allowCorrupt)
    throw new LogGapError(`${what} Restore it, or set aof-load-corrupt yes to load the segments that exist.`)
  log.warning(`!!! Warning: ${what} Loading the segments that exist because aof-load-corrupt is enabled.`)
}
