/**
 * The `maxmemory` budget: bytes held by all filter bitmaps, kept as a running count so that the
 * check before a command is one comparison (redis reads zmalloc's counter the same way). A bitmap
 * in a WebAssembly arena (core/arena.ts) counts at its own size, never at its arena's: the arena
 * made for a small filter is four times its bitmap, and INFO used_memory counts it the same way.
 *
 * The count is raised by every allocation of a filter, before it is made (a new filter, a
 * scale-up, RESTORE, BF.LOAD, BF.LOADCHUNK's header, a BFS.RESTORE-PART staging), and is recounted
 * exactly whenever it says "over", and by the server's once-a-second housekeeping, so that a DEL,
 * FLUSHALL or a command that failed after counting never leaves it wrong for long, and never makes
 * it refuse a command that fits. Bitmaps held outside the keyspace (BFS.RESTORE-PART's stagings)
 * are counted through {@link MemoryGuard.holdOutside}.
 */
/** What a guard counts: every database's bitmaps (store/databases.ts), or one registry's. */
export interface BitmapHolder {
  bitmapBytes(): number
  /** Drops what was abandoned by `nowMs` (a holder outside the keyspace: stagings left for minutes). */
  dropAbandoned?(nowMs: number): void
}

const GUARDS = new WeakMap<BitmapHolder, MemoryGuard>()

export class MemoryGuard {
  private usedBytes = 0
  private readonly outside = new Set<BitmapHolder>()

  private constructor(private readonly registry: BitmapHolder) {
    this.recount()
  }

  /** The guard of a server's databases (one per holder, made on first use). */
  static of(registry: BitmapHolder): MemoryGuard {
    let guard = GUARDS.get(registry)
    if (guard === undefined) {
      guard = new MemoryGuard(registry)
      GUARDS.set(registry, guard)
    }
    return guard
  }

  /** Bytes of all filter bitmaps, counted afresh. */
  recount(): number {
    let bytes = this.registry.bitmapBytes()
    for (const holder of this.outside) bytes += holder.bitmapBytes()
    this.usedBytes = bytes
    return bytes
  }

  /** The server's once-a-second look: abandoned bitmaps outside the keyspace dropped, the count made exact. */
  housekeeping(nowMs: number, maxBytes: number): void {
    for (const holder of this.outside) holder.dropAbandoned?.(nowMs)
    if (maxBytes > 0) this.recount()
  }

  /** Counts, from now on, the bitmaps `holder` keeps outside the keyspace. */
  holdOutside(holder: BitmapHolder): void {
    this.outside.add(holder)
  }

  /**
   * redis 7.0 evict.c getMaxmemoryState with noeviction: out of memory once used > maxmemory.
   * `maxBytes` 0 means no limit.
   */
  isOverLimit(maxBytes: number): boolean {
    if (maxBytes === 0 || this.usedBytes <= maxBytes) return false
    return this.recount() > maxBytes
  }

  /** Whether `bytes` more fit under `maxBytes` (0 = no limit). Checked before allocating. */
  canAllocate(maxBytes: number, bytes: number): boolean {
    if (maxBytes === 0 || this.usedBytes + bytes <= maxBytes) return true
    return this.recount() + bytes <= maxBytes
  }

  /** Records bytes just allocated for a filter. */
  allocated(bytes: number): void {
    this.usedBytes += bytes
  }

  /** Records bytes counted by {@link allocated} and dropped since (never below zero; the recount is exact). */
  released(bytes: number): void {
    this.usedBytes = Math.max(0, this.usedBytes - bytes)
  }
}
