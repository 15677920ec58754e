/**
 * What the replica's link needs from the rest of the server: passed in from above (the server
 * wires it: server/replica-wiring.ts), as the log's replay is, since replication may not import
 * the commands or the server.
 */
import type { Logger } from '../runtime/logger.js'
import type { Config } from '../runtime/config.js'
import type { Persistence } from '../store/persistence.js'
import type { StoredFilter } from '../store/registry.js'
import type { ReplicationState } from './replication-state.js'
import type { PayloadSink } from './sync-transfer.js'
import type { CommandArgs } from '../protocol/command-args.js'

/** The full-sync payload's decoder (sync-payload's SyncPayloadDecoder has this shape). */
export interface PayloadDecoder extends PayloadSink {
  filters(): Iterable<{ name: Buffer; filter: StoredFilter; expiresAt?: number; db: number }>
}

/** The master link's client: the master's commands run in it (kind 'master'), replies discarded. */
export interface MasterSession {
  /**
   * Runs one read of the stream: `work` calls {@link run} for each of its commands. The master
   * sent something (CLIENT LIST idle=).
   */
  read(work: () => void): void
  /** Runs one command of the stream, inside {@link read}; returns its error text, if it answered with one. */
  run(argv: CommandArgs): string | undefined
  /** What the commands so far did is done (a read's commands may run together until its end). */
  settle(): void
  /** The link closed: the session leaves the client list. */
  close(): void
}

/** The link's ends, and how CLIENT KILL drops it. */
export interface MasterLinkInfo {
  readonly addr: string
  readonly laddr: string
  kill(): void
}

export interface ReplicaLinkHost {
  readonly config: Config
  readonly log: Logger
  readonly replication: ReplicationState
  readonly persistence: Persistence
  /** The port this node listens on (REPLCONF listening-port unless replica-announce-port). */
  ownPort(): number
  openMasterSession(link: MasterLinkInfo): MasterSession
  newPayloadDecoder(): PayloadDecoder
  /** Empties the registry and fills it with a full sync's filters, in one turn. */
  replaceDataset(filters: Iterable<{ name: Buffer; filter: StoredFilter; expiresAt?: number; db: number }>): void
  /** redis disconnectSlaves: this node's own replicas are closed (they reconnect and PSYNC). */
  disconnectReplicas(): void
  /** redis disconnectAllBlockedClients: `-<text>` to every blocked client (WAIT), then closed. */
  unblockAll(text: string): void
  /** After a full sync: a new history, so this node's backlog restarts empty at the adopted offset. */
  newHistory(): void
  /**
   * After +CONTINUE: a backlog exists from the current offset on (a replica restarted from its
   * snapshot has none yet: redis creates it there), so that it can serve replicas if promoted.
   */
  ensureBacklog(): void
  /** After REPLICAOF NO ONE: the stream this master sends starts with a SELECT again (redis slaveseldb = -1). */
  becameMaster(): void
}
