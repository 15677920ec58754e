#!/usr/bin/env node
/**
 * Full-sync capture of a large filter (docs/REPLICATION.md, "The full-sync payload"): how long
 * captureRegistry takes, how long the whole payload takes to read out, and the longest single
 * next() call (the event-loop stall a master's full sync can add; wall time, and the process's
 * CPU time over the call, which other processes on shared cores do not inflate), in two runs:
 *
 * - alone: next() after next(), yielding to the event loop between calls as a master does;
 * - under writes: BATCH BF.ADDs on the same filter between calls (every add then goes through the
 *   copy-on-write guard), with the copies' peak and the longest batch of adds.
 *
 * The payload of each run is fed to a SyncPayloadDecoder in the pieces next() returned (the
 * replica's side: its longest push() is printed too) and the decoded filter compared with the
 * capture-time state (its item count, and its bitmap's CRC-32 for the run alone).
 *
 *   npm run build && node bench/full-sync.mjs [sizeMiB=1024] [maxBytes=1048576] [batch=200]
 *
 * Needs about 3 × sizeMiB of memory (the filter, the decoded copy, the saved pieces).
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import zlib from 'node:zlib'
import { ScalableBloomFilter } from '../dist/core/scalable-filter.js'
import { captureRegistry } from '../dist/store/registry-capture.js'
import { FilterRegistry } from '../dist/store/registry.js'
import { SyncPayloadDecoder } from '../dist/store/sync-payload-decoder.js'

const sizeMiB = Number(process.argv[2] ?? 1024)
const maxBytes = Number(process.argv[3] ?? 1024 * 1024)
const batch = Number(process.argv[4] ?? 200)
const ms = (value) => `${value.toFixed(1)} ms`
const spread = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(2)
  return `p50 ${at(0.5)} / p99 ${at(0.99)} / max ${at(1)} ms`
}

function bigFilter() {
  // RedisBloom sizing: -ln(p)/ln²2 bits per item at p/2 for the first layer; capacity for ~sizeMiB.
  const bitsPerItem = -Math.log(0.005) / (Math.LN2 * Math.LN2)
  const capacity = Math.floor((sizeMiB * 1024 * 1024 * 8) / bitsPerItem)
  const filter = new ScalableBloomFilter({ capacity, errorRate: 0.01, expansion: 2, nonScaling: false })
  for (let i = 0; i < 100_000; i++) filter.add(Buffer.from(`before:${i}`))
  return filter
}

async function run(registry, label, between) {
  const filter = registry.get('big').filter
  const itemsAtCapture = filter.info().items
  const crcAtCapture = zlib.crc32(filter.layers[0].bitmap)
  const decoder = new SyncPayloadDecoder({ maxFilterBytes: 0 })
  const delay = monitorEventLoopDelay({ resolution: 1 })
  delay.enable()
  let started = performance.now()
  const capture = captureRegistry(registry)
  const captureMs = performance.now() - started
  const walls = []
  const cpus = []
  let longestPush = 0
  let calls = 0
  let empty = 0
  let bytes = 0
  started = performance.now()
  for (;;) {
    const cpu = process.cpuUsage()
    const t = performance.now()
    const piece = capture.next(maxBytes)
    walls.push(performance.now() - t)
    const used = process.cpuUsage(cpu)
    cpus.push((used.user + used.system) / 1000)
    if (piece === null) break
    calls++
    if (piece.length === 0) empty++
    bytes += piece.length
    const p = performance.now()
    decoder.push(piece)
    longestPush = Math.max(longestPush, performance.now() - p)
    between?.()
    await yieldToLoop()
  }
  const totalMs = performance.now() - started
  delay.disable()
  const [decoded] = [...decoder.filters()]
  const sameCrc =
    between === undefined ? zlib.crc32(decoded.filter.layers[0].bitmap) === crcAtCapture : 'n/a (bits changed)'
  console.log(
    `${label}: ${(bytes / 2 ** 20).toFixed(0)} MiB payload (totalBytes ${capture.totalBytes === bytes ? 'matches' : 'DIFFERS'})`,
  )
  console.log(
    `  captureRegistry ${ms(captureMs)}; read out in ${ms(totalMs)} over ${calls} next() calls (${empty} empty: checksumming)`,
  )
  console.log(`  next() wall ${spread(walls)}; CPU ${spread(cpus)}`)
  console.log(`  longest decoder.push() ${ms(longestPush)}; event-loop delay max ${ms(delay.max / 1e6)}`)
  console.log(
    `  decoded items ${decoded.filter.info().items} (at capture ${itemsAtCapture}); bitmap CRC as at capture: ${sameCrc}`,
  )
}

async function main() {
  console.log(`Node ${process.version}, ${sizeMiB} MiB filter, next(${maxBytes})`)
  const registry = new FilterRegistry()
  registry.set('big', bigFilter())
  await run(registry, 'alone')
  let n = 0
  let longestBatch = 0
  let peakSaved = 0
  const filter = registry.get('big').filter
  await run(registry, `under writes (${batch} BF.ADD between calls)`, () => {
    const t = performance.now()
    for (let i = 0; i < batch; i++) filter.add(Buffer.from(`during:${n++}`))
    longestBatch = Math.max(longestBatch, performance.now() - t)
    const guard = filter.layers[0].writeGuard
    if (guard !== null)
      peakSaved = Math.max(
        peakSaved,
        guard.copies.reduce((sum, copy) => sum + copy.savedBytes, 0),
      )
  })
  console.log(
    `  ${n} adds during the capture; longest batch of ${batch} ${ms(longestBatch)}; saved pieces at most ${(peakSaved / 2 ** 20).toFixed(0)} MiB`,
  )
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
