/**
 * The replication backlog (redis replication.c repl_backlog): the last `repl-backlog-size` bytes
 * of the replication stream, in one circular buffer, so that a replica that lost its link (or the
 * other replicas after a failover) continues from its offset with +CONTINUE instead of a full copy.
 *
 * Offsets are redis's: the stream's first byte is offset 1, `firstByteOffset` is the offset of
 * the oldest byte held (repl_backlog->offset) and `histlen` how many are held; a replica that
 * processed up to offset N asks for N+1, which is served when firstByteOffset ≤ N+1 ≤
 * firstByteOffset + histlen.
 */
export class Backlog {
  private buffer: Buffer
  /** Where the next byte goes in {@link buffer}. */
  private writeIndex = 0
  /** Bytes held (redis repl_backlog->histlen). */
  histlen = 0
  /** Offset of the oldest byte held (redis repl_backlog->offset). */
  firstByteOffset: number

  /** A backlog whose next byte will be the stream's offset `nextOffset` (redis createReplicationBacklog). */
  constructor(size: number, nextOffset: number) {
    this.buffer = Buffer.allocUnsafe(size)
    this.firstByteOffset = nextOffset
  }

  get size(): number {
    return this.buffer.length
  }

  /** Adds the stream's next bytes; the oldest are dropped past {@link size}. */
  append(bytes: Buffer): void {
    const size = this.buffer.length
    let source = bytes
    if (source.length > size) {
      // Only the last `size` bytes can stay: everything held and the start of these go.
      this.firstByteOffset += this.histlen + source.length - size
      this.histlen = 0
      this.writeIndex = 0
      source = source.subarray(source.length - size)
    }
    const overflow = this.histlen + source.length - size
    if (overflow > 0) this.drop(overflow)
    const first = Math.min(source.length, size - this.writeIndex)
    source.copy(this.buffer, this.writeIndex, 0, first)
    if (first < source.length) source.copy(this.buffer, 0, first)
    this.writeIndex = (this.writeIndex + source.length) % size
    this.histlen += source.length
  }

  /** Forgets the `bytes` (≤ histlen) oldest bytes. */
  private drop(bytes: number): void {
    this.histlen -= bytes
    this.firstByteOffset += bytes
  }

  /** Whether a replica asking for `offset` (its processed offset + 1) can be served from here. */
  holds(offset: number): boolean {
    return offset >= this.firstByteOffset && offset <= this.firstByteOffset + this.histlen
  }

  /** The bytes from `offset` (which {@link holds}) to the end, copied. */
  from(offset: number): Buffer {
    const skip = offset - this.firstByteOffset
    const length = this.histlen - skip
    const out = Buffer.allocUnsafe(length)
    const size = this.buffer.length
    const start = (this.writeIndex - this.histlen + skip + size * 2) % size
    const first = Math.min(length, size - start)
    this.buffer.copy(out, 0, start, start + first)
    if (first < length) this.buffer.copy(out, first, 0, length - first)
    return out
  }

  /**
   * CONFIG SET repl-backlog-size (redis resizeReplicationBacklog): keeps the newest bytes that fit.
   */
  resize(size: number): void {
    if (size === this.buffer.length) return
    const keep = Math.min(this.histlen, size)
    const kept = this.from(this.firstByteOffset + this.histlen - keep)
    this.firstByteOffset += this.histlen - keep
    this.buffer = Buffer.allocUnsafe(size)
    kept.copy(this.buffer, 0)
    this.histlen = keep
    this.writeIndex = keep % size
  }
}
