/**
 * A point-in-time capture of every filter, read out as the full-sync payload
 * (format/sync-payload.ts, docs/REPLICATION.md) in bounded pieces while the server goes on.
 *
 * `captureRegistry` runs in one turn, in O(filters + layers) and copies no bitmap: it records
 * each filter's name, parameters, layer list and counts, and puts a copy-on-write guard
 * (layer-copy.ts) on every layer. Each `next()` then does a bounded step: it checksums part of a
 * layer (a file's layer header carries the CRC-32 of its bitmap, so a layer is read twice: once
 * for its checksum, once to send it) or copies bytes out. What it sends is exactly the registry
 * at the capture, whatever is written, deleted, renamed or replaced meanwhile: a filter file per
 * filter, byte for byte what SAVE would have written at that moment.
 */
import type { BloomLayer } from '../core/bloom-layer.js'
import type { FilterParts } from '../core/scalable-filter.js'
import { encodedLength, fileVersionFor, recordProblem } from '../format/codec.js'
import { encodeFileTrailer } from '../format/file-trailer.js'
import { chainedCrcStart, checksumLayerHeader, encodeLayerHeader, writeLayerChecksum } from '../format/header.js'
import {
  encodeEndRecord,
  encodeExpiryRecord,
  encodeRecordPrefix,
  encodeSelectDbRecord,
  encodeWindowRecordPrefix,
  SYNC_MAGIC,
  syncPayloadLength,
} from '../format/sync-payload.js'
import { wholeFileOf } from './whole-file.js'
import { captureBegins, LayerCopy } from './layer-copy.js'
import { nativeCrc32 } from './native-crc32.js'
import { type FilterEntry, FilterRegistry } from './registry.js'
import { quotedName } from './snapshot-save.js'

/** The largest piece one `next()` returns, whatever it is asked for. */
export const MAX_PIECE_BYTES = 2 * 1024 * 1024

/** Bitmap bytes one `next()` checksums or copies at most (a few ms at memory speed). */
export const STEP_WORK_BYTES = 2 * 1024 * 1024

/** The payload of a capture, read piece by piece. */
export interface RegistryCapture {
  /**
   * The next piece of the payload, at most about `maxBytes` (never more than 2 MiB) and a few ms
   * of work; null at the end (and after {@link release}). A piece may be EMPTY while a large
   * layer is being checksummed before its header can be sent: only null means the end.
   * `maxWork`: bitmap bytes to checksum or copy at most in this call (STEP_WORK_BYTES and less).
   */
  next(maxBytes: number, maxWork?: number): Buffer | null
  /** Total payload bytes (known up front: lets the disk form and progress reports use it). */
  readonly totalBytes: number
  /** Stop early: releases the copy-on-write state. Idempotent; next() returns null after it. */
  release(): void
}

/** One filter as captured: a Bloom filter's parts and layer copies, or a window or Cuckoo filter's whole file. */
interface CapturedFilter {
  readonly name: Buffer
  readonly parts: FilterParts | undefined
  /** A window or Cuckoo filter's file (whole-file.ts), encoded at the capture: a point-in-time copy. */
  readonly whole: Uint8Array | undefined
  readonly copies: LayerCopy[]
  /** When the key expires (unix ms), if it does: an expiry record follows its file. */
  readonly expiresAt: number | undefined
  /** Its database: a database record goes before it when the filter before it was of another. */
  readonly db: number
}

/** What {@link PayloadCapture.next} works through, one after another. */
type Segment =
  | { readonly kind: 'bytes'; readonly bytes: Uint8Array; at: number }
  | { readonly kind: 'checksum'; readonly copy: LayerCopy; at: number; crc: number }
  | { readonly kind: 'bitmap'; readonly copy: LayerCopy; at: number }

/**
 * Captures every filter of `entries` now (every database's, store/databases.ts allEntries, or one
 * registry's: database 0; see the module comment). Throws, capturing nothing, when a filter
 * cannot be encoded (as SAVE refuses it).
 */
export function captureRegistry(
  entries: FilterRegistry | Iterable<{ readonly db: number; readonly entry: FilterEntry }>,
): RegistryCapture {
  captureBegins()
  const all =
    entries instanceof FilterRegistry
      ? [...entries.allEntries()].map((entry) => ({ db: entries.index, entry }))
      : [...entries]
  const filters: CapturedFilter[] = []
  // Every entry held, expired ones too (as redis's RDB): a replica deletes a key only when its
  // master's DEL comes, and a master's own expiry propagates that DEL after the capture point.
  for (const { db, entry } of all) {
    const name = FilterRegistry.bytesOf(entry.name)
    if (entry.kind !== 'bloom') {
      const whole = wholeFileOf(entry, name, nativeCrc32)
      filters.push({ name, parts: undefined, whole, copies: [], expiresAt: entry.expiresAt, db })
      continue
    }
    const parts = entry.filter.toParts()
    const problem = recordProblem({ name, parts })
    if (problem !== undefined) throw new Error(`filter ${quotedName(entry.name)} cannot be sent: ${problem}`)
    filters.push({ name, parts, whole: undefined, copies: [], expiresAt: entry.expiresAt, db })
  }
  // Guards go on only once every filter is known to encode: a refusal leaves none behind.
  let index = 0
  for (const { entry } of all) {
    const copies = filters[index++]!.copies
    if (entry.kind === 'bloom') copies.push(...entry.filter.layers.map((layer: BloomLayer) => new LayerCopy(layer)))
  }
  return new PayloadCapture(filters)
}

class PayloadCapture implements RegistryCapture {
  readonly totalBytes: number
  private readonly segments: Generator<Segment, void, undefined>
  private segment: Segment | undefined
  private finished = false
  /** Payload bytes returned so far. */
  private sent = 0

  constructor(private readonly filters: CapturedFilter[]) {
    const expiries = filters.filter((filter) => filter.expiresAt !== undefined).length
    const lengths = filters.map(
      (filter) => filter.whole?.length ?? encodedLength({ name: filter.name, parts: filter.parts! }),
    )
    const selects = filters.filter((filter, i) => filter.db !== (i === 0 ? 0 : filters[i - 1]!.db)).length
    this.totalBytes = syncPayloadLength(lengths, expiries, selects)
    this.segments = payloadSegments(filters)
  }

  next(maxBytes: number, maxWork = STEP_WORK_BYTES): Buffer | null {
    if (this.finished) return null
    const asked = Math.max(1, Math.min(Math.floor(maxBytes) || 1, MAX_PIECE_BYTES))
    const out = new PieceBuilder(Math.min(asked, this.totalBytes - this.sent))
    const budget = Math.max(1, Math.min(maxWork, STEP_WORK_BYTES))
    let work = 0
    while (out.room > 0 && work < budget) {
      const segment = this.current()
      if (segment === undefined) break
      work += this.advance(segment, out, budget - work)
    }
    if (out.length === 0 && this.current() === undefined) {
      this.release()
      return null
    }
    this.sent += out.length
    return out.take()
  }

  release(): void {
    this.finished = true
    this.segment = undefined
    for (const filter of this.filters) for (const copy of filter.copies) copy.detach()
    this.filters.length = 0
  }

  /** The segment being worked through, or the next one; undefined at the end. */
  private current(): Segment | undefined {
    if (this.segment === undefined && !this.finished) {
      const next = this.segments.next()
      this.segment = next.done === true ? undefined : next.value
    }
    return this.segment
  }

  /** Works on `segment` within `out`'s room and `budget` bitmap bytes; returns the bitmap bytes done. */
  private advance(segment: Segment, out: PieceBuilder, budget: number): number {
    let done: number
    if (segment.kind === 'bytes') {
      done = Math.min(segment.bytes.length - segment.at, out.room)
      out.append(segment.bytes.subarray(segment.at, segment.at + done))
      segment.at += done
      if (segment.at === segment.bytes.length) this.segment = undefined
      return 0
    }
    const { copy } = segment
    const end =
      segment.at + Math.min(copy.byteLength - segment.at, budget, segment.kind === 'bitmap' ? out.room : budget)
    if (segment.kind === 'checksum') {
      copy.visit(segment.at, end, (bytes) => {
        segment.crc = nativeCrc32(bytes, segment.crc)
      })
    } else {
      copy.visit(segment.at, end, (bytes) => out.append(bytes))
      copy.readTo(end)
    }
    done = end - segment.at
    segment.at = end
    if (end === copy.byteLength) this.segment = undefined
    return done
  }
}

/**
 * The payload as segments: the magic; per filter its record prefix, then per layer the checksum
 * pass, the header (its CRC-32 written in once that pass is over) and the bitmap; the trailer;
 * the end record.
 */
function* payloadSegments(filters: readonly CapturedFilter[]): Generator<Segment, void, undefined> {
  yield bytes(SYNC_MAGIC)
  let db = 0
  for (const filter of filters) {
    if (filter.db !== db) {
      db = filter.db
      yield bytes(encodeSelectDbRecord(db))
    }
    if (filter.whole !== undefined) yield* [bytes(encodeWindowRecordPrefix(filter.whole.length)), bytes(filter.whole)]
    else yield* bloomSegments(filter.name, filter.parts!, filter.copies)
    // Past 2^53 ms (285,000 years) a time is kept as the largest the record holds.
    if (filter.expiresAt !== undefined)
      yield bytes(encodeExpiryRecord(Math.max(0, Math.min(filter.expiresAt, Number.MAX_SAFE_INTEGER))))
  }
  yield bytes(encodeEndRecord())
}

/** One Bloom filter's record: its prefix, per layer the checksum pass, the header and the bitmap, then the trailer. */
function* bloomSegments(
  name: Buffer,
  parts: FilterParts,
  copies: readonly LayerCopy[],
): Generator<Segment, void, undefined> {
  yield bytes(encodeRecordPrefix(encodedLength({ name, parts })))
  const version = fileVersionFor(parts.layers.length, name.length)
  let crc = 0
  for (let i = 0; i < parts.layers.length; i++) {
    const header = encodeLayerHeader(parts.layers[i]!, parts.hashing, i, parts.layers.length, version)
    const checksum = { kind: 'checksum' as const, copy: copies[i]!, at: 0, crc: 0 }
    checksum.crc = checksumLayerHeader(header, nativeCrc32, 0, chainedCrcStart(version, crc))
    yield checksum
    crc = checksum.crc
    writeLayerChecksum(header, crc)
    yield bytes(header)
    yield { kind: 'bitmap', copy: copies[i]!, at: 0 }
  }
  yield bytes(encodeFileTrailer({ name, expansion: parts.expansion, nonScaling: parts.nonScaling }, nativeCrc32))
}

function bytes(data: Uint8Array): Segment {
  return { kind: 'bytes', bytes: data, at: 0 }
}

/** The piece one `next()` returns: allocated at its first byte, at most `limit` bytes. */
class PieceBuilder {
  private buffer: Buffer | undefined
  length = 0

  constructor(private readonly limit: number) {}

  get room(): number {
    return this.limit - this.length
  }

  append(bytes: Uint8Array): void {
    this.buffer ??= Buffer.allocUnsafe(this.limit)
    this.buffer.set(bytes, this.length)
    this.length += bytes.length
  }

  take(): Buffer {
    return this.buffer === undefined ? Buffer.alloc(0) : this.buffer.subarray(0, this.length)
  }
}
