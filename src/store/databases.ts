/**
 * The numbered databases of one server (redis server.db[0 .. databases-1]): a
 * {@link FilterRegistry} per index, made on first use, so that sixteen databases nobody selects
 * cost nothing. What is server-wide lives here: the change counter save rules read and the expiry
 * policy (shared by every database, {@link KeyspaceShared}), the bytes of every bitmap (maxmemory),
 * the count of every key, FLUSHALL, SWAPDB, and the walk over every key a snapshot, a rewrite and
 * a full sync take.
 *
 * Every registry keeps its index for life: SWAPDB swaps the keys of two databases, not the
 * registries (redis dbSwapDatabases swaps the dicts), so `server.registry` is always database 0.
 */
import os from 'node:os'
import { limitPiecedLayers } from '../core/arena.js'
import { ConfigError } from '../runtime/config-values.js'
import { type FilterEntry, FilterRegistry, KeyspaceShared, KeyspaceView } from './registry.js'

/** A whole dataset, as a snapshot saves and loads it: a server's databases, or one registry alone. */
export type Dataset = Databases | FilterRegistry

/** redis's default `databases`. */
export const DEFAULT_DATABASES = 16

/**
 * How many databases the server has for its configured `databases`. The one place cluster mode
 * forces a single database, database 0, as redis does (`cluster-enabled yes` makes SELECT of any
 * other index, MOVE and SWAPDB fail: commands/keyspace/databases.ts).
 */
export function databaseCount(configured: number, clusterEnabled = false): number {
  return clusterEnabled ? 1 : configured
}

/**
 * The databases of a server configured so: `databases` of them (see {@link databaseCount}).
 * @throws ConfigError when `http-db` names none of them
 */
export function databasesFor(config: {
  readonly databases: number
  readonly 'http-db': number
  readonly 'cluster-enabled'?: boolean
}): Databases {
  // A layer larger than one memory is refused beyond the machine's memory (core/arena.ts).
  limitPiecedLayers(os.totalmem())
  const databases = new Databases(databaseCount(config.databases, config['cluster-enabled']))
  if (!databases.has(config['http-db'])) {
    throw new ConfigError(`http-db ${config['http-db']}: no such database (databases is ${databases.count})`)
  }
  return databases
}

/** Below this index databases sit in an array (the per-command path); above it in a Map. */
const ARRAY_SLOTS = 1024

/** A server's numbered databases: a FilterRegistry per index, made when first used (see the module comment). */
export class Databases extends KeyspaceView {
  private readonly slots: (FilterRegistry | undefined)[]
  private readonly far = new Map<number, FilterRegistry>()

  /** `count`: how many databases (SELECT takes 0 to count - 1). */
  constructor(
    readonly count = DEFAULT_DATABASES,
    shared = new KeyspaceShared(),
  ) {
    super(shared)
    if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`no server has ${count} databases`)
    this.slots = new Array<FilterRegistry | undefined>(Math.min(count, ARRAY_SLOTS)).fill(undefined)
  }

  /** The databases of a dataset: a server's, or those of one registry alone (its index the last). */
  static of(dataset: Dataset): Databases {
    if (dataset instanceof Databases) return dataset
    const databases = new Databases(dataset.index + 1, dataset.shared)
    if (dataset.index < ARRAY_SLOTS) databases.slots[dataset.index] = dataset
    else databases.far.set(dataset.index, dataset)
    return databases
  }

  /** Whether `index` names a database (redis selectDb: 0 <= index < databases). */
  has(index: number): boolean {
    return Number.isInteger(index) && index >= 0 && index < this.count
  }

  /** Database `index` (made now if it never was). The caller checked {@link has}. */
  db(index: number): FilterRegistry {
    return this.slots[index] ?? this.make(index)
  }

  private make(index: number): FilterRegistry {
    if (!this.has(index)) throw new RangeError(`no database ${index}`)
    const made = new FilterRegistry(index, this.shared)
    if (index < ARRAY_SLOTS) this.slots[index] = made
    else if (this.far.has(index)) return this.far.get(index)!
    else this.far.set(index, made)
    return made
  }

  /** The databases made so far, by index (those never used hold nothing). */
  made(): FilterRegistry[] {
    const made: FilterRegistry[] = []
    for (const registry of this.slots) if (registry !== undefined) made.push(registry)
    if (this.far.size > 0) made.push(...[...this.far.values()].sort((a, b) => a.index - b.index))
    return made
  }

  /** Every filter held in every database, expired ones included. */
  get size(): number {
    let total = 0
    for (const registry of this.made()) total += registry.size
    return total
  }

  /** Bytes of bitmap held by every filter of every database (maxmemory, INFO). */
  bitmapBytes(): number {
    let total = 0
    for (const registry of this.made()) total += registry.bitmapBytes()
    return total
  }

  /** Every entry held, expired or not, database by database (a snapshot, a full sync). */
  *allEntries(): IterableIterator<{ readonly db: number; readonly entry: FilterEntry }> {
    for (const registry of this.made()) for (const entry of registry.allEntries()) yield { db: registry.index, entry }
  }

  /** FLUSHALL: empties every database; returns how many keys it held. */
  clear(): number {
    let removed = 0
    for (const registry of this.made()) removed += registry.clear()
    return removed
  }

  /** SWAPDB: database `a` takes `b`'s keys and `b` takes `a`'s (the caller checked both with {@link has}). */
  swap(a: number, b: number): void {
    if (a !== b) this.db(a).swapContents(this.db(b))
  }
}

/**
 * MOVE: `name` leaves `from` for `to` with its expiry (redis moveCommand: dbAdd, setExpire,
 * dbDelete). The caller checked that it is in `from` and not in `to`.
 */
export function moveKey(from: FilterRegistry, to: FilterRegistry, entry: FilterEntry): void {
  from.delete(entry.name)
  const moved = to.set(entry.name, entry.filter)
  moved.healthWatch = entry.healthWatch // warned once, in either database
  if (entry.expiresAt !== undefined) to.setExpiry(moved, entry.expiresAt)
}
