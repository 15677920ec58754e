/**
 * createServer(): the TCP listener(s), the clients, the filters and the command table, tied
 * together. Everything a handler reaches goes through the ServerContext this class implements.
 */
import net from 'node:net'
import { EventEmitter } from 'node:events'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { Client, type ClientHost } from './client.js'
import { acceptConnections } from './accept-connections.js'
import { DEFAULT_CONFIG, type Config } from './config.js'
import { Stats } from './stats.js'
import { createLogger } from './logger.js'
import { FilterRegistry } from '../store/registry.js'
import { defineCommand, defineTable, type CommandDefinition, type CommandEntry, type CommandTable } from '../commands/table.js'
import { BUILTIN_COMMANDS } from '../commands/builtin.js'
import type { Logger } from '../commands/context.js'
import { DEFAULT_PARSER_LIMITS, type ParserLimits } from '../protocol/request-parser.js'
import { applyRenames } from './rename-command.js'
import { checkOpenFiles, openBindWarning, readOpenFilesLimit } from './startup-checks.js'
import { closeIdleClients } from './idle-sweep.js'
import { MemoryGuard } from '../store/memory-guard.js'
import { loadedOverLimits } from '../commands/filter-budget.js'
import { AppendLog } from '../store/append-log.js'
import { SAVE_RETRY_DELAY_MS } from '../store/save-schedule.js'
import { WatchedKeys } from '../commands/transaction.js'
import { LogRewriter } from '../store/log-rewrite.js'
import { createReplaySession } from './log-session.js'
import type { HttpFrontend } from '../http/http-server.js'
import { SnapshotStore } from '../store/snapshot.js'
import { CommandArgs } from '../protocol/command-args.js'

/** How often housekeeping runs: idle clients, the maxmemory recount (redis clientsCron, about 1 Hz per client). */
const HOUSEKEEPING_INTERVAL_MS = 1000

/** How often the `save` rules are checked (redis serverCron at hz 10). */
const SAVE_CHECK_INTERVAL_MS = 100
const MULTI_RECORD = [Buffer.from('MULTI')]
const EXEC_RECORD = [Buffer.from('EXEC')]

export { BFS_VERSION, REDIS_VERSION } from './version.js'

/** Pending replies of at least this size are written at once, not at the end of the turn. */
const FLUSH_NOW_BYTES = 64 * 1024

/** What {@link createServer} takes; every field is optional. */
export interface ServerOptions {
  /** Any configuration keys; the rest take DEFAULT_CONFIG's values. */
  config?: Partial<Config>
  /** Receives each log line instead of standard output. */
  logSink?: (line: string) => void
  /**
   * Extra commands, added to the built-in table (an extension's own commands): dispatched with
   * the same checks, counted in INFO commandstats and listed by COMMAND like the built-in ones.
   * A name that is already taken throws at construction. See {@link BfsServer.addCommand}.
   */
  commands?: readonly CommandDefinition[]
  /** The config file it was started with (main.ts), so that BF.SAVE and BF.LOAD refuse it. */
  configFile?: string
}

/** One reply (or whenDurable caller) waiting for the append-only log. */
interface LogWaiter {
  /** Every record appended when it started waiting. */
  readonly offset: number
  /** The client it belongs to, whose own records are its {@link Client.logOffset} (they may grow). */
  readonly client: Client | undefined
  /** Otherwise the offset past its own records (0: none). */
  readonly ownOffset: number
  /** Called once: true when its records are durable, false when they never will be (shutdown). */
  readonly release: (durable: boolean) => void
}

/** The offset a waiter needs while the log fails: that of its own records only. */
function ownLogOffset(waiter: LogWaiter): number {
  return waiter.client !== undefined ? waiter.client.logOffset : waiter.ownOffset
}

/** SHUTDOWN's SAVE / NOSAVE modifiers. */
export interface ShutdownOptions {
  save?: boolean
  noSave?: boolean
}

/**
 * A bfs server. `await server.start()` listens (port 0 picks a free port; `server.port` tells
 * which); `await server.close()` stops it. Emits 'shutdown' when a client ran SHUTDOWN.
 */
export class BfsServer extends EventEmitter implements ClientHost {
  readonly config: Config
  readonly configFile: string
  readonly registry = new FilterRegistry()
  readonly watchedKeys = new WatchedKeys()
  readonly stats = new Stats()
  readonly commands: CommandTable
  readonly log: Logger
  startedAtMs = Date.now()
  loading = false
  private readonly tcpServers: net.Server[] = []
  private readonly clientSet = new Set<Client>()
  private nextClientId = 1
  private boundPort = 0
  private http: HttpFrontend | undefined
  private closing: Promise<void> | undefined
  private housekeepingTimer: NodeJS.Timeout | undefined
  /** Whether rename-command renamed anything: the log then renames client commands back (propagate). */
  private readonly renamesCommands: boolean
  /** The append-only log (issue 5): open while appendonly is yes. */
  readonly appendLog: AppendLog
  readonly logRewriter: LogRewriter
  /**
   * What waits for the log to be durable up to an offset, in the order it started waiting: clients
   * (keyed by themselves, one entry each; released by flushing their replies) and whenDurable()
   * callers (the HTTP front end). While the log fails, only their own records hold them
   * ({@link ownLogOffset}).
   */
  private readonly awaitingLog = new Map<object, LogWaiter>()
  /** The client whose read is being run (set by the client), so that its writes are its own. */
  currentClient: Client | undefined = undefined
  /**
   * Clients with replies to send at the end of this event-loop turn, after every read of the turn
   * ran (redis beforeSleep's handleClientsWithPendingWrites): a client process with many
   * connections (redis-benchmark, a pool) is woken once per turn, not once per connection.
   */
  private readonly flushQueue: Client[] = []
  private flushScheduled = false
  private readonly flushQueueNow = (): void => this.flushQueued()
  private logTimer: NodeJS.Timeout | undefined
  /** The snapshot in `dir` (issue 3): loaded by start(), saved by SAVE/BGSAVE, the save rules and shutdown. */
  readonly snapshots: SnapshotStore
  private saveTimer: NodeJS.Timeout | undefined
  /** When logCron starts another snapshot for records left to a failed one (0: none planned). */
  private snapshotRetryAtMs = 0

  constructor(options: ServerOptions = {}) {
    super()
    this.config = { ...DEFAULT_CONFIG, ...options.config }
    this.configFile = options.configFile === undefined || options.configFile === '' ? '' : path.resolve(options.configFile)
    this.log = createLogger({ level: () => this.config.loglevel, file: this.config.logfile, sink: options.logSink })
    this.commands = defineTable([...BUILTIN_COMMANDS, ...(options.commands ?? []).map(defineCommand)])
    applyRenames(this.commands, this.config['rename-command'])
    this.renamesCommands = this.config['rename-command'].length > 0
    this.snapshots = new SnapshotStore({
      dir: this.config.dir,
      log: this.log,
      onCorrupt: () => this.config['snapshot-on-corrupt'],
      // Every snapshot is an alignment point of the log: it rotates when the snapshot captures its
      // data, and the segments the snapshot holds go once its MANIFEST is durable.
      appendLog: {
        rotate: () => (this.appendLog.isOpen ? this.appendLog.rotate() : this.appendLog.nextSeqOnDisk()),
        isOpen: () => this.appendLog.isOpen,
        committed: (logFrom) => {
          this.appendLog.dropBelow(logFrom)
          if (this.appendLog.isOpen) this.logRewriter.snapshotCommitted()
        },
      },
    })
    this.appendLog = new AppendLog({
      dir: this.config.dir,
      baseName: this.config.appendfilename,
      fsyncPolicy: () => this.config.appendfsync,
      log: this.log,
      onProgress: () => this.releaseSynced(),
    })
    this.logRewriter = new LogRewriter(this.appendLog, this.registry, this.snapshots, this.log)
  }

  /**
   * Adds a command to this server's table, before or after start(). From then on it is
   * dispatched like a built-in one (arity, authentication and loading checked before the handler
   * runs; a thrown ReplyError becomes its error reply), counted in INFO commandstats and listed
   * by COMMAND, COMMAND INFO and COMMAND DOCS.
   *
   * @returns the table entry, whose counters INFO commandstats reports
   * @throws Error when the name is taken (built-in or added), the arity is 0 or not an integer,
   *   or a flag is not one of COMMAND_FLAGS
   */
  addCommand(definition: CommandDefinition): CommandEntry {
    return this.commands.add(defineCommand(definition))
  }

  get port(): number {
    return this.boundPort
  }

  /** HTTP port actually bound (0 when http-port is 0, i.e. off). */
  get httpPort(): number {
    return this.http?.port ?? 0
  }

  /** Open HTTP connections. */
  get httpClientCount(): number {
    return this.http?.clientCount ?? 0
  }

  /** Creates the data directory, loads what is on disk, then accepts connections. */
  async start(): Promise<void> {
    this.startedAtMs = Date.now()
    mkdirSync(this.config.dir, { recursive: true })
    await this.loadSnapshot()
    // Snapshot load (issue 3) runs above this line; the log holds what came after the snapshot.
    this.loadAppendLog()
    for (const line of loadedOverLimits(this.registry, this.config.maxmemory, this.config['max-filter-bytes'])) this.log.warning(line)
    const addresses = this.config.bind.split(/\s+/).filter((address) => address !== '')
    const fds = checkOpenFiles(this.config.maxclients, readOpenFilesLimit())
    for (const line of fds.warnings) this.log.warning(line)
    this.config.maxclients = fds.maxclients
    const bindWarning = openBindWarning(addresses, this.config.requirepass)
    if (bindWarning !== undefined) this.log.warning(bindWarning)
    let port = this.config.port
    for (const address of addresses) {
      const listener = net.createServer()
      await new Promise<void>((resolve, reject) => {
        listener.once('error', reject)
        // A deep accept queue so a burst of connects (c10k) is not dropped and retried; the kernel caps it at somaxconn.
        listener.listen({ port, host: address, backlog: 4096 }, () => {
          listener.off('error', reject)
          // After listening, an accept error (EMFILE past `ulimit -n`) must not crash the process.
          listener.on('error', (error) => this.log.warning(`Accepting a client connection: ${error.message}`))
          resolve()
        })
      })
      acceptConnections(listener, (socket) => this.accept(socket))
      // With port 0 every address shares the port the first one got.
      port = (listener.address() as net.AddressInfo).port
      this.tcpServers.push(listener)
      this.log.notice(`Running mode=standalone, port=${port}.`)
      this.log.notice(`Listening on ${address}:${port}`)
    }
    this.boundPort = port
    this.housekeepingTimer = setInterval(() => this.housekeeping(), HOUSEKEEPING_INTERVAL_MS)
    this.housekeepingTimer.unref()
    if (this.config['http-port'] !== 0) {
      const httpBind = this.config['http-bind'].trim() === '' ? this.config.bind : this.config['http-bind']
      // Loaded only when asked for: node:http and prom-client cost a few MB of RSS for nothing otherwise.
      const { HttpFrontend } = await import('../http/http-server.js')
      this.http = new HttpFrontend(this)
      const httpAddresses = httpBind.split(/\s+/).filter((address) => address !== '')
      // The HTTP listener takes /add= from anyone who can reach it, just as RESP does.
      const httpWarning = this.config['http-bind'].trim() === '' ? undefined : openBindWarning(httpAddresses, this.config.requirepass)
      if (httpWarning !== undefined) this.log.warning(`HTTP ${httpWarning}`)
      await this.http.listen(httpAddresses, this.config['http-port'])
    }
    this.log.notice('Ready to accept connections tcp')
  }

  /**
   * Loads the snapshot before any client can connect (redis loads its RDB before listening). A
   * corrupt file rejects, naming it, unless snapshot-on-corrupt is move-aside.
   */
  private async loadSnapshot(): Promise<void> {
    this.loading = true
    try {
      const report = await this.snapshots.loadAll(this.registry)
      const seconds = (report.ms / 1000).toFixed(3)
      this.log.notice(`DB loaded from disk: ${report.filters} filters, ${report.bytes} bytes, ${Math.round(report.ms)} ms (${seconds} seconds)`)
    } finally {
      this.loading = false
    }
    this.saveTimer = setInterval(() => {
      if (this.closing === undefined) this.snapshots.tick(this.registry, this.config.save)
    }, SAVE_CHECK_INTERVAL_MS)
    this.saveTimer.unref()
  }

  /** Whether a shutdown saves: SAVE forces it, NOSAVE forbids it, otherwise when save rules are set. */
  private shutdownSaves(options: ShutdownOptions): boolean {
    if (options.noSave) return false
    return options.save === true || this.config.save.trim() !== ''
  }

  /**
   * Once a second: close idle clients (`timeout`) and those past the soft output limit for too
   * long, and recount filter memory (`maxmemory`).
   */
  private housekeeping(): void {
    const closed = closeIdleClients(this.clientSet, Date.now(), this.config.timeout)
    if (closed > 0) this.log.verbose(`Closing idle client (${closed})`)
    // Closing removes a client from the set; a Set's iteration goes on past deleted entries.
    for (const client of this.clientSet) client.recheckOutputLimit()
    if (this.config.maxmemory > 0) MemoryGuard.of(this.registry).recount()
  }

  /** A new connection: its Client, or undefined when it is refused. */
  private accept(socket: net.Socket): Client | undefined {
    this.stats.connectionsReceived++
    if (this.closing !== undefined) {
      socket.destroy()
      return undefined
    }
    if (this.clientSet.size >= this.config.maxclients) {
      // redis networking.c acceptCommonHandler
      this.stats.rejectedConnections++
      socket.on('error', () => {})
      socket.end('-ERR max number of clients reached\r\n')
      return undefined
    }
    const client = new Client(this.nextClientId++, socket, this)
    this.clientSet.add(client)
    return client
  }

  clients(): Iterable<Client> {
    return this.clientSet
  }

  get clientCount(): number {
    return this.clientSet.size
  }

  removeClient(client: Client): void {
    this.clientSet.delete(client)
    // A held reply nobody will read waits for nothing.
    this.awaitingLog.delete(client)
    this.watchedKeys.unwatchAll(client)
  }

  /**
   * A reply waits (with anything its client sent later) until every record appended so far is
   * written to the log, at the end of the same turn; with appendfsync always, until their fsync
   * returns, one fsync shared by every client of the turn. This holds for clients that did not
   * write too (as redis sends no reply before beforeSleep's AOF write and fsync): a read, or a
   * BF.ADD answering 0, may show another client's write, which must not be seen before it is durable.
   *
   * While the log cannot be written (writes get -MISCONF meanwhile), a reply waits only for its
   * own client's records: the others are answered, as redis keeps answering reads then, instead
   * of every client stalling until the disk is back.
   */
  replyReady(client: Client): void {
    const log = this.appendLog
    const appended = log.appendedBytes
    if (!log.isDurable(log.failing ? client.logOffset : appended)) {
      this.awaitingLog.set(client, {
        offset: appended,
        client,
        ownOffset: 0,
        // A reply that would acknowledge what is durable nowhere is never sent: the client is closed.
        release: (durable) => (durable ? this.queueFlush(client) : client.kill()),
      })
      return
    }
    if (this.awaitingLog.has(client)) return
    // Large replies go now: a client that does not read must be stopped by its socket's
    // backpressure within this turn, before more of its reads pile up replies in memory.
    if (client.reply.pendingBytes >= FLUSH_NOW_BYTES) client.flush()
    else this.queueFlush(client)
  }

  /** Sends the client's replies at the end of this turn, with every other client's. */
  private queueFlush(client: Client): void {
    if (client.flushQueued) return
    client.flushQueued = true
    this.flushQueue.push(client)
    if (!this.flushScheduled) {
      this.flushScheduled = true
      setImmediate(this.flushQueueNow)
    }
  }

  private flushQueued(): void {
    this.flushScheduled = false
    // This turn's log records go first (redis beforeSleep: flushAppendOnlyFile, then the writes to
    // clients), so the replies waiting for them join this same pass (the loop sees clients queued
    // meanwhile; the extra turn that queueing schedules then finds nothing to do).
    this.appendLog.flush()
    const queue = this.flushQueue
    for (let i = 0; i < queue.length; i++) {
      const client = queue[i]!
      client.flushQueued = false
      client.flush()
    }
    queue.length = 0
  }

  whenDurable(ownOffset?: number): Promise<boolean> {
    const log = this.appendLog
    const offset = log.appendedBytes
    const own = ownOffset ?? offset
    if (log.isDurable(log.failing ? own : offset)) return Promise.resolve(true)
    return new Promise((resolve) => this.awaitingLog.set({}, { offset, client: undefined, ownOffset: own, release: resolve }))
  }

  /**
   * Releases what waited for records that are now in the log (on disk: always), in the order it
   * started waiting; while the log fails, what waited only on other clients' records.
   */
  private releaseSynced(): void {
    const log = this.appendLog
    for (const [key, waiter] of this.awaitingLog) {
      if (!log.isDurable(log.failing ? ownLogOffset(waiter) : waiter.offset)) continue
      this.awaitingLog.delete(key)
      waiter.release(true)
    }
  }

  /** Replays the log through the real commands, then keeps it open for appending (appendonly yes). */
  private loadAppendLog(): void {
    if (!this.config.appendonly) {
      // As redis does with appendonly no: the log is not read. Say so, since the next snapshot
      // becomes the truth and retires those segments.
      const next = this.appendLog.nextSeqOnDisk()
      if (next !== undefined) {
        this.log.warning(`appendonly is no: the append only file segments in ${this.config.dir} are not loaded, and the next snapshot retires them`)
      }
      return
    }
    const startedMs = Date.now()
    const session = createReplaySession(this)
    let errors = 0
    const result = this.appendLog.load(
      (argv, file, offset) => {
        if (session.commands.get(argv[0]!.toString('latin1').toLowerCase()) === undefined) {
          throw new Error(`Unknown command '${argv[0]!.toString('latin1')}' reading the append only file ${file} at offset ${offset}`)
        }
        const error = session.run(argv, file)
        // Only segments from the snapshot's log-from on are replayed; errors are still expected
        // over a snapshot without log-from (every segment is replayed: BF.RESERVE: item exists).
        if (error !== undefined && errors++ < 10) this.log.verbose(`AOF replay ${file}@${offset}: ${error}`)
      },
      {
        allowTruncatedTail: this.config['aof-load-truncated'],
        allowCorrupt: this.config['aof-load-corrupt'],
        fromSeq: this.snapshots.logFrom,
        fromSeqOnDisk: this.snapshots.logFromOnDisk,
      },
    )
    session.finish()
    if (errors > 0) this.log.notice(`${errors} command(s) of the append only file answered an error while loading (the first 10 at loglevel verbose)`)
    if (result.segments > 0) {
      this.log.notice(`DB loaded from append only file: ${result.records} commands, ${result.bytes} bytes, ${result.segments} segment(s), ${(Date.now() - startedMs) / 1000} seconds`)
    }
    this.logRewriter.baseSizeBytes = this.registry.bitmapBytes() + this.appendLog.currentSizeBytes
    this.startLogCron()
  }

  private startLogCron(): void {
    if (this.logTimer !== undefined) return
    this.logTimer = setInterval(() => this.logCron(), 1000)
    this.logTimer.unref()
  }

  /**
   * CONFIG SET appendonly (redis aof.c startAppendOnly / stopAppendOnly).
   * - yes: a new segment after every one on disk and at or after the snapshot's log-from (so a
   *   start replays it), then a rewrite: the background snapshot the log follows, after any
   *   save already running. Until it commits, what was written while the log was off is only in
   *   memory, as in redis until its first rewrite ends.
   * - no: everything written and fsynced, then the log is closed; replies waiting on it go out.
   *   The next snapshot retires its segments. Records a failing disk would not take are dropped
   *   (with a warning): that is how an operator gets out of -MISCONF, as in redis.
   * @throws Error when the log cannot be opened
   */
  setAppendOnly(on: boolean): void {
    if (on === this.appendLog.isOpen) {
      this.config.appendonly = on
      return
    }
    if (on) {
      this.appendLog.openAt(Math.max(this.appendLog.nextSeqOnDisk() ?? 1, this.snapshots.logFrom ?? 1))
      this.config.appendonly = true
      this.logRewriter.baseSizeBytes = this.registry.bitmapBytes()
      this.logRewriter.baseWanted = true
      this.startLogCron()
      if (this.inTransaction) {
        // redis startAppendOnly in_exec: the rewrite is scheduled (logCron starts it).
        this.log.warning('AOF was enabled during a transaction. An AOF background was scheduled to start when possible.')
      } else if (this.logRewriter.start() === 'in-progress') {
        // That rewrite captured its data before the log was open: another one follows it.
        void this.logRewriter.idle().then(() => this.logRewriter.start())
      }
      this.log.notice('Append only file enabled (CONFIG SET appendonly yes)')
    } else {
      const unwritten = this.appendLog.bufferedBytes
      try {
        this.appendLog.close()
      } catch (error) {
        // As redis stopAppendOnly: turning the log off is the way out of a disk that refuses it.
        // The writes those records held are in memory, and in the next snapshot.
        this.log.warning(`Append only file closed with ${unwritten} bytes of records it could not take: ${(error as Error).message}`)
      }
      this.config.appendonly = false
      // redis stopAppendOnly: no rewrite is scheduled for a log that is off.
      this.logRewriter.baseWanted = false
      this.releaseSynced()
      this.log.notice('Append only file disabled (CONFIG SET appendonly no)')
    }
  }

  /** Once a second: the everysec fsync, and the automatic rewrite (redis serverCron). */
  private logCron(): void {
    this.appendLog.tick()
    const config = this.config
    if (!this.appendLog.isOpen) return
    if (this.appendLog.awaitsSnapshot && !this.logRewriter.inProgress && !this.snapshots.inProgress) {
      // Records the log could not take wait for a snapshot, and the one they were left to failed:
      // another every few seconds (backing off after repeated failures, as the automatic
      // rewrite does), so that a disk that comes back heals as a log retry would.
      const now = Date.now()
      if (this.snapshotRetryAtMs === 0) this.snapshotRetryAtMs = now + SAVE_RETRY_DELAY_MS
      else if (now >= this.snapshotRetryAtMs && !this.logRewriter.limited(now)) {
        this.snapshotRetryAtMs = 0
        this.log.notice('Records the append only file could not take still wait for a snapshot: rewriting')
        this.logRewriter.start()
      }
    } else if (this.logRewriter.baseRewriteDue()) {
      // The log was turned on and the rewrite under it failed: again, as redis does.
      this.log.notice('Starting the rewrite the append only file was turned on with, again')
      this.logRewriter.start()
    } else if (this.logRewriter.shouldAutoRewrite(config['auto-aof-rewrite-percentage'], config['auto-aof-rewrite-min-size'])) {
      this.log.notice(`Starting automatic rewriting of AOF on ${config['auto-aof-rewrite-percentage']}% growth`)
      this.logRewriter.start()
    }
  }

  parserLimits(): Partial<ParserLimits> {
    return DEFAULT_PARSER_LIMITS
  }

  inTransaction = false
  /** The records of the running transaction, copied (see {@link runTransaction}). */
  private transactionRecords: Buffer[][] = []

  runTransaction(run: () => void): void {
    this.inTransaction = true
    this.transactionRecords = []
    try {
      run()
    } finally {
      this.inTransaction = false
      const records = this.transactionRecords
      this.transactionRecords = []
      if (records.length === 1) this.propagate(records[0]!)
      else if (records.length > 1) {
        this.propagate(MULTI_RECORD)
        for (const record of records) this.propagate(record)
        this.propagate(EXEC_RECORD)
      }
    }
  }

  /**
   * Hands a write to the append-only log (with appendonly yes). The log encodes its record at
   * once, straight from the command's arguments, so they need not outlive this call;
   * inside EXEC they are copied and kept for {@link runTransaction}'s end.
   */
  propagate(argv: CommandArgs | readonly Uint8Array[]): void {
    if (!this.config.appendonly) return
    if (this.renamesCommands && argv instanceof CommandArgs) argv = this.underOriginalName(argv)
    if (this.inTransaction) {
      this.transactionRecords.push((argv instanceof CommandArgs ? argv.toArray() : [...argv]).map((arg) => Buffer.from(arg)))
      return
    }
    this.appendLog.append(argv)
    const writer = this.currentClient
    if (writer !== undefined) writer.logOffset = this.appendLog.appendedBytes
  }

  /**
   * A client's command as the log records it: under the command's original name, not a name
   * rename-command gave it, so a replay finds it whatever the renames are then (see
   * createReplaySession). Records bfs makes itself (BF.RESERVE, BF.LOAD, MULTI) already are.
   */
  private underOriginalName(argv: CommandArgs): CommandArgs | Buffer[] {
    const original = this.commands.originalName(argv.bytes(0), argv.start(0), argv.end(0))
    if (original === undefined) return argv
    const renamed = argv.toArray()
    renamed[0] = Buffer.from(original)
    return renamed
  }

  /**
   * SHUTDOWN [SAVE | NOSAVE], SIGTERM, SIGINT. As redis prepareForShutdown: when it saves and the
   * save fails, the shutdown is cancelled and the error text returned (the server keeps running).
   */
  shutdown(options: ShutdownOptions): string | undefined {
    if (this.closing !== undefined) return undefined
    const save = this.shutdownSaves(options)
    this.log.warning('User requested shutdown...')
    if (save && !this.snapshots.inProgress) {
      this.log.notice('Saving the final snapshot before exiting.')
      try {
        this.snapshots.saveSync(this.registry)
      } catch {
        this.log.warning("Error trying to save the DB, can't exit.")
        return 'ERR Errors trying to SHUTDOWN. Check logs.'
      }
    }
    // close() saves what changed since, if anything (a running BGSAVE's share, which it aborts).
    this.close(options).then(
      () => this.emit('shutdown'),
      () => this.emit('shutdown', 1),
    )
    return undefined
  }

  /**
   * Stops listening, closes every client after its pending replies, and resolves when done. Saves
   * the snapshot first when save rules are set (or options.save), unless options.noSave; rejects
   * when that save fails (everything else is closed all the same).
   */
  close(options: ShutdownOptions = {}): Promise<void> {
    if (this.closing === undefined) {
      this.closing = (async () => {
        let saveError: unknown
        clearInterval(this.housekeepingTimer)
        clearInterval(this.saveTimer)
        // A listener's close callback waits for every connection to end: wait for it last.
        const listenersClosed = Promise.all(this.tcpServers.map((listener) => new Promise<void>((resolve) => listener.close(() => resolve()))))
        await this.http?.close()
        // Every acknowledged write on disk before the last replies go out.
        if (this.logTimer !== undefined) clearInterval(this.logTimer)
        await this.logRewriter.idle()
        // A running BGSAVE stops at its next slice; the final save below writes what it had not committed.
        await this.snapshots.abortBackground()
        // Nothing changed since the last save (SHUTDOWN and the signals save just before): no second save.
        if (this.shutdownSaves(options) && this.snapshots.loaded && this.registry.dirty > 0) {
          try {
            this.snapshots.saveSync(this.registry)
          } catch (error) {
            saveError = error
            this.log.warning(`Error saving the final snapshot: ${(error as Error).message}`)
          }
        }
        let logClosed = true
        try {
          this.appendLog.close()
        } catch (error) {
          logClosed = false
          this.log.warning(`Error closing the append only file: ${(error as Error).message}`)
        }
        // Closing released what its last write and fsync made durable. What still waits was
        // refused by the disk: those replies are never sent (their clients are closed instead).
        const waiting = [...this.awaitingLog.values()]
        this.awaitingLog.clear()
        for (const waiter of waiting) waiter.release(logClosed)
        for (const client of this.clientSet) {
          // Replies to what was already read go out; input after this point is not run (a
          // command run after socket.end() could never be answered).
          client.closeAfterReply()
          client.flush()
          client.socket.end()
        }
        const deadline = setTimeout(() => {
          for (const client of this.clientSet) client.kill()
        }, 2000)
        deadline.unref()
        while (this.clientSet.size > 0) await new Promise((resolve) => setTimeout(resolve, 5))
        clearTimeout(deadline)
        await listenersClosed
        if (saveError !== undefined) throw saveError
        this.log.notice('bfs is now ready to exit, bye bye...')
      })()
    }
    return this.closing
  }
}

/** Makes a server (not yet listening: call start()). */
export function createServer(options: ServerOptions = {}): BfsServer {
  return new BfsServer(options)
}
