/**
 * The full-sync payload: every filter of a master, as one byte stream a replica loads
 * (docs/REPLICATION.md, "The full-sync payload"):
 * ```
 * payload := "BFSSYNC1"  record*  end
 * record  := u8 1, u64le L, then L bytes: exactly one filter file (docs/FORMAT.md), the bytes
 *            a SAVE writes for that filter, its name inside; version 1 or 2 as SAVE chooses
 *          | u8 2, u64le T: the filter of the record just before expires at T (unix ms)
 *          | u8 3, u64le L, then L bytes: exactly one window filter file (format/window-file.ts) or
 *            Cuckoo filter file (format/cuckoo-file.ts), told apart by their magic
 *          | u8 4, u64le D: the filter records after it (types 1 and 3) are of database D (until
 *            the next such record; before any, database 0: a payload of database 0 alone has none)
 * end     := u8 0
 * ```
 * Here: the framing (what the master's capture, store/registry-capture.ts, writes around each
 * file) and {@link SyncPayloadReader}, which decodes a payload from pieces as they come off a
 * socket. Every size is checked before anything is allocated for it.
 */
import type { Bitmap } from '../core/pieced-bitmap.js'
import type { FilterRecord } from './codec.js'
import { type Checksum, crc32 } from './crc32.js'
import { DecodeError } from './decode-error.js'
import { type BitCounter, FilterFileStream, MIN_FILE_BYTES } from './filter-file-stream.js'
import { HEADER_BYTES } from './header.js'
import { fileTrailerLength } from './file-trailer.js'
import { MAX_LAYERS } from './limits.js'
import { readUint64, writeUint64 } from './uint64.js'
import { decodeWindowFile, type WindowRecord } from './window-file.js'
import { decodeCuckooFile, isCuckooFile, type CuckooRecord } from './cuckoo-file.js'

/** The payload's first 8 bytes, "BFSSYNC1". */
export const SYNC_MAGIC: Uint8Array = Uint8Array.from('BFSSYNC1', (c) => c.charCodeAt(0))

/** Record types. */
export const RECORD_END = 0
export const RECORD_FILTER = 1
export const RECORD_EXPIRY = 2
export const RECORD_WINDOW = 3
/** Type 4, not 3: the window filters' record took 3 first; both are in every payload's grammar. */
export const RECORD_SELECT_DB = 4

/** A filter record's prefix: its type byte and its u64 length. */
export const RECORD_PREFIX_BYTES = 9

/**
 * Longest filter name a payload may carry: the longest key a registry holds (V8's longest
 * string, store/registry.ts MAX_KEY_BYTES), so that every decoded name can be stored.
 */
export const MAX_SYNC_NAME_BYTES = 2 ** 29 - 24

/** The prefix of a filter record holding a file of `fileBytes` bytes. */
export function encodeRecordPrefix(fileBytes: number): Uint8Array {
  if (!Number.isSafeInteger(fileBytes) || fileBytes < MIN_FILE_BYTES)
    throw new RangeError(`no filter file is ${fileBytes} bytes`)
  const prefix = new Uint8Array(RECORD_PREFIX_BYTES)
  prefix[0] = RECORD_FILTER
  writeUint64(new DataView(prefix.buffer), 1, fileBytes)
  return prefix
}

/** The record giving the filter just before it an expiry at `expiresAtMs` (unix ms). */
export function encodeExpiryRecord(expiresAtMs: number): Uint8Array {
  if (!Number.isSafeInteger(expiresAtMs) || expiresAtMs < 0) throw new RangeError(`no expiry is at ${expiresAtMs}`)
  const record = new Uint8Array(RECORD_PREFIX_BYTES)
  record[0] = RECORD_EXPIRY
  writeUint64(new DataView(record.buffer), 1, expiresAtMs)
  return record
}

/** The prefix of a window filter record holding a window (or Cuckoo) filter file of `fileBytes` bytes. */
export function encodeWindowRecordPrefix(fileBytes: number): Uint8Array {
  if (!Number.isSafeInteger(fileBytes) || fileBytes < 0) throw new RangeError(`no window file is ${fileBytes} bytes`)
  const prefix = new Uint8Array(RECORD_PREFIX_BYTES)
  prefix[0] = RECORD_WINDOW
  writeUint64(new DataView(prefix.buffer), 1, fileBytes)
  return prefix
}

/** The longest window file within `limits`: its bitmaps, a slice header per slice (at most 2^16), the longest name. */
export function maxWindowFileBytes(limits: SyncPayloadLimits): number {
  if (!(limits.maxFilterBytes > 0)) return Number.MAX_SAFE_INTEGER
  return limits.maxFilterBytes + 96 + 40 * 65536 + MAX_SYNC_NAME_BYTES
}

/** The record putting the filter records after it in database `db` (redis RDB's SELECTDB). */
export function encodeSelectDbRecord(db: number): Uint8Array {
  if (!Number.isSafeInteger(db) || db < 0) throw new RangeError(`no database is ${db}`)
  const record = new Uint8Array(RECORD_PREFIX_BYTES)
  record[0] = RECORD_SELECT_DB
  writeUint64(new DataView(record.buffer), 1, db)
  return record
}

/** The end record. */
export function encodeEndRecord(): Uint8Array {
  return Uint8Array.of(RECORD_END)
}

/**
 * Bytes of a payload carrying files of these lengths, `expiries` expiry records and `selects`
 * database records: magic, a prefix per file, the files, the other records, the end.
 */
export function syncPayloadLength(fileLengths: Iterable<number>, expiries = 0, selects = 0): number {
  let total = SYNC_MAGIC.length + 1 + (expiries + selects) * RECORD_PREFIX_BYTES
  for (const length of fileLengths) total += RECORD_PREFIX_BYTES + length
  return total
}

/**
 * A whole payload from encoded files (each as the pieces `encodeFilter` returns), as pieces to
 * send in order. The capture streams the same bytes without holding them; this is for small
 * payloads and tests.
 */
export function encodeSyncPayload(files: readonly (readonly Uint8Array[])[]): Uint8Array[] {
  const pieces: Uint8Array[] = [SYNC_MAGIC.slice()]
  for (const file of files) {
    const length = file.reduce((sum, piece) => sum + piece.length, 0)
    pieces.push(encodeRecordPrefix(length), ...file)
  }
  pieces.push(encodeEndRecord())
  return pieces
}

/** What a payload may hold. */
export interface SyncPayloadLimits {
  /** Most bitmap bytes of one filter, all layers (the replica's `max-filter-bytes`); 0: no limit. */
  readonly maxFilterBytes: number
  /** Allocates a zeroed bitmap (core/bitmap.ts `allocateLayerBitmap`); a plain array by default. */
  readonly allocate?: (byteCount: number) => Bitmap
  /**
   * Told each record's length once it is checked, before anything is allocated for it (the
   * record bounds what it holds); may throw to refuse it (BFS.RESTORE-PART's `maxmemory`).
   */
  readonly reserve?: (byteCount: number) => void
}

/** The longest file a filter within `limits` can have: its bitmaps, every header, the longest name. */
export function maxFileBytes(limits: SyncPayloadLimits): number {
  if (!(limits.maxFilterBytes > 0)) return Number.MAX_SAFE_INTEGER
  return limits.maxFilterBytes + HEADER_BYTES * MAX_LAYERS + fileTrailerLength(MAX_SYNC_NAME_BYTES)
}

type ReaderState = 'magic' | 'prefix' | 'file' | 'window' | 'end'

/**
 * Decodes a payload from pieces of any size. Each whole filter is handed to `accept` as soon as
 * its last byte arrives, in payload order (with each layer's `setBits` when `countBits` is given:
 * filter-file-stream.ts). Throws {@link DecodeError} (and again on every later
 * push) on: a wrong magic; a record type other than 0 to 4, or 3 with no `acceptWindow` ("unknown record type N"); a record
 * length no filter within the limits can have; an expiry past 2^53 ms or with no filter before it; a file that is not valid or does not fill its
 * record exactly; any byte after the end record. `accept` may throw too (a DecodeError of its own).
 */
export class SyncPayloadReader {
  private state: ReaderState = 'magic'
  private readonly scratch = new Uint8Array(RECORD_PREFIX_BYTES)
  private scratchFill = 0
  private file: FilterFileStream | undefined
  /** The window file being collected, and how much of it came. */
  private window: Uint8Array | undefined
  private windowFill = 0
  /** Bytes of the payload taken so far. */
  private position = 0
  /** What the first refusal threw. */
  private failure: unknown

  constructor(
    private readonly limits: SyncPayloadLimits,
    private readonly accept: (record: FilterRecord) => void,
    private readonly checksum: Checksum = crc32,
    private readonly countBits?: BitCounter,
    /** Takes an expiry record's time (it belongs to the filter accepted just before). */
    private readonly acceptExpiry?: (expiresAtMs: number) => void,
    /** Takes a window (or Cuckoo) filter record; without it, one is an unknown record type. */
    private readonly acceptWindow?: (record: WindowRecord | CuckooRecord) => void,
    /** Takes a database record's index (the filters after it are of that database). */
    private readonly acceptDb?: (db: number) => void,
  ) {}

  /** Whether the end record was seen. */
  get done(): boolean {
    return this.state === 'end'
  }

  /** Takes the next piece of the payload; after a refusal, every push throws the same error. */
  push(chunk: Uint8Array): void {
    if (this.failure !== undefined) throw this.failure
    try {
      let at = 0
      while (at < chunk.length) {
        const taken = this.take(chunk, at)
        at += taken
        this.position += taken
      }
    } catch (error) {
      this.failure = error
      throw error
    }
  }

  private take(chunk: Uint8Array, at: number): number {
    switch (this.state) {
      case 'magic':
        return this.fill(chunk, at, SYNC_MAGIC.length, () => this.checkMagic())
      case 'prefix':
        if (this.scratchFill === 0 && !this.knownRecord(chunk[at]!)) return this.endOrUnknown(chunk[at]!)
        return this.fill(chunk, at, RECORD_PREFIX_BYTES, () => this.startRecord())
      case 'file':
        return this.takeFile(chunk, at)
      case 'window':
        return this.takeWindow(chunk, at)
      case 'end':
        throw new DecodeError('corrupt', `${chunk.length - at} bytes after the end record at byte ${this.position - 1}`)
    }
  }

  /** Collects `needed` bytes in the scratch array, then calls `then`. */
  private fill(chunk: Uint8Array, at: number, needed: number, then: () => void): number {
    const taken = Math.min(chunk.length - at, needed - this.scratchFill)
    this.scratch.set(chunk.subarray(at, at + taken), this.scratchFill)
    this.scratchFill += taken
    if (this.scratchFill === needed) {
      this.scratchFill = 0
      then()
    }
    return taken
  }

  private checkMagic(): void {
    for (let i = 0; i < SYNC_MAGIC.length; i++) {
      if (this.scratch[i] !== SYNC_MAGIC[i])
        throw new DecodeError('bad-magic', 'not a bfs sync payload (no "BFSSYNC1" at its start)')
    }
    this.state = 'prefix'
  }

  private knownRecord(type: number): boolean {
    return (
      type === RECORD_FILTER ||
      type === RECORD_EXPIRY ||
      type === RECORD_SELECT_DB ||
      (type === RECORD_WINDOW && this.acceptWindow !== undefined)
    )
  }

  private startRecord(): void {
    const type = this.scratch[0]
    if (type === RECORD_EXPIRY) this.takeExpiry()
    else if (type === RECORD_SELECT_DB) this.takeSelectDb()
    else if (type === RECORD_WINDOW) this.startWindow()
    else this.startFile()
  }

  /** A window record's length, checked before its bytes are allocated. */
  private startWindow(): void {
    const length = readUint64(new DataView(this.scratch.buffer), 1)
    const at = this.position + 1 - RECORD_PREFIX_BYTES
    // 48: the shortest Cuckoo filter file (a window file has at least 96 bytes).
    if (length === undefined || length < 48 || length > maxWindowFileBytes(this.limits)) {
      throw new DecodeError(
        'corrupt',
        `record at byte ${at}: no window filter within the limits is a file of ${length ?? 'over 2^53'} bytes`,
      )
    }
    this.limits.reserve?.(length)
    this.window = new Uint8Array(length)
    this.windowFill = 0
    this.state = 'window'
  }

  private takeWindow(chunk: Uint8Array, at: number): number {
    const window = this.window!
    const taken = Math.min(chunk.length - at, window.length - this.windowFill)
    window.set(chunk.subarray(at, at + taken), this.windowFill)
    this.windowFill += taken
    if (this.windowFill === window.length) {
      this.window = undefined
      this.state = 'prefix'
      this.acceptWindow!(
        isCuckooFile(window) ? decodeCuckooFile(window, this.checksum) : decodeWindowFile(window, this.checksum),
      )
    }
    return taken
  }

  private endOrUnknown(type: number): number {
    if (type !== RECORD_END) throw new DecodeError('corrupt', `unknown record type ${type} at byte ${this.position}`)
    this.state = 'end'
    return 1
  }

  private takeSelectDb(): void {
    const db = readUint64(new DataView(this.scratch.buffer), 1)
    const at = this.position + 1 - RECORD_PREFIX_BYTES
    if (db === undefined || this.acceptDb === undefined)
      throw new DecodeError('corrupt', `database record at byte ${at}: no database ${db ?? 'over 2^53'}`)
    this.acceptDb(db)
  }

  private takeExpiry(): void {
    const expiresAt = readUint64(new DataView(this.scratch.buffer), 1)
    const at = this.position + 1 - RECORD_PREFIX_BYTES
    if (expiresAt === undefined || this.acceptExpiry === undefined)
      throw new DecodeError('corrupt', `expiry record at byte ${at}: no expiry is at ${expiresAt ?? 'over 2^53'}`)
    this.acceptExpiry(expiresAt)
  }

  private startFile(): void {
    const length = readUint64(new DataView(this.scratch.buffer), 1)
    const at = this.position + 1 - RECORD_PREFIX_BYTES
    const max = maxFileBytes(this.limits)
    if (length === undefined || length < MIN_FILE_BYTES || length > max) {
      const shown = length ?? 'over 2^53'
      throw new DecodeError('corrupt', `record at byte ${at}: no filter within the limits is a file of ${shown} bytes`)
    }
    this.limits.reserve?.(length)
    const limits = {
      maxBitmapBytes: this.limits.maxFilterBytes,
      maxNameBytes: MAX_SYNC_NAME_BYTES,
      allocate: this.limits.allocate,
    }
    this.file = new FilterFileStream(length, limits, at + RECORD_PREFIX_BYTES, this.checksum, this.countBits)
    this.state = 'file'
  }

  private takeFile(chunk: Uint8Array, at: number): number {
    const file = this.file!
    const taken = file.write(chunk, at, chunk.length)
    if (file.done) {
      this.file = undefined
      this.state = 'prefix'
      this.accept(file.result())
    }
    return taken
  }
}
