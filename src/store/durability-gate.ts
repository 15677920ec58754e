/**
 * The durability gate: replies (and the HTTP front end's answers) wait here until the append-only
 * log holds, under the fsync policy, every record they may show. Owned by {@link Persistence}
 * (persistence.ts); the server hands it each client whose replies are ready.
 */
import type { AppendLog } from './append-log.js'

/** A client as the log sees it: the offset past its own records (0: none), set by propagate. */
export interface LogWriter {
  logOffset: number
}

/** One reply (or whenDurable caller) waiting for the append-only log. */
interface LogWaiter {
  /** Every record appended when it started waiting. */
  readonly offset: number
  /** The client it belongs to, whose own records are its {@link LogWriter.logOffset} (they may grow). */
  readonly client: LogWriter | undefined
  /** Otherwise the offset past its own records (0: none). */
  readonly ownOffset: number
  /** Called once: true when its records are durable, false when they never will be (shutdown). */
  readonly release: (durable: boolean) => void
}

/** The offset a waiter needs while the log fails: that of its own records only. */
function ownLogOffset(waiter: LogWaiter): number {
  return waiter.client !== undefined ? waiter.client.logOffset : waiter.ownOffset
}

export class DurabilityGate {
  /**
   * What waits for the log to be durable up to an offset, in the order it started waiting: clients
   * (keyed by themselves, one entry each; released by flushing their replies) and whenDurable()
   * callers (the HTTP front end). While the log fails, only their own records hold them
   * ({@link ownLogOffset}).
   */
  private readonly awaitingLog = new Map<object, LogWaiter>()

  constructor(private readonly appendLog: AppendLog) {}

  whenDurable(ownOffset?: number): Promise<boolean> {
    const log = this.appendLog
    const offset = log.appendedBytes
    const own = ownOffset ?? offset
    if (log.isDurable(log.failing ? own : offset)) return Promise.resolve(true)
    return new Promise((resolve) =>
      this.awaitingLog.set({}, { offset, client: undefined, ownOffset: own, release: resolve }),
    )
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
   *
   * @returns whether the client's replies must wait; `release` is then called once, later, with
   *   whether they became durable (false: they never will, the client must not get them)
   */
  holds<C extends LogWriter>(client: C, release: (client: C, durable: boolean) => void): boolean {
    const log = this.appendLog
    const appended = log.appendedBytes
    if (!log.isDurable(log.failing ? client.logOffset : appended)) {
      this.awaitingLog.set(client, {
        offset: appended,
        client,
        ownOffset: 0,
        release: (durable) => release(client, durable),
      })
      return true
    }
    return this.awaitingLog.has(client)
  }

  /** A held reply nobody will read waits for nothing (the client is gone). */
  forget(client: LogWriter): void {
    this.awaitingLog.delete(client)
  }

  /**
   * Releases what waited for records that are now in the log (on disk: always), in the order it
   * started waiting; while the log fails, what waited only on other clients' records.
   */
  releaseSynced(): void {
    const log = this.appendLog
    for (const [key, waiter] of this.awaitingLog) {
      if (!log.isDurable(log.failing ? ownLogOffset(waiter) : waiter.offset)) continue
      this.awaitingLog.delete(key)
      waiter.release(true)
    }
  }

  /** At close: releases everything still waiting, durable or (the disk refused it) not. */
  releaseAll(durable: boolean): void {
    const waiting = [...this.awaitingLog.values()]
    this.awaitingLog.clear()
    for (const waiter of waiting) waiter.release(durable)
  }
}
