/**
 * Replies as values, for a session of the server's own (the HTTP API, the log's replay, a
 * replica's master link): the handlers' reply calls build the values a {@link ReplyReader} would
 * read from the bytes a {@link ReplyWriter} writes for the same calls, RESP2 and RESP3 shapes
 * alike, without writing or reading the bytes. Precomputed reply bytes (`raw`) are read as they
 * come: whole elements, a header with the elements after it in later calls.
 */
import { formatDouble } from './format-double.js'
import { RespReplyError, type RespValue } from './reply-reader.js'
import type { ReplySink } from './reply-sink.js'
import { sanitizeErrorText } from './reply-writer.js'
import type { Protocol } from './reply-sink.js'
import {
  SIMPLE,
  ERROR,
  INTEGER,
  BULK,
  ARRAY,
  NULL,
  BOOLEAN,
  DOUBLE,
  BIG_NUMBER,
  BULK_ERROR,
  VERBATIM,
  MAP,
  SET,
  PUSH,
} from './resp-type-bytes.js'

const CR = 0x0d // \r

export interface ReplyValuesOptions {
  /**
   * How simple strings and error texts are read from the bytes they would be (ReplyReader's
   * `lineEncoding`): 'latin1' by default, as the reader's.
   */
  readonly lineEncoding?: 'latin1' | 'utf8'
  /** Where out-of-band messages (RESP3 pushes, which answer no command) go; else among the replies. */
  readonly onPush?: (value: RespValue) => void
}

/** An aggregate being filled: its elements so far and how many are still to come. */
interface Open {
  readonly values: RespValue[]
  remaining: number
  readonly push: boolean
}

/** Whether `text` is all ASCII: its bytes are the same in UTF-8 and latin1. */
function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false
  return true
}

/** A double as a reader reads RESP3's `,text`. */
function doubleValue(text: string): number {
  return text === 'inf' ? Infinity : text === '-inf' ? -Infinity : Number(text)
}

/** An integer or big number's text as a reader reads it: a number while it is exact, else a bigint. */
function integerValue(text: string): number | bigint {
  const n = Number(text)
  return Number.isSafeInteger(n) ? n : BigInt(text)
}

/** Collects the replies of the commands run in a session; {@link take} hands them out. */
export class ReplyValues implements ReplySink {
  protocol: Protocol = 2
  private replies: RespValue[] = []
  private readonly open: Open[] = []
  private readonly lineEncoding: 'latin1' | 'utf8'
  private readonly onPush: ((value: RespValue) => void) | undefined
  /** The replies {@link integerLater} left, by its answer: the array each is in, and its index there. */
  private readonly laterIn: RespValue[][] = []
  private readonly laterAt: number[] = []
  private settle: (() => void) | undefined = undefined

  constructor(options: ReplyValuesOptions = {}) {
    this.lineEncoding = options.lineEncoding ?? 'latin1'
    this.onPush = options.onPush
  }

  /** Complete replies held (a reply still missing elements is not one yet). */
  get length(): number {
    return this.replies.length
  }

  /** The reply at `index` (< {@link length}). */
  replyAt(index: number): RespValue | undefined {
    return this.replies[index]
  }

  /** Hands out the replies so far (ownership transfers) and starts afresh. */
  take(): RespValue[] {
    if (this.settle !== undefined) this.settleNow()
    const replies = this.replies
    this.replies = []
    return replies
  }

  mark(): number {
    return this.replies.length
  }

  truncate(mark: number): void {
    if (this.settle !== undefined) this.settleNow()
    this.open.length = 0
    if (mark < this.replies.length) this.replies.length = mark
  }

  integerLater(settle: () => void): number {
    // A new batch: the last one's answers are all given (they follow its `settled` at once).
    if (this.settle === undefined) {
      this.laterIn.length = 0
      this.laterAt.length = 0
    }
    const top = this.open[this.open.length - 1]
    this.laterIn.push(top === undefined ? this.replies : top.values)
    this.laterAt.push(top === undefined ? this.replies.length : top.values.length)
    this.add(0)
    this.settle = settle
    return this.laterIn.length - 1
  }

  answer(at: number, one: boolean): void {
    this.laterIn[at]![this.laterAt[at]!] = one ? 1 : 0
  }

  answerError(at: number, text: string): number {
    text = sanitizeErrorText(text)
    if (text.charCodeAt(0) === ERROR) text = text.slice(1)
    this.laterIn[at]![this.laterAt[at]!] = new RespReplyError(this.line(text, 'utf8'))
    // Values have no byte offsets: the later replies stay where they are.
    return 0
  }

  settled(): void {
    this.settle = undefined
  }

  private settleNow(): void {
    const settle = this.settle!
    this.settle = undefined
    settle()
  }

  simple(text: string): void {
    this.add(this.line(text, 'utf8'))
  }

  error(text: string, encoding: 'utf8' | 'latin1' = 'utf8'): void {
    text = sanitizeErrorText(text)
    if (text.charCodeAt(0) === ERROR) text = text.slice(1)
    this.add(new RespReplyError(this.line(text, encoding)))
  }

  integer(n: number): void {
    if (Number.isSafeInteger(n)) {
      // -0 is written `:0`.
      this.add(n === 0 ? 0 : n)
      return
    }
    // Past 2^53 the writer prints the number's digits, which a reader takes as a bigint; a
    // non-integer's text would be no RESP integer at all (no handler writes one).
    const text = String(n)
    this.add(/^[-+]?\d+$/.test(text) ? BigInt(text) : n)
  }

  bulk(data: Uint8Array | string): void {
    // A copy: the caller may reuse its bytes (an argument's buffer).
    this.add(typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data))
  }

  nullBulk(): void {
    this.add(null)
  }

  nullArray(): void {
    this.add(null)
  }

  array(length: number): void {
    this.begin(length, false)
  }

  push(length: number): void {
    this.begin(length, this.protocol === 3)
  }

  map(pairs: number): void {
    this.begin(pairs * 2, false)
  }

  set(length: number): void {
    this.begin(length, false)
  }

  double(n: number): void {
    const text = formatDouble(n)
    this.add(this.protocol === 3 ? doubleValue(text) : Buffer.from(text, 'latin1'))
  }

  boolean(b: boolean): void {
    this.add(this.protocol === 3 ? b : b ? 1 : 0)
  }

  verbatim(text: string): void {
    // RESP3's `txt:` prefix is not part of the value.
    this.add(Buffer.from(text, 'utf8'))
  }

  zeroOrOne(values: Uint8Array, from: number, count: number): void {
    for (let i = from; i < from + count; i++) this.add(values[i] === 1 ? 1 : 0)
  }

  /** Reads the bytes as a reader would: each element a value, an aggregate's header opening it. */
  raw(bytes: Uint8Array): void {
    const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    let at = 0
    while (at < buffer.length) {
      const type = buffer[at]!
      const cr = buffer.indexOf(CR, at + 1)
      if (cr < 0) throw new RangeError('raw reply bytes without their CRLF')
      const start = at + 1
      at = cr + 2
      switch (type) {
        case SIMPLE:
          this.add(buffer.toString(this.lineEncoding, start, cr))
          break
        case ERROR:
          this.add(new RespReplyError(buffer.toString(this.lineEncoding, start, cr)))
          break
        case INTEGER:
        case BIG_NUMBER:
          this.add(integerValue(buffer.toString('latin1', start, cr)))
          break
        case DOUBLE:
          this.add(doubleValue(buffer.toString('latin1', start, cr)))
          break
        case BOOLEAN:
          this.add(buffer[start] === 0x74) // t
          break
        case NULL:
          this.add(null)
          break
        case BULK:
        case VERBATIM:
        case BULK_ERROR: {
          const n = Number(buffer.toString('latin1', start, cr))
          if (n < 0) {
            this.add(null)
            break
          }
          const body = Buffer.from(buffer.subarray(type === VERBATIM ? at + 4 : at, at + n))
          this.add(type === BULK_ERROR ? new RespReplyError(body.toString('utf8')) : body)
          at += n + 2
          break
        }
        case ARRAY:
        case SET:
        case PUSH:
        case MAP: {
          const n = Number(buffer.toString('latin1', start, cr))
          this.begin(type === MAP ? n * 2 : n, type === PUSH && this.open.length === 0)
          break
        }
        default:
          throw new RangeError(`raw reply bytes of type 0x${type.toString(16)}`)
      }
    }
  }

  /** A line's text as a reader decodes the bytes `text` is written as. */
  private line(text: string, written: 'utf8' | 'latin1'): string {
    if (isAscii(text)) return text
    return Buffer.from(text, written).toString(this.lineEncoding)
  }

  /** An aggregate of `count` elements (a negative count: the null), filled by the values after it. */
  private begin(count: number, push: boolean): void {
    if (count < 0) this.add(null)
    else if (count === 0) this.complete([], push)
    else this.open.push({ values: [], remaining: count, push })
  }

  /** One value, into the aggregate being filled, or a reply of its own. */
  private add(value: RespValue): void {
    const top = this.open[this.open.length - 1]
    if (top === undefined) {
      this.replies.push(value)
      return
    }
    top.values.push(value)
    if (--top.remaining === 0) {
      this.open.pop()
      this.complete(top.values, top.push)
    }
  }

  private complete(values: RespValue[], push: boolean): void {
    if (push && this.open.length === 0 && this.onPush !== undefined) this.onPush(values)
    else this.add(values)
  }
}
