/**
 * The snapshot's MANIFEST: which filter files make up the snapshot, and where the append-only log
 * continues it. Text in, text out; the store reads and writes the file (as latin1, every
 * character one byte) and replaces it last, atomically.
 *
 * ```
 * bfs-manifest 1
 * log-from 7                    when there is a log: the first segment the snapshot does not contain
 * log-open                      when segment 7 was on disk before this MANIFEST (a start without it refuses)
 * repl-id 8f3c...e1             the replication id and offset the data is at (written by SAVE and the
 * repl-offset 15290             final save, not by a background save: a replica continues from them)
 * repl-db 3                     the database the stream is in there, when not 0 (redis repl-stream-db)
 * file 000000000003.bf 4242     one line per filter file: its name and size in bytes,
 * file 000000000004.bf 96 expire-at 1795000000000   and the key's expiry (Unix ms) when it has one
 * file 000000000005.bf 96 db 3  and its database (SELECT's index) when it is not 0, before any expiry
 * end 1 0a1b2c3d                the count of file lines and the CRC-32 (hex) of all the text before `end`
 * ```
 */
import { crc32 } from './crc32.js'
import { DecodeError } from './decode-error.js'

/** The MANIFEST's file name in the snapshot directory. */
export const MANIFEST_FILE = 'MANIFEST'

const MANIFEST_MAGIC = 'bfs-manifest 1'
/** A filter file's name: its number, 12 digits, then `.bf`. */
const FILTER_FILE_PATTERN = /^(\d{12})\.bf$/

/** One filter file the MANIFEST lists. */
export interface ManifestFile {
  readonly file: string
  readonly bytes: number
  /** The key's expiry, absolute Unix ms (EXPIRE and the like); absent: it has none. */
  readonly expiresAt?: number
  /** The key's database (SELECT's index); absent: 0 (every MANIFEST before databases said none). */
  readonly db?: number
}

/**
 * The replication position a snapshot's data is exactly at (redis keeps it in its RDB): the
 * replication id and the offset in that id's stream.
 */
export interface ReplicationPosition {
  readonly replid: string
  readonly offset: number
  /**
   * The database the stream is in at that offset (a replica's: the last SELECT its master sent;
   * redis's RDB field repl-stream-db): a replica continuing from it applies what follows there.
   * Absent: 0.
   */
  readonly db?: number
}

/** What a MANIFEST says. `logOpen` is there only when true, `repl` only when written. */
export interface Manifest {
  files: ManifestFile[]
  logFrom?: number
  logOpen?: true
  repl?: ReplicationPosition
}

/** The name of filter file number `number` (`000000000007.bf`). */
export function filterFileName(number: number): string {
  return `${String(number).padStart(12, '0')}.bf`
}

/** Whether `name` is a filter file's name. */
export function isFilterFileName(name: string): boolean {
  return FILTER_FILE_PATTERN.test(name)
}

/**
 * MANIFEST text: a magic line, `log-from <seq>` when there is a log (the first segment of the
 * append-only log the snapshot does not contain), then `log-open` when that segment was on disk
 * before this MANIFEST (the log was open: a start without it refuses), `file <name> <bytes>`
 * lines (`db <index>` after them for a key of a database other than 0, `expire-at <ms>` last for
 * a key with an expiry), and `end <count> <crc32
 * hex>`. `repl-id <40 hex>` and `repl-offset <n>` follow the log's lines when `repl` is given,
 * then `repl-db <n>` when its database is not 0.
 */
export function formatManifest(
  files: readonly ManifestFile[],
  logFrom?: number,
  logOpen = false,
  repl?: ReplicationPosition,
): string {
  let body = `${MANIFEST_MAGIC}\n`
  if (logFrom !== undefined) body += `log-from ${logFrom}\n${logOpen ? 'log-open\n' : ''}`
  if (repl !== undefined)
    body += `repl-id ${repl.replid}\nrepl-offset ${repl.offset}\n${(repl.db ?? 0) === 0 ? '' : `repl-db ${repl.db}\n`}`
  for (const { file, bytes, expiresAt, db } of files) {
    const inDb = db === undefined || db === 0 ? '' : ` db ${db}`
    body +=
      expiresAt === undefined
        ? `file ${file} ${bytes}${inDb}\n`
        : `file ${file} ${bytes}${inDb} expire-at ${expiresAt}\n`
  }
  const crc = crc32(latin1Bytes(body), 0)
  return `${body}end ${files.length} ${crc.toString(16).padStart(8, '0')}\n`
}

/** Parses MANIFEST text; throws DecodeError saying what is wrong (truncated, checksum, syntax). */
export function parseManifest(text: string): ManifestFile[] {
  return parseManifestText(text).files
}

/** Parses MANIFEST text, `log-from` included; throws DecodeError saying what is wrong. */
export function parseManifestText(text: string): Manifest {
  if (!text.startsWith(`${MANIFEST_MAGIC}\n`)) throw new DecodeError('bad-magic', 'bad manifest magic')
  const endAt = text.lastIndexOf('end ')
  if (endAt < 0 || !text.endsWith('\n')) throw new DecodeError('truncated', 'truncated manifest')
  const body = text.slice(0, endAt)
  const end = /^end (\d+) ([0-9a-f]{8})\n$/.exec(text.slice(endAt))
  if (!end) throw new DecodeError('truncated', 'truncated manifest')
  if (crc32(latin1Bytes(body), 0) !== parseInt(end[2]!, 16))
    throw new DecodeError('checksum', 'manifest checksum mismatch')
  const files: ManifestFile[] = []
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
  const replid = /^repl-id ([0-9a-f]{40})$/.exec(lines[0] ?? '')
  const replOffset = /^repl-offset (0|[1-9]\d{0,15})$/.exec(lines[1] ?? '')
  let repl: ReplicationPosition | undefined
  if (replid && replOffset) {
    repl = { replid: replid[1]!, offset: Number(replOffset[1]) }
    lines = lines.slice(2)
    const replDb = /^repl-db ([1-9]\d{0,15})$/.exec(lines[0] ?? '')
    if (replDb) {
      repl = { ...repl, db: Number(replDb[1]) }
      lines = lines.slice(1)
    }
  }
  for (const line of lines) {
    // An expiry may be negative (PEXPIREAT takes any 64-bit time), and is at most 2^63 - 1.
    const match = /^file (\d{12}\.bf) (\d+)(?: db ([1-9]\d{0,15}))?(?: expire-at (-?\d{1,19}))?$/.exec(line)
    if (!match || seen.has(match[1]!)) throw new DecodeError('corrupt', `bad manifest line ${JSON.stringify(line)}`)
    seen.add(match[1]!)
    const file: ManifestFile = { file: match[1]!, bytes: Number(match[2]) }
    files.push({
      ...file,
      ...(match[3] === undefined ? {} : { db: Number(match[3]) }),
      ...(match[4] === undefined ? {} : { expiresAt: Number(match[4]) }),
    })
  }
  if (files.length !== Number(end[1])) throw new DecodeError('corrupt', 'manifest count mismatch')
  const manifest: Manifest = { files }
  if (logFrom !== undefined) manifest.logFrom = logFrom
  if (logOpen) manifest.logOpen = true
  if (repl !== undefined) manifest.repl = repl
  return manifest
}

/** The bytes of `text` as latin1 (each character's low byte), what the MANIFEST's CRC-32 covers. */
function latin1Bytes(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length)
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i) & 0xff
  return bytes
}
