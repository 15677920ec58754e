/**
 * The replication identity and position every node has, master or replica (redis server.h
 * `replid`, `replid2`, `master_repl_offset`, `second_repl_offset`): the one object the master side
 * (the backlog, the replicas' streams, PSYNC, WAIT) and the replica side (the link to its master,
 * REPLICAOF) share.
 *
 * The replication stream is one ordered byte stream (RESP arrays: the writes, `SELECT 0`, `ping`,
 * `REPLCONF GETACK *`, PUBLISH). {@link feed} counts every byte of it in `masterReplOffset` and
 * hands it to every attached sink, in order:
 * - on a master, the bytes come from persistence's propagate (the same records the append-only
 *   log gets, encoded as RESP) and from the master's own pings;
 * - on a replica, they are the bytes its master sent, as they came (redis proxies them verbatim to
 *   its own backlog and sub-replicas: a chained replica sees the top master's stream and offsets).
 */
import { randomBytes } from 'node:crypto'

/** redis uses 40 '0' characters for "no second id" (clearReplicationId2). */
export const NO_REPLID = '0'.repeat(40)

/** A fresh 40-hex-digit replication id (redis changeReplicationId). */
export function newReplid(): string {
  return randomBytes(20).toString('hex')
}

/** A consumer of the replication stream's bytes (the backlog, one replica's output). */
export type StreamSink = (bytes: Buffer) => void

export type ReplicationRole = 'master' | 'replica'

export class ReplicationState {
  /** 'replica' while REPLICAOF host port is in force (connected or not); 'master' otherwise. */
  role: ReplicationRole = 'master'
  replid = newReplid()
  replid2 = NO_REPLID
  /** Bytes of the stream so far (redis master_repl_offset). */
  masterReplOffset = 0
  /** Up to where (exclusive, +1 as redis counts) `replid2` is valid; -1: no second id. */
  secondReplOffset = -1
  /**
   * A replica's: the database its master's stream was in when the link to it last closed (the
   * last SELECT it sent; redis keeps its cached master's db). A link that continues (+CONTINUE)
   * applies the stream there; a full sync starts it at 0. Saved with the position (MANIFEST repl-db).
   */
  streamDb = 0
  /**
   * A replica's: true while a command of its master's stream runs (redis `server.current_client
   * == server.master`). Expiry sees every key as it is then (server/key-expiry.ts): a key past
   * its time by this node's clock is still live for its master, whose DEL alone removes it.
   */
  applyingMasterStream = false

  /** The position a snapshot recorded (its id, offset and stream database), at a start. */
  restore(position: { readonly replid: string; readonly offset: number; readonly db?: number }): void {
    this.replid = position.replid
    this.masterReplOffset = position.offset
    this.streamDb = position.db ?? 0
  }
  private readonly sinks = new Set<StreamSink>()

  /** Adds bytes to the stream: counted in {@link masterReplOffset}, then handed to every sink in order. */
  feed(bytes: Buffer): void {
    this.masterReplOffset += bytes.length
    for (const sink of this.sinks) sink(bytes)
  }

  /** Whether any sink is attached (nothing needs to be encoded for the stream otherwise). */
  get hasSinks(): boolean {
    return this.sinks.size > 0
  }

  /** Attaches a sink; returns its detach function. */
  attach(sink: StreamSink): () => void {
    this.sinks.add(sink)
    return () => {
      this.sinks.delete(sink)
    }
  }

  /**
   * redis shiftReplicationId, at SLAVEOF NO ONE: the old id stays valid as `replid2` up to the
   * current offset, so the other replicas of the old master continue (+CONTINUE) from here.
   */
  shiftIds(): void {
    this.replid2 = this.replid
    this.secondReplOffset = this.masterReplOffset + 1
    this.replid = newReplid()
  }

  /** redis clearReplicationId2. */
  clearId2(): void {
    this.replid2 = NO_REPLID
    this.secondReplOffset = -1
  }

  /** A full sync from a master: its id and offset become ours (redis readSyncBulkPayload). */
  adopt(replid: string, offset: number): void {
    this.replid = replid
    this.clearId2()
    this.masterReplOffset = offset
  }
}
