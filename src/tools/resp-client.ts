/**
 * A small RESP client for the command-line tools (bfs-copy, bulk import): one socket, commands
 * pipelined as fast as they are sent, replies matched to them in order. It speaks RESP2 as sent by
 * redis-server and bfs, and reads the RESP3 types too, so it works against either.
 *
 * `RespReader` is the pure part (bytes in, values out) and knows nothing about sockets;
 * `RespClient` ties it to a node:net socket.
 */
import net from 'node:net'
import tls from 'node:tls'

const SIMPLE = 0x2b // +
const ERROR = 0x2d // -
const INTEGER = 0x3a // :
const BULK = 0x24 // $
const ARRAY = 0x2a // *
const NULL = 0x5f // _
const BOOLEAN = 0x23 // #
const DOUBLE = 0x2c // ,
const BIG_NUMBER = 0x28 // (
const BULK_ERROR = 0x21 // !
const VERBATIM = 0x3d // =
const MAP = 0x25 // %
const SET = 0x7e // ~
const PUSH = 0x3e // >
const ATTRIBUTE = 0x7c // |
const CR = 0x0d // \r
const LF = 0x0a // \n
const TRUE = 0x74 // t

/** Deepest nesting of aggregates accepted from a server. */
const MAX_DEPTH = 64
/** Arguments up to this size are copied into the command's header buffer; larger ones are written as they are. */
const INLINE_ARG_BYTES = 16 * 1024

/** An error reply (`-ERR ...`): a value inside an array, the rejection of {@link RespClient.send} at top level. */
export class RespReplyError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'RespReplyError'
  }
}

/** Bytes from the server that are not RESP; the connection cannot be trusted after it. */
export class RespProtocolError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'RespProtocolError'
  }
}

/**
 * A reply: simple strings as string, bulk strings as Buffer (binary safe), integers as number
 * (bigint past 2^53), null as null, arrays, sets and pushes as arrays, maps as flat
 * [key, value, ...] arrays (as ioredis gives them in RESP2), errors nested in arrays as
 * {@link RespReplyError}.
 */
export type RespValue = string | number | bigint | boolean | Buffer | null | RespReplyError | RespValue[]

const INCOMPLETE: unique symbol = Symbol('incomplete')
const EMPTY = Buffer.alloc(0)

/**
 * Turns a stream of bytes into replies. `feed` accepts chunks split anywhere; each complete reply
 * goes to `onReply` in order. A large bulk string is gathered without re-parsing per chunk.
 * Throws {@link RespProtocolError} from `feed` on bytes that are not RESP.
 */
export class RespReader {
  private buffer: Buffer = EMPTY
  private readonly waiting: Buffer[] = []
  private waitingBytes = 0
  /** Bytes the buffer must hold before parsing can make progress (0: try on every chunk). */
  private needed = 0
  private pos = 0
  /** Set when a bulk string's header is read but its body is not all there: where it ends. */
  private wanted = 0

  constructor(private readonly onReply: (value: RespValue) => void) {}

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
      const value = this.parse(buffer, 0)
      if (value === INCOMPLETE) {
        this.needed = this.wanted > 0 ? this.wanted - offset : 0
        break
      }
      offset = this.pos
      this.onReply(value)
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
    if (cr < 0 || cr + 1 >= buffer.length) return INCOMPLETE
    if (buffer[cr + 1] !== LF) throw new RespProtocolError('expected CRLF')
    this.pos = cr + 2
    return buffer.toString('latin1', start, cr)
  }

  private length(text: string): number {
    if (!/^-?\d{1,19}$/.test(text)) throw new RespProtocolError(`bad length ${JSON.stringify(text.slice(0, 32))}`)
    const n = Number(text)
    if (n < -1 || !Number.isSafeInteger(n)) throw new RespProtocolError(`bad length ${text}`)
    return n
  }

  private parse(buffer: Buffer, depth: number): RespValue | typeof INCOMPLETE {
    if (depth > MAX_DEPTH) throw new RespProtocolError('replies nested too deeply')
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
        return text.charCodeAt(0) === TRUE
      case NULL:
        return null
      case BULK:
      case VERBATIM:
      case BULK_ERROR: {
        const n = this.length(text)
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
        // Verbatim strings carry "txt:" first.
        return type === VERBATIM ? buffer.subarray(start + 4, end) : buffer.subarray(start, end)
      }
      case ARRAY:
      case SET:
      case PUSH:
      case MAP:
      case ATTRIBUTE: {
        const n = this.length(text)
        if (n < 0) return null
        const count = type === MAP || type === ATTRIBUTE ? n * 2 : n
        const values: RespValue[] = []
        for (let i = 0; i < count; i++) {
          const value = this.parse(buffer, depth + 1)
          if (value === INCOMPLETE) return INCOMPLETE
          values.push(value)
        }
        // An attribute annotates the reply that follows it; the tools have no use for it.
        return type === ATTRIBUTE ? this.parse(buffer, depth) : values
      }
      default:
        throw new RespProtocolError(`unknown reply type byte 0x${type.toString(16)}`)
    }
  }
}

/** An argument as sent: strings as UTF-8, numbers in decimal, bytes as they are. */
export type RespArg = string | number | Uint8Array

/** Encodes one command as a RESP multibulk: a list of buffers, large arguments not copied. */
export function encodeCommand(argv: readonly RespArg[]): Buffer[] {
  // One pass to size the command, one to write it: a single Buffer unless an argument is large
  // enough to be worth sending as it is (a LOADCHUNK chunk), which is then not copied.
  const args: Uint8Array[] = new Array(argv.length)
  let size = 3 + String(argv.length).length
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const bytes = typeof arg === 'string' ? Buffer.from(arg, 'utf8') : typeof arg === 'number' ? Buffer.from(String(arg), 'latin1') : arg
    args[i] = bytes
    size += 5 + String(bytes.length).length + (bytes.length > INLINE_ARG_BYTES ? 0 : bytes.length)
  }
  const out: Buffer[] = []
  let buffer = Buffer.allocUnsafe(size)
  let at = buffer.write(`*${argv.length}\r\n`, 0, 'latin1')
  for (const bytes of args) {
    at += buffer.write(`$${bytes.length}\r\n`, at, 'latin1')
    if (bytes.length > INLINE_ARG_BYTES) {
      out.push(buffer.subarray(0, at))
      out.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
      size -= at
      buffer = Buffer.allocUnsafe(size)
      at = 0
    } else {
      buffer.set(bytes, at)
      at += bytes.length
    }
    buffer[at++] = 0x0d // \r
    buffer[at++] = 0x0a // \n
  }
  out.push(buffer.subarray(0, at))
  return out
}

/** Options for {@link RespClient.connect}. */
export interface ConnectOptions {
  /** Sent with AUTH right after connecting (redis `requirepass`). */
  password?: string
  /** With a password: AUTH username password (redis 6 ACL users). */
  username?: string
  /** Give up connecting after this long; default 10 000 ms. */
  connectTimeoutMs?: number
  /** Connect over TLS with these options (CA, client certificate: cli-args.ts tlsOptions). */
  tls?: tls.ConnectionOptions
}

interface Pending {
  resolve(value: RespValue): void
  reject(error: Error): void
}

/**
 * One connection to a RESP server. `send` writes at once and returns a promise of the reply, so
 * calls made without awaiting are pipelined; replies settle in the order the commands were sent.
 * An error reply rejects with {@link RespReplyError}; a lost connection rejects everything pending.
 */
export class RespClient {
  private readonly queue: (Pending | undefined)[] = []
  private head = 0
  private failure: Error | undefined
  private corked = false
  private readonly closed: Promise<void>

  private constructor(private readonly socket: net.Socket) {
    const reader = new RespReader((value) => this.settle(value))
    socket.setNoDelay(true)
    socket.on('data', (chunk: Buffer) => {
      try {
        reader.feed(chunk)
      } catch (error) {
        this.fail(error as Error)
        socket.destroy()
      }
    })
    socket.on('error', (error) => this.fail(error))
    this.closed = new Promise((resolve) => {
      socket.on('close', () => {
        this.fail(new Error('connection closed'))
        resolve()
      })
    })
  }

  /** Connects (and authenticates when a password is given). Rejects with the reason it could not. */
  static connect(host: string, port: number, options: ConnectOptions = {}): Promise<RespClient> {
    const timeoutMs = options.connectTimeoutMs ?? 10_000
    return new Promise<RespClient>((resolve, reject) => {
      const socket = options.tls === undefined ? net.connect({ host, port }) : tls.connect({ host, port, ...options.tls })
      const timer = setTimeout(() => socket.destroy(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs)
      const onError = (error: Error): void => {
        clearTimeout(timer)
        reject(error)
      }
      socket.once('error', onError)
      // Over TLS, usable once the TLS handshake is done and the server's certificate checked.
      socket.once(options.tls === undefined ? 'connect' : 'secureConnect', () => {
        clearTimeout(timer)
        socket.off('error', onError)
        resolve(new RespClient(socket))
      })
    }).then(async (client) => {
      if (options.password !== undefined) {
        const argv = options.username !== undefined ? ['AUTH', options.username, options.password] : ['AUTH', options.password]
        try {
          await client.send(argv)
        } catch (error) {
          await client.close()
          throw error
        }
      }
      return client
    })
  }

  /** Sends one command; resolves with its reply, rejects on an error reply or a lost connection. */
  send(argv: readonly RespArg[]): Promise<RespValue> {
    if (this.failure !== undefined) return Promise.reject(this.failure)
    const socket = this.socket
    if (!this.corked) {
      // Commands sent in the same tick leave in one write.
      this.corked = true
      socket.cork()
      process.nextTick(() => {
        this.corked = false
        socket.uncork()
      })
    }
    for (const piece of encodeCommand(argv)) socket.write(piece)
    return new Promise((resolve, reject) => this.queue.push({ resolve, reject }))
  }

  /** Commands sent whose replies have not arrived. */
  get pending(): number {
    return this.queue.length - this.head
  }

  /** Resolves once the socket's write buffer has drained (for callers that bound what they queue). */
  drained(): Promise<void> {
    if (!this.socket.writableNeedDrain || this.failure !== undefined) return Promise.resolve()
    return new Promise((resolve) => {
      const done = (): void => {
        this.socket.off('drain', done)
        this.socket.off('close', done)
        resolve()
      }
      this.socket.once('drain', done)
      this.socket.once('close', done)
    })
  }

  /** Ends the connection after what was sent; replies still pending are rejected. */
  close(): Promise<void> {
    if (!this.socket.destroyed) this.socket.end()
    const timer = setTimeout(() => this.socket.destroy(), 5_000)
    timer.unref()
    return this.closed.finally(() => clearTimeout(timer))
  }

  private settle(value: RespValue): void {
    const pending = this.queue[this.head]
    if (pending === undefined) {
      // A reply nobody asked for (a push message): ignore it.
      return
    }
    this.queue[this.head++] = undefined
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head)
      this.head = 0
    }
    if (value instanceof RespReplyError) pending.reject(value)
    else pending.resolve(value)
  }

  private fail(error: Error): void {
    if (this.failure === undefined) this.failure = error
    const waiting = this.queue.splice(this.head)
    this.queue.length = 0
    this.head = 0
    for (const pending of waiting) pending?.reject(error)
  }
}
