/**
 * The replica's reading of a full sync's payload, after `+FULLRESYNC <replid> <offset>` (redis
 * replication.c readSyncBulkPayload): `\n` keep-alives are skipped, then either
 * - `$EOF:<40 bytes>\r\n`, the payload, the same 40 bytes (diskless: no length is sent), or
 * - `$<length>\r\n` and exactly that many bytes, with no CRLF after them (disk form).
 * The payload's bytes go to the decoder as they come; what follows the payload in the same read
 * is the start of the write stream, handed back by {@link SyncTransfer.push}.
 */

/** The end mark's length (redis RDB_EOF_MARK_SIZE). */
const EOF_MARK_BYTES = 40
/** The longest `$...` line accepted. */
const MAX_PREAMBLE_BYTES = 1024

/** Where the payload's bytes go (the sync-payload decoder). */
export interface PayloadSink {
  push(chunk: Buffer): void
  readonly done: boolean
}

export class SyncTransferError extends Error {
  override name = 'SyncTransferError'
}

export class SyncTransfer {
  /** The `$` line being read (before it: keep-alives skipped). */
  private preamble: Buffer | undefined = Buffer.alloc(0)
  /** Diskless: the end mark; the last bytes read are held back until they prove not to be it. */
  private eofMark: Buffer | undefined
  private heldBack: Buffer = Buffer.alloc(0)
  /** Disk form: bytes still to come. */
  private left = 0
  /** Payload bytes read (redis repl_transfer_read). */
  readBytes = 0
  /** The payload's size when the master said it ($<length>); -1 for the diskless form (redis prints -1). */
  totalBytes = -1
  /** When the last bytes of the transfer came. */
  lastIoMs = Date.now()

  constructor(private readonly sink: PayloadSink) {}

  /**
   * Takes a read's bytes. @returns undefined while the payload goes on; once it ended, the bytes
   * of that read after it (possibly empty): the write stream's start.
   * @throws SyncTransferError on a bad preamble or a payload that ends where its decoder does not
   */
  push(chunk: Buffer): Buffer | undefined {
    this.lastIoMs = Date.now()
    let data = chunk
    if (this.preamble !== undefined) {
      const rest = this.readPreamble(data)
      if (rest === undefined) return undefined
      data = rest
    }
    return this.eofMark !== undefined ? this.pushDiskless(data) : this.pushSized(data)
  }

  /** Skips keep-alives and reads the `$` line; returns what follows it, or undefined when incomplete. */
  private readPreamble(chunk: Buffer): Buffer | undefined {
    let buf = Buffer.concat([this.preamble!, chunk])
    while (buf.length > 0 && buf[0] === 0x0a) buf = buf.subarray(1)
    const lf = buf.indexOf(0x0a)
    if (lf < 0) {
      if (buf.length > MAX_PREAMBLE_BYTES)
        throw new SyncTransferError('too long a line from the master before the payload')
      this.preamble = Buffer.from(buf)
      return undefined
    }
    const line = buf.toString('latin1', 0, lf).replace(/\r$/, '')
    this.preamble = undefined
    if (line.startsWith('-')) throw new SyncTransferError(`MASTER aborted replication with an error: ${line.slice(1)}`)
    if (line.startsWith('$EOF:') && line.length === 5 + EOF_MARK_BYTES) {
      this.eofMark = Buffer.from(line.slice(5), 'latin1')
    } else if (/^\$\d{1,16}$/.test(line)) {
      this.left = this.totalBytes = Number(line.slice(1))
    } else {
      throw new SyncTransferError(
        `Bad protocol from MASTER, the first byte is not '$' (we received '${line.slice(0, 64)}'), are you sure the host and port are right?`,
      )
    }
    return buf.subarray(lf + 1)
  }

  private pushSized(data: Buffer): Buffer | undefined {
    const take = Math.min(this.left, data.length)
    if (take > 0) this.give(data.subarray(0, take))
    this.left -= take
    if (this.left > 0) return undefined
    this.finish()
    return data.subarray(take)
  }

  private pushDiskless(data: Buffer): Buffer | undefined {
    const mark = this.eofMark!
    const all = this.heldBack.length === 0 ? data : Buffer.concat([this.heldBack, data])
    // The mark may be anywhere once the decoder is done; before that, it can only be at the end.
    const at = all.indexOf(mark)
    if (at >= 0) {
      if (at > 0) this.give(all.subarray(0, at))
      this.heldBack = Buffer.alloc(0)
      this.finish()
      return all.subarray(at + EOF_MARK_BYTES)
    }
    const keep = Math.min(EOF_MARK_BYTES - 1, all.length)
    if (all.length > keep) this.give(all.subarray(0, all.length - keep))
    this.heldBack = Buffer.from(all.subarray(all.length - keep))
    return undefined
  }

  private give(bytes: Buffer): void {
    this.readBytes += bytes.length
    // A view: the decoder may keep it (a socket's 'data' chunk is never reused by Node).
    this.sink.push(bytes)
  }

  private finish(): void {
    if (!this.sink.done) throw new SyncTransferError('the payload ended before its end record')
  }
}
