import { InstantMetric } from './instant-metric.js'

/** Counters for INFO stats, reset by CONFIG RESETSTAT. */
export class Stats {
  commandsProcessed = 0
  connectionsReceived = 0
  rejectedConnections = 0
  netInputBytes = 0
  netOutputBytes = 0
  errorReplies = 0
  keyspaceHits = 0
  keyspaceMisses = 0
  /** Requests answered by the HTTP listener, any path. */
  httpRequests = 0
  /** Keys deleted because they expired, lazily or by the active cycle (redis stat_expiredkeys). */
  expiredKeys = 0
  /** The active cycle's running estimate of the share of keys with an expiry that are past it, 0..1. */
  expiredStalePerc = 0
  /** Active cycles that stopped at their time limit (redis stat_expired_time_cap_reached_count). */
  expiredTimeCapReached = 0
  /** Time spent in active cycles, µs (redis stat_expire_cycle_time_used). */
  expireCycleMicros = 0
  /** Full syncs served, PSYNCs continued, PSYNCs refused (redis stat_sync_*). */
  syncFull = 0
  syncPartialOk = 0
  syncPartialErr = 0
  /** Socket reads and writes of clients (INFO total_reads_processed / total_writes_processed). */
  readsProcessed = 0
  writesProcessed = 0
  /** Of those, the reads and writes an I/O thread made (io-threads > 1). */
  threadedReadsProcessed = 0
  threadedWritesProcessed = 0
  /** Commands an I/O thread answered itself (server/thread-answers.ts; INFO bfs_io_threaded_commands_processed). */
  threadedCommandsProcessed = 0
  /** Keys found expired when the dataset loaded at start, and deleted (INFO rdb_last_load_keys_expired). */
  loadKeysExpired = 0
  /** Commands, input and output bytes per second over the last 1.6 s (INFO instantaneous_*), sampled by the cron. */
  readonly opsPerSecond = new InstantMetric(Date.now())
  readonly inputPerSecond = new InstantMetric(Date.now())
  readonly outputPerSecond = new InstantMetric(Date.now())
  /** The most memory used so far (INFO used_memory_peak), bytes, noted by the cron and INFO. */
  peakMemory = 0

  /** The cron's 100 ms sample of the instantaneous figures (redis serverCron). */
  sample(nowMs: number, usedMemory: number): void {
    this.opsPerSecond.track(nowMs, this.commandsProcessed)
    this.inputPerSecond.track(nowMs, this.netInputBytes)
    this.outputPerSecond.track(nowMs, this.netOutputBytes)
    this.notePeak(usedMemory)
  }

  notePeak(usedMemory: number): void {
    if (usedMemory > this.peakMemory) this.peakMemory = usedMemory
  }

  /** Error replies by their first word (INFO errorstats), in the order first seen. */
  readonly errorCodes = new Map<string, number>()

  /**
   * One error reply sent, `text` without its '-': counted in total_error_replies and under its
   * code, as redis 7.0 networking.c afterErrorReply does: the first word when a space ends it
   * within the first 32 bytes of the reply ('-' included), else ERR.
   */
  countError(text: string): void {
    this.errorReplies++
    const space = text.indexOf(' ')
    const code = space >= 0 && space < 31 ? text.slice(0, space) : 'ERR'
    this.errorCodes.set(code, (this.errorCodes.get(code) ?? 0) + 1)
  }

  reset(): void {
    const nowMs = Date.now()
    this.opsPerSecond.reset(nowMs)
    this.inputPerSecond.reset(nowMs)
    this.outputPerSecond.reset(nowMs)
    this.errorCodes.clear()
    this.commandsProcessed = 0
    this.connectionsReceived = 0
    this.rejectedConnections = 0
    this.netInputBytes = 0
    this.netOutputBytes = 0
    this.errorReplies = 0
    this.keyspaceHits = 0
    this.keyspaceMisses = 0
    this.httpRequests = 0
    this.expiredKeys = 0
    this.expiredStalePerc = 0
    this.expiredTimeCapReached = 0
    this.expireCycleMicros = 0
    this.syncFull = 0
    this.syncPartialOk = 0
    this.syncPartialErr = 0
    this.readsProcessed = 0
    this.writesProcessed = 0
    this.threadedReadsProcessed = 0
    this.threadedWritesProcessed = 0
    this.threadedCommandsProcessed = 0
  }
}
