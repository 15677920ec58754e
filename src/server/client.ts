/**
 * One Client per socket: its parser, its reply buffer and all per-connection state. Reads arrive
 * through onData (accept-connections.ts). Replies to everything parsed in one event-loop turn go
 * out in one socket write; when the socket pushes back, reading pauses until it drains.
 */
import { TLSSocket } from 'node:tls'
import { RequestParser, ProtocolError } from '../protocol/request-parser.js'
import { CommandArgs } from '../protocol/command-args.js'
import { ReplyWriter } from '../protocol/reply-writer.js'
import type {
  ClientKind,
  ClientSession,
  CommandContext,
  ServerContext,
  ThreadChecks,
  Transaction,
} from '../commands/kernel/context.js'
import { dispatch } from '../commands/kernel/dispatch.js'
import { beginRead, endRead } from '../commands/kernel/read-batch.js'
import type { WatchState } from '../commands/state/watched-keys.js'
import type { Subscriptions } from '../commands/state/pubsub-hub.js'
import { clientType } from '../commands/kernel/client-info.js'
import { pauseHolds } from '../commands/kernel/pause-hold.js'
import { applyReplyMode } from '../commands/connection/connection.js'
import type { PeerConnection } from '../replication/replica-peer.js'
import type { PostponedClient } from '../commands/state/client-pause.js'
import { protocolErrorText } from '../protocol/error-texts.js'

/** redis server.h PROTO_REPLY_CHUNK_BYTES: the client buffer its output limits leave out. */
const REPLY_CHUNK_BYTES = 16 * 1024

/** redis 7.0 server.c securityWarningCommand, word for word. */
const SECURITY_WARNING =
  'Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: commands to Redis. This is likely due to an attacker attempting to use Cross Protocol Scripting to compromise your Redis instance. Connection aborted.'
/** redis logs it when more than 60 seconds passed since it last did. */
const SECURITY_WARNING_EVERY_MS = 60_000
/** When each server last logged {@link SECURITY_WARNING}. */
const securityWarningAtMs = new WeakMap<ClientHost, number>()

export type ClientState = 'open' | 'closing' | 'closed'

/**
 * What a Client uses of its connection: a socket of the main thread's own (net.Socket, TLSSocket),
 * or a connection an I/O thread serves (remote-socket.ts).
 */
export interface ClientSocket {
  readonly remoteAddress?: string | undefined
  readonly remotePort?: number | undefined
  readonly localAddress?: string | undefined
  readonly localPort?: number | undefined
  readonly writableLength: number
  /** True for a connection an I/O thread serves (INFO's io_threaded_* counts). */
  readonly threaded?: boolean
  readonly writableNeedDrain: boolean
  setNoDelay(noDelay?: boolean): unknown
  setKeepAlive(enable?: boolean, initialDelay?: number): unknown
  write(data: Uint8Array | string): boolean
  end(data?: Uint8Array | string): unknown
  destroy(): unknown
  pause(): unknown
  resume(): unknown
  isPaused(): boolean
  on(event: 'drain' | 'close', listener: () => void): unknown
  on(event: 'error', listener: (error: Error) => void): unknown
  off(event: 'drain' | 'close', listener: () => void): unknown
}

/** How pub/sub and MONITOR reach a client: an open one's output goes out with the turn's replies, within its output limit. */
export const PUSH_TO_CLIENT = {
  receives: (client: ClientSession): boolean => !(client instanceof Client) || client.state === 'open',
  pushed: (client: ClientSession): void => (client instanceof Client ? client.pushed() : undefined),
}

/** What the client needs from the server beyond what handlers see. */
export interface ClientHost extends ServerContext {
  parserLimits(): ConstructorParameters<typeof RequestParser>[0]
  removeClient(client: Client): void
  /** Called once a read's commands ran; the host decides when the output may go (fsync always). */
  replyReady(client: Client): void
  /** The client whose read is being run, while it is; its writes set its {@link Client.logOffset}. */
  currentClient: Client | undefined
  /** With io-threads > 1: the checks the I/O threads answer (thread-plane.ts). */
  readonly threadPlane?: (ThreadChecks & ThreadOutputHooks) | undefined
}

/** What the I/O threads' own checks (thread-plane.ts) need to hear of a client's output. */
export interface ThreadOutputHooks {
  /** Before any output is written: what the commands changed may stop the threads' answers. */
  recheck(): void
  /** After a threaded client's output was written: it may be settled. */
  settle(client: Client): void
}

export class Client implements ClientSession, PeerConnection, PostponedClient {
  readonly reply = new ReplyWriter()
  readonly createdAtMs = Date.now()
  readonly addr: string
  readonly laddr: string
  readonly unixSocket: boolean
  readonly tls: boolean
  /** Whether an I/O thread serves it (INFO's io_threaded_* counts): decided once, not per read. */
  private readonly threaded: boolean
  lastInteractionMs = this.createdAtMs
  name = ''
  libName = ''
  libVersion = ''
  authenticated: boolean
  user = 'default'
  db = 0
  /** Declared here so that every client has the same shape (dispatch reads it per command). */
  transaction: Transaction | undefined = undefined
  watch: WatchState | undefined = undefined
  subscriptions: Subscriptions | undefined = undefined
  lastCommand = 'NULL'
  monitoring = false
  noEvict = false
  replyMode: ClientSession['replyMode'] = undefined
  kind: ClientKind = 'normal'
  state: ClientState = 'open'
  /** Whether the host has this client in its end-of-turn flush queue. */
  flushQueued = false
  /** The append-only log's offset just past this client's last record (0: none yet). */
  logOffset = 0
  /** The replication offset after its last command (redis woff): what its WAIT waits for. */
  replOffset = 0
  /**
   * While blocked (WAIT): the commands it sent after the blocking one, copied, run in order once
   * it is unblocked (its reads pause meanwhile). Undefined: not blocked.
   */
  private blockedCommands: Buffer[][] | undefined = undefined
  /** Since when (unix seconds) its unsent replies have been over the soft output limit (0: they are not). */
  private softLimitSinceSeconds = 0
  private readonly parser: RequestParser
  private readonly context: CommandContext
  private readingPaused = false
  /** Bytes read since the last whole command: the unfinished command's size, give or take one read. */
  private unparsedBytes = 0
  private readonly onCommand = (argv: CommandArgs): boolean => this.execute(argv)

  constructor(
    readonly id: number,
    readonly socket: ClientSocket,
    private readonly host: ClientHost,
    /** The Unix socket's path, for a client that came through it. */
    unixSocketPath?: string,
  ) {
    this.unixSocket = unixSocketPath !== undefined
    // An I/O thread's connection to the TLS port says so as a TLSSocket does (remote-socket.ts).
    this.tls = socket instanceof TLSSocket || (socket as { encrypted?: unknown }).encrypted === true
    this.threaded = socket.threaded === true
    this.addr =
      unixSocketPath !== undefined ? `${unixSocketPath}:0` : `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`
    this.laddr =
      unixSocketPath !== undefined ? `${unixSocketPath}:0` : `${socket.localAddress ?? '?'}:${socket.localPort ?? 0}`
    // redis createClient: authenticated at once while the default user needs no password.
    this.authenticated = host.acl.defaultOpen
    this.parser = new RequestParser(host.parserLimits())
    this.context = { client: this, server: host }
    socket.setNoDelay(true)
    const keepAliveSeconds = host.config['tcp-keepalive']
    if (keepAliveSeconds > 0) socket.setKeepAlive(true, keepAliveSeconds * 1000)
    socket.on('drain', () => this.onDrain())
    socket.on('error', (error) => host.log.verbose(`client ${this.addr}: ${error.message}`))
    socket.on('close', () => {
      this.state = 'closed'
      host.removeClient(this)
    })
  }

  /** Itself: the connection replication writes to and blocks (replication/replica-peer.ts). */
  get peer(): PeerConnection {
    return this
  }

  /** Channels, patterns and shard channels subscribed to (pub/sub). */
  subscriptionCount(): number {
    return this.subscriptions?.total ?? 0
  }

  /**
   * Output added from outside its own commands (a PUBLISH's message): checked against its output
   * limit as it is added, as redis does, then sent at the end of the turn with every reply.
   */
  pushed(): void {
    if (this === this.host.currentClient || this.state !== 'open' || this.checkOutputLimit()) return
    this.host.replyReady(this)
  }

  /**
   * A read's bytes, `chunk[0, length)` (see accept-connections.ts): valid only during the call,
   * the parser copies what it keeps.
   */
  onData(chunk: Buffer, length = chunk.length): void {
    if (this.state !== 'open') return
    this.host.stats.netInputBytes += length
    this.host.stats.readsProcessed++
    if (this.threaded) this.host.stats.threadedReadsProcessed++
    this.lastInteractionMs = Date.now()
    this.unparsedBytes += length
    this.host.currentClient = this
    const timed = this.host.timer.begin()
    beginRead(this.context)
    try {
      this.parser.parse(chunk, this.onCommand, length)
      if (this.unparsedBytes > this.host.config['client-query-buffer-limit']) this.checkQueryBuffer()
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error
      // redis networking.c: reply with the error, then close after the reply (CLIENT_CLOSE_AFTER_REPLY).
      this.host.log.verbose(`protocol error from client ${this.addr}: ${error.message}`)
      // latin1: "expected '$', got '%c'" quotes the client's byte as it came.
      const text = protocolErrorText(error.message)
      this.host.stats.countError(text)
      this.reply.error(text, 'latin1')
      this.closeAfterReply()
    } finally {
      // The read's checks and adds that wait (read-batch.ts), before anything else can run.
      endRead()
      this.host.currentClient = undefined
      if (timed) this.host.timer.end(this.host)
    }
    if (this.blockedCommands !== undefined && !this.socket.isPaused()) this.socket.pause()
    this.host.replyReady(this)
  }

  private execute(argv: CommandArgs): boolean {
    if (this.state !== 'open') return false
    this.unparsedBytes = 0
    if (this.blockedCommands !== undefined) {
      this.blockedCommands.push(argv.toArray().map((arg) => Buffer.from(arg)))
      return true
    }
    // One byte compare per command: the keywords are looked at only after a P or an H, either case.
    const initial = argv.bytes(0)[argv.start(0)]! | 0x20
    if (initial === 0x70 ? argv.isKeyword(0, 'POST') : initial === 0x68 && argv.isKeyword(0, 'HOST:'))
      return this.crossProtocolAttack()
    // CLIENT PAUSE: one compare per command while no pause is on.
    if (this.host.pause.type !== 'off' && pauseHolds(this.host.pause, this.context, argv)) return this.postpone(argv)
    // CLIENT REPLY OFF / SKIP: one compare per command while replies are on.
    const replyMode = this.replyMode
    if (replyMode === undefined) dispatch(this.context, argv)
    else this.dispatchQuiet(argv, replyMode)
    this.replOffset = this.host.replication.masterReplOffset
    if (this.kind === 'replica' && this.reply.pendingBytes > 0) return this.replicaReplied()
    // redis networking.c closeClientOnOutputBufferLimitReached: checked as replies are added, so
    // one read of small commands with large replies cannot pile up output before the flush.
    this.checkOutputLimit()
    return this.state === 'open'
  }

  /** A command while CLIENT REPLY is OFF or SKIP: its reply is dropped (commands/connection/connection.ts). */
  private dispatchQuiet(argv: CommandArgs, before: ClientSession['replyMode']): void {
    const mark = this.reply.pendingBytes
    dispatch(this.context, argv)
    applyReplyMode(this, before, mark)
  }

  /** A paused command waits, with what follows it, until the pause ends (redis blockPostponeClient). */
  private postpone(argv: CommandArgs): true {
    this.blockedCommands = [argv.toArray().map((arg) => Buffer.from(arg))]
    this.host.pause.postpone(this)
    return true
  }

  /** The pause ended: what waited runs (commands/state/client-pause.ts). */
  resume(): void {
    this.unblock()
  }

  /** Whether its commands wait (WAIT, CLIENT PAUSE): CLIENT LIST's b flag. */
  get blocked(): boolean {
    return this.blockedCommands !== undefined
  }

  /** No further command runs until {@link unblock} (WAIT). */
  block(): void {
    this.blockedCommands ??= []
  }

  /** Runs the commands read while blocked (until one blocks again), resumes reading, sends the replies. */
  unblock(): void {
    const queued = this.blockedCommands
    if (queued === undefined) return
    this.blockedCommands = undefined
    const args = new CommandArgs()
    this.host.currentClient = this
    const timed = this.host.timer.begin()
    try {
      for (let i = 0; i < queued.length; i++) {
        // A command of the queue may have blocked it again: the rest waits once more.
        const blockedAgain = this.blockedCommands as Buffer[][] | undefined
        if (blockedAgain !== undefined) {
          blockedAgain.push(...queued.slice(i))
          break
        }
        if (!this.execute(args.assign(queued[i]!))) break
      }
    } finally {
      this.host.currentClient = undefined
      if (timed) this.host.timer.end(this.host)
    }
    if (this.blockedCommands === undefined && !this.readingPaused && this.state === 'open') this.socket.resume()
    this.host.replyReady(this)
  }

  /** Bytes straight to the socket (a replica's stream and payload); false when it pushes back. */
  writeRaw(bytes: Buffer): boolean {
    if (this.state === 'closed') return false
    this.host.stats.netOutputBytes += bytes.length
    return this.socket.write(bytes)
  }

  /** Calls back once the socket drained or closed (next turn when it needs no drain: 'drain' would never come). */
  onceDrained(callback: () => void): void {
    if (this.state === 'closed' || !this.socket.writableNeedDrain) {
      setImmediate(callback)
      return
    }
    const done = (): void => {
      this.socket.off('drain', done)
      this.socket.off('close', done)
      callback()
    }
    this.socket.on('drain', done)
    this.socket.on('close', done)
  }

  /**
   * redis networking.c _addReplyToBufferOrList: a replica's link carries the stream and no
   * replies; a command of its that answered closes it.
   */
  private replicaReplied(): false {
    this.reply.take()
    this.host.log.warning(
      `Replica generated a reply to command '${this.lastCommand}', disconnecting it: id=${this.id} addr=${this.addr}`,
    )
    this.kill()
    return false
  }

  /**
   * redis 7.0 processCommand → securityWarningCommand: a command named POST or Host: is an HTTP
   * request (a web page making a browser post to this port, "cross protocol scripting"). The
   * connection is closed at once, with no reply, not even those still unsent to earlier commands
   * of the same read, and nothing after it runs. Logged once a minute at most, as redis does.
   */
  private crossProtocolAttack(): false {
    const nowMs = Date.now()
    if (Math.abs(nowMs - (securityWarningAtMs.get(this.host) ?? -Infinity)) > SECURITY_WARNING_EVERY_MS) {
      this.host.log.warning(SECURITY_WARNING)
      securityWarningAtMs.set(this.host, nowMs)
    }
    this.kill()
    return false
  }

  /** redis networking.c readQueryFromClient: a client whose query buffer passes the limit is closed, no reply. */
  private checkQueryBuffer(): void {
    const buffered = this.parser.bufferedBytes
    if (buffered <= this.host.config['client-query-buffer-limit']) return
    this.host.log.warning(
      `Closing client that reached max query buffer length: id=${this.id} addr=${this.addr} name=${this.name} qbuf=${buffered}`,
    )
    this.kill()
  }

  /**
   * The once-a-second look at a client over the soft output limit: one whose reads are paused
   * adds no output, so nothing else would notice its time is up. True if it was closed.
   */
  recheckOutputLimit(): boolean {
    return this.softLimitSinceSeconds !== 0 && this.state === 'open' && this.checkOutputLimit()
  }

  /**
   * redis networking.c checkClientOutputBufferLimits, by the client's class (getClientType; a
   * master link counts as normal): closes the client once its unsent replies (pending and in the
   * socket) pass the hard limit, or have stayed past the soft limit for longer than its seconds.
   * True if it did.
   */
  private checkOutputLimit(): boolean {
    // A replica's stream is bounded by the replica class, where it is held (replication/replica-peer.ts).
    if (this.kind === 'replica') return false
    // Within the buffer redis leaves out, no limit can be passed (used <= 0 below): the usual case,
    // decided without the client's class and limits.
    if (this.softLimitSinceSeconds === 0 && this.reply.pendingBytes + this.socket.writableLength <= REPLY_CHUNK_BYTES)
      return false
    const type = clientType(this)
    const { hard, soft, softSeconds } =
      this.host.config['client-output-buffer-limit'][type === 'master' ? 'normal' : type]
    if (hard === 0 && soft === 0) return false
    const output = this.outputBytes()
    // redis counts its reply list only, not the 16 KiB buffer each client writes into first.
    const used = output - REPLY_CHUNK_BYTES
    let over = hard > 0 && used > hard
    if (soft > 0 && used > soft) {
      // In whole seconds, as redis compares its cached unixtime.
      const nowSeconds = Math.floor(Date.now() / 1000)
      if (this.softLimitSinceSeconds === 0) this.softLimitSinceSeconds = nowSeconds
      else if (nowSeconds - this.softLimitSinceSeconds > softSeconds) over = true
    } else {
      this.softLimitSinceSeconds = 0
    }
    if (!over) return false
    this.host.log.warning(
      `Client id=${this.id} addr=${this.addr} name=${this.name} omem=${output} scheduled to be closed ASAP for overcoming of output buffer limits.`,
    )
    this.kill()
    return true
  }

  /** Writes all pending output in one write; ends the socket when closing. */
  flush(): void {
    if (this.state === 'closed') return
    // What its commands changed may close the I/O threads' own answers: before its replies go.
    this.host.threadPlane?.recheck()
    const out = this.reply.take()
    if (out !== undefined) {
      this.host.stats.netOutputBytes += out.length
      this.host.stats.writesProcessed++
      if (this.threaded) this.host.stats.threadedWritesProcessed++
      if (!this.socket.write(out) && !this.readingPaused) {
        this.readingPaused = true
        this.socket.pause()
      }
      if (this.checkOutputLimit()) return
    }
    if (this.state === 'closing') this.end()
    else if (this.threaded) this.host.threadPlane?.settle(this)
  }

  /**
   * Ends the connection after its last output: gone for pub/sub at once, as redis frees such a
   * client right after writing (a PUBLISH after a subscriber's QUIT does not count it).
   */
  private end(): void {
    this.host.pubsub.unsubscribeAll(this)
    this.socket.end()
  }

  private onDrain(): void {
    if (this.readingPaused && this.state === 'open') {
      this.readingPaused = false
      if (this.blockedCommands === undefined) this.socket.resume()
    }
  }

  closeAfterReply(): void {
    if (this.state === 'open') this.state = 'closing'
  }

  kill(): void {
    if (this.state === 'closed') return
    this.state = 'closed'
    this.host.pubsub.unsubscribeAll(this)
    this.socket.destroy()
  }

  outputBytes(): number {
    return this.reply.pendingBytes + this.socket.writableLength
  }

  /** Whether its parser holds nothing of a command (the I/O thread may read its next one: thread-plane.ts). */
  betweenCommands(): boolean {
    return this.parser.betweenCommands
  }

  queryBufferBytes(): number {
    return this.parser.bufferedBytes
  }
}
