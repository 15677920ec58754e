/**
 * The replica's end of a full sync: the payload (format/sync-payload.ts) decoded as it comes off
 * the socket into the filters the registry will hold. It lives in store/ and not beside the
 * format because it builds live filters (core) and Buffers, which format/ does not.
 */
import { allocateLayerBitmap, countSetBits } from '../core/bitmap.js'
import { ScalableBloomFilter } from '../core/scalable-filter.js'
import type { FilterRecord } from '../format/codec.js'
import { DecodeError } from '../format/decode-error.js'
import { SyncPayloadReader, type SyncPayloadLimits } from '../format/sync-payload.js'
import { nativeCrc32 } from './native-crc32.js'
import { filterOfWholeFile, type WholeFileRecord } from './whole-file.js'
import type { StoredFilter } from './registry.js'

/** One decoded filter: its name (the key's bytes) and the filter the registry holds. */
export interface SyncedFilter {
  readonly name: Buffer
  readonly filter: StoredFilter
  /** Its database (a database record before it; 0 without). */
  readonly db: number
  /** When it expires (unix ms), if it does: the key is created with it (an expiry record). */
  expiresAt?: number
}

/**
 * An incremental decoder of a full-sync payload: `push` the chunks in order as they arrive;
 * once {@link done}, {@link filters} gives every filter in payload order. Each filter is built
 * (and checked) when its last byte arrives, as a snapshot load builds it (no byte limit for later
 * growth: the commands apply `max-filter-bytes`); each layer's count of set bits is taken chunk
 * by chunk as the bytes arrive, so no push() scans a whole bitmap.
 */
export class SyncPayloadDecoder {
  private readonly reader: SyncPayloadReader
  private readonly decoded = new Map<string, SyncedFilter>()
  private last: SyncedFilter | undefined
  /** The database of the filter records that follow (the last database record's). */
  private db = 0

  /**
   * `maxFilterBytes`: most bitmap bytes one filter may have (`max-filter-bytes`); 0: no limit.
   * `databases`: how many databases the replica has (a filter of another is refused).
   */
  constructor(
    limits: SyncPayloadLimits,
    private readonly databases = Number.MAX_SAFE_INTEGER,
  ) {
    this.reader = new SyncPayloadReader(
      { maxFilterBytes: limits.maxFilterBytes, allocate: allocateLayerBitmap, reserve: limits.reserve },
      (record) => this.add(record),
      nativeCrc32,
      (bytes) => countSetBits(bytes),
      (expiresAt) => this.expire(expiresAt),
      (record) => this.add(record),
      (db) => this.selectDb(db),
    )
  }

  /**
   * Takes the next chunk. @throws DecodeError on anything malformed (the replica drops the link
   * and retries): see SyncPayloadReader, plus a filter whose layers cannot make a filter and a
   * name given twice. The decoder is then unusable.
   */
  push(chunk: Buffer | Uint8Array): void {
    this.reader.push(chunk)
  }

  /** Whether the end record was seen (a byte after it is an error). */
  get done(): boolean {
    return this.reader.done
  }

  /** The decoded filters in payload order. @throws Error before {@link done}. */
  filters(): Iterable<SyncedFilter> {
    if (!this.done) throw new Error('the sync payload is not complete')
    return this.decoded.values()
  }

  private add(record: FilterRecord | WholeFileRecord): void {
    const name = Buffer.from(record.name.buffer, record.name.byteOffset, record.name.byteLength)
    const latin1 = name.toString('latin1')
    const key = `${this.db}:${latin1}`
    if (this.decoded.has(key))
      throw new DecodeError(
        'corrupt',
        `the payload holds two filters named ${JSON.stringify(latin1.slice(0, 64))} in database ${this.db}`,
      )
    let filter: StoredFilter
    try {
      filter =
        'layers' in record.parts
          ? ScalableBloomFilter.fromParts(record.parts)
          : filterOfWholeFile(record as WholeFileRecord)
    } catch (error) {
      if (error instanceof RangeError)
        throw new DecodeError('corrupt', `filter ${JSON.stringify(latin1.slice(0, 64))}: ${error.message}`)
      throw error
    }
    this.last = { name, filter, db: this.db }
    this.decoded.set(key, this.last)
  }

  private selectDb(db: number): void {
    // redis rdbLoad: "FATAL: Data file was created with a Redis server configured to handle more than %d databases".
    if (db >= this.databases)
      throw new DecodeError(
        'corrupt',
        `the payload holds database ${db}, and this server has ${this.databases} (databases)`,
      )
    this.db = db
  }

  private expire(expiresAt: number): void {
    if (this.last === undefined || this.last.expiresAt !== undefined)
      throw new DecodeError('corrupt', 'an expiry record that follows no filter record')
    this.last.expiresAt = expiresAt
  }
}
