/**
 * The append-only log's segment files in `dir`: their names (`<appendfilename>.<seq>.incr.aof`),
 * and listing them (durable-file.ts's directory fsync makes a created or deleted one survive a power loss).
 */
import { fstatSync, ftruncateSync, readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs'
import path from 'node:path'
import type { Logger } from '../runtime/logger.js'
import { syncDirectorySync } from './durable-file.js'
import { scanLog } from './log-replay.js'

const SEGMENT_SUFFIX = '.incr.aof'

/** The name of segment `seq`. */
export function segmentName(baseName: string, seq: number): string {
  return `${baseName}.${seq}${SEGMENT_SUFFIX}`
}

/** The segments in `dir`, oldest first. */
export function listSegments(dir: string, baseName: string): { seq: number; file: string }[] {
  const prefix = `${baseName}.`
  const found: { seq: number; file: string }[] = []
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix) || !name.endsWith(SEGMENT_SUFFIX)) continue
    const middle = name.slice(prefix.length, name.length - SEGMENT_SUFFIX.length)
    if (!/^[1-9]\d*$/.test(middle)) continue
    found.push({ seq: Number(middle), file: path.join(dir, name) })
  }
  return found.sort((a, b) => a.seq - b.seq)
}

/** Bytes of every segment in `dir`. */
export function segmentsSize(dir: string, baseName: string): number {
  let size = 0
  for (const segment of listSegments(dir, baseName)) size += statSync(segment.file).size
  return size
}

/**
 * Deletes the segments below `seq` but the open one (`open`, if any), then fsyncs `dir` when any
 * went. One that cannot be deleted is left with a warning. Returns how many went, and their bytes.
 */
export function deleteSegmentsBelow(
  dir: string,
  baseName: string,
  seq: number,
  open: number | undefined,
  log: Logger,
): { dropped: number; bytes: number } {
  let dropped = 0
  let bytes = 0
  for (const segment of listSegments(dir, baseName)) {
    if (segment.seq >= seq || segment.seq === open) continue
    try {
      const size = statSync(segment.file).size
      unlinkSync(segment.file)
      bytes += size
      dropped++
    } catch (error) {
      log.warning(`Cannot delete the append only file segment ${segment.file}: ${(error as Error).message}`)
    }
  }
  if (dropped > 0) syncDirectorySync(dir)
  return { dropped, bytes }
}

/**
 * Cuts segment `file`, open on `fd`, back to its last whole record (best effort: the disk is
 * failing): its sizes before and after, or undefined when nothing was cut.
 */
export function cutToWholeRecords(
  fd: number,
  file: string,
  log: Logger,
): { before: number; after: number } | undefined {
  try {
    if (!fstatSync(fd).isFile()) return undefined
    const bytes = readFileSync(file)
    const valid = scanLog(bytes, () => {}).validBytes
    if (valid === bytes.length) return undefined
    ftruncateSync(fd, valid)
    log.warning(`Cut ${bytes.length - valid} bytes of a record cut short off the end of ${file}`)
    return { before: bytes.length, after: valid }
  } catch (error) {
    log.warning(`Cannot cut the append only file back to its last whole record: ${(error as Error).message}`)
    return undefined
  }
}
