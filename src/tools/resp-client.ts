/**
 * A small RESP client for the command-line tools (bfs-copy, bulk import): one socket, commands
 * pipelined as fast as they are sent, replies matched to them in order. It speaks RESP2 as sent by
 * redis-server and bfs, and reads the RESP3 types too, so it works against either. The codec is
 * protocol/'s (command-encoder.ts, reply-reader.ts); this file ties it to a node:net socket.
 */
import net from 'node:net'
import tls from 'node:tls'
import { encodeCommandPieces, type CommandArg } from '../protocol/command-encoder.js'
import { ReplyReader, RespReplyError, type RespValue } from '../protocol/reply-reader.js'

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
    // A push message answers no command: not matched to one.
    const reader = new ReplyReader((value, push) => {
      if (!push) this.settle(value)
    })
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
      const socket =
        options.tls === undefined ? net.connect({ host, port }) : tls.connect({ host, port, ...options.tls })
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
        const argv =
          options.username !== undefined ? ['AUTH', options.username, options.password] : ['AUTH', options.password]
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
  send(argv: readonly CommandArg[]): Promise<RespValue> {
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
    for (const piece of encodeCommandPieces(argv)) socket.write(piece)
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
      // A reply nobody asked for: ignore it.
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
