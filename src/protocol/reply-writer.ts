/**
 * Reply writer: RESP2 / RESP3 encoders appending to one growable Buffer, the way redis appends to
 * a client's reply buffer (networking.c addReply*). Headers and integers are written byte by byte.
 */
import { formatDouble } from './format-double.js'
import type { Protocol, ReplySink } from './reply-sink.js'

const SIMPLE = 0x2b // +
const ERROR = 0x2d // -
const INTEGER = 0x3a // :
const BULK = 0x24 // $
const ARRAY = 0x2a // *
const MAP = 0x25 // %
const SET = 0x7e // ~
const DOUBLE = 0x2c // ,
const BOOLEAN = 0x23 // #
const NULL = 0x5f // _
const VERBATIM = 0x3d // =
const PUSH = 0x3e // >
const CR = 0x0d // \r
const LF = 0x0a // \n
const MINUS = 0x2d // -
const DIGIT_0 = 0x30 // 0
const DIGIT_1 = 0x31 // 1
const TRUE = 0x74 // t
const FALSE = 0x66 // f
const COLON = 0x3a // :
const SPACE = 0x20 // ' '

/** One 0: {@link ReplyWriter.integerLater}'s placeholder. */
const NO_VALUES = new Uint8Array(1)

/** First buffer size; it doubles as needed. */
const INITIAL_BYTES = 16 * 1024
/**
 * take() copies outputs up to this size into a right-sized Buffer (from Node's pool) and keeps its
 * own buffer; larger ones are handed over whole and the writer starts a fresh buffer.
 */
const COPY_OUT_BYTES = 4 * 1024
/** raw() copies up to this many bytes with a loop rather than TypedArray.set. */
const SMALL_RAW_BYTES = 32
/** Room for a type byte, a 20-character integer and CRLF. */
const HEADER_BYTES = 24

/** Bytes `n` takes in decimal, for a non-negative safe integer. */
export function decimalDigits(n: number): number {
  let digits = 1
  while (n >= 10) {
    n = Math.floor(n / 10)
    digits++
  }
  return digits
}

/** Writes `n` (a non-negative safe integer) in decimal and CRLF at `buf[at]`; returns the offset after. */
function writeDecimalLine(buf: Uint8Array, at: number, n: number): number {
  if (n < 10) {
    buf[at++] = DIGIT_0 + n
  } else {
    const end = at + decimalDigits(n)
    let p = end
    while (n >= 10) {
      const q = Math.floor(n / 10)
      buf[--p] = DIGIT_0 + (n - q * 10)
      n = q
    }
    buf[p - 1] = DIGIT_0 + n
    at = end
  }
  buf[at] = CR
  buf[at + 1] = LF
  return at + 2
}

/**
 * Copies `source[start, end)` to `target[at]`, which must have room; returns the offset after.
 * A byte loop beats TypedArray.set (and its subarray) for the few bytes of a shared reply or a key.
 */
export function copyBytes(source: Uint8Array, start: number, end: number, target: Uint8Array, at: number): number {
  if (end - start <= SMALL_RAW_BYTES) {
    for (let p = start; p < end; p++) target[at++] = source[p]!
    return at
  }
  target.set(source.subarray(start, end), at)
  return at + (end - start)
}

/**
 * Writes `<type><n>\r\n` (a RESP array or bulk header) at `buf[at]` for a non-negative safe
 * integer `n`, which must fit; returns the offset after it.
 */
export function writeCountLine(buf: Uint8Array, at: number, type: number, n: number): number {
  buf[at] = type
  return writeDecimalLine(buf, at + 1, n)
}

/** Removes leading/trailing CR and LF and turns inner ones into spaces (redis addReplyErrorFormat). */
export function sanitizeErrorText(text: string): string {
  if (text.indexOf('\r') < 0 && text.indexOf('\n') < 0) return text
  return text.replace(/^[\r\n]+|[\r\n]+$/g, '').replace(/[\r\n]/g, ' ')
}

/**
 * Accumulates the replies to one client's pipelined commands; `take()` hands them out as one
 * Buffer to write. `protocol` picks RESP2 or RESP3 shapes for the types that differ.
 */
export class ReplyWriter implements ReplySink {
  /** RESP version for the replies that differ between 2 and 3; set by HELLO. */
  protocol: Protocol = 2
  private buf: Buffer = Buffer.allocUnsafe(INITIAL_BYTES)
  private offset = 0
  /** Fills in the replies {@link integerLater} left open; runs before output is taken or dropped. */
  private settle: (() => void) | undefined = undefined

  /** Bytes written and not yet taken. */
  get pendingBytes(): number {
    return this.offset
  }

  /** The byte at `offset` (< pendingBytes) of the pending output: a reply's type, for one that reads it in place. */
  byteAt(offset: number): number {
    return this.buf[offset]!
  }

  /** Where the next reply goes: {@link pendingBytes}. */
  mark(): number {
    return this.offset
  }

  /** Drops what was written after `offset` (a `pendingBytes` read before): CLIENT REPLY OFF / SKIP. */
  truncate(offset: number): void {
    if (this.settle !== undefined) this.settleNow()
    if (offset < this.offset) this.offset = offset
  }

  /**
   * Hands the pending output to the caller (ownership transfers: later writes never touch it)
   * and starts afresh, or returns undefined when nothing is pending.
   */
  take(): Buffer | undefined {
    if (this.settle !== undefined) this.settleNow()
    const length = this.offset
    if (length === 0) return undefined
    this.offset = 0
    if (length <= COPY_OUT_BYTES) {
      const out = Buffer.allocUnsafe(length)
      this.buf.copy(out, 0, 0, length)
      return out
    }
    const out = this.buf.subarray(0, length)
    this.buf = Buffer.allocUnsafe(INITIAL_BYTES)
    return out
  }

  /**
   * `:0\r\n`, an integer reply of 0 or 1 whose digit is set later by {@link answer}: the answer
   * of a command run together with the ones after it (commands/kernel/read-batch.ts). `settle`, which
   * answers it, runs before the output is next taken or truncated unless {@link settled} was
   * called first.
   * @returns where it is, for {@link answer}
   */
  integerLater(settle: () => void): number {
    const at = this.offset
    this.zeroOrOne(NO_VALUES, 0, 1)
    this.settle = settle
    return at
  }

  /** Sets the reply {@link integerLater} left at `at` to `:1` when `one`. */
  answer(at: number, one: boolean): void {
    this.buf[at + 1] = one ? DIGIT_1 : DIGIT_0
  }

  /**
   * Replaces the reply {@link integerLater} left at `at` with the error `-text\r\n` (`text` as
   * {@link error} takes it, starting with its code), moving what was written after it.
   * @returns how many bytes the replies after it moved by
   */
  answerError(at: number, text: string): number {
    const line = Buffer.from(`-${sanitizeErrorText(text)}\r\n`, 'utf8')
    const shift = line.length - 4
    this.reserve(shift)
    this.buf.copyWithin(at + line.length, at + 4, this.offset)
    line.copy(this.buf, at)
    this.offset += shift
    return shift
  }

  /** The replies left open are answered: nothing to run before a take. */
  settled(): void {
    this.settle = undefined
  }

  private settleNow(): void {
    const settle = this.settle!
    this.settle = undefined
    settle()
  }

  /** `+text\r\n`: a status reply; `text` must not hold CR or LF. */
  simple(text: string): void {
    this.reserve(text.length * 3 + 3)
    const buf = this.buf
    buf[this.offset++] = SIMPLE
    this.offset += buf.write(text, this.offset, 'utf8')
    this.crlf()
  }

  /**
   * `-text\r\n`, `text` starting with the code (`ERR not found`, `WRONGTYPE ...`). As redis does,
   * CR/LF at either end are trimmed and inner ones become spaces; a leading `-` is not doubled.
   * `encoding` 'latin1' writes one byte per character: for text quoting a client's raw bytes.
   */
  error(text: string, encoding: 'utf8' | 'latin1' = 'utf8'): void {
    text = sanitizeErrorText(text)
    if (text.charCodeAt(0) === ERROR) text = text.slice(1)
    this.reserve(text.length * 3 + 3)
    const buf = this.buf
    buf[this.offset++] = ERROR
    this.offset += buf.write(text, this.offset, encoding)
    this.crlf()
  }

  /** `:n\r\n`; `n` should be an integer (others are written as JavaScript prints them). */
  integer(n: number): void {
    this.header(INTEGER, n)
  }

  /** `$len\r\n<bytes>\r\n`; a string is written as UTF-8. */
  bulk(data: Uint8Array | string): void {
    if (typeof data === 'string') {
      const length = Buffer.byteLength(data, 'utf8')
      this.header(BULK, length)
      this.reserve(length + 2)
      this.offset += this.buf.write(data, this.offset, 'utf8')
    } else {
      const length = data.length
      this.header(BULK, length)
      this.reserve(length + 2)
      this.offset = copyBytes(data, 0, length, this.buf, this.offset)
    }
    this.crlf()
  }

  /** The null bulk string: RESP2 `$-1\r\n`, RESP3 `_\r\n`. */
  nullBulk(): void {
    if (this.protocol === 3) this.null()
    else this.header(BULK, -1)
  }

  /** The null array: RESP2 `*-1\r\n`, RESP3 `_\r\n`. */
  nullArray(): void {
    if (this.protocol === 3) this.null()
    else this.header(ARRAY, -1)
  }

  /** `*n\r\n`: the header of an array of `length` replies that the caller writes next. */
  array(length: number): void {
    this.header(ARRAY, length)
  }

  /**
   * The header of an out-of-band message of `length` elements (pub/sub): RESP3 `>n\r\n`, RESP2 an
   * array `*n\r\n` (redis addReplyPushLen, and mbulkhdr for RESP2).
   */
  push(length: number): void {
    this.header(this.protocol === 3 ? PUSH : ARRAY, length)
  }

  /** A map of `pairs` key/value pairs: RESP3 `%n\r\n`, RESP2 a flat array `*2n\r\n`. */
  map(pairs: number): void {
    if (this.protocol === 3) this.header(MAP, pairs)
    else this.header(ARRAY, pairs * 2)
  }

  /** A set of `length` members: RESP3 `~n\r\n`, RESP2 `*n\r\n`. */
  set(length: number): void {
    this.header(this.protocol === 3 ? SET : ARRAY, length)
  }

  /**
   * A double in redis's `%.17g` form: RESP3 `,1.5\r\n` (`,inf`, `,-inf`, `,nan`), RESP2 a bulk
   * string of the same text (redis addReplyDouble).
   */
  double(n: number): void {
    const text = formatDouble(n)
    if (this.protocol === 3) {
      this.reserve(text.length + 3)
      const buf = this.buf
      buf[this.offset++] = DOUBLE
      this.offset += buf.write(text, this.offset, 'latin1')
      this.crlf()
    } else {
      this.bulk(text)
    }
  }

  /** RESP3 `#t\r\n` / `#f\r\n`; RESP2 `:1\r\n` / `:0\r\n`. */
  boolean(b: boolean): void {
    this.reserve(4)
    const buf = this.buf
    if (this.protocol === 3) {
      buf[this.offset++] = BOOLEAN
      buf[this.offset++] = b ? TRUE : FALSE
    } else {
      buf[this.offset++] = INTEGER
      buf[this.offset++] = b ? DIGIT_1 : DIGIT_0
    }
    this.crlf()
  }

  /**
   * Verbatim text: RESP3 `=len\r\nfmt:text\r\n` with a three-character format (`txt` by default,
   * padded with spaces or cut to three, as redis addReplyVerbatim); RESP2 a plain bulk string.
   */
  verbatim(text: string, format = 'txt'): void {
    if (this.protocol !== 3) {
      this.bulk(text)
      return
    }
    const length = Buffer.byteLength(text, 'utf8')
    this.header(VERBATIM, length + 4)
    this.reserve(length + 6)
    const buf = this.buf
    for (let i = 0; i < 3; i++) buf[this.offset++] = i < format.length ? format.charCodeAt(i) & 0xff : SPACE
    buf[this.offset++] = COLON
    this.offset += buf.write(text, this.offset, 'utf8')
    this.crlf()
  }

  /** Precomputed reply bytes (see shared-replies.ts), copied as they are. */
  raw(bytes: Uint8Array): void {
    this.reserve(bytes.length)
    this.offset = copyBytes(bytes, 0, bytes.length, this.buf, this.offset)
  }

  /**
   * `count` integer replies, `:1\r\n` where `values[from + i]` is 1 and `:0\r\n` otherwise (the
   * same in RESP2 and RESP3): the per-item answers of BF.MADD/BF.MEXISTS written in one pass.
   */
  zeroOrOne(values: Uint8Array, from: number, count: number): void {
    this.reserve(4 * count)
    const buf = this.buf
    let at = this.offset
    for (let i = from; i < from + count; i++) {
      buf[at] = INTEGER
      buf[at + 1] = values[i] === 1 ? DIGIT_1 : DIGIT_0
      buf[at + 2] = CR
      buf[at + 3] = LF
      at += 4
    }
    this.offset = at
  }

  private null(): void {
    this.reserve(3)
    this.buf[this.offset++] = NULL
    this.crlf()
  }

  /** `<type><n>\r\n` with `n` written digit by digit. */
  private header(type: number, n: number): void {
    if (!Number.isSafeInteger(n)) {
      const text = String(n)
      this.reserve(text.length + 3)
      this.buf[this.offset++] = type
      this.offset += this.buf.write(text, this.offset, 'latin1')
      this.crlf()
      return
    }
    this.reserve(HEADER_BYTES)
    const buf = this.buf
    let offset = this.offset
    buf[offset++] = type
    if (n < 0) {
      buf[offset++] = MINUS
      n = -n
    }
    this.offset = writeDecimalLine(buf, offset, n)
  }

  private crlf(): void {
    const buf = this.buf
    buf[this.offset++] = CR
    buf[this.offset++] = LF
  }

  /** Makes room for `bytes` more (plus CRLF slack), doubling the buffer as needed. */
  private reserve(bytes: number): void {
    const needed = this.offset + bytes + 2
    if (needed <= this.buf.length) return
    const grown = Buffer.allocUnsafe(Math.max(needed, this.buf.length * 2))
    this.buf.copy(grown, 0, 0, this.offset)
    this.buf = grown
  }
}
