/**
 * WATCH's state (redis 7.0 multi.c): every client's watched keys, and the writes that mark their
 * watchers. MULTI and WATCH themselves are in transactions/transactions.ts, EXEC in kernel/transaction.ts.
 */
import type { CommandArgs } from '../../protocol/command-args.js'
import type { FilterEntry } from '../../store/registry.js'
import type { Databases } from '../../store/databases.js'

/** A client as WATCH keeps it (kernel/context.ts ClientSession): the keys it watches. */
export interface Watcher {
  watch?: WatchState | undefined
}

/** What WATCH reads of a write's table entry (kernel/context.ts CommandEntry): its key positions and flags. */
export interface WatchedWrite {
  readonly spec: { readonly keys: readonly [number, number, number]; readonly flags: readonly string[] }
}

/** The keys a client WATCHes ({@link watchId}s), and whether one was written since (redis CLIENT_DIRTY_CAS). */
export interface WatchState {
  readonly keys: Set<string>
  touched: boolean
}

/**
 * A watched key's id: its database and its name (latin1 of its bytes), as redis's watchedKey
 * holds both. The database's digits end at the first ':'.
 */
export function watchId(db: number, key: string): string {
  return `${db}:${key}`
}

/** The database and the name of a {@link watchId}. */
export function splitWatchId(id: string): { db: number; key: string } {
  const colon = id.indexOf(':')
  return { db: Number(id.slice(0, colon)), key: id.slice(colon + 1) }
}

/**
 * Every client's WATCHed keys, by {@link watchId}: written keys mark their watchers.
 * Empty, as it nearly always is, it costs a write one size check.
 */
export class WatchedKeys {
  private readonly byKey = new Map<string, Set<Watcher>>()
  /** Whether the module command running opened its key for writing ({@link openedForWrite}). */
  private keyOpened = false
  /**
   * Told when a key becomes watched, while the WATCH runs (server/thread-plane.ts: the I/O
   * threads leave the key's commands to the main thread, whose writes touch its watchers).
   */
  keyWatched: ((db: number, key: string) => void) | undefined = undefined

  get size(): number {
    return this.byKey.size
  }

  /** Whether a client watches `key` in database `db`. */
  watches(db: number, key: string): boolean {
    return this.byKey.size > 0 && this.byKey.has(watchId(db, key))
  }

  /** WATCH of `key` in database `db`. */
  watch(client: Watcher, db: number, key: string): void {
    const id = watchId(db, key)
    const state = (client.watch ??= { keys: new Set(), touched: false })
    if (state.keys.has(id)) return
    state.keys.add(id)
    let clients = this.byKey.get(id)
    if (clients === undefined) {
      this.byKey.set(id, (clients = new Set()))
      this.keyWatched?.(db, key)
    }
    clients.add(client)
  }

  /** Forgets every key the client watches (UNWATCH, EXEC, DISCARD, RESET, disconnect). */
  unwatchAll(client: Watcher): void {
    const state = client.watch
    if (state === undefined) return
    for (const key of state.keys) {
      const clients = this.byKey.get(key)
      clients?.delete(client)
      if (clients?.size === 0) this.byKey.delete(key)
    }
    client.watch = undefined
  }

  /** A write to `key` in database `db` (redis signalModifiedKey → touchWatchedKey). */
  touch(db: number, key: string): void {
    this.touchId(watchId(db, key))
  }

  private touchId(id: string): void {
    const clients = this.byKey.get(id)
    if (clients !== undefined) for (const client of clients) client.watch!.touched = true
  }

  /** The watched keys among those a write command names (its COMMAND key positions; none: every one). */
  private watchedKeysOf(entry: WatchedWrite, argv: CommandArgs, db: number): string[] {
    const [first, last, step] = entry.spec.keys
    // FLUSHDB, FLUSHALL, SWAPDB: every watched key of every database is looked at.
    if (first === 0) return [...this.byKey.keys()]
    const keys: string[] = []
    const end = last < 0 ? argv.length + last : last
    for (let i = first; i <= end && i < argv.length; i += step) {
      const key = watchId(db, argv.bytes(i).toString('latin1', argv.start(i), argv.end(i)))
      if (this.byKey.has(key)) keys.push(key)
    }
    return keys
  }

  /**
   * Before a write runs: the state of the watched keys it may change, for {@link touchChanged}.
   * RedisBloom's commands open their key for writing, which touches it whatever they do
   * (RM_CloseKey): for those only the names are kept.
   */
  capture(entry: WatchedWrite, argv: CommandArgs, db: number, databases: Databases): WatchCapture {
    const keys = this.watchedKeysOf(entry, argv, db)
    this.keyOpened = false
    if (entry.spec.flags.includes('module')) return { keys, opened: true, before: [] }
    return {
      keys,
      opened: false,
      before: keys
        .map((id) => lookupWatched(databases, id))
        .map((found) => [found, found?.version ?? 0, found?.expiresAt] as const),
    }
  }

  /** The running command opened its key for writing: it touches it even if it fails. */
  opened(): void {
    this.keyOpened = true
  }

  /** The running command was refused as redis refuses before running one (-OOM): no key was opened. */
  notOpened(): void {
    this.keyOpened = false
  }

  /**
   * After the write: touches what it changed (redis signalModifiedKey on a real change only); a
   * module command, what it named if it succeeded or failed after opening its key.
   */
  touchChanged(capture: WatchCapture, databases: Databases, succeeded: boolean): void {
    capture.keys.forEach((id, i) => {
      if (capture.opened) {
        if (succeeded || this.keyOpened) this.touchId(id)
        return
      }
      const [entry, version, expiresAt] = capture.before[i]!
      const now = lookupWatched(databases, id)
      if (now !== entry || (now !== undefined && (now.version !== version || now.expiresAt !== expiresAt)))
        this.touchId(id)
    })
  }
}

/** The entry a {@link watchId} names, unless expired (an expired one is deleted, which touches it). */
export function lookupWatched(databases: Databases, id: string): FilterEntry | undefined {
  const { db, key } = splitWatchId(id)
  return databases.has(db) ? databases.db(db).get(key) : undefined
}

/** What {@link WatchedKeys.capture} saw before a write. */
export interface WatchCapture {
  readonly keys: string[]
  readonly opened: boolean
  readonly before: (readonly [FilterEntry | undefined, number, number | undefined])[]
}
