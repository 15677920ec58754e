/**
 * Request parser: bytes from a client → commands, split exactly as redis 7.0's `processInputBuffer`
 * (src/networking.c) splits them: a request starting with `*` is a multibulk
 * (`processMultibulkBuffer`), anything else is an inline line (`processInlineBuffer`).
 * It knows nothing about sockets: it takes Buffers and a callback.
 */
import { splitArgs } from './split-args.js'
import { CommandArgs } from './command-args.js'
import { PROTOCOL_ERROR, expectedDollarText } from './error-texts.js'

/** Called once per whole command with the parser's reused {@link CommandArgs}; false stops parsing. */
export type CommandCallback = (args: CommandArgs) => boolean | void

const ARRAY = 0x2a // *
const BULK = 0x24 // $
const CR = 0x0d // \r
const LF = 0x0a // \n
const MINUS = 0x2d // -
const DIGIT_0 = 0x30 // 0
const DIGIT_1 = 0x31 // 1
const DIGIT_9 = 0x39 // 9

/** redis PROTO_MBULK_BIG_ARG: a bulk at least this long is not allocated until all of it is here. */
const BIG_BULK_BYTES = 32 * 1024
/** The scratch line buffer is dropped after a line longer than this, rather than kept. */
const KEEP_LINE_BYTES = 16 * 1024
/** string2ll refuses strings of LONG_STR_SIZE (21) characters or more. */
const LONG_STR_SIZE = 21
/** Digits of LLONG_MAX; LLONG_MIN's magnitude is one more. */
const INT64_MAX_DIGITS = Buffer.from('9223372036854775807')

/** Upper bounds the parser enforces, with redis's names and defaults. */
export interface ParserLimits {
  /** Largest bulk item in bytes (redis `proto-max-bulk-len`, 512 MiB). */
  maxBulkBytes: number
  /** Largest multibulk item count (1024 * 1024). */
  maxArrayLength: number
  /**
   * Longest inline line, and longest `*`/`$` count line, awaited without its terminator (redis
   * PROTO_INLINE_MAX_SIZE, 64 KiB, which redis uses for all three).
   */
  maxInlineBytes: number
}

/** Redis's defaults: 512 MiB bulks, 1 Mi items, 64 KiB inline lines. */
export const DEFAULT_PARSER_LIMITS: ParserLimits = Object.freeze({
  maxBulkBytes: 512 * 1024 * 1024,
  maxArrayLength: 1024 * 1024,
  maxInlineBytes: 64 * 1024,
})

/**
 * A request the parser refuses. `message` is redis's text without the `ERR ` prefix, e.g.
 * `Protocol error: invalid multibulk length`; the client replies `-ERR <message>` and closes.
 */
export class ProtocolError extends Error {
  override name = 'ProtocolError'
}

const {
  INVALID_MULTIBULK_LENGTH,
  INVALID_BULK_LENGTH,
  TOO_BIG_MBULK_COUNT,
  TOO_BIG_BULK_COUNT,
  TOO_BIG_INLINE,
  UNBALANCED_QUOTES,
} = PROTOCOL_ERROR

const EMPTY = Buffer.alloc(0)

/**
 * Parses `buf[start, end)` as redis `string2ll` does: optional `-`, no `+`, no leading zeros
 * ("0" alone is fine), no spaces, fewer than 21 characters, within int64.
 * @returns the value (inexact beyond 2^53, which no limit comes near) or NaN when redis refuses it.
 */
function parseLineInteger(buf: Uint8Array, start: number, end: number): number {
  const length = end - start
  if (length === 0 || length >= LONG_STR_SIZE) return NaN
  if (length === 1 && buf[start] === DIGIT_0) return 0
  let p = start
  const negative = buf[p] === MINUS
  if (negative && ++p === end) return NaN
  let c = buf[p]!
  if (c < DIGIT_1 || c > DIGIT_9) return NaN
  const digits = end - p
  let value = c - DIGIT_0
  for (p++; p < end; p++) {
    c = buf[p]!
    if (c < DIGIT_0 || c > DIGIT_9) return NaN
    value = value * 10 + (c - DIGIT_0)
  }
  if (digits > 19 || (digits === 19 && exceedsInt64(buf, end - 19, negative))) return NaN
  return negative ? -value : value
}

/** Whether the 19 digits at `buf[start]` exceed LLONG_MAX (or |LLONG_MIN| when negative). */
function exceedsInt64(buf: Uint8Array, start: number, negative: boolean): boolean {
  for (let i = 0; i < 19; i++) {
    const d = buf[start + i]! - INT64_MAX_DIGITS[i]!
    if (d !== 0) return d > 0 && !(negative && i === 18 && d === 1)
  }
  return false
}

/** `buf.indexOf(byte, from)` within `buf[from, end)`: -1 when it is not there. */
function indexBefore(buf: Buffer, byte: number, from: number, end: number): number {
  const at = buf.indexOf(byte, from)
  return at < end ? at : -1
}

/**
 * Incremental RESP request parser (one per client). Feed it chunks in arrival order with
 * {@link RequestParser.parse}; it calls back once per whole command.
 *
 * Each command is delivered in one {@link CommandArgs}, refilled for every command, that points
 * into the chunk holding each item whole: nothing is allocated or copied per command. The parser
 * keeps no view of a chunk after parse() returns (what it needs later it copies), so the caller
 * may reuse the chunk's memory for the next read. An item split across chunks is assembled in
 * memory of its own; a bulk of 32 KiB or more is only allocated whole once all of it is here.
 */
export class RequestParser {
  private readonly limits: ParserLimits
  /** Items parsed so far for the command in progress; handed to the callback when it is whole. */
  private readonly args = new CommandArgs()
  /** Items still expected for the command in progress (redis `multibulklen`); 0 between commands. */
  private itemsLeft = 0
  /** Length of the bulk being read, or -1 while its `$` line is awaited (redis `bulklen`). */
  private bulkLength = -1
  /** Scratch copy of an incomplete line (a `*`/`$` count line or an inline line). */
  private line: Buffer = EMPTY
  private lineLength = 0
  /** Bytes of `bulkLength + 2` (payload plus CRLF) received for a bulk split across chunks. */
  private received = 0
  /** The split bulk, when small enough to allocate up front. */
  private payload: Buffer | undefined
  /** The split bulk's pieces (copies), when big: joined into one Buffer when the last one arrives. */
  private parts: Buffer[] | undefined
  /** Items of the command in progress already copied out of the chunks they came in. */
  private ownedArgs = 0
  /** After a ProtocolError or a stop, all further input is ignored. */
  private closed = false

  /** @throws RangeError for a limit that is not a non-negative safe integer. */
  constructor(limits: Partial<ParserLimits> = {}) {
    const merged = { ...DEFAULT_PARSER_LIMITS, ...limits }
    for (const [name, value] of Object.entries(merged)) {
      if (!Number.isSafeInteger(value) || value < 0) {
        throw new RangeError(`ParserLimits.${name} must be a non-negative integer, got ${value}`)
      }
    }
    this.limits = merged
  }

  /** Whether it holds nothing of a command: the next byte starts one. */
  get betweenCommands(): boolean {
    return this.itemsLeft === 0 && this.lineLength === 0 && this.received === 0 && !this.closed
  }

  /** Bytes held for an incomplete command (for a query-buffer limit). */
  get bufferedBytes(): number {
    let bytes = this.lineLength + this.received
    // Between items of a multibulk; while a whole command runs, its arguments are not pending.
    const args = this.args
    if (this.itemsLeft > 0) for (let i = 0; i < args.length; i++) bytes += args.byteLength(i)
    return bytes
  }

  /**
   * Parses as many whole commands as the chunk completes, calling `onCommand(args)` for each in
   * order. `args` is the same object every time and valid only during the call. If `onCommand`
   * returns false, parsing stops and the rest of the input (this chunk and any later one) is
   * discarded (QUIT, a closing client).
   *
   * `end` (default: all of it) is where the chunk's bytes end: a read into a larger buffer is
   * parsed without a view of it made per read. Nothing past `end` is looked at.
   *
   * @throws ProtocolError after delivering the commands that preceded the bad bytes; the parser
   *   then ignores all further input. An exception thrown by `onCommand` propagates and likewise
   *   leaves the parser closed.
   */
  parse(chunk: Buffer, onCommand: CommandCallback, end = chunk.length): void {
    if (this.closed) return
    try {
      let pos = 0
      // Continuing a line or a bulk (rare with whole commands per read) works on a view of the bytes.
      if (end !== chunk.length && (this.lineLength > 0 || this.received > 0)) chunk = chunk.subarray(0, end)
      if (this.lineLength > 0) pos = this.resumeLine(chunk, onCommand)
      else if (this.received > 0) pos = this.resumePayload(chunk, onCommand)
      if (pos >= 0 && pos < end) this.parseFrom(chunk, pos, end, onCommand)
    } catch (error) {
      this.close()
      throw error
    }
    // A command still missing items keeps those it has: copied, as the chunk may be reused.
    const args = this.args
    if (!this.closed && this.itemsLeft > 0 && args.length > this.ownedArgs) {
      args.copyFrom(this.ownedArgs)
      this.ownedArgs = args.length
    }
  }

  /**
   * {@link parse}, with each command as a fresh array of views (`argv`, which the callback may
   * keep): for tools, tests and the append log's replay, where a command's cost is not the point.
   */
  execute(chunk: Buffer, onCommand: (argv: Buffer[]) => boolean | void): void {
    this.parse(chunk, (args) => onCommand(args.toArray()))
  }

  /** Hands the whole command to `onCommand` and empties the holder; false when told to stop. */
  private deliver(onCommand: CommandCallback): boolean {
    const go = onCommand(this.args)
    this.args.clear()
    this.ownedArgs = 0
    if (go === false) {
      this.close()
      return false
    }
    return true
  }

  /**
   * The main loop over `buf[pos, end)`. Whole lines and payloads are read in place; an
   * incomplete tail is stashed (line scratch or payload) for the next chunk.
   * @returns false when onCommand asked to stop.
   */
  private parseFrom(buf: Buffer, pos: number, end: number, onCommand: CommandCallback): boolean {
    const limits = this.limits
    while (pos < end) {
      if (this.itemsLeft === 0) {
        if (buf[pos] !== ARRAY) {
          pos = this.parseInline(buf, pos, end, onCommand)
          if (pos < 0) return false
          continue
        }
        // Fast path: `*<digits>\r` plus one more byte, all here.
        let j = pos + 1
        let count = -1
        let c = j < end ? buf[j]! : 0
        if (c >= DIGIT_1 && c <= DIGIT_9) {
          count = c - DIGIT_0
          while (++j < end && (c = buf[j]!) >= DIGIT_0 && c <= DIGIT_9) count = count * 10 + (c - DIGIT_0)
        }
        if (count > 0 && count <= limits.maxArrayLength && j - pos < 16 && j + 1 < end && c === CR) {
          pos = j + 2
        } else {
          // Slow path: redis's exact order of checks.
          const cr = indexBefore(buf, CR, pos, end)
          if (cr < 0 || cr === end - 1) {
            if (cr < 0 && end - pos > limits.maxInlineBytes) this.fail(TOO_BIG_MBULK_COUNT)
            this.stashLine(buf, pos, end)
            return true
          }
          count = parseLineInteger(buf, pos + 1, cr)
          if (Number.isNaN(count) || count > limits.maxArrayLength) this.fail(INVALID_MULTIBULK_LENGTH)
          pos = cr + 2 // redis skips the byte after \r without looking at it
          if (count <= 0) continue // `*0`, `*-1`: no command
        }
        this.itemsLeft = count
      }

      let length = this.bulkLength
      if (length < 0) {
        // The usual case: the command's items lie whole in the chunk.
        pos = this.wholeItems(buf, pos, end)
        if (this.itemsLeft === 0) {
          if (!this.deliver(onCommand)) return false
          continue
        }
        if (pos >= end) return true
        // Else a `$<digits>\r` line plus one more byte, all here; or the slow path.
        let j = pos + 1
        length = -1
        let c = 0
        if (buf[pos] === BULK && j < end) {
          c = buf[j]!
          if (c >= DIGIT_1 && c <= DIGIT_9) {
            length = c - DIGIT_0
            while (++j < end && (c = buf[j]!) >= DIGIT_0 && c <= DIGIT_9) length = length * 10 + (c - DIGIT_0)
          } else if (c === DIGIT_0 && ++j < end) {
            length = 0
            c = buf[j]!
          }
        }
        if (length >= 0 && length <= limits.maxBulkBytes && j - pos < 16 && j + 1 < end && c === CR) {
          pos = j + 2
          this.bulkLength = length
        } else {
          pos = this.slowBulkHeader(buf, pos, end)
          if (pos < 0) return true
          length = this.bulkLength
        }
      }

      if (end - pos < length + 2) {
        if (pos < end) this.stashPayload(buf, pos, end)
        return true
      }
      this.args.push(buf, pos, pos + length)
      pos += length + 2 // redis skips the trailing two bytes without looking at them
      this.bulkLength = -1
      if (--this.itemsLeft === 0 && !this.deliver(onCommand)) return false
    }
    return true
  }

  /**
   * The command's next items while each lies whole in `buf[pos, end)` behind a plain
   * `$<digits>\r\n` header (no leading zero, within the limits), in a loop that keeps its state in
   * locals. Stops before the first item that is not so (incomplete, or a header for the checks
   * below). @returns the position after the items taken
   */
  private wholeItems(buf: Buffer, pos: number, end: number): number {
    let left = this.itemsLeft
    const args = this.args
    const maxBulkBytes = this.limits.maxBulkBytes
    while (left > 0 && pos + 3 < end && buf[pos] === BULK) {
      let j = pos + 1
      let c = buf[j]!
      let length = 0
      if (c >= DIGIT_1 && c <= DIGIT_9) {
        length = c - DIGIT_0
        while (++j < end && (c = buf[j]!) >= DIGIT_0 && c <= DIGIT_9) length = length * 10 + (c - DIGIT_0)
      } else if (c === DIGIT_0) {
        c = buf[++j]! // pos + 3 < end: j is within
      } else {
        break
      }
      const start = j + 2
      if (c !== CR || j - pos >= 16 || length > maxBulkBytes || end - start < length + 2) break
      args.push(buf, start, start + length)
      pos = start + length + 2 // redis skips the trailing two bytes without looking at them
      left--
    }
    this.itemsLeft = left
    return pos
  }

  /**
   * The `$<length>\r\n` line at `buf[pos]` that the fast path did not take, checked in redis's
   * order; sets bulkLength.
   * @returns the position after the line, or -1 when it is not all here (stashed for the next chunk).
   */
  private slowBulkHeader(buf: Buffer, pos: number, end: number): number {
    const cr = indexBefore(buf, CR, pos, end)
    if (cr < 0 || cr === end - 1) {
      if (cr < 0 && end - pos > this.limits.maxInlineBytes) this.fail(TOO_BIG_BULK_COUNT)
      this.stashLine(buf, pos, end)
      return -1
    }
    if (buf[pos] !== BULK) {
      this.fail(expectedDollarText(String.fromCharCode(buf[pos]!)))
    }
    const length = parseLineInteger(buf, pos + 1, cr)
    if (!(length >= 0 && length <= this.limits.maxBulkBytes)) this.fail(INVALID_BULK_LENGTH)
    this.bulkLength = length
    return cr + 2
  }

  /**
   * One inline command at `buf[pos]`: the line ends at `\n`, with an optional `\r` before it.
   * @returns the position after the line (`end` when stashed), or -1 when told to stop.
   */
  private parseInline(buf: Buffer, pos: number, end: number, onCommand: CommandCallback): number {
    const lf = indexBefore(buf, LF, pos, end)
    if (lf < 0) {
      if (end - pos > this.limits.maxInlineBytes) this.fail(TOO_BIG_INLINE)
      this.stashLine(buf, pos, end)
      return end
    }
    const lineEnd = lf > pos && buf[lf - 1] === CR ? lf - 1 : lf
    const argv = splitArgs(buf, pos, lineEnd)
    if (argv === null) this.fail(UNBALANCED_QUOTES)
    if (argv.length === 0) return lf + 1
    this.args.assign(argv)
    return this.deliver(onCommand) ? lf + 1 : -1
  }

  /**
   * Continues a stashed line with the new chunk. When the chunk completes it, the whole line is
   * parsed from the scratch buffer and the rest of the chunk in place.
   * @returns where parsing of the chunk continues, or -1 when it is all consumed (or stopped).
   */
  private resumeLine(chunk: Buffer, onCommand: CommandCallback): number {
    const stashed = this.lineLength
    const inline = this.itemsLeft === 0 && this.line[0] !== ARRAY
    let stop: number // index in chunk just past the line's terminator
    let awaitingOneByte = false
    if (inline) {
      const lf = chunk.indexOf(LF)
      stop = lf < 0 ? -1 : lf + 1
    } else if (this.line[stashed - 1] === CR) {
      awaitingOneByte = true
      stop = chunk.length > 0 ? 1 : -1
    } else {
      const cr = chunk.indexOf(CR)
      if (cr >= 0 && cr === chunk.length - 1) awaitingOneByte = true
      stop = cr < 0 || cr === chunk.length - 1 ? -1 : cr + 2
    }
    if (stop < 0) {
      this.stashLine(chunk, 0, chunk.length)
      if (!awaitingOneByte && this.lineLength > this.limits.maxInlineBytes) {
        this.fail(inline ? TOO_BIG_INLINE : this.itemsLeft === 0 ? TOO_BIG_MBULK_COUNT : TOO_BIG_BULK_COUNT)
      }
      return -1
    }
    this.stashLine(chunk, 0, stop)
    const whole = this.line.subarray(0, this.lineLength)
    this.lineLength = 0
    if (this.line.length > KEEP_LINE_BYTES) this.line = EMPTY
    // Inline arguments are copies and count lines retain nothing, so reusing `line` later is safe.
    if (!this.parseFrom(whole, 0, whole.length, onCommand)) return -1
    return stop
  }

  /**
   * Continues a bulk split across chunks.
   * @returns where parsing of the chunk continues, or -1 when it is all consumed (or stopped).
   */
  private resumePayload(chunk: Buffer, onCommand: CommandCallback): number {
    const length = this.bulkLength
    const need = length + 2 - this.received
    const take = chunk.length < need ? chunk.length : need
    if (this.payload !== undefined) {
      const dataLeft = length - this.received
      if (dataLeft > 0) chunk.copy(this.payload, this.received, 0, take < dataLeft ? take : dataLeft)
    } else {
      this.parts!.push(Buffer.from(chunk.subarray(0, take)))
    }
    this.received += take
    if (take < need) return -1

    let item = this.payload
    if (item === undefined) {
      // Joined into one Buffer, now that every byte of it is here.
      item = Buffer.allocUnsafe(length)
      let filled = 0
      for (const part of this.parts!) {
        if (filled >= length) break
        filled += part.copy(item, filled, 0, Math.min(part.length, length - filled))
      }
    }
    this.payload = undefined
    this.parts = undefined
    this.received = 0
    this.bulkLength = -1
    this.args.push(item, 0, length)
    if (--this.itemsLeft === 0 && !this.deliver(onCommand)) return -1
    return take
  }

  /** Appends `buf[start, end)` to the scratch line, growing it by doubling. */
  private stashLine(buf: Buffer, start: number, end: number): void {
    const needed = this.lineLength + (end - start)
    if (needed > this.line.length) {
      const grown = Buffer.allocUnsafe(Math.max(needed, this.line.length * 2, 256))
      this.line.copy(grown, 0, 0, this.lineLength)
      this.line = grown
    }
    this.lineLength += buf.copy(this.line, this.lineLength, start, end)
  }

  /** Starts a bulk split across chunks with its first `end - start` bytes. */
  private stashPayload(buf: Buffer, start: number, end: number): void {
    const length = this.bulkLength
    this.received = end - start
    if (length < BIG_BULK_BYTES) {
      this.payload = Buffer.allocUnsafe(length)
      buf.copy(this.payload, 0, start, Math.min(end, start + length))
    } else {
      this.parts = [Buffer.from(buf.subarray(start, end))]
    }
  }

  private fail(message: string): never {
    this.close()
    throw new ProtocolError(message)
  }

  private close(): void {
    this.closed = true
    this.args.clear()
    this.ownedArgs = 0
    this.line = EMPTY
    this.lineLength = 0
    this.payload = undefined
    this.parts = undefined
    this.received = 0
  }
}
