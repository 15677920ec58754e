/**
 * The parts persistence is made of, as the readers of its state see them (INFO persistence in
 * persistence-info.ts, the -MISCONF refusal in disk-error.ts): the configuration keys it reads, the
 * snapshot store, the append-only log, the rewrite and the databases. `Persistence`
 * (persistence.ts) is one; the readers take this interface and import nothing of persistence.ts,
 * which imports them.
 */
import type { AppendLog, FsyncPolicy } from './append-log.js'
import type { Databases } from './databases.js'
import type { LogRewriter } from './log-rewrite.js'
import type { CorruptPolicy, SnapshotStore } from './snapshot.js'

/** The configuration keys persistence reads (the server's Config, read live: CONFIG SET applies). */
export interface PersistenceConfig {
  readonly dir: string
  readonly appendfilename: string
  appendonly: boolean
  readonly appendfsync: FsyncPolicy
  readonly save: string
  readonly 'snapshot-on-corrupt': CorruptPolicy
  readonly 'max-filter-bytes': number
  readonly 'stop-writes-on-bgsave-error': boolean
  readonly 'aof-load-truncated': boolean
  readonly 'aof-load-corrupt': boolean
  readonly 'auto-aof-rewrite-percentage': number
  readonly 'auto-aof-rewrite-min-size': number
}

/** Persistence's parts and whether it is loading: what its status is read from. */
export interface PersistenceParts {
  readonly config: PersistenceConfig
  readonly databases: Databases
  /** Whether the dataset is still being loaded from disk. */
  readonly loading: boolean
  readonly snapshots: SnapshotStore
  readonly appendLog: AppendLog
  readonly logRewriter: LogRewriter
}
