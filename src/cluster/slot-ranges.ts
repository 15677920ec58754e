/**
 * Slot sets as CLUSTER NODES and nodes.conf print them: maximal ranges `a-b`, a lone slot as `a`
 * (redis 7.0 cluster.c representSlotInfo). `redis-cli --cluster` compares these tokens as strings
 * across nodes, so every node must print the same maximal ranges.
 */
import { CLUSTER_SLOTS } from '../core/key-slot.js'

/** The maximal runs of slots for which `has(slot)` holds, as [start, end] pairs. */
export function slotRanges(has: (slot: number) => boolean): [number, number][] {
  const ranges: [number, number][] = []
  let start = -1
  for (let slot = 0; slot <= CLUSTER_SLOTS; slot++) {
    const inside = slot < CLUSTER_SLOTS && has(slot)
    if (inside && start === -1) start = slot
    else if (!inside && start !== -1) {
      ranges.push([start, slot - 1])
      start = -1
    }
  }
  return ranges
}

/** `a-b` or `a`, as redis prints a range. */
export function rangeToken([start, end]: readonly [number, number]): string {
  return start === end ? String(start) : `${start}-${end}`
}

/** Whether `text` is a slot number 0 .. 16383 written in plain decimal. */
function slotNumber(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined
  const slot = Number(text)
  return slot < CLUSTER_SLOTS ? slot : undefined
}

/** One slot token of a NODES line: a range, or a migrating/importing marker. */
export type SlotToken =
  | { readonly kind: 'range'; readonly start: number; readonly end: number }
  | { readonly kind: 'migrating' | 'importing'; readonly slot: number; readonly nodeId: string }

/** Parses `a`, `a-b`, `[s->-id]`, `[s-<-id]` (redis clusterLoadConfig); undefined when malformed. */
export function parseSlotToken(token: string): SlotToken | undefined {
  const open = /^\[(\d+)-([<>])-([0-9a-f]{40})\]$/.exec(token)
  if (open !== null) {
    const slot = slotNumber(open[1]!)
    if (slot === undefined) return undefined
    return { kind: open[2] === '>' ? 'migrating' : 'importing', slot, nodeId: open[3]! }
  }
  const dash = token.indexOf('-')
  const start = slotNumber(dash === -1 ? token : token.slice(0, dash))
  const end = dash === -1 ? start : slotNumber(token.slice(dash + 1))
  if (start === undefined || end === undefined || start > end) return undefined
  return { kind: 'range', start, end }
}
