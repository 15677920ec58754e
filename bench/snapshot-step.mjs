#!/usr/bin/env node
/**
 * A background save's step alone (store/filter-file-write.ts: copy a 2 MiB slice of the bitmap into
 * the scratch buffer, then the native CRC-32 over it), timed slice by slice over a bitmap of
 * `sizeMiB` in a WebAssembly arena (core/arena.ts, as every filter of 64 MiB or more now) and over
 * a plain array (the path before arenas), every page written first. The CPU work of a step, apart
 * from bench/snapshot.mjs's disk, load and event loop; on a busy machine the median and the
 * minimum mean more than the maximum (a step may be descheduled). Also checks that both give the
 * same CRC-32 (the same bytes).
 *
 *   npm run build && node bench/snapshot-step.mjs [sizeMiB=1024] [rounds=3]
 */
import { arenaOf } from '../dist/core/arena.js'
import { allocateBitmap } from '../dist/core/bitmap.js'
import { SLICE_BYTES } from '../dist/store/filter-file-write.js'
import { nativeCrc32 } from '../dist/store/native-crc32.js'

const sizeMiB = Number(process.argv[2] ?? 1024)
const rounds = Number(process.argv[3] ?? 3)
const bytes = sizeMiB * 1024 * 1024

function fill(bitmap) {
  // A pattern on every page (every page resident, as in a filter that took many adds).
  for (let at = 0; at < bitmap.length; at += 4096) bitmap[at] = (at / 4096) & 0xff
  for (let at = 7; at < bitmap.length; at += 997) bitmap[at] = 0x5a
}

function steps(bitmap) {
  const scratch = Buffer.allocUnsafe(SLICE_BYTES)
  const times = []
  let crc = 0
  for (let round = 0; round < rounds; round++) {
    crc = 0
    for (let offset = 0; offset < bitmap.length; offset += SLICE_BYTES) {
      const started = performance.now()
      const length = Math.min(SLICE_BYTES, bitmap.length - offset)
      scratch.set(bitmap.subarray(offset, offset + length))
      crc = nativeCrc32(scratch.subarray(0, length), crc)
      times.push(performance.now() - started)
    }
  }
  times.sort((a, b) => a - b)
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))]
  return { crc, min: times[0], median: at(0.5), p99: at(0.99), max: times[times.length - 1], count: times.length }
}

const results = []
for (const kind of ['arena', 'plain']) {
  const bitmap = kind === 'arena' ? allocateBitmap(bytes) : new Uint8Array(bytes)
  if (kind === 'arena' && arenaOf(bitmap) === undefined) throw new Error('the bitmap did not get an arena')
  fill(bitmap)
  results.push({ kind, ...steps(bitmap) })
}
console.log(
  `bitmap ${sizeMiB} MiB, ${SLICE_BYTES / 1024 / 1024} MiB slices, ${rounds} rounds; ms per step (copy + CRC-32)`,
)
for (const r of results) {
  console.log(
    `${r.kind.padEnd(6)} steps ${r.count}  min ${r.min.toFixed(2)}  median ${r.median.toFixed(2)}  p99 ${r.p99.toFixed(2)}  max ${r.max.toFixed(2)}  crc ${r.crc.toString(16)}`,
  )
}
console.log(results[0].crc === results[1].crc ? 'same bytes (CRC-32 equal)' : 'DIFFERENT CRC-32')
