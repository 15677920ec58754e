/**
 * Replies as a client reads them: an incremental reader of RESP2 and RESP3 (simple strings,
 * errors, integers, bulk strings, nulls, arrays, maps, sets, doubles, booleans, big numbers,
 * verbatim strings, bulk errors, pushes; attributes are read and dropped). Bytes in, values out,
 * no sockets: the cluster links, MIGRATE's links and the tools' client feed it what their socket
 * reads. Every size read from the wire is checked against a limit before anything is gathered
 * for it. The request side is command-encoder.ts.
 */
import {
  ARRAY,
  ATTRIBUTE,
  BIG_NUMBER,
  BOOLEAN,
  BULK,
  BULK_ERROR,
  DOUBLE,
  ERROR,
  INTEGER,
  MAP,
  NULL,
  PUSH,
  SET,
  SIMPLE,
  VERBATIM,
} from './resp-type-bytes.js'

const CR = 0x0d // \r
const LF = 0x0a // \n
const TRUE = 0x74 // t

/** An error reply (`-ERR ...`, `!<n>`): a value inside an aggregate, or a whole reply. */
export class RespReplyError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'RespReplyError'
  }
}

/** Bytes from the server that are not RESP (or past a limit); the connection cannot be trusted after it. */
export class RespProtocolError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'RespProtocolError'
  }
}

/**
 * A reply: simple strings as string, bulk and verbatim strings as Buffer (binary safe; a verbatim
 * string without its `txt:`), integers and big numbers as number (bigint past 2^53), doubles as
 * number, booleans, null (RESP2's null bulk and array too), arrays, sets and pushes as arrays,
 * maps as flat [key, value, ...] arrays (as RESP2 clients see them), errors as
 * {@link RespReplyError}.
 */
export type RespValue = string | number | bigint | boolean | Buffer | null | RespReplyError | RespValue[]

export interface ReplyLimits {
  /** Longest bulk string accepted (redis proto-max-bulk-len's default). */
  readonly maxBulkBytes?: number
  /** Most elements of one aggregate (a map's pairs count twice). */
  readonly maxAggregateLength?: number
  /** Longest type line (`+...`, `-...`, a length...). */
  readonly maxLineBytes?: number
  /** Deepest nesting of aggregates. */
  readonly maxDepth?: number
  /** How simple strings and error lines are decoded (bulk strings stay bytes). */
  readonly lineEncoding?: 'latin1' | 'utf8'
}

const DEFAULTS: Required<ReplyLimits> = {
  maxBulkBytes: 512 * 1024 * 1024,
  maxAggregateLength: 2 ** 32 - 1,
  maxLineBytes: 64 * 1024,
  maxDepth: 64,
  lineEncoding: 'latin1',
}

const INCOMPLETE: unique symbol = Symbol('incomplete')
const EMPTY = Buffer.alloc(0)

/**
 * Turns a stream of bytes into replies. `feed` accepts chunks split anywhere; each complete reply
 * goes to `onReply` in order (`push`: a RESP3 push message, which answers no command). A large
 * bulk string is gathered without re-parsing per chunk. Throws {@link RespProtocolError} from
 * `feed` on bytes that are not RESP.
 */
export class ReplyReader {
  private buffer: Buffer = EMPTY
  private readonly waiting: Buffer[] = []
  private waitingBytes = 0
  /** Bytes the buffer must hold before parsing can make progress (0: try on every chunk). */
  private needed = 0
  private pos = 0
  /** Set when a bulk string's header is read but its body is not all there: where it ends. */
  private wanted = 0
  private readonly limits: Required<ReplyLimits>

  constructor(
    private readonly onReply: (value: RespValue, push: boolean) => void,
    limits: ReplyLimits = {},
  ) {
    this.limits = { ...DEFAULTS, ...limits }
  }

  feed(chunk: Buffer): void {
    if (this.needed > 0) {
      this.waiting.push(chunk)
      this.waitingBytes += chunk.length
      if (this.buffer.length + this.waitingBytes < this.needed) return
      this.buffer = Buffer.concat([this.buffer, ...this.waiting])
      this.waiting.length = 0
      this.waitingBytes = 0
      this.needed = 0
    } else {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
    }
    const buffer = this.buffer
    let offset = 0
    while (offset < buffer.length) {
      this.pos = offset
      this.wanted = 0
      const push = buffer[offset] === PUSH
      const value = this.parse(buffer, 0)
      if (value === INCOMPLETE) {
        this.needed = this.wanted > 0 ? this.wanted - offset : 0
        break
      }
      offset = this.pos
      this.onReply(value, push)
    }
    this.buffer = offset >= buffer.length ? EMPTY : buffer.subarray(offset)
  }

  /** Bytes received and not yet part of a complete reply. */
  get bufferedBytes(): number {
    return this.buffer.length + this.waitingBytes
  }

  private line(buffer: Buffer): string | typeof INCOMPLETE {
    const start = this.pos
    const cr = buffer.indexOf(CR, start)
    if (cr < 0 || cr + 1 >= buffer.length) {
      if ((cr < 0 ? buffer.length : cr) - start > this.limits.maxLineBytes)
        throw new RespProtocolError('reply line too long')
      return INCOMPLETE
    }
    if (cr - start > this.limits.maxLineBytes) throw new RespProtocolError('reply line too long')
    if (buffer[cr + 1] !== LF) throw new RespProtocolError('expected CRLF')
    this.pos = cr + 2
    return buffer.toString(this.limits.lineEncoding, start, cr)
  }

  /** A length line's value (-1: null), refused past `max` before anything is gathered for it. */
  private length(text: string, max: number): number {
    if (!/^-?\d{1,19}$/.test(text)) throw new RespProtocolError(`bad length ${JSON.stringify(text.slice(0, 32))}`)
    const n = Number(text)
    if (n < -1 || !Number.isSafeInteger(n)) throw new RespProtocolError(`bad length ${text}`)
    if (n > max) throw new RespProtocolError(`length ${text} over the limit of ${max}`)
    return n
  }

  private parse(buffer: Buffer, depth: number): RespValue | typeof INCOMPLETE {
    if (depth > this.limits.maxDepth) throw new RespProtocolError('replies nested too deeply')
    if (this.pos >= buffer.length) return INCOMPLETE
    const type = buffer[this.pos++]!
    const text = this.line(buffer)
    if (text === INCOMPLETE) return INCOMPLETE
    switch (type) {
      case SIMPLE:
        return text
      case ERROR:
        return new RespReplyError(text)
      case INTEGER:
      case BIG_NUMBER: {
        if (!/^[-+]?\d+$/.test(text)) throw new RespProtocolError(`bad integer ${JSON.stringify(text.slice(0, 32))}`)
        const n = Number(text)
        return Number.isSafeInteger(n) ? n : BigInt(text)
      }
      case DOUBLE:
        return text === 'inf' ? Infinity : text === '-inf' ? -Infinity : Number(text)
      case BOOLEAN:
        if (text !== 't' && text !== 'f')
          throw new RespProtocolError(`bad boolean ${JSON.stringify(text.slice(0, 32))}`)
        return text.charCodeAt(0) === TRUE
      case NULL:
        return null
      case BULK:
      case VERBATIM:
      case BULK_ERROR:
        return this.bulk(buffer, type, this.length(text, this.limits.maxBulkBytes))
      case ARRAY:
      case SET:
      case PUSH:
      case MAP:
      case ATTRIBUTE: {
        const pairs = type === MAP || type === ATTRIBUTE
        const n = this.length(
          text,
          pairs ? Math.floor(this.limits.maxAggregateLength / 2) : this.limits.maxAggregateLength,
        )
        if (n < 0) return null
        const count = pairs ? n * 2 : n
        const values: RespValue[] = []
        for (let i = 0; i < count; i++) {
          const value = this.parse(buffer, depth + 1)
          if (value === INCOMPLETE) return INCOMPLETE
          values.push(value)
        }
        // An attribute annotates the reply that follows it; no caller has a use for it.
        return type === ATTRIBUTE ? this.parse(buffer, depth) : values
      }
      default:
        throw new RespProtocolError(`unknown reply type byte 0x${type.toString(16)}`)
    }
  }

  private bulk(buffer: Buffer, type: number, n: number): RespValue | typeof INCOMPLETE {
    if (n < 0) return null
    const start = this.pos
    const end = start + n
    if (end + 2 > buffer.length) {
      this.wanted = end + 2
      return INCOMPLETE
    }
    if (buffer[end] !== CR || buffer[end + 1] !== LF) throw new RespProtocolError('bulk string not followed by CRLF')
    this.pos = end + 2
    if (type === BULK_ERROR) return new RespReplyError(buffer.toString('utf8', start, end))
    if (type !== VERBATIM) return buffer.subarray(start, end)
    // A verbatim string carries its format first: `txt:` or `mkd:`.
    if (n < 4 || buffer[start + 3] !== 0x3a) throw new RespProtocolError('verbatim string without its format')
    return buffer.subarray(start + 4, end)
  }
}
