/**
 * Clients blocked in WAIT (redis clients_waiting_acks): each waits until enough replicas
 * acknowledged its last write's offset, or its timeout; the reply is always the count
 * (redis waitCommand, processClientsWaitingReplicas, replyToBlockedClientTimedOut).
 */
import type { PeerConnection } from './replica-peer.js'

/** The longest delay setTimeout takes (2^31 - 1 ms). */
const MAX_TIMER_MS = 2 ** 31 - 1

interface Waiter {
  readonly peer: PeerConnection
  readonly offset: number
  readonly replicas: number
  timer: NodeJS.Timeout | undefined
}

export interface WaitListOptions {
  /** Online replicas whose ACK reached the offset. */
  readonly count: (offset: number) => number
  /** Asks every replica for an ACK (one `REPLCONF GETACK *` at the end of the turn). */
  readonly requestAcks: () => void
}

export class WaitList {
  private readonly waiters = new Map<PeerConnection, Waiter>()
  private getackScheduled = false

  constructor(private readonly options: WaitListOptions) {}

  /** Clients blocked in WAIT now (INFO clients blocked_clients). */
  get size(): number {
    return this.waiters.size
  }

  /** Waiting clients with a timeout (INFO clients_in_timeout_table). */
  get timedCount(): number {
    let count = 0
    for (const waiter of this.waiters.values()) if (waiter.timer !== undefined) count++
    return count
  }

  /**
   * WAIT numreplicas timeout: the count at once when it is enough (or inside a transaction, which
   * cannot block); otherwise the client blocks and undefined is returned.
   */
  wait(peer: PeerConnection, replicas: number, timeoutMs: number, mayBlock: boolean): number | undefined {
    const acked = this.options.count(peer.replOffset)
    if (acked >= replicas || !mayBlock) return acked
    const waiter: Waiter = { peer, offset: peer.replOffset, replicas, timer: undefined }
    // Past a timer's range (about 24.8 days) Node would fire at once: such a WAIT waits as with 0.
    if (timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS)
      waiter.timer = setTimeout(() => this.answer(waiter, this.options.count(waiter.offset)), timeoutMs)
    this.waiters.set(peer, waiter)
    peer.block()
    if (!this.getackScheduled) {
      this.getackScheduled = true
      setImmediate(() => {
        this.getackScheduled = false
        if (this.waiters.size > 0) this.options.requestAcks()
      })
    }
    return undefined
  }

  /** After ACKs: answers every waiter whose count is reached. */
  process(): void {
    for (const waiter of [...this.waiters.values()]) {
      const acked = this.options.count(waiter.offset)
      if (acked >= waiter.replicas) this.answer(waiter, acked)
    }
  }

  private answer(waiter: Waiter, acked: number): void {
    if (!this.release(waiter)) return
    waiter.peer.reply.integer(acked)
    waiter.peer.unblock()
  }

  /** Takes the waiter off the list; false when it already was. */
  private release(waiter: Waiter): boolean {
    if (this.waiters.get(waiter.peer) !== waiter) return false
    this.waiters.delete(waiter.peer)
    clearTimeout(waiter.timer)
    return true
  }

  /** Its connection closed. */
  forget(peer: PeerConnection): void {
    const waiter = this.waiters.get(peer)
    if (waiter !== undefined) this.release(waiter)
  }

  /**
   * CLIENT UNBLOCK: a waiting client answers at once, as at its timeout (the count so far), or
   * with the error `text`. False when it is not waiting.
   */
  unblock(peer: PeerConnection, text?: string): boolean {
    const waiter = this.waiters.get(peer)
    if (waiter === undefined) return false
    if (text === undefined) this.answer(waiter, this.options.count(waiter.offset))
    else {
      this.release(waiter)
      waiter.peer.reply.error(text)
      waiter.peer.unblock()
    }
    return true
  }

  /** Every waiter gets the error `text` and is closed after it (redis disconnectAllBlockedClients). */
  failAll(text: string): void {
    for (const waiter of [...this.waiters.values()]) {
      this.release(waiter)
      waiter.peer.reply.error(text)
      waiter.peer.closeAfterReply()
      waiter.peer.unblock()
    }
  }
}
