/**
 * CLUSTER FAILOVER's default mode (redis 7.0 cluster.c manual failover) without a cluster bus: the
 * replica and its master coordinate over ordinary RESP instead of MFSTART and PING flags.
 *
 * 1. The replica connects to its master (authenticating with masteruser/masterauth, as its
 *    replication link does) and sends `CLIENT PAUSE <2 × 5000> WRITE` (redis pauses the master's
 *    writes for CLUSTER_MF_TIMEOUT × CLUSTER_MF_PAUSE_MULT), then `INFO replication`, whose
 *    master_repl_offset is final once nothing more can be written, and `CLUSTER INFO`, whose
 *    current epoch the new config epoch must exceed (this node's pulls may be a round behind).
 * 2. The replica waits until its own applied offset reaches that one (redis "All master
 *    replication stream processed, manual failover can start."), at most CLUSTER_MF_TIMEOUT
 *    (5 s) from the request.
 * 3. It takes over: master, configEpoch = ++currentEpoch, its master's slots. No vote of the
 *    masters is asked (no election code is written here: docs/CLUSTER.md).
 * 4. The old master learns the higher epoch for its slots by pull gossip and becomes a replica of
 *    the new one. The replica watches it (INFO's role) and, once it says `slave`, ends the pause with
 *    `CLIENT UNPAUSE`: the writes held there are then answered by a replica (-MOVED), never run
 *    by a master that lost its slots. If the old master never demotes itself, its pause ends on
 *    its own after 10 s, as in redis.
 *
 * Whatever fails before the takeover (no connection, an error reply, the timeout) aborts the
 * failover: "Manual failover timed out." in the log, and CLIENT UNPAUSE to the master.
 */
import type { Logger } from '../runtime/logger.js'

/** redis CLUSTER_MF_TIMEOUT: how long a manual failover may take, ms. */
export const MF_TIMEOUT_MS = 5000
/** redis CLUSTER_MF_PAUSE_MULT: the master's writes are paused for this many timeouts. */
export const MF_PAUSE_MULT = 2
/** How often the replica looks at its offset, and at the old master's role. */
const POLL_MS = 10

/** A RESP connection to another node: one command at a time, its reply (an error reply rejects). */
export interface PeerCommands {
  command(args: readonly string[]): Promise<string | number | null>
  close(): void
}

/** What a manual failover needs from the replica running it. */
export interface ManualFailoverHost {
  readonly log: Logger
  /** An authenticated connection to host:port (rejects when it cannot be made). */
  connect(host: string, port: number): Promise<PeerCommands>
  /** The replication offset applied so far. */
  appliedOffset(): number
  /** Whether this node is still a replica of the node the failover began with. */
  stillReplicaOf(masterId: string): boolean
  /**
   * The takeover: master, a new config epoch (above `masterEpoch`, the master's current epoch),
   * the old master's slots; the replication link stopped.
   */
  takeOver(masterEpoch: number): void
}

export interface FailoverMaster {
  id: string
  host: string
  port: number
}

/**
 * The manual failovers of one node: at most one under way; a new request abandons the one before
 * (redis resetManualFailover).
 */
export class ManualFailovers {
  private current = 0

  constructor(private readonly host: ManualFailoverHost) {}

  /** Starts a coordinated failover from `master`; resolves when it has ended (taken over or aborted). */
  start(master: FailoverMaster): Promise<boolean> {
    const token = ++this.current
    return this.run(master, token)
  }

  /** Abandons the failover under way (the node's role changed, or it is closing). */
  reset(): void {
    this.current++
  }

  private live(token: number, master: FailoverMaster): boolean {
    return token === this.current && this.host.stillReplicaOf(master.id)
  }

  private async run(master: FailoverMaster, token: number): Promise<boolean> {
    const { log } = this.host
    const deadline = Date.now() + MF_TIMEOUT_MS
    const pauseEnd = deadline + MF_TIMEOUT_MS * (MF_PAUSE_MULT - 1)
    let peer: PeerCommands | undefined
    try {
      peer = await beforeDeadline(this.host.connect(master.host, master.port), deadline)
      await beforeDeadline(peer.command(['CLIENT', 'PAUSE', String(MF_TIMEOUT_MS * MF_PAUSE_MULT), 'WRITE']), deadline)
      const offset = masterOffset(await beforeDeadline(peer.command(['INFO', 'replication']), deadline))
      log.notice(`Received replication offset for paused master manual failover: ${offset}`)
      // The master's current epoch, in case this node's pulls have not seen its latest yet.
      const epoch = Number(
        infoField(String(await beforeDeadline(peer.command(['CLUSTER', 'INFO']), deadline)), 'cluster_current_epoch'),
      )
      while (this.host.appliedOffset() < offset) {
        if (!this.live(token, master)) throw new Error('the manual failover was abandoned')
        if (Date.now() > deadline) throw new Error('Manual failover timed out.')
        await sleep(POLL_MS)
      }
      if (!this.live(token, master)) throw new Error('the manual failover was abandoned')
      log.notice('All master replication stream processed, manual failover can start.')
      this.host.takeOver(Number.isSafeInteger(epoch) ? epoch : 0)
    } catch (error) {
      log.warning(`Manual failover aborted: ${(error as Error).message}`)
      // A failover that a newer request replaced leaves the pause to that one.
      if (token === this.current) peer?.command(['CLIENT', 'UNPAUSE']).catch(() => {})
      setTimeout(() => peer?.close(), 1000).unref()
      return false
    }
    await this.unpauseWhenDemoted(peer, pauseEnd)
    return true
  }

  /** Step 4: CLIENT UNPAUSE on the old master once its INFO says role:slave (or its pause is over). */
  private async unpauseWhenDemoted(peer: PeerCommands, pauseEnd: number): Promise<void> {
    try {
      while (Date.now() < pauseEnd) {
        const info = String(await beforeDeadline(peer.command(['INFO', 'replication']), pauseEnd))
        if (infoField(info, 'role') === 'slave') {
          await peer.command(['CLIENT', 'UNPAUSE'])
          this.host.log.notice('Manual failover: the old master is a replica now, its writes unpaused.')
          return
        }
        await sleep(POLL_MS * 10)
      }
    } catch {
      // The old master went away: its pause ends with it, or on its own.
    } finally {
      peer.close()
    }
  }
}

/** The master's offset from its INFO replication; a node that is not a master aborts the failover. */
export function masterOffset(info: unknown): number {
  const text = String(info)
  const offset = Number(infoField(text, 'master_repl_offset'))
  if (infoField(text, 'role') !== 'master' || !Number.isSafeInteger(offset)) {
    throw new Error(`the master's INFO replication says role:${infoField(text, 'role') ?? '?'}`)
  }
  return offset
}

/** A `field:value` line's value in an INFO reply. */
function infoField(info: string, field: string): string | undefined {
  const match = new RegExp(`(?:^|\\n)${field}:([^\\r\\n]*)`).exec(info)
  return match?.[1]
}

function beforeDeadline<T>(promise: Promise<T>, deadline: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('Manual failover timed out.')), Math.max(0, deadline - Date.now()))
    promise.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error instanceof Error ? error : new Error(String(error)))
      },
    )
  })
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
