/**
 * The keys of each hash slot (redis 7.0 cluster.c's slot_to_keys: a list per slot, kept on every
 * dbAdd / dbDelete), so CLUSTER COUNTKEYSINSLOT answers at once and CLUSTER GETKEYSINSLOT lists a
 * slot's keys without a walk over the keyspace. A registry holds one only once
 * {@link FilterRegistry.indexSlots} turned it on (cluster mode, database 0): without it the
 * per-key path pays nothing.
 *
 * A slot is computed from the key's raw bytes (the registry's names are latin1 strings, one char
 * per byte, so the string's char codes are the bytes the client sent).
 */
import { CLUSTER_SLOTS, keyHashSlot } from '../core/key-slot.js'

/** A reusable buffer for the bytes of short names (most keys): no allocation per key. */
const SCRATCH = Buffer.alloc(256)

/** The hash slot of a stored name (its latin1 chars are the key's bytes). */
export function slotOfName(name: string): number {
  const bytes = name.length <= SCRATCH.length ? SCRATCH : Buffer.allocUnsafe(name.length)
  const length = bytes.write(name, 0, 'latin1')
  return keyHashSlot(bytes, 0, length)
}

/** The names held in each slot; a slot's Set is made on its first key and dropped with its last. */
export class SlotIndex {
  private readonly slots: (Set<string> | undefined)[] = new Array<Set<string> | undefined>(CLUSTER_SLOTS).fill(
    undefined,
  )

  /** Records a name (set twice: once). */
  add(name: string): void {
    const slot = slotOfName(name)
    let names = this.slots[slot]
    if (names === undefined) {
      names = new Set()
      this.slots[slot] = names
    }
    names.add(name)
  }

  /** Forgets a name (absent: nothing). */
  remove(name: string): void {
    const slot = slotOfName(name)
    const names = this.slots[slot]
    if (names === undefined) return
    names.delete(name)
    if (names.size === 0) this.slots[slot] = undefined
  }

  /** How many names the slot holds (0 .. 16383; the caller checked the range). */
  count(slot: number): number {
    return this.slots[slot]?.size ?? 0
  }

  /** At most `max` names of the slot, oldest first. */
  names(slot: number, max: number): string[] {
    const found: string[] = []
    const names = this.slots[slot]
    if (names === undefined || max <= 0) return found
    for (const name of names) {
      found.push(name)
      if (found.length >= max) break
    }
    return found
  }
}
