/**
 * STAND-IN, to be deleted at the merge of the sync-payload branch: a minimal decoder of the
 * full-sync payload with the interface that branch's `SyncPayloadDecoder` (store/sync-payload-decoder.ts)
 * has, so that the replica side builds and its tests run before it lands. At the merge the one
 * import of it (server/replica-wiring.ts) points to the real one, and this file goes.
 *
 * payload := "BFSSYNC1" record* end; record := u8 1, u64le L, L bytes of one filter file; end := u8 0
 */
import { decodeFilter } from '../format/codec.js'
import { DecodeError } from '../format/decode-error.js'
import { ScalableBloomFilter } from '../core/scalable-filter.js'

const MAGIC = Buffer.from('BFSSYNC1')

export class SyncPayloadDecoder {
  private buffered: Buffer = Buffer.alloc(0)
  private magicSeen = false
  private ended = false
  private readonly decoded: { name: Buffer; filter: ScalableBloomFilter }[] = []

  constructor(private readonly limits: { maxFilterBytes: number }) {}

  get done(): boolean {
    return this.ended
  }

  push(chunk: Buffer): void {
    if (this.ended) {
      if (chunk.length > 0) throw new DecodeError('corrupt', 'bytes after the end of the payload')
      return
    }
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk])
    if (!this.magicSeen) {
      if (this.buffered.length < MAGIC.length) return
      if (!this.buffered.subarray(0, MAGIC.length).equals(MAGIC)) throw new DecodeError('bad-magic', 'not a full-sync payload')
      this.magicSeen = true
      this.buffered = this.buffered.subarray(MAGIC.length)
    }
    while (this.buffered.length > 0 && !this.ended) {
      const type = this.buffered[0]
      if (type === 0) {
        this.ended = true
        if (this.buffered.length > 1) throw new DecodeError('corrupt', 'bytes after the end of the payload')
        break
      }
      if (type !== 1) throw new DecodeError('corrupt', `unknown record type ${type}`)
      if (this.buffered.length < 9) return
      const length = Number(this.buffered.readBigUInt64LE(1))
      const limit = this.limits.maxFilterBytes > 0 ? this.limits.maxFilterBytes + 1024 * 1024 : 2 ** 40
      if (length > limit) throw new DecodeError('corrupt', `a record of ${length} bytes`)
      if (this.buffered.length < 9 + length) return
      const record = decodeFilter(Buffer.from(this.buffered.subarray(9, 9 + length)))
      this.decoded.push({ name: Buffer.from(record.name), filter: ScalableBloomFilter.fromParts(record.parts) })
      this.buffered = this.buffered.subarray(9 + length)
    }
  }

  filters(): Iterable<{ name: Buffer; filter: ScalableBloomFilter }> {
    return this.decoded
  }
}
