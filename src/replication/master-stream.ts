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

import { CommandArgs } from '../protocol/command-args.js'

/**
 * One command of the stream: its arguments, and the bytes it took (`*N\r\n` to its last `\r\n`),
 * `source[start, end)`. One instance, refilled for each command: it and its arguments are valid
 * only during the callback (as a client's CommandArgs), whatever outlives it must be copied.
 */
export class StreamCommand {
  readonly argv = new CommandArgs()
  source: Buffer = EMPTY
  start = 0
  end = 0

  /** Its bytes, as a view. */
  get bytes(): Buffer {
    return this.source.subarray(this.start, this.end)
  }
}

export class MasterStreamError extends Error {
  override name = 'MasterStreamError'
}

/** redis proto-max-bulk-len's default, and the largest multibulk count (as the request parser). */
const MAX_BULK_BYTES = 512 * 1024 * 1024
const MAX_ARRAY_LENGTH = 1024 * 1024
/** A `*`/`$` line longer than this without its CRLF is not a count line (redis PROTO_INLINE_MAX_SIZE). */
const MAX_LINE_BYTES = 64 * 1024

/** Reads up to this size may stay referenced by the reused command's arguments until the next. */
const KEEP_READ_BYTES = 1024 * 1024
const EMPTY = Buffer.alloc(0)
const CR = 0x0d
const LF = 0x0a
const MINUS = 0x2d // -
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
  /** The command handed to the callback, refilled for each (no allocation per command). */
  private command = new StreamCommand()

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
    const pending = this.pending
    const command = this.command
    command.source = pending
    for (;;) {
      const end = this.commandEnd(pending, pos)
      if (end < 0) break
      splitCommand(pending, pos, command.argv)
      command.start = pos
      command.end = pos = end
      if (!onCommand(command)) break
    }
    command.argv.clear()
    command.source = EMPTY
    // Its arguments still point into what was read: a large read is not kept by them.
    if (pending.length > KEEP_READ_BYTES) this.command = new StreamCommand()
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
      const count = readCountLine(buf, pos)
      if (count === INCOMPLETE) return -1
      if (count < 0 || count > MAX_ARRAY_LENGTH)
        throw new MasterStreamError("invalid multibulk length in the master's stream")
      this.bulksLeft = count
      this.scanned = lineNext
    }
    let p = this.scanned
    while (this.bulksLeft > 0) {
      if (p >= buf.length) return -1
      if (buf[p] !== BULK) throw new MasterStreamError(`expected '$' in the master's stream, got byte ${buf[p]}`)
      const length = readCountLine(buf, p)
      if (length === INCOMPLETE) return -1
      if (length < 0 || length > MAX_BULK_BYTES)
        throw new MasterStreamError("invalid bulk length in the master's stream")
      const next = lineNext + length + 2
      if (next > buf.length) {
        this.needBytes = next
        return -1
      }
      if (buf[next - 2] !== CR || buf[next - 1] !== 0x0a)
        throw new MasterStreamError("bulk not followed by CRLF in the master's stream")
      p = this.scanned = next
      this.bulksLeft--
    }
    this.bulksLeft = -1
    this.scanned = p
    return p
  }
}

/** {@link readCountLine}'s answer for a line not all here yet (below any count it accepts). */
const INCOMPLETE = Number.MIN_SAFE_INTEGER
/** Where the byte after the line {@link readCountLine} last read is (a module field: no object per line). */
let lineNext = 0

/**
 * `*123\r\n` or `$123\r\n` at `pos`: its number (negative as sent: the caller refuses it), the
 * next byte's position left in {@link lineNext}; {@link INCOMPLETE} when the line is not all here.
 * Read byte by byte: a string and a pattern per line were a good part of applying a BF.ADD.
 */
function readCountLine(buf: Buffer, pos: number): number {
  const length = buf.length
  let p = pos + 1
  const negative = p < length && buf[p] === MINUS
  if (negative) p++
  const first = p
  let value = 0
  for (; p < length; p++) {
    const c = buf[p]!
    if (c < 0x30 || c > 0x39) break
    value = value * 10 + (c - 0x30)
  }
  if (p + 1 >= length) {
    if (length - pos > MAX_LINE_BYTES) throw new MasterStreamError("too long a count line in the master's stream")
    return INCOMPLETE
  }
  const digits = p - first
  if (buf[p] !== CR || buf[p + 1] !== LF || digits === 0 || digits > 19)
    throw new MasterStreamError("bad count line in the master's stream")
  lineNext = p + 2
  return negative ? -value : value
}

/** The arguments of the whole, checked command at `pos` into `args`, as views of `buf`. */
function splitCommand(buf: Buffer, pos: number, args: CommandArgs): void {
  args.clear()
  const count = readCountLine(buf, pos)
  let p = lineNext
  for (let i = 0; i < count; i++) {
    const length = readCountLine(buf, p)
    args.push(buf, lineNext, lineNext + length)
    p = lineNext + length + 2
  }
}
