/**
 * In process: the Bloom kernel's cost per item on one-layer filters from 1 GiB up, where a layer
 * of more than 4 GiB less 256 KiB is held in pieces, each in a WebAssembly memory of its own, and
 * the kernel runs once per piece (core/pieced-bitmap.ts, filter-batch.ts). Error rate 0.001
 * (k = 10), items of 16 bytes, BF.MADD-style calls of 1000 items.
 *
 * Each layer's pages are touched first (its bytes written once), so adds measure the probes, not
 * the first-touch page faults of a fresh memory. Each size runs in a process of its own. Then, in CPU time per item (process.cpuUsage):
 * adds of new items, checks of those items (every probe a hit), checks of absent items (most stop
 * at the first clear bit). One layer at a time; the process peaks near the largest layer's size.
 *
 * Run: npm run bench:big-layer     (BIG_LAYER_GIB="1 3.9 5.02" by default; BIG_LAYER_ITEMS=1048576;
 *                                  BIG_LAYER_PIECE_MIB=512 splits every layer in pieces of that size,
 *                                  to tell the cost of the pieces from the cost of the size)
 */
import { spawnSync } from 'node:child_process'
import { allocatePieces } from '../src/core/arena.js'
import { bitmapSlices } from '../src/core/pieced-bitmap.js'
import type { ItemList } from '../src/core/filter-batch.js'
import { ScalableBloomFilter } from '../src/core/scalable-filter.js'
import { layerGeometry } from '../src/core/sizing.js'

const ERROR_RATE = 0.001
const BATCH = 1000
const sizes = (process.env.BIG_LAYER_GIB ?? '1 3.9 5.02').split(/\s+/).filter(Boolean).map(Number)
const count = Number(process.env.BIG_LAYER_ITEMS ?? 1 << 20)
const pieceMiB = process.env.BIG_LAYER_PIECE_MIB === undefined ? undefined : Number(process.env.BIG_LAYER_PIECE_MIB)

function itemsOf(prefix: string): Buffer[] {
  return Array.from({ length: count }, (_, i) =>
    Buffer.from(`${prefix}:${String(i * 7919).padStart(16 - prefix.length - 1, '0')}`, 'latin1'),
  )
}

function listOf(items: readonly Buffer[]): ItemList {
  return { bytes: (i) => items[i]!, start: () => 0, end: (i) => items[i]!.length }
}

/** CPU nanoseconds per item of `run` over all items, BATCH at a time. */
function perItem(
  items: readonly Buffer[],
  run: (list: ItemList, from: number, to: number, out: Uint8Array) => number,
): number {
  const list = listOf(items)
  const out = new Uint8Array(items.length)
  const before = process.cpuUsage()
  for (let i = 0; i < items.length; i += BATCH) {
    const to = Math.min(items.length, i + BATCH)
    if (run(list, i, to, out) !== to) throw new Error('the kernel did not take every item')
  }
  const used = process.cpuUsage(before)
  return ((used.user + used.system) * 1000) / items.length
}

const added = itemsOf('add')
const absent = itemsOf('abs')
console.log(`bytes        pieces  add ns/item  check ns/item (present)  check ns/item (absent)`)
/** One layer of about `gib` GiB: its figures as a table row. */
function measure(gib: number): string {
  // Capacity for `gib` GiB of bits at ERROR_RATE (non-scaling: the rate is the layer's own).
  const bitsPerEntry = layerGeometry(1000, ERROR_RATE).bitsPerEntry
  const capacity = Math.floor((gib * 2 ** 30 * 8) / bitsPerEntry)
  let filter = new ScalableBloomFilter({ capacity, errorRate: ERROR_RATE, expansion: 2, nonScaling: true })
  if (pieceMiB !== undefined) {
    const parts = filter.toParts()
    const bitmap = allocatePieces(parts.layers[0]!.bitmap.length, pieceMiB * 2 ** 20)!
    filter = ScalableBloomFilter.fromParts({ ...parts, layers: [{ ...parts.layers[0]!, bitmap }] })
  }
  const layer = filter.layers[0]!
  for (const slice of bitmapSlices(layer.bitmap)) slice.fill(0)
  const add = perItem(added, (list, from, to, out) => filter.addMany(list, from, to, out, from))
  const present = perItem(added, (list, from, to, out) => filter.hasMany(list, from, to, out, from))
  const missing = perItem(absent, (list, from, to, out) => filter.hasMany(list, from, to, out, from))
  const pieces = layer.pieces?.length ?? 1
  return `${String(layer.bitmap.length).padEnd(12)} ${String(pieces).padEnd(7)} ${add.toFixed(0).padStart(11)}  ${present.toFixed(0).padStart(23)}  ${missing.toFixed(0).padStart(22)}`
}

if (sizes.length === 1) console.log(measure(sizes[0]!))
else {
  // One process per size: a layer's memory is given back only when its memories are collected,
  // and a layer measured beside the last one's pages measured the machine's memory pressure.
  for (const gib of sizes) {
    const run = spawnSync(process.execPath, process.argv.slice(1), {
      env: { ...process.env, BIG_LAYER_GIB: String(gib) },
      encoding: 'utf8',
    })
    process.stdout.write(run.stdout.split('\n').slice(1).join('\n') + run.stderr)
  }
}
