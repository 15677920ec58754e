/**
 * createServer(): the TCP listener(s), the clients, the filters and the command table, tied
 * together. Everything a handler reaches goes through the ServerContext this class implements.
 */
import net from 'node:net'
import { EventEmitter } from 'node:events'
import { prepareDataDirectory } from '../store/owned-files.js'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { Client, PUSH_TO_CLIENT, type ClientHost, type ClientSocket } from './client.js'
import { availableParallelism } from 'node:os'
import { resolveIoThreads } from '../runtime/io-threads-setting.js'
import type { IoThreads } from './io-threads.js'
import { ThreadPlane } from './thread-plane.js'
import { DEFAULT_CONFIG, type Config } from '../runtime/config.js'
import { Stats } from '../runtime/stats.js'
import { CommandTimer } from '../commands/state/command-timer.js'
import { SlowLog } from '../commands/state/slowlog.js'
import type { AclUsers } from '../commands/state/acl/acl-users.js'
import { loadUsersAtStart } from '../commands/state/acl/acl-startup.js'
import { MonitorHub } from '../commands/state/monitor-hub.js'
import { usedMemory } from '../commands/admin/info.js'
import { createLogger, type Logger } from '../runtime/logger.js'
import type { FilterRegistry } from '../store/registry.js'
import { type Databases, databasesFor } from '../store/databases.js'
import type { ClientSession, CommandEntry } from '../commands/kernel/context.js'
import { defineCommand, defineTable, type CommandDefinition, type CommandTable } from '../commands/kernel/table.js'
import { BUILTIN_COMMANDS } from '../commands/builtin.js'
import { DEFAULT_PARSER_LIMITS, type ParserLimits } from '../protocol/request-parser.js'
import { applyRenames } from './rename-command.js'
import {
  checkOpenFiles,
  isLocalPeer,
  openBindWarning,
  protectedModeRefuses,
  readOpenFilesLimit,
} from './startup-checks.js'
import { openListeners } from './open-listeners.js'
import type { TlsPort } from './tls-listeners.js'
import { checkTlsConfig, tlsEnabled } from '../runtime/tls-context.js'
import { ERR } from '../commands/kernel/reply-error.js'
import { closeIdleClients } from './idle-sweep.js'
import { MemoryGuard } from '../store/memory-guard.js'
import { loadedOverLimits } from '../commands/kernel/filter-budget.js'
import { WatchedKeys } from '../commands/state/watched-keys.js'
import { Persistence, type LogReplay, type PropagateTargets } from '../store/persistence.js'
import { ReplicationState } from '../replication/replication-state.js'
import { PubSubHub } from '../commands/state/pubsub-hub.js'
import { MasterSide } from '../replication/master-side.js'
import { createReplaySession } from './log-session.js'
import { ReplicaLink } from '../replication/replica-link.js'
import { replicaLinkHost } from './replica-wiring.js'
import type { HttpFrontend } from '../http/http-server.js'
import { CommandArgs } from '../protocol/command-args.js'
import { KeyExpiry } from './key-expiry.js'
import { LatencyMonitor } from '../runtime/latency-monitor.js'
import { EventLoopLatency } from './event-loop-latency.js'
import { ClientPause } from '../commands/state/client-pause.js'
import { openClusterState, startClusterGossip, type ClusterGossip, type ClusterState } from './cluster-wiring.js'

/** The cron's tick (redis serverCron at hz 10): the `save` rules are checked at each. */
const CRON_INTERVAL_MS = 100
/** Ticks between runs of the once-a-second work: housekeeping, and the log's cron. */
const CRON_TICKS_PER_SECOND = 10

export { BFS_VERSION, REDIS_VERSION } from '../runtime/version.js'

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
  /** Every database (store/databases.ts); `registry` is database 0 always (SWAPDB swaps keys, not registries). */
  readonly databases: Databases
  readonly registry: FilterRegistry
  readonly watchedKeys = new WatchedKeys()
  readonly stats = new Stats()
  readonly timer = new CommandTimer()
  readonly slowlog = new SlowLog()
  readonly commands: CommandTable
  readonly log: Logger
  /** The ACL users (requirepass, `user` lines or the aclfile) and ACL LOG. */
  readonly acl: AclUsers
  startedAtMs = Date.now()
  readonly runId = randomBytes(20).toString('hex')
  private readonly tcpServers: net.Server[] = []
  private readonly clientSet = new Set<Client>()
  private nextClientId = 1
  private boundPort = 0
  private tls: TlsPort | undefined // tls-port's listeners (the main thread's or the I/O threads')
  private ioThreads: IoThreads | undefined // io-threads > 1: the threads serving the plaintext port
  /** io-threads > 1: the checks the I/O threads answer themselves (thread-plane.ts). */
  threadPlane: ThreadPlane | undefined
  /** `io-threads` as configured (0: auto); the config holds the count it resolved to once started. */
  ioThreadsConfigured: number
  private http: HttpFrontend | undefined
  private closing: Promise<void> | undefined
  /** Whether rename-command renamed anything: the log then renames client commands back (propagate). */
  private readonly renamesCommands: boolean
  private cronTimer: NodeJS.Timeout | undefined
  /** Ticks of the cron so far (redis cronloops). */
  private cronLoops = 0
  /** The snapshot, the append-only log and the durability gate of replies (store/persistence.ts). */
  readonly persistence: Persistence
  /** The replication ids, offset and stream (replication/replication-state.ts). */
  readonly replication = new ReplicationState()
  /** Pub/sub subscriptions; a message goes out with the turn's replies, within the subscriber's output limit. */
  readonly pubsub = new PubSubHub(PUSH_TO_CLIENT)
  /** MONITOR's clients: its lines go out with the turn's replies, within the monitor's output limit. */
  readonly monitors = new MonitorHub(PUSH_TO_CLIENT)
  /** LATENCY's events (runtime/latency-monitor.ts), and the event loop's delay feeding one of them. */
  readonly latency = new LatencyMonitor(() => this.config['latency-monitor-threshold'])
  private readonly eventLoopLatency = new EventLoopLatency(this.latency)
  readonly pause = new ClientPause()
  activeExpireEnabled = true
  cluster: ClusterState | undefined = undefined // cluster-enabled yes: made at start()
  private clusterGossip: ClusterGossip | undefined
  /** The master's side of replication: replicas, backlog, full syncs, WAIT. */
  readonly masterSide: MasterSide
  /** The link to this node's master while it is a replica (replication/replica-link.ts). */
  readonly replicaLink: ReplicaLink
  /** The master link's client, listed with the others (CLIENT LIST flag M). */
  private masterClient: ClientSession | undefined
  /** The client whose read is being run (set by the client), so that its writes are its own. */
  currentClient: Client | undefined = undefined
  // Clients with replies to send at this turn's end, after every read of it (redis beforeSleep's
  // handleClientsWithPendingWrites): a process with many connections is woken once per turn.
  private readonly flushQueue: Client[] = []
  private flushScheduled = false
  private readonly flushQueueNow = (): void => this.flushQueued()
  /** Lazy and active expiry of keys, by role (key-expiry.ts). */
  private readonly expiry: KeyExpiry
  /** A held reply's end: sent once its records are durable; never, and the client closed, when they will not be. */
  private readonly releaseReply = (client: Client, durable: boolean): void =>
    durable ? this.queueFlush(client) : client.kill()

  constructor(options: ServerOptions = {}) {
    super()
    this.config = { ...DEFAULT_CONFIG, ...options.config }
    this.ioThreadsConfigured = this.config['io-threads']
    this.databases = databasesFor(this.config)
    this.registry = this.databases.db(0)
    this.configFile =
      options.configFile === undefined || options.configFile === '' ? '' : path.resolve(options.configFile)
    this.log = createLogger({ level: () => this.config.loglevel, file: this.config.logfile, sink: options.logSink })
    this.commands = defineTable([...BUILTIN_COMMANDS, ...(options.commands ?? []).map(defineCommand)])
    applyRenames(this.commands, this.config['rename-command'])
    this.acl = loadUsersAtStart(this.commands, this.config)
    this.renamesCommands = this.config['rename-command'].length > 0
    this.persistence = new Persistence({
      config: this.config,
      databases: this.databases,
      log: this.log,
      currentWriter: () => this.currentClient,
      replicationPosition: () => ({
        replid: this.replication.replid,
        offset: this.replication.masterReplOffset,
        db: this.masterClient?.db ?? this.replication.streamDb,
      }),
      latency: this.latency,
    })
    this.expiry = new KeyExpiry(this)
    this.masterSide = new MasterSide({
      replication: this.replication,
      databases: this.databases,
      config: this.config,
      log: this.log,
      stats: this.stats,
    })
    this.persistence.replicaFeed = this.masterSide
    this.replicaLink = new ReplicaLink(
      replicaLinkHost(this, {
        unblockAll: (text) => this.masterSide.unblockAll(text),
        newHistory: () => this.masterSide.createBacklog(),
        ensureBacklog: () => {
          if (this.masterSide.backlog === undefined) this.masterSide.createBacklog()
        },
        becameMaster: () => this.masterSide.requestSelect(),
        disconnectReplicas: () => this.masterSide.disconnectReplicas(),
      }),
    )
    // redis syncCommand: a replica whose own link is down refuses a sub-replica's sync.
    this.masterSide.syncRefusal = () =>
      this.replication.role === 'replica' && this.replicaLink.state !== 'connected'
        ? "NOMASTERLINK Can't SYNC while not connected with my master"
        : undefined
  }

  allocateClientId = (): number => this.nextClientId++
  setMasterClient = (client: ClientSession | undefined): void => void (this.masterClient = client)

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

  /** The TLS port actually bound (0 without one). */
  get tlsPort(): number {
    return this.tls?.port ?? 0
  }

  /** CONFIG SET of a TLS key: new TLS connections use `next` (no-op without a TLS port, as redis applyTlsCfg). @throws TlsConfigError, the old context kept */
  reconfigureTls(next: Config): void {
    const setup = tlsEnabled(next) ? checkTlsConfig(next) : undefined
    this.http?.reconfigureTls(next) // checked before anything changes
    if (setup !== undefined) this.tls?.reconfigure(setup)
  }

  /** HTTP port actually bound (0 when http-port is 0, i.e. off). */
  get httpPort(): number {
    return this.http?.port ?? 0
  }

  /** Connections to the TLS port still in their handshake (every I/O thread's). */
  get tlsHandshakes(): number {
    return this.tls?.handshakes ?? 0
  }

  /** Open HTTP connections. */
  get httpClientCount(): number {
    return this.http?.clientCount ?? 0
  }

  /** Creates the data directory (refusing a clash of bfs's own files), loads what is on disk, then accepts connections. */
  async start(): Promise<void> {
    this.startedAtMs = Date.now()
    prepareDataDirectory(this.config, this.configFile)
    if (this.config['cluster-enabled']) this.cluster = openClusterState(this, this.registry)
    // Cluster mode: nodes.conf says whom a node replicates, not a replicaof line (stale after a takeover).
    if (this.cluster !== undefined) this.config.replicaof = ''
    await this.persistence.load(() => this.replaySession())
    // A replica by config is one from the first moment: it deletes no expired key itself (its
    // master's DEL does) and continues the position its snapshot recorded.
    if (this.config.replicaof !== '') this.replication.role = 'replica'
    this.resumeReplication()
    const expired = this.expiry.loaded()
    if (expired > 0) this.log.notice(`Deleted ${expired} key(s) that expired while the server was down`)
    for (const line of loadedOverLimits(this.databases, this.config.maxmemory, this.config['max-filter-bytes']))
      this.log.warning(line)
    this.cronTimer = setInterval(() => this.cron(Date.now()), CRON_INTERVAL_MS)
    this.cronTimer.unref()
    const fds = checkOpenFiles(this.config.maxclients, readOpenFilesLimit())
    for (const line of fds.warnings) this.log.warning(line)
    this.config.maxclients = fds.maxclients
    const io = resolveIoThreads(this.config['io-threads'], availableParallelism(), process.versions.node)
    if (io.warning !== undefined) this.log.warning(io.warning)
    this.config['io-threads'] = io.threads
    if (io.threads > 1)
      this.threadPlane = new ThreadPlane(this, io.threads - 1, (thread, message) =>
        this.ioThreads?.post(thread, message),
      )
    const open = await openListeners(this.config, this.log, this.cluster !== undefined, {
      accept: (socket, unix) => this.accept(socket, unix),
      clientCount: () => this.clientSet.size,
      stats: this.stats,
      ioThreads: io.threads,
      threadPlane: this.threadPlane,
    }).catch((error: unknown) => {
      this.threadPlane?.stop()
      this.threadPlane = undefined
      throw error
    })
    this.tcpServers.push(...open.listeners)
    this.tls = open.tls
    this.ioThreads = open.threads
    this.boundPort = open.port
    if (this.config['http-port'] !== 0) {
      // "" = the addresses RESP listens on.
      const httpBind = this.config['http-bind'].trim() === '' ? open.hosts.join(' ') : this.config['http-bind']
      // Loaded only when asked for: node:http and prom-client cost a few MB of RSS for nothing otherwise.
      const { HttpFrontend } = await import('../http/http-server.js')
      this.http = new HttpFrontend(this)
      const httpAddresses = httpBind.split(/\s+/).filter((address) => address !== '')
      // The HTTP listener takes /add= from anyone who can reach it (no protected mode): warned
      // about unless RESP's warning already named the same addresses.
      const httpWarning =
        this.config['http-bind'].trim() === '' && !this.config['protected-mode']
          ? undefined
          : openBindWarning(httpAddresses, this.config.requirepass)
      if (httpWarning !== undefined) this.log.warning(`HTTP ${httpWarning}`)
      await this.http.listen(httpAddresses, this.config['http-port'])
    }
    if (this.cluster !== undefined) this.clusterGossip = startClusterGossip(this.cluster)
    this.log.notice('Ready to accept connections tcp')
    const master = this.config.replicaof.split(' ')
    if (master.length === 2) this.replicaLink.setMaster(master[0]!, Number(master[1]), { atStart: true })
  }

  /** Whether a shutdown saves: SAVE forces it, NOSAVE forbids it, else with save rules set or on a
   * replica (its final snapshot records the replication position: a restart continues with PSYNC). */
  private shutdownSaves(options: ShutdownOptions): boolean {
    if (options.noSave) return false
    return options.save === true || this.config.save.trim() !== '' || this.replication.role === 'replica'
  }

  /** The replication id and offset the loaded data is at (the snapshot's, when nothing was replayed over
   * it): this node's again, and, on a replica, the history its PSYNC continues (redis: from its RDB). */
  private resumeReplication(): void {
    const position = this.persistence.loadedPosition
    if (position === undefined) return
    this.replication.restore(position)
    this.replicaLink.hasHistory = true
    this.log.notice(`Replication id and offset restored from the snapshot: ${position.replid}:${position.offset}`)
  }

  /** Whether the dataset is still being loaded from disk (the persistence's flag). */
  get loading(): boolean {
    return this.persistence.loading
  }

  set loading(loading: boolean) {
    this.persistence.loading = loading
  }

  /**
   * The one cron (redis serverCron), every {@link CRON_INTERVAL_MS} on one unref'd timer: at each
   * tick persistence's periodic work (the save rules; once a second the everysec fsync, the
   * automatic rewrite and its retries), and once a second {@link housekeeping}.
   */
  private cron(nowMs: number): void {
    if (this.closing !== undefined) return
    const everySecond = ++this.cronLoops % CRON_TICKS_PER_SECOND === 0
    if (everySecond) {
      this.housekeeping(nowMs)
      this.replicaLink.cron(nowMs)
    }
    if (this.activeExpireEnabled) this.expiry.cron(this.config['active-expire-effort'], CRON_TICKS_PER_SECOND)
    // No save while DEBUG RELOAD refills the dataset.
    // The I/O threads' adds counted in first: the save rules look at the changes since the last save.
    this.threadPlane?.fold()
    if (!this.loading) this.persistence.cron(nowMs, everySecond)
    // What the threads may do changes with time too (a replica's acknowledgement ages).
    this.threadPlane?.recheck()
    this.stats.sample(nowMs, usedMemory())
    this.eventLoopLatency.tick()
  }

  /** Once a second: close idle clients (`timeout`) and those past the soft output limit for too long,
   * drop BFS.RESTORE-PART stagings abandoned for minutes, and recount filter memory (`maxmemory`). */
  private housekeeping(nowMs: number): void {
    const closed = closeIdleClients(this.clientSet, nowMs, this.config.timeout)
    if (closed > 0) this.log.verbose(`Closing idle client (${closed})`)
    // Closing removes a client from the set; a Set's iteration goes on past deleted entries.
    for (const client of this.clientSet) client.recheckOutputLimit()
    MemoryGuard.of(this.databases).housekeeping(nowMs, this.config.maxmemory)
    this.masterSide.cron()
  }

  /** A new connection: its Client, or undefined when it is refused. */
  private accept(socket: ClientSocket, unix: boolean): Client | undefined {
    this.stats.connectionsReceived++
    if (this.closing !== undefined) {
      socket.destroy()
      return undefined
    }
    // redis networking.c acceptCommonHandler's refusals: one error line, then closed.
    const refusal = protectedModeRefuses(
      this.config['protected-mode'],
      this.acl.get('default')?.nopass === true,
      isLocalPeer(socket.remoteAddress, unix),
    )
      ? `-${ERR.PROTECTED_MODE_DENIED}\r\n`
      : this.clientSet.size >= this.config.maxclients
        ? '-ERR max number of clients reached\r\n'
        : undefined
    if (refusal !== undefined) {
      this.stats.rejectedConnections++
      socket.on('error', () => {})
      socket.end(refusal)
      return undefined
    }
    const client = new Client(this.nextClientId++, socket, this, unix ? this.config.unixsocket : undefined)
    this.clientSet.add(client)
    this.threadPlane?.clientsChanged(this.clientSet.size)
    return client
  }

  *clients(): Iterable<ClientSession> {
    yield* this.clientSet
    if (this.masterClient !== undefined) yield this.masterClient
  }

  get clientCount(): number {
    return this.clientSet.size
  }

  removeClient(client: Client): void {
    this.clientSet.delete(client)
    this.threadPlane?.clientsChanged(this.clientSet.size)
    // A held reply nobody will read waits for nothing.
    this.persistence.forget(client)
    this.watchedKeys.unwatchAll(client)
    this.pubsub.unsubscribeAll(client)
    this.monitors.remove(client)
    this.masterSide.peerGone(client)
    this.pause.forget(client)
  }

  /** The client's replies are ready: sent at the end of the turn, unless the durability gate holds them (store/durability-gate.ts). */
  replyReady(client: Client): void {
    if (this.persistence.holdsReply(client, this.releaseReply)) return
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
    if (this.activeExpireEnabled) this.expiry.beforeSleep(this.config['active-expire-effort'], CRON_TICKS_PER_SECOND)
    // This turn's log records go first (redis beforeSleep: flushAppendOnlyFile, then the writes to
    // clients), so the replies waiting for them join this same pass (the loop sees clients queued
    // meanwhile; the extra turn that queueing schedules then finds nothing to do).
    this.persistence.flush()
    const queue = this.flushQueue
    for (let i = 0; i < queue.length; i++) {
      const client = queue[i]!
      client.flushQueued = false
      client.flush()
    }
    queue.length = 0
  }

  /** The log's replay at start: through the real commands, as redis loads its AOF with a fake client. */
  private replaySession(): LogReplay {
    const session = createReplaySession(this)
    return {
      run: (argv, file, offset) => {
        if (session.commands.get(argv[0]!.toString('latin1').toLowerCase()) === undefined) {
          throw new Error(
            `Unknown command '${argv[0]!.toString('latin1')}' reading the append only file ${file} at offset ${offset}`,
          )
        }
        return session.run(argv, file)
      },
      finish: () => session.finish(),
    }
  }

  propagate(argv: CommandArgs | readonly Uint8Array[], targets?: PropagateTargets): void {
    if (this.renamesCommands && argv instanceof CommandArgs) argv = this.underOriginalName(argv)
    this.persistence.propagate(argv, targets)
  }

  parserLimits(): Partial<ParserLimits> {
    const maxBulkBytes = this.config['proto-max-bulk-len']
    return maxBulkBytes === DEFAULT_PARSER_LIMITS.maxBulkBytes
      ? DEFAULT_PARSER_LIMITS
      : { ...DEFAULT_PARSER_LIMITS, maxBulkBytes }
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
    if (save && !this.persistence.saveBeforeShutdown()) return ERR.SHUTDOWN_FAILED
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
        clearInterval(this.cronTimer)
        this.threadPlane?.shut()
        this.eventLoopLatency.stop()
        this.pause.close()
        this.replicaLink.close()
        this.clusterGossip?.stop()
        // A listener's close callback waits for every connection to end: wait for it last.
        const listenersClosed = Promise.all([
          ...this.tcpServers.map((listener) => new Promise<void>((resolve) => listener.close(() => resolve()))),
          ...(this.tls?.close() ?? []),
          this.ioThreads?.stopListening(),
        ])
        await this.http?.close()
        // The final save, the log's last write and fsync, and the release of what waited on it.
        const saveError = await this.persistence.close(this.shutdownSaves(options))
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
        await this.ioThreads?.terminate()
        this.threadPlane?.stop()
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
