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
 * The records and the applied commands are {@link stage}d: counted at once, handed over once a turn.
 */
import { randomBytes } from 'node:crypto'

/** redis uses 40 '0' characters for "no second id" (clearReplicationId2). */
export const NO_REPLID = '0'.repeat(40)

/** A fresh 40-hex-digit replication id (redis changeReplicationId). */
export function newReplid(): string {
  return randomBytes(20).toString('hex')
}

/** The room {@link ReplicationState.stage} keeps, and the most it keeps after a larger turn. */
const STAGED_BYTES = 16 * 1024
const STAGED_KEEP_BYTES = 1024 * 1024
/** Pieces up to this size are copied byte by byte. */
const SMALL_PIECE_BYTES = 256

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
    this.drain()
    this.replid = position.replid
    this.masterReplOffset = position.offset
    this.streamDb = position.db ?? 0
  }
  private readonly sinks = new Set<StreamSink>()
  /** Bytes counted in {@link masterReplOffset} and not yet handed to the sinks: `staged[0, stagedBytes)`. */
  private staged = Buffer.allocUnsafe(STAGED_BYTES)
  private stagedBytes = 0
  private drainScheduled = false
  private readonly drainNow = (): void => {
    this.drainScheduled = false
    this.drain()
  }

  /** Adds bytes to the stream: counted in {@link masterReplOffset}, then handed to every sink in order. */
  feed(bytes: Buffer): void {
    if (this.stagedBytes !== 0) this.drain()
    this.masterReplOffset += bytes.length
    for (const sink of this.sinks) sink(bytes)
  }

  /**
   * {@link feed} for the many small pieces of a turn (each record, each command a replica
   * applies), `bytes[start, end)`: counted in {@link masterReplOffset} at once, copied, and
   * handed to the sinks together, once, at the end of the turn, or before anything else reaches
   * them (a feed, an attach or detach, a new position, the backlog read: {@link drain}). One copy
   * per piece instead of one per sink, and the sinks' work once per turn.
   */
  stage(bytes: Buffer, start = 0, end = bytes.length): void {
    const length = end - start
    this.masterReplOffset += length
    if (this.sinks.size === 0) return
    const needed = this.stagedBytes + length
    if (needed > this.staged.length) this.growStaged(needed)
    const staged = this.staged
    let at = this.stagedBytes
    // A record is tens of bytes: a byte loop, no view and no call into C++ per piece.
    if (length <= SMALL_PIECE_BYTES) for (let p = start; p < end; p++) staged[at++] = bytes[p]!
    else at += bytes.copy(staged, at, start, end)
    this.stagedBytes = at
    if (!this.drainScheduled) {
      this.drainScheduled = true
      setImmediate(this.drainNow)
    }
  }

  /** Hands what {@link stage} holds to the sinks (they copy what they keep). */
  drain(): void {
    const length = this.stagedBytes
    if (length === 0) return
    this.stagedBytes = 0
    const out = this.staged.subarray(0, length)
    for (const sink of this.sinks) sink(out)
    // Large room is kept while turns need it (a replica catching up reads megabytes a turn),
    // and let go after the first turn that does not.
    if (this.staged.length > STAGED_KEEP_BYTES && length <= STAGED_KEEP_BYTES)
      this.staged = Buffer.allocUnsafe(STAGED_BYTES)
  }

  private growStaged(needed: number): void {
    const grown = Buffer.allocUnsafe(Math.max(needed, this.staged.length * 2))
    this.staged.copy(grown, 0, 0, this.stagedBytes)
    this.staged = grown
  }

  /** Whether any sink is attached (nothing needs to be encoded for the stream otherwise). */
  get hasSinks(): boolean {
    return this.sinks.size > 0
  }

  /** Attaches a sink, which takes the bytes fed from now on; returns its detach function. */
  attach(sink: StreamSink): () => void {
    this.drain()
    this.sinks.add(sink)
    return () => {
      this.drain()
      this.sinks.delete(sink)
    }
  }

  /**
   * redis shiftReplicationId, at SLAVEOF NO ONE: the old id stays valid as `replid2` up to the
   * current offset, so the other replicas of the old master continue (+CONTINUE) from here.
   */
  shiftIds(): void {
    this.drain()
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
    this.drain()
    this.replid = replid
    this.clearId2()
    this.masterReplOffset = offset
  }
}
