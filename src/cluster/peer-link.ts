/**
 * A connection from this node to a peer, for the pull of its CLUSTER NODES and for CLUSTER MEET:
 * ordinary RESP2 over TCP (TLS under tls-cluster), AUTH with masteruser/masterauth first when they are set, every request
 * with a timeout (a peer that accepts but never answers must not stall the others: a stopped
 * process does exactly that). Replies read: simple strings, errors, integers, bulk strings
 * ({@link PeerLink.request}), or any RESP2 value as read ({@link PeerLink.requestValue}: CLUSTER SHARDS).
 */
import net from 'node:net'
import tls from 'node:tls'
import { encodeCommand } from '../protocol/command-encoder.js'
import { ReplyReader, RespReplyError, type RespValue } from '../protocol/reply-reader.js'
import type { Config } from '../runtime/config.js'
import { clusterLinkTls } from '../runtime/tls-context.js'

/** A reply as read: a string (simple or bulk), a number, null, or an error reply's text. */
export type PeerReply = string | number | null | { readonly error: string }

interface Waiter {
  readonly resolve: (reply: RespValue) => void
  readonly reject: (error: Error) => void
}

/** A reply as the link's callers take it: text as UTF-8 strings, errors as their text. */
function peerReply(value: RespValue): PeerReply {
  if (value === null || typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'bigint') return Number(value)
  if (Buffer.isBuffer(value)) return value.toString('utf8')
  if (value instanceof RespReplyError) return { error: value.message }
  throw new Error(`unexpected reply ${Array.isArray(value) ? 'array' : typeof value}`)
}

export class PeerLink {
  private socket: net.Socket | undefined
  private reader = this.newReader()
  private readonly waiters: Waiter[] = []
  /** Whether a request is under way (the pull sends one at a time per peer). */
  busy = false

  constructor(
    readonly host: string,
    readonly port: number,
    /** The AUTH arguments to send first on each new connection, if any. */
    private readonly auth: () => readonly string[] | undefined,
    /** TLS options for each new connection (tls-cluster), undefined for plain TCP; may throw (files that do not load). */
    private readonly tlsOptions: () => tls.ConnectionOptions | undefined = () => undefined,
  ) {}

  /** The local address of the connection (this node's ip as the peer sees it), once connected. */
  get localAddress(): string {
    return this.socket?.localAddress ?? ''
  }

  /** Sends one command and waits for its reply, at most `timeoutMs` (then the connection is dropped). */
  async request(args: readonly string[], timeoutMs: number): Promise<PeerReply> {
    return peerReply(await this.requestValue(args, timeoutMs))
  }

  /** As {@link request}, the reply as read (arrays included; an error reply is a RespReplyError). */
  async requestValue(args: readonly string[], timeoutMs: number): Promise<RespValue> {
    this.busy = true
    const timer = setTimeout(() => this.drop(new Error(`timeout after ${timeoutMs} ms`)), timeoutMs)
    try {
      if (this.socket === undefined) await this.connect()
      return await this.send(args)
    } finally {
      clearTimeout(timer)
      this.busy = false
    }
  }

  private async connect(): Promise<void> {
    const secure = this.tlsOptions()
    const socket =
      secure === undefined
        ? net.createConnection({ host: this.host, port: this.port })
        : tls.connect({ host: this.host, port: this.port, ...secure })
    socket.setNoDelay(true)
    this.socket = socket
    socket.on('data', (chunk: Buffer) => this.onData(chunk))
    socket.on('error', (error) => this.drop(error))
    socket.on('close', () => this.drop(new Error('connection closed')))
    await new Promise<void>((resolve, reject) => {
      socket.once(secure === undefined ? 'connect' : 'secureConnect', resolve)
      this.waiters.push({ resolve: () => {}, reject })
    })
    this.waiters.shift()
    const auth = this.auth()
    if (auth !== undefined) {
      const reply = peerReply(await this.send(['AUTH', ...auth]))
      if (typeof reply === 'object' && reply !== null) throw new Error(`AUTH: ${reply.error}`)
    }
  }

  private send(args: readonly string[]): Promise<RespValue> {
    const socket = this.socket
    if (socket === undefined) return Promise.reject(new Error('not connected'))
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject })
      socket.write(encodeCommand(args))
    })
  }

  private newReader(): ReplyReader {
    return new ReplyReader((value) => this.waiters.shift()?.resolve(value), { lineEncoding: 'utf8' })
  }

  private onData(chunk: Buffer): void {
    try {
      this.reader.feed(chunk)
    } catch (error) {
      this.drop(error as Error)
    }
  }

  /** Closes the connection; whatever waits fails with `error`. The next request reconnects. */
  drop(error: Error): void {
    const socket = this.socket
    this.socket = undefined
    this.reader = this.newReader()
    socket?.destroy()
    for (const waiter of this.waiters.splice(0)) waiter.reject(error)
  }

  close(): void {
    this.drop(new Error('closed'))
  }
}

/**
 * A link to a cluster peer as this node's own links make it: AUTH as the replication link does
 * (masteruser/masterauth, when set), over TLS under tls-cluster. Both read the live config.
 */
export function clusterPeerLink(host: string, port: number, config: Config): PeerLink {
  return new PeerLink(
    host,
    port,
    () => {
      if (config.masterauth === '') return undefined
      return config.masteruser === '' ? [config.masterauth] : [config.masteruser, config.masterauth]
    },
    () => clusterLinkTls(config),
  )
}
