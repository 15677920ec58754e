/**
 * Persistence: everything that decides when a write is durable, behind one object the server
 * talks to (server.ts keeps the sockets, the clients, the reply flush and shutdown).
 *
 * What lives where:
 * - loading at start: the snapshot, then the append-only log replayed through the real commands
 *   (the server passes that replay in, {@link LogReplay}: dispatch is above this layer);
 * - {@link Persistence.propagate}: every applied write, in order, as a record of the log (EXEC's
 *   batched by {@link Persistence.runTransaction});
 * - the durability gate that holds replies until the log holds what they may show
 *   (durability-gate.ts; {@link Persistence.holdsReply}, {@link Persistence.whenDurable});
 * - `appendonly` on and off ({@link Persistence.setAppendOnly});
 * - the periodic work, run by the server's one cron ({@link Persistence.cron}): the save rules,
 *   the everysec fsync, the automatic rewrite and the retries of what failed;
 * - the -MISCONF refusal of writes (disk-error.ts) and INFO persistence (persistence-info.ts),
 *   both read through {@link PersistenceParts} (persistence-parts.ts);
 * - the final save and the log's close at shutdown ({@link Persistence.close}).
 * The parts: snapshot.ts (the snapshot), append-log.ts (the log), log-rewrite.ts (BGREWRITEAOF
 * and the automatic rewrite), save-schedule.ts (the `save` rules).
 *
 * Replication attaches here: {@link Persistence.propagate} hands every record the log gets to the
 * replicas' stream as well ({@link ReplicaFeed}, replication/master-side.ts), in the same order
 * (a transaction's between MULTI and EXEC).
 */
import type { LatencyMonitor } from '../runtime/latency-monitor.js'
import { AppendLog, listSegments } from './append-log.js'
import { LogRewriter } from './log-rewrite.js'
import { SnapshotStore } from './snapshot.js'
import { SAVE_RETRY_DELAY_MS } from './save-schedule.js'
import type { Databases } from './databases.js'
import type { Logger } from '../runtime/logger.js'
import { DurabilityGate, type LogWriter } from './durability-gate.js'
import { diskErrorRefusal } from './disk-error.js'
import { aofInfoFields, persistenceInfo } from './persistence-info.js'
import type { PersistenceConfig, PersistenceParts } from './persistence-parts.js'
import { CommandArgs } from '../protocol/command-args.js'
import type { ReplicationPosition } from '../format/manifest.js'

export type { LogWriter } from './durability-gate.js'
export type { PersistenceConfig } from './persistence-parts.js'

/** Where a propagated command goes (redis PROPAGATE_AOF / PROPAGATE_REPL): PUBLISH goes only to replicas. */
export interface PropagateTargets {
  readonly log: boolean
  readonly replicas: boolean
}
export const ALL_TARGETS: PropagateTargets = Object.freeze({ log: true, replicas: true })
export const REPLICAS_ONLY: PropagateTargets = Object.freeze({ log: false, replicas: true })

/**
 * The replication stream's share of {@link Persistence.propagate} (replication/master-side.ts: it
 * is above this layer, so the server plugs it in): every record the log gets also goes there, in
 * the same order, while it wants records (a master with a backlog).
 */
export interface ReplicaFeed {
  readonly wantsRecords: boolean
  /**
   * One record of database `db` (the stream says SELECT first when it changes, as redis's);
   * `encoded[start, end)`: its bytes as the log just encoded them (valid during the call), if it did.
   */
  feedRecord(
    argv: CommandArgs | readonly Uint8Array[],
    db: number,
    encoded?: Buffer,
    start?: number,
    end?: number,
  ): void
}

const MULTI_RECORD = [Buffer.from('MULTI')]
const EXEC_RECORD = [Buffer.from('EXEC')]

/** The replay of the log at start, through the real commands (the server's dispatch). */
export interface LogReplay {
  /**
   * Runs one logged command of segment `file`; returns its error text, if it answered with one.
   * @throws Error for a command the server does not know (the start stops)
   */
  run(argv: Buffer[], file: string, offset: number): string | undefined
  /** The end of the log (a MULTI left open there is dropped). */
  finish(): void
}

export interface PersistenceOptions {
  config: PersistenceConfig
  databases: Databases
  log: Logger
  /** The client whose command is running, if any: its writes set its {@link LogWriter.logOffset}. */
  currentWriter: () => LogWriter | undefined
  /** The replication position of the data now, which SAVE and the final save record. */
  replicationPosition?: () => ReplicationPosition
  /** LATENCY's monitor, for the log's `aof-write` and `aof-fsync-always` events. */
  latency?: LatencyMonitor
}

export class Persistence implements PersistenceParts {
  readonly config: PersistenceConfig
  readonly databases: Databases
  /** Whether the dataset is still being loaded from disk (commands without the loading flag are refused). */
  loading = false
  /** The snapshot in `dir`: loaded by start(), saved by SAVE/BGSAVE, the save rules and shutdown. */
  readonly snapshots: SnapshotStore
  /** The append-only log: open while appendonly is yes. */
  readonly appendLog: AppendLog
  readonly logRewriter: LogRewriter
  private readonly gate: DurabilityGate
  private readonly log: Logger
  private readonly currentWriter: () => LogWriter | undefined
  /** When logCron starts another snapshot for records left to a failed one (0: none planned). */
  private snapshotRetryAtMs = 0
  /**
   * The replication position the loaded data is exactly at: the snapshot's (a SAVE's or the
   * final save's), when nothing was replayed from the log over it. Undefined otherwise (the data
   * may be past it: a replica then resyncs in full).
   */
  loadedPosition: ReplicationPosition | undefined
  private readonly replicationPosition: (() => ReplicationPosition) | undefined
  /** Whether EXEC's commands are running ({@link runTransaction}). */
  inTransaction = false
  /**
   * The database what is propagated now belongs to when {@link propagate} is given none: dispatch
   * sets it to the running command's client's (redis propagates with c->db->id).
   */
  db = 0
  /** The records of the running transaction, copied, with where each goes (see {@link runTransaction}). */
  private transactionRecords: { argv: Buffer[]; targets: PropagateTargets; db: number }[] = []
  /** The replicas' stream, when the server has replication (see {@link ReplicaFeed}). */
  replicaFeed: ReplicaFeed | undefined = undefined
  /**
   * Whether the `save` rules and the automatic rewrite wait (asked at each tick): set by
   * commands/migration/restore-part.ts, true while a transfer in parts is staging. A snapshot taken then
   * would leave its parts out of the log, and its commit would have to log the whole filter again.
   */
  holdAutomaticSaves: (() => boolean) | undefined = undefined

  constructor(options: PersistenceOptions) {
    this.config = options.config
    this.databases = options.databases
    this.log = options.log
    this.currentWriter = options.currentWriter
    this.replicationPosition = options.replicationPosition
    this.snapshots = new SnapshotStore({
      replicationPosition: options.replicationPosition,
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
        holdsEveryWrite: () =>
          this.config.appendonly && listSegments(this.config.dir, this.config.appendfilename)[0]?.seq === 1,
      },
    })
    this.appendLog = new AppendLog({
      dir: this.config.dir,
      baseName: this.config.appendfilename,
      fsyncPolicy: () => this.config.appendfsync,
      log: this.log,
      onProgress: () => this.gate.releaseSynced(),
      latency: options.latency,
    })
    this.gate = new DurabilityGate(this.appendLog)
    this.logRewriter = new LogRewriter(this.appendLog, this.databases, this.snapshots, this.log)
  }

  /** Loads what is on disk: the snapshot, then the log replayed over it through `replay`. */
  async load(replay: () => LogReplay): Promise<void> {
    await this.loadSnapshot()
    // Snapshot load runs above this line; the log holds what came after the snapshot.
    const replayed = this.loadAppendLog(replay)
    this.loadedPosition = replayed === 0 ? this.snapshots.replicationPosition : undefined
  }

  /**
   * Loads the snapshot before any client can connect (redis loads its RDB before listening). A
   * corrupt file rejects, naming it, unless snapshot-on-corrupt is move-aside.
   */
  private async loadSnapshot(): Promise<void> {
    this.loading = true
    try {
      const report = await this.snapshots.loadAll(this.databases)
      const seconds = (report.ms / 1000).toFixed(3)
      this.log.notice(
        `DB loaded from disk: ${report.filters} filters, ${report.bytes} bytes, ${Math.round(report.ms)} ms (${seconds} seconds)`,
      )
    } finally {
      this.loading = false
    }
  }

  /** Replays the log through the real commands, then keeps it open for appending (appendonly yes); returns the records replayed. */
  private loadAppendLog(replay: () => LogReplay): number {
    if (!this.config.appendonly) {
      // As redis does with appendonly no: the log is not read. Say so, since the next snapshot
      // becomes the truth and retires those segments.
      const next = this.appendLog.nextSeqOnDisk()
      if (next !== undefined) {
        this.log.warning(
          `appendonly is no: the append only file segments in ${this.config.dir} are not loaded, and the next snapshot retires them`,
        )
      }
      return 0
    }
    const startedMs = Date.now()
    const session = replay()
    let errors = 0
    const result = this.appendLog.load(
      (argv, file, offset) => {
        const error = session.run(argv, file, offset)
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
    if (errors > 0)
      this.log.notice(
        `${errors} command(s) of the append only file answered an error while loading (the first 10 at loglevel verbose)`,
      )
    if (result.segments > 0) {
      this.log.notice(
        `DB loaded from append only file: ${result.records} commands, ${result.bytes} bytes, ${result.segments} segment(s), ${(Date.now() - startedMs) / 1000} seconds`,
      )
    }
    this.logRewriter.baseSizeBytes = this.databases.bitmapBytes() + this.appendLog.currentSizeBytes
    return result.records
  }

  /**
   * Resolves once everything appended to the log so far is durable under the fsync policy (at
   * once when it already is, or when the log is off): a front end that answers outside RESP
   * (HTTP) waits on it as RESP replies do. While the log cannot be written, only up to
   * `ownOffset`, the log offset past the caller's own records (0: it wrote none). Resolves
   * false instead when they never will be: the server shut down with the disk refusing them.
   */
  whenDurable(ownOffset?: number): Promise<boolean> {
    return this.gate.whenDurable(ownOffset)
  }

  /**
   * Whether a client's ready replies must wait for the log (the durability gate: see
   * {@link DurabilityGate.holds}); `release` is then called once, later.
   */
  holdsReply<C extends LogWriter>(client: C, release: (client: C, durable: boolean) => void): boolean {
    return this.gate.holds(client, release)
  }

  /** A client is gone: its held replies wait for nothing. */
  forget(client: LogWriter): void {
    this.gate.forget(client)
  }

  /** Writes this turn's log records (the server calls it before sending the turn's replies). */
  flush(): void {
    this.appendLog.flush()
  }

  /** The -MISCONF text a write must be refused with now, or undefined when writes may run (disk-error.ts). */
  writeRefusal(): string | undefined {
    return diskErrorRefusal(this)
  }

  /** INFO persistence: loading, the rdb_* fields, then the aof_* block, as redis 7.0 prints them. */
  infoFields(): (readonly [string, string | number])[] {
    return [...persistenceInfo(this), ...aofInfoFields(this)]
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
      this.logRewriter.baseSizeBytes = this.databases.bitmapBytes()
      this.logRewriter.baseWanted = true
      if (this.inTransaction) {
        // redis startAppendOnly in_exec: the rewrite is scheduled (logCron starts it).
        this.log.warning(
          'AOF was enabled during a transaction. An AOF background was scheduled to start when possible.',
        )
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
        this.log.warning(
          `Append only file closed with ${unwritten} bytes of records it could not take: ${(error as Error).message}`,
        )
      }
      this.config.appendonly = false
      // redis stopAppendOnly: no rewrite is scheduled for a log that is off.
      this.logRewriter.baseWanted = false
      this.gate.releaseSynced()
      this.log.notice('Append only file disabled (CONFIG SET appendonly no)')
    }
  }

  /**
   * Persistence's share of the server's cron: the `save` rules at every tick (redis serverCron at
   * hz 10), and once a second (`everySecond`) {@link logCron}.
   */
  cron(nowMs: number, everySecond: boolean): void {
    if (this.holdAutomaticSaves?.() !== true) this.snapshots.tick(this.databases, this.config.save, nowMs)
    if (everySecond) this.logCron(nowMs)
  }

  /** Once a second: the everysec fsync, and the automatic rewrite (redis serverCron). */
  private logCron(nowMs: number): void {
    this.appendLog.tick()
    const config = this.config
    if (!this.appendLog.isOpen) return
    if (this.appendLog.awaitsSnapshot && !this.logRewriter.inProgress && !this.snapshots.inProgress) {
      // Records the log could not take wait for a snapshot, and the one they were left to failed:
      // another every few seconds (backing off after repeated failures, as the automatic
      // rewrite does), so that a disk that comes back heals as a log retry would.
      const now = nowMs
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
    } else if (
      this.holdAutomaticSaves?.() !== true &&
      this.logRewriter.shouldAutoRewrite(config['auto-aof-rewrite-percentage'], config['auto-aof-rewrite-min-size'])
    ) {
      this.log.notice(`Starting automatic rewriting of AOF on ${config['auto-aof-rewrite-percentage']}% growth`)
      this.logRewriter.start()
    }
  }

  /**
   * Runs EXEC's commands: the log records they make are written together at the end, between
   * MULTI and EXEC when there are two or more (redis propagates a transaction so), and background
   * saves and rewrites they start wait until it is over, so that no snapshot sees half of it.
   */
  runTransaction(run: () => void): void {
    this.inTransaction = true
    this.transactionRecords = []
    try {
      run()
    } finally {
      this.inTransaction = false
      const records = this.transactionRecords
      this.transactionRecords = []
      if (records.length === 1) this.propagate(records[0]!.argv, records[0]!.targets, records[0]!.db)
      else if (records.length > 1) {
        // redis 7.0 propagatePendingCommands: MULTI in the first command's database (so a SELECT
        // goes before it), EXEC in the last one's (so none goes before it).
        this.propagate(MULTI_RECORD, undefined, records[0]!.db)
        for (const record of records) this.propagate(record.argv, record.targets, record.db)
        this.propagate(EXEC_RECORD, undefined, records[records.length - 1]!.db)
      }
    }
  }

  /** Whether {@link propagate} writes anywhere (the log is on, or a replica takes records). */
  get propagates(): boolean {
    return this.config.appendonly || this.replicaFeed?.wantsRecords === true
  }

  /**
   * Hands a change to the persistence layer, in the order it was applied: to the append-only log
   * (with appendonly yes) and to the replicas' stream (one propagation feeds both, as redis's). The log encodes its record at once, straight from the command's
   * arguments, so they need not outlive this call (a command's own `argv` may be passed);
   * inside EXEC they are copied and kept for {@link runTransaction}'s end. `db`: the database the
   * record belongs to ({@link db} by default); the log and the stream carry a SELECT before a
   * record whose database differs from the one before it, as redis's AOF and replication do.
   * `writer`: the client the record is of (the running command's by default), whose logOffset it sets.
   */
  propagate(
    argv: CommandArgs | readonly Uint8Array[],
    targets: PropagateTargets = ALL_TARGETS,
    db = this.db,
    writer?: LogWriter,
  ): void {
    const toLog = this.config.appendonly && targets.log
    const feed = this.replicaFeed
    const toReplicas = targets.replicas && feed !== undefined && feed.wantsRecords
    if (!toLog && !toReplicas) return
    if (this.inTransaction) {
      const copy = (argv instanceof CommandArgs ? argv.toArray() : [...argv]).map((arg) => Buffer.from(arg))
      this.transactionRecords.push({ argv: copy, targets, db })
      return
    }
    if (toLog) {
      this.appendLog.append(argv, db)
      // The running command's client unless told: looked up only when there is a log to write.
      const owner = writer ?? this.currentWriter()
      if (owner !== undefined) owner.logOffset = this.appendLog.appendedBytes
    }
    if (!toReplicas) return
    // Encoded once: the stream takes the log's bytes of the record when the log has them.
    const last = this.appendLog.lastRecord
    if (toLog && last.bytes !== undefined) feed.feedRecord(argv, db, last.bytes, last.start, last.end)
    else feed.feedRecord(argv, db)
  }

  /**
   * SHUTDOWN's save (redis prepareForShutdown), unless a background save runs (close() finishes
   * that one). @returns false when it failed: the shutdown is cancelled
   */
  saveBeforeShutdown(): boolean {
    if (this.snapshots.inProgress) return true
    this.log.notice('Saving the final snapshot before exiting.')
    try {
      this.snapshots.saveSync(this.databases)
    } catch {
      this.log.warning("Error trying to save the DB, can't exit.")
      return false
    }
    return true
  }

  /** Whether the replication position differs from the one the committed snapshot records. */
  private positionMoved(): boolean {
    const now = this.replicationPosition?.()
    const saved = this.snapshots.replicationPosition
    return now !== undefined && (now.replid !== saved?.replid || now.offset !== saved.offset)
  }

  /**
   * At shutdown, before the last replies go out: waits for a running rewrite, stops a running
   * BGSAVE, saves what changed when `save`, writes, fsyncs and closes the log, and releases what
   * waited on it (what the disk refused is never acknowledged). Resolves to the final save's
   * error, if it failed (the rest is done all the same).
   */
  async close(save: boolean): Promise<unknown> {
    let saveError: unknown
    // Every acknowledged write on disk before the last replies go out.
    await this.logRewriter.idle()
    // A running BGSAVE stops at its next slice; the final save below writes what it had not committed.
    await this.snapshots.abortBackground()
    // Nothing changed since the last save (SHUTDOWN and the signals save just before): no second
    // save, unless the replication position moved (pings move it, not the data).
    if (save && this.snapshots.loaded && (this.databases.dirty > 0 || this.positionMoved())) {
      try {
        this.snapshots.saveSync(this.databases)
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
    this.gate.releaseAll(logClosed)
    return saveError
  }
}
