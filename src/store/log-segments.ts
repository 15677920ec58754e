/**
 * The append-only log's segment files in `dir`: their names (`<appendfilename>.<seq>.incr.aof`),
 * and listing them (durable-file.ts's directory fsync makes a created or deleted one survive a power loss).
 */
import { readdirSync } from 'node:fs'
import path from 'node:path'

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
