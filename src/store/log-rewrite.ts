/**
 * Log rewrite (BGREWRITEAOF, and automatically by auto-aof-rewrite-percentage/min-size): fold the
 * log into a fresh snapshot and go on with a new, empty segment, while the server keeps serving.
 *
 * A rewrite is a background snapshot and nothing more: every snapshot is an alignment point of
 * the log (SnapshotLogHooks in snapshot.ts, wired by the server). When the snapshot captures its
 * data the log rotates to segment n+1 in the same turn; the MANIFEST records `log-from n+1`; once
 * it is durable, segments ≤ n are deleted. A crash before the MANIFEST leaves the previous snapshot
 * and every segment; a crash after it leaves segments ≤ n, which the next start skips and deletes.
 * Writes made during the snapshot are in segment n+1 and replay over it (for filters larger than
 * START_COPY_BYTES some of their bits may be in the snapshot already: such an add replays as 0).
 */
import type { Dataset } from './databases.js'
import type { AppendLog } from './append-log.js'
import type { Logger } from '../runtime/logger.js'

/** What the rewrite needs from the snapshot layer (snapshot.ts's SnapshotStore). */
export interface SnapshotSaver {
  saveAll(registry: Dataset, options: { background: boolean; rewrite?: boolean }): Promise<unknown> | unknown
}

export type RewriteStart = 'started' | 'in-progress'

export class LogRewriter {
  inProgress = false
  /** Unix ms when the running rewrite started, or 0. */
  startedAtMs = 0
  lastStatus: 'ok' | 'err' = 'ok'
  /** Seconds the last rewrite took, -1 before the first (INFO aof_last_rewrite_time_sec). */
  lastTimeSec = -1
  rewrites = 0
  /** Rewrites that failed since the last one that succeeded (INFO aof_rewrites_consecutive_failures). */
  consecutiveFailures = 0
  /**
   * The log was turned on (CONFIG SET appendonly yes) and has no snapshot under it yet: a rewrite
   * is started again until one that started after it succeeds (redis AOF_WAIT_REWRITE reschedules
   * a failed one). One that captured its data before the log was open does not count.
   */
  baseWanted = false
  /** The automatic rewrite's back-off after repeated failures (redis aofRewriteLimited). */
  private limitDelayMinutes = 0
  private limitUntilMs = 0
  /** Snapshot data plus log after the last rewrite: what auto-aof-rewrite-percentage grows from. */
  baseSizeBytes = 0
  private running: Promise<void> | undefined

  constructor(
    private readonly log: AppendLog,
    private readonly registry: Dataset,
    private readonly snapshots: SnapshotSaver,
    private readonly logger: Logger,
  ) {}

  /** Starts a rewrite unless one runs. */
  start(): RewriteStart {
    if (this.inProgress) return 'in-progress'
    this.running = this.run()
    return 'started'
  }

  /** Resolves when the running rewrite (if any) has finished. */
  async idle(): Promise<void> {
    await this.running
  }

  /**
   * Called when any snapshot committed (a rewrite, BGSAVE, SAVE, a save rule): the dataset now
   * lives in the snapshot and the log holds only what came after, so the log's growth is measured
   * from here, as redis measures its AOF against the rewritten base.
   */
  snapshotCommitted(): void {
    this.baseSizeBytes = this.registry.bitmapBytes() + this.log.currentSizeBytes
  }

  /**
   * Whether the once-a-second look should start a rewrite for {@link baseWanted}: while none
   * runs, and held back after repeated failures as the automatic one is (redis serverCron checks
   * aofRewriteLimited for a scheduled rewrite too).
   */
  baseRewriteDue(nowMs = Date.now()): boolean {
    return this.baseWanted && !this.inProgress && !this.limited(nowMs)
  }

  /**
   * redis serverCron: rewrite when the log is over `minSizeBytes` and has grown by `percentage`
   * over its size after the last rewrite (base 0 counts as 1 byte, as in redis).
   */
  shouldAutoRewrite(percentage: number, minSizeBytes: number): boolean {
    if (this.inProgress || percentage <= 0 || !this.log.isOpen) return false
    const current = this.log.currentSizeBytes
    if (current < minSizeBytes) return false
    const base = this.baseSizeBytes > 0 ? this.baseSizeBytes : 1
    return ((current - base) * 100) / base >= percentage && !this.limited(Date.now())
  }

  /**
   * redis 7.0 aofRewriteLimited: after 3 failures in a row the automatic rewrite waits 1 minute,
   * then 2, 4, ... up to 60 between tries, instead of starting again every second on a disk that
   * refuses it. Every rewrite the server starts by itself asks it (the automatic one, the one
   * under `appendonly yes`, the one for records left to a snapshot); BGREWRITEAOF does not.
   */
  limited(nowMs: number): boolean {
    if (this.consecutiveFailures < 3) {
      this.limitDelayMinutes = 0
      this.limitUntilMs = 0
      return false
    }
    if (this.limitUntilMs !== 0) {
      if (nowMs < this.limitUntilMs) return true
      this.limitUntilMs = 0
      return false
    }
    this.limitDelayMinutes = Math.min(this.limitDelayMinutes === 0 ? 1 : this.limitDelayMinutes * 2, 60)
    this.limitUntilMs = nowMs + this.limitDelayMinutes * 60_000
    this.logger.warning(
      `Background AOF rewrite has repeatedly failed and triggered the limit, will retry in ${this.limitDelayMinutes} minutes`,
    )
    return true
  }

  private async run(): Promise<void> {
    this.inProgress = true
    this.startedAtMs = Date.now()
    const isBase = this.baseWanted
    this.logger.notice('Background append only file rewriting started')
    try {
      // The snapshot rotates the log when it captures its data and trims it when it commits.
      await this.snapshots.saveAll(this.registry, { background: true, rewrite: true })
      this.lastStatus = 'ok'
      this.rewrites++
      this.consecutiveFailures = 0
      if (isBase) this.baseWanted = false
      this.logger.notice('Background AOF rewrite finished successfully')
    } catch (error) {
      this.lastStatus = 'err'
      this.consecutiveFailures++
      this.logger.warning(`Background AOF rewrite failed: ${(error as Error)?.message ?? String(error)}`)
    } finally {
      this.lastTimeSec = Math.round((Date.now() - this.startedAtMs) / 1000)
      this.startedAtMs = 0
      this.inProgress = false
    }
  }
}
