/**
 * The server's side of key expiry: what a key found past its expiry does, by role (redis 7.0
 * db.c expireIfNeeded), the active cycle's two entry points (serverCron, beforeSleep), and the
 * deletion at start of the keys that expired while the server was down.
 *
 * - A master deletes an expired key when a lookup meets it or the active cycle samples it, counts
 *   it (INFO expired_keys), touches its watchers and propagates `DEL key` to the log (and
 *   replicas), as redis deleteExpiredKeyAndPropagate does.
 * - A replica deletes nothing by itself: its clients' reads see no key, and the DEL its master
 *   propagates removes it. The master's own stream sees the key as it is.
 * - While the dataset loads nothing expires (redis keyIsExpired returns 0 while loading): a logged
 *   command may still touch a key that has expired since. Once loaded, a master deletes them.
 */
import type { ExpiryMode } from '../store/registry.js'
import type { Databases } from '../store/databases.js'
import { performance } from 'node:perf_hooks'
import { ActiveExpiry, type CycleKind } from '../store/active-expiry.js'
import type { LatencyMonitor } from '../runtime/latency-monitor.js'
import type { Stats } from '../runtime/stats.js'
import type { ReplicationState } from '../replication/replication-state.js'
import type { ClientKind } from '../commands/kernel/context.js'
import type { Persistence } from '../store/persistence.js'
import type { WatchedKeys } from '../commands/state/watched-keys.js'

/** What the expiry needs from the server. */
export interface ExpiryHost {
  readonly databases: Databases
  readonly stats: Stats
  readonly replication: ReplicationState
  readonly persistence: Persistence
  readonly watchedKeys: WatchedKeys
  readonly currentClient: { readonly kind: ClientKind } | undefined
  /** CLIENT PAUSE: nothing is deleted while clients are paused (redis checkClientPauseTimeoutAndReturnIfPaused). */
  readonly pause: { paused(): boolean }
  /** LATENCY's `expire-cycle` event (redis activeExpireCycle's). */
  readonly latency: LatencyMonitor
}

const DEL = Buffer.from('DEL')

/** Installs the server's expiry policy on its registry and runs the active cycle for it. */
export class KeyExpiry {
  /** True from construction until {@link loaded}: nothing expires while the dataset loads. */
  private holding = true
  private readonly active: ActiveExpiry

  constructor(private readonly host: ExpiryHost) {
    this.active = new ActiveExpiry(host.databases, host.stats)
    host.databases.expiry = {
      now: Date.now,
      mode: () => this.mode(),
      expired: (name, db) => {
        host.stats.expiredKeys++
        // A WATCHed key that expires fails the EXEC (redis 7.0 answers a null array too).
        if (host.watchedKeys.size > 0) host.watchedKeys.touch(db, name)
        host.persistence.propagate([DEL, Buffer.from(name, 'latin1')], undefined, db)
      },
    }
  }

  private mode(): ExpiryMode {
    if (this.holding || this.host.persistence.loading) return 'keep'
    // While paused the dataset stays as it is: an expired key reads as missing, is not deleted,
    // and the active cycle stops, as redis expireIfNeeded and activeExpireCycle do.
    if (this.host.replication.role !== 'replica') return this.host.pause.paused() ? 'hide' : 'delete'
    // redis expireIfNeeded: "not expired" for the master's client, whatever this node's clock says.
    return this.host.replication.applyingMasterStream || this.host.currentClient?.kind === 'master' ? 'keep' : 'hide'
  }

  /** After the load at start: a master deletes the keys that expired while it was down. */
  loaded(): number {
    this.holding = false
    if (this.mode() !== 'delete') return 0
    const now = Date.now()
    let deleted = 0
    for (const registry of this.host.databases.made()) {
      const expired = registry.withExpiry().filter((entry) => registry.isExpired(entry, now))
      for (const entry of expired) registry.deleteExpired(entry)
      deleted += expired.length
    }
    this.host.stats.loadKeysExpired = deleted
    return deleted
  }

  /** serverCron's slow cycle. */
  cron(effort: number, hz: number): void {
    this.cycle('slow', effort, hz)
  }

  /** beforeSleep's fast cycle (it returns at once unless the last cycle could not keep up). */
  beforeSleep(effort: number, hz: number): void {
    this.cycle('fast', effort, hz)
  }

  /** A cycle, timed as an `expire-cycle` latency sample while the monitor is on. */
  private cycle(kind: CycleKind, effort: number, hz: number): void {
    if (this.host.latency.threshold() === 0) {
      this.active.cycle(kind, effort, hz)
      return
    }
    const startedMs = performance.now()
    this.active.cycle(kind, effort, hz)
    this.host.latency.note('expire-cycle', performance.now() - startedMs)
  }
}
