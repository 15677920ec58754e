/**
 * The replica's reader of its master's write stream: the bytes after the full-sync payload (or
 * after +CONTINUE) split into commands, each with the exact bytes it took on the wire. Those bytes
 * are what the replica counts in its offset and feeds, verbatim, to its own backlog and
 * sub-replicas (redis replicationFeedStreamFromMasterStream), so chained replicas see the top
 * master's stream and offsets.
 *
 * A master sends RESP arrays of bulk strings only (redis propagates nothing else); anything else
 * is a broken stream: {@link MasterStreamError}, and the replica drops the link and resyncs.
 */

/** One command of the stream: its arguments, and the bytes it took (`*N\r\n` to its last `\r\n`). */
export interface StreamCommand {
  readonly argv: Buffer[]
  readonly bytes: Buffer
}

export class MasterStreamError extends Error {
  override name = 'MasterStreamError'
}

/** redis proto-max-bulk-len's default, and the largest multibulk count (as the request parser). */
const MAX_BULK_BYTES = 512 * 1024 * 1024
const MAX_ARRAY_LENGTH = 1024 * 1024
/** A `*`/`$` line longer than this without its CRLF is not a count line (redis PROTO_INLINE_MAX_SIZE). */
const MAX_LINE_BYTES = 64 * 1024

const CR = 0x0d
const ARRAY = 0x2a // *
const BULK = 0x24 // $

export class MasterStreamReader {
  /** Bytes read and not yet part of a whole command (the unfinished command's start). */
  private pending: Buffer = Buffer.alloc(0)
  /**
   * How far the unfinished command at the start of {@link pending} was checked: the next byte to
   * look at and the bulks still to come (-1: its count line is not read yet). A large command
   * arriving in many reads is scanned once, not once per read.
   */
  private scanned = 0
  private bulksLeft = -1
  /**
   * While a bulk is known to end past the bytes read: the reads since (after {@link pending}),
   * their total with it, and the total it needs. They are joined once, when it is all here,
   * not at every read (a large command in many reads would be copied over and over).
   */
  private parts: Buffer[] = []
  private partsBytes = 0
  private needBytes = 0

  /** Bytes read that no whole command holds yet (redis read_reploff − reploff). */
  get bufferedBytes(): number {
    return this.parts.length > 0 ? this.partsBytes : this.pending.length
  }

  /** Drops the unfinished command (a new link starts at a command boundary). */
  reset(): void {
    this.pending = Buffer.alloc(0)
    this.scanned = 0
    this.bulksLeft = -1
    this.parts = []
    this.partsBytes = 0
    this.needBytes = 0
  }

  /**
   * Adds a read's bytes and calls `onCommand` for each whole command now available, in order.
   * `onCommand` returning false stops (the link was dropped meanwhile): the rest stays unread.
   * @throws MasterStreamError on anything that is not a RESP array of bulk strings
   */
  push(chunk: Buffer, onCommand: (command: StreamCommand) => boolean): void {
    if (this.needBytes > 0) {
      if (this.parts.length === 0) {
        this.parts.push(this.pending)
        this.partsBytes = this.pending.length
      }
      this.parts.push(chunk)
      this.partsBytes += chunk.length
      if (this.partsBytes < this.needBytes) return
      this.pending = Buffer.concat(this.parts, this.partsBytes)
      this.parts = []
      this.needBytes = 0
    } else {
      this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk])
    }
    let pos = 0
    for (;;) {
      const end = this.commandEnd(this.pending, pos)
      if (end < 0) break
      const bytes = this.pending.subarray(pos, end)
      pos = end
      if (!onCommand({ argv: splitCommand(bytes), bytes })) break
    }
    // What is left is copied: the chunk's memory is the socket's to reuse.
    this.pending = pos === this.pending.length ? Buffer.alloc(0) : Buffer.from(this.pending.subarray(pos))
    this.scanned -= pos
    if (this.needBytes > 0) this.needBytes -= pos
  }

  /** The end of the whole command starting at `pos`, or -1 when it is not all here yet. */
  private commandEnd(buf: Buffer, pos: number): number {
    if (this.bulksLeft < 0) {
      if (pos >= buf.length) return -1
      if (buf[pos] !== ARRAY) throw new MasterStreamError(`expected '*' in the master's stream, got byte ${buf[pos]}`)
      const countLine = readCountLine(buf, pos)
      if (countLine === undefined) return -1
      if (countLine.value < 0 || countLine.value > MAX_ARRAY_LENGTH) throw new MasterStreamError("invalid multibulk length in the master's stream")
      this.bulksLeft = countLine.value
      this.scanned = countLine.next
    }
    let p = this.scanned
    while (this.bulksLeft > 0) {
      if (p >= buf.length) return -1
      if (buf[p] !== BULK) throw new MasterStreamError(`expected '$' in the master's stream, got byte ${buf[p]}`)
      const lengthLine = readCountLine(buf, p)
      if (lengthLine === undefined) return -1
      const length = lengthLine.value
      if (length < 0 || length > MAX_BULK_BYTES) throw new MasterStreamError("invalid bulk length in the master's stream")
      const next = lengthLine.next + length + 2
      if (next > buf.length) {
        this.needBytes = next
        return -1
      }
      if (buf[next - 2] !== CR || buf[next - 1] !== 0x0a) throw new MasterStreamError("bulk not followed by CRLF in the master's stream")
      p = this.scanned = next
      this.bulksLeft--
    }
    this.bulksLeft = -1
    this.scanned = p
    return p
  }
}

/** `*123\r\n` or `$123\r\n` at `pos`: its number and where the next byte is; undefined when incomplete. */
function readCountLine(buf: Buffer, pos: number): { value: number; next: number } | undefined {
  const cr = buf.indexOf(CR, pos + 1)
  if (cr < 0 || cr + 1 >= buf.length) {
    if (buf.length - pos > MAX_LINE_BYTES) throw new MasterStreamError('too long a count line in the master\'s stream')
    return undefined
  }
  const digits = buf.toString('latin1', pos + 1, cr)
  if (!/^-?\d{1,19}$/.test(digits) || buf[cr + 1] !== 0x0a) throw new MasterStreamError('bad count line in the master\'s stream')
  return { value: Number(digits), next: cr + 2 }
}

/** The arguments of a whole, checked command (copies: the caller may keep them). */
function splitCommand(bytes: Buffer): Buffer[] {
  const first = readCountLine(bytes, 0)!
  const argv: Buffer[] = []
  let p = first.next
  for (let i = 0; i < first.value; i++) {
    const line = readCountLine(bytes, p)!
    argv.push(Buffer.from(bytes.subarray(line.next, line.next + line.value)))
    p = line.next + line.value + 2
  }
  return argv
}
