/**
 * MIGRATE's connections to its targets (redis 7.0 cluster.c migrateGetSocket / migrateCloseSocket):
 * one cached connection per host:port, closed after 10 s unused (MIGRATE_SOCKET_CACHE_TTL), which
 * remembers the database it last SELECTed. Every reply MIGRATE reads (AUTH, SELECT, RESTORE,
 * BFS.RESTORE-PART) is a status or an error; it is handed over as its line (`+OK`, `-ERR ...`).
 */
import net from 'node:net'
import tls from 'node:tls'
import type { Config } from '../../runtime/config.js'
import { clusterLinkTls } from '../../runtime/tls-context.js'
import { ReplyReader, RespReplyError, type RespValue } from '../../protocol/reply-reader.js'
import { migrateIoErrorText } from '../kernel/reply-error.js'

/** redis MIGRATE_SOCKET_CACHE_TTL: a cached connection unused this long is closed. */
const CACHE_TTL_MS = 10_000
/** redis MIGRATE_SOCKET_CACHE_ITEMS: at most this many cached connections (the oldest goes). */
const CACHE_ITEMS = 64

/** Why a connection failed: redis's IOERR texts tell connecting, writing and reading apart. */
export class LinkError extends Error {
  constructor(
    readonly stage: 'connecting' | 'writing' | 'reading',
    readonly timedOut: boolean,
  ) {
    super(migrateIoErrorText(stage))
  }
}

/** A reply as MIGRATE reads it (redis checks the first byte for `-`): an error's line, or a status line. */
function replyLine(value: RespValue): string {
  if (value instanceof RespReplyError) return `-${value.message}`
  return typeof value === 'string' ? `+${value}` : `+${String(value)}`
}

/** One connection to a target, its replies read in order. */
export class MigrateLink {
  /** The database SELECTed on it (-1: none yet, or unknown after an error). */
  lastDb = -1
  lastUseMs = Date.now()
  private readonly replies: string[] = []
  private waiter: (() => void) | undefined
  private failed: Error | undefined

  private constructor(readonly socket: net.Socket) {
    socket.setNoDelay(true)
    const reader = new ReplyReader((value) => this.replies.push(replyLine(value)))
    socket.on('data', (chunk: Buffer) => {
      try {
        reader.feed(chunk)
      } catch {
        // Not RESP: nothing more from this target can be trusted.
        this.failed ??= new Error('protocol error')
        socket.destroy()
      }
      this.waiter?.()
    })
    const fail = (): void => {
      this.failed ??= new Error('closed')
      this.waiter?.()
    }
    socket.on('error', fail)
    socket.on('close', fail)
  }

  /** @param secure TLS options (redis: under tls-cluster), undefined for plain TCP */
  static connect(host: string, port: number, timeoutMs: number, secure?: tls.ConnectionOptions): Promise<MigrateLink> {
    return new Promise((resolve, reject) => {
      const socket = secure === undefined ? net.connect({ host, port }) : tls.connect({ host, port, ...secure })
      const timer = setTimeout(() => {
        socket.destroy()
        reject(new LinkError('connecting', true))
      }, timeoutMs)
      socket.once(secure === undefined ? 'connect' : 'secureConnect', () => {
        clearTimeout(timer)
        socket.removeAllListeners('error')
        resolve(new MigrateLink(socket))
      })
      // redis connects without blocking, then fails on its first write: a refused connection is "writing".
      socket.once('error', () => {
        clearTimeout(timer)
        reject(new LinkError('writing', false))
      })
    })
  }

  get closed(): boolean {
    return this.failed !== undefined || this.socket.destroyed
  }

  /** Sends the pieces in order; resolves once the socket took the last one. */
  write(pieces: readonly Buffer[], timeoutMs: number): Promise<void> {
    if (this.closed) return Promise.reject(new LinkError('writing', false))
    this.lastUseMs = Date.now()
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new LinkError('writing', true)), timeoutMs)
      this.socket.cork()
      for (let i = 0; i < pieces.length - 1; i++) this.socket.write(pieces[i]!)
      this.socket.write(pieces[pieces.length - 1]!, (error) => {
        clearTimeout(timer)
        if (error) reject(new LinkError('writing', false))
        else resolve()
      })
      this.socket.uncork()
    })
  }

  /** The next reply as its line, without its CRLF. */
  async readLine(timeoutMs: number): Promise<string> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const line = this.replies.shift()
      if (line !== undefined) {
        this.lastUseMs = Date.now()
        return line
      }
      if (this.failed !== undefined) throw new LinkError('reading', false)
      const left = deadline - Date.now()
      if (left <= 0) throw new LinkError('reading', true)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.waiter = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      this.waiter = undefined
    }
  }

  close(): void {
    this.socket.destroy()
  }
}

/** The cached connections of one server. */
export class MigrateLinks {
  private readonly links = new Map<string, MigrateLink>()
  private sweeper: NodeJS.Timeout | undefined

  /** The cached connection to host:port, or a new one (redis migrateGetSocket). */
  async get(
    host: string,
    port: number,
    timeoutMs: number,
    config: Config,
  ): Promise<{ link: MigrateLink; cached: boolean }> {
    const name = `${host}:${port}`
    const cached = this.links.get(name)
    if (cached !== undefined && !cached.closed) return { link: cached, cached: true }
    if (cached !== undefined) this.links.delete(name)
    if (this.links.size >= CACHE_ITEMS) this.closeOldest()
    let secure: tls.ConnectionOptions | undefined
    try {
      secure = clusterLinkTls(config)
    } catch {
      // tls-cluster's files do not load: no connection can be made.
      throw new LinkError('connecting', false)
    }
    const link = await MigrateLink.connect(host, port, timeoutMs, secure)
    link.socket.unref() // a cached connection keeps no process alive
    this.links.set(name, link)
    this.sweeper ??= setInterval(() => this.sweep(), 1000).unref()
    return { link, cached: false }
  }

  /** redis migrateCloseSocket. */
  close(host: string, port: number): void {
    this.closeNamed(`${host}:${port}`)
  }

  private closeNamed(name: string): void {
    this.links.get(name)?.close()
    this.links.delete(name)
  }

  private closeOldest(): void {
    let oldest: [string, MigrateLink] | undefined
    for (const entry of this.links) if (oldest === undefined || entry[1].lastUseMs < oldest[1].lastUseMs) oldest = entry
    if (oldest !== undefined) this.closeNamed(oldest[0])
  }

  /** redis migrateCloseTimedoutSockets: every second, those unused for 10 s. */
  private sweep(): void {
    const now = Date.now()
    for (const [name, link] of this.links) {
      if (now - link.lastUseMs > CACHE_TTL_MS || link.closed) {
        link.close()
        this.links.delete(name)
      }
    }
    if (this.links.size === 0) {
      clearInterval(this.sweeper)
      this.sweeper = undefined
    }
  }
}
