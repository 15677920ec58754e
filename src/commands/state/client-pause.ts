/**
 * CLIENT PAUSE timeout [WRITE|ALL] / CLIENT UNPAUSE, as redis 7.0 networking.c pauseClients and
 * server.c processCommand: while a pause lasts, a paused client's command is not refused but
 * waits (redis blockPostponeClient), with the commands it sent after it, and runs once the pause
 * ends. ALL holds every command of every client but replicas' links; WRITE holds the commands
 * that write or may propagate (the `write` flag, PUBLISH and SPUBLISH: redis CMD_MAY_REPLICATE)
 * and an EXEC of such. During any pause nothing expires for real (a key past its expiry is
 * answered as missing but not deleted, and the active cycle stops: redis
 * checkClientPauseTimeoutAndReturnIfPaused), so the dataset stays as it is.
 * Pauses have purposes (a client's CLIENT PAUSE, bfs's DEBUG RELOAD): the strictest type holds,
 * until the furthest end among the pauses of that type (redis updateClientPauseTypeAndEndTime).
 * While no pause is on, a command pays one compare of {@link ClientPause.type}.
 * The commands themselves are in connection/client-pause-commands.ts; which command waits is
 * decided from the command table, in kernel/pause-hold.ts.
 */

/** 'keys': only writes to the keys MIGRATE is moving (and writes without keys) wait; see {@link ClientPause.holdKeys}. */
export type PauseType = 'off' | 'keys' | 'write' | 'all'
/** Why a pause is on: a client's CLIENT PAUSE, DEBUG RELOAD holding everyone while it loads, or a MIGRATE under way. */
export type PausePurpose = 'client' | 'reload' | 'migrate'

/** A client whose commands wait for the pause to end (server/client.ts). */
export interface PostponedClient {
  /** Runs the commands that waited, as the pause allows now. */
  resume(): void
}

const RANK: Readonly<Record<PauseType, number>> = { off: 0, keys: 1, write: 2, all: 3 }

export class ClientPause {
  /** The strictest pause on now ('off': none): read once per command. */
  type: PauseType = 'off'
  /** When it ends, unix ms. */
  endMs = 0
  private readonly purposes = new Map<PausePurpose, { type: PauseType; endMs: number }>()
  private readonly postponed = new Set<PostponedClient>()
  private timer: NodeJS.Timeout | undefined
  /** The keys MIGRATE is moving, as `db:name`, with how many migrations hold each. */
  private readonly heldKeys = new Map<string, number>()

  /** redis pauseClients: a purpose's pause, made stricter or longer, never shorter or looser. */
  pause(purpose: PausePurpose, endMs: number, type: PauseType): void {
    const current = this.purposes.get(purpose)
    if (current === undefined) this.purposes.set(purpose, { type, endMs })
    else {
      // redis: the type can only grow stricter, the end only later.
      if (RANK[type] > RANK[current.type]) current.type = type
      if (endMs > current.endMs) current.endMs = endMs
    }
    this.update(Date.now())
  }

  /** redis unpauseClients: ends a purpose's pause. */
  unpause(purpose: PausePurpose): void {
    if (this.purposes.delete(purpose)) this.update(Date.now())
  }

  /** redis checkClientPauseTimeoutAndReturnIfPaused: ends what expired; whether a pause is still on. */
  paused(nowMs = Date.now()): boolean {
    if (this.type === 'off') return false
    if (this.endMs < nowMs) this.update(nowMs)
    return (this.type as PauseType) !== 'off'
  }

  /** Whether MIGRATE holds `db:name` now (kernel/pause-hold.ts). */
  holdsKey(id: string): boolean {
    return this.heldKeys.has(id)
  }

  /**
   * MIGRATE: until the returned release is called, every write to one of `names` (in database
   * `db`), and every write without keys (FLUSHALL, SWAPDB...), waits as in a pause, with what its
   * client sent after it; other commands go on. So no write lands on a key after its bytes left
   * for the target and before its deletion here: held writes run after it, find no key, and are
   * redirected (cluster routing) or create a new key (outside cluster mode), as after redis's
   * MIGRATE, which blocks the whole server meanwhile. While keys are held nothing expires for real
   * (as in any pause): a key cannot vanish under its own migration.
   */
  holdKeys(db: number, names: readonly string[]): () => void {
    const keys = names.map((name) => `${db}:${name}`)
    for (const key of keys) this.heldKeys.set(key, (this.heldKeys.get(key) ?? 0) + 1)
    this.pause('migrate', Number.MAX_SAFE_INTEGER, 'keys')
    let released = false
    return () => {
      if (released) return
      released = true
      for (const key of keys) {
        const count = this.heldKeys.get(key)! - 1
        if (count === 0) this.heldKeys.delete(key)
        else this.heldKeys.set(key, count)
      }
      if (this.heldKeys.size === 0) this.unpause('migrate')
      else this.resumeAll() // those waiting for a released key run; the others wait again
    }
  }

  /** A client waits for the end of the pause (redis blockClient(c, BLOCKED_POSTPONE)). */
  postpone(client: PostponedClient): void {
    this.postponed.add(client)
  }

  /** Clients waiting for the pause (INFO blocked_clients counts them, as redis does). */
  get postponedCount(): number {
    return this.postponed.size
  }

  /** A client that closed while it waited. */
  forget(client: PostponedClient): void {
    this.postponed.delete(client)
  }

  /** redis updateClientPauseTypeAndEndTime: the strictest live pause; waiting clients run again when it loosened. */
  private update(nowMs: number): void {
    const old = this.type
    let type: PauseType = 'off'
    for (const [purpose, pause] of this.purposes) {
      if (pause.endMs < nowMs) this.purposes.delete(purpose)
      else if (RANK[pause.type] > RANK[type]) type = pause.type
    }
    let endMs = 0
    for (const pause of this.purposes.values()) if (pause.type === type && pause.endMs > endMs) endMs = pause.endMs
    this.type = type
    this.endMs = endMs
    clearTimeout(this.timer)
    this.timer = undefined
    if (type !== 'off') {
      // Woken at the end (capped: a timer of more than 2^31 ms fires at once).
      this.timer = setTimeout(() => this.update(Date.now()), Math.min(endMs - nowMs + 1, 0x7fffffff))
      this.timer.unref()
    }
    if (RANK[type] < RANK[old]) this.resumeAll()
  }

  /** redis unblockPostponedClients: each waiting client runs its commands again (they may wait once more). */
  private resumeAll(): void {
    const waiting = [...this.postponed]
    this.postponed.clear()
    for (const client of waiting) client.resume()
  }

  /** Stops the end timer (server close). */
  close(): void {
    clearTimeout(this.timer)
    this.timer = undefined
  }
}
