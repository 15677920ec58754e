/**
 * Giving a deleted large filter's memory back to the system soon. A layer of 64 MiB or more lives
 * in a WebAssembly memory of its own (core/arena.ts), which the engine frees only when the garbage
 * collector finds it unreachable; a server that allocates little may not collect for a long time,
 * so the memory of a deleted 1 GiB filter would stay resident. When the registry drops such a
 * filter (DEL, FLUSHALL, an overwrite, an expiry), one full collection is run shortly after: at
 * most one per {@link RECLAIM_DELAY_MS}, off the command's own turn.
 *
 * Anything still reading the filter (a BGSAVE, a full sync, a SCANDUMP reply) keeps it: the
 * collection frees only what nothing holds.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { OWN_ARENA_BYTES } from '../core/arena.js'
import type { ScalableBloomFilter } from '../core/scalable-filter.js'

/** How long after a large filter is dropped the collection runs (drops meanwhile share it). */
export const RECLAIM_DELAY_MS = 100

let collect: (() => void) | undefined
let pending: ReturnType<typeof setTimeout> | undefined

/** Whether `filter` holds a layer in a memory of its own (freed only by a collection). */
export function holdsOwnArena(filter: ScalableBloomFilter): boolean {
  for (const layer of filter.layers) if (layer.bitmap.length >= OWN_ARENA_BYTES) return true
  return false
}

/** Runs one full collection soon (see the module comment); repeated calls meanwhile share it. */
export function reclaimSoon(): void {
  if (pending !== undefined) return
  pending = setTimeout(() => {
    pending = undefined
    collectGarbage()
  }, RECLAIM_DELAY_MS)
  pending.unref()
}

function collectGarbage(): void {
  if (collect === undefined) {
    // Node exposes gc() only with --expose-gc; the flag applies to contexts made after it is set.
    setFlagsFromString('--expose-gc')
    collect = runInNewContext('gc') as () => void
  }
  collect()
}
