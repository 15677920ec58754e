#!/usr/bin/env node
/**
 * The bitmap operations of bitmap-ops.wat in process (issue 21), each beside the JavaScript loop
 * it replaced, CPU time per unit (process.cpuUsage), rounds alternating between the ways, medians:
 *
 * 1. BF.MERGE's OR of one layer into another: the byte loop merge.ts had; the kernel on two
 *    bitmaps of one arena; the kernel through the scratch area (source in another arena);
 * 2. fill counting (countSetBits): the JavaScript loop (four bytes at a time) and the kernel;
 * 3. window filters (APBF.ADD / APBF.EXISTS per item): the JavaScript loops (slices copied out of
 *    the arenas) and the kernel;
 * 4. the Bloom kernel's adds (hashItems + addLayer, 1024 new 16-byte items per call, a 13.8 MB
 *    layer, k = 7) on a plain memory, a shared one, and a shared one with atomic sets
 *    (i32.atomic.rmw8.or_u): variants of bloom-kernel.wat compiled here.
 *
 *   npm run build && node bench/bitmap-ops.mjs [rounds=7] [merge|count|window|kernel: one part only]
 */
import { readFileSync } from 'node:fs'
import { allocateArenaBitmap, Arena, SCRATCH_BYTES } from '../dist/core/arena.js'
import { countSetBitsLoop, countSetBits } from '../dist/core/bitmap.js'
import { orBitmap } from '../dist/core/bitmap-ops.js'
import { WindowFilter } from '../dist/core/window-filter.js'
import { compileWat } from '../scripts/build-wasm.mjs'

const rounds = Number(process.argv[2] ?? 7)
const only = process.argv[3]
const part = (name) => only === undefined || only === name
const median = (values) => [...values].sort((p, q) => p - q)[Math.floor(values.length / 2)]
const cpuNs = (run) => {
  const started = process.cpuUsage()
  run()
  const used = process.cpuUsage(started)
  return (used.user + used.system) * 1000
}

/** Runs each way `rounds` times, alternating; prints ns per unit, medians. */
function compare(title, unit, ways) {
  const times = ways.map(() => [])
  for (let round = 0; round < rounds; round++) {
    ways.forEach((way, i) => times[i].push(cpuNs(way.run) / way.units))
  }
  console.log(`\n${title}`)
  const base = median(times[0])
  for (const [i, way] of ways.entries()) {
    const ns = median(times[i])
    console.log(
      `  ${way.name.padEnd(44)} ${ns.toFixed(ns < 10 ? 3 : 1).padStart(9)} ns/${unit}   ${(base / ns).toFixed(2)}x`,
    )
  }
}

function randomFill(bytes, seed) {
  let x = seed
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4)
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    words[i] = x & (x >>> 3) // about a quarter of the bits set
  }
}

function mergeBench(bytes) {
  const dst = allocateArenaBitmap(bytes)
  const src = allocateArenaBitmap(bytes)
  const other = allocateArenaBitmap(bytes) // a third: for a shared arena, maybe another arena
  randomFill(dst, 1)
  randomFill(src, 2)
  randomFill(other, 3)
  const own = new Arena(Math.ceil((SCRATCH_BYTES + bytes) / 65536) * 65536, true)
  const far = new Uint8Array(own.bytes.buffer, own.take(bytes), bytes)
  far.set(src)
  const sameArena = bytes < 64 * 1024 * 1024
  const ways = [
    {
      name: 'JavaScript byte loop (before)',
      units: bytes / 1024,
      run: () => {
        for (let j = 0; j < bytes; j++) dst[j] = dst[j] | src[j]
      },
    },
    { name: 'kernel, source through the scratch area', units: bytes / 1024, run: () => orBitmap(dst, far) },
  ]
  if (sameArena)
    ways.splice(1, 0, { name: 'kernel, source in the same arena', units: bytes / 1024, run: () => orBitmap(dst, src) })
  compare(
    `BF.MERGE's OR, ${bytes / 1048576} MiB layers${sameArena ? '' : ' (own arenas: never the same one)'}`,
    'KiB',
    ways,
  )
}

function countBench(bytes) {
  const bitmap = allocateArenaBitmap(bytes)
  randomFill(bitmap, 5)
  if (countSetBits(bitmap) !== countSetBitsLoop(bitmap)) throw new Error('counts differ')
  compare(`fill counting, ${bytes / 1048576} MiB`, 'KiB', [
    { name: 'JavaScript loop, 4 bytes at a time (before)', units: bytes / 1024, run: () => countSetBitsLoop(bitmap) },
    { name: 'kernel (i64.popcnt)', units: bytes / 1024, run: () => countSetBits(bitmap) },
  ])
}

function windowBench(kind) {
  const options = { kind, errorRate: 0.01, capacity: 100_000, windowMs: kind === 'time' ? 60_000 : undefined }
  const kernel = new WindowFilter(options)
  const parts = kernel.toParts()
  const loops = WindowFilter.fromParts({
    ...parts,
    slices: parts.slices.map((slice) => ({ ...slice, bitmap: slice.bitmap.slice() })),
  })
  const items = Array.from({ length: 100_000 }, (_, i) => Buffer.from(`window:${String(i * 7919).padStart(9, '0')}`))
  // Each filter its own clock (1 ms per add), so both see the same times.
  const clocks = new Map([
    [kernel, 1_000_000],
    [loops, 1_000_000],
  ])
  const adds = (filter) => () => {
    let clock = clocks.get(filter)
    for (const item of items) filter.add(item, 0, item.length, clock++)
    clocks.set(filter, clock)
  }
  const checks = (filter) => () => {
    for (const item of items) filter.has(item, 0, item.length, clocks.get(filter))
  }
  compare(`APBF.ADD, ${kind.toUpperCase()} 0.01 100k (${kernel.slices.length} slices, k = ${kernel.k})`, 'item', [
    { name: 'JavaScript loops (before)', units: items.length, run: adds(loops) },
    { name: 'kernel', units: items.length, run: adds(kernel) },
  ])
  compare(`APBF.EXISTS, ${kind.toUpperCase()} 0.01 100k`, 'item', [
    { name: 'JavaScript loops (before)', units: items.length, run: checks(loops) },
    { name: 'kernel', units: items.length, run: checks(kernel) },
  ])
}

/** bloom-kernel.wat as given, unshared, or with atomic sets; undefined when the text it edits is gone. */
async function kernelVariant(kind) {
  let source = readFileSync(new URL('../src/core/bloom-kernel.wat', import.meta.url), 'utf8')
  if (kind === 'plain') source = source.replace('(memory 1 65536 shared)', '(memory 1 65536)')
  if (kind === 'atomic') {
    const plainSet =
      /\(local\.set \$old \(i32\.load8_u \(local\.get \$at\)\)\)\s*\(i32\.store8 \(local\.get \$at\) \(i32\.or \(local\.get \$old\) (\(i32\.shl \(i32\.const 1\) \(local\.get \$bit\)\))\)\)/
    if (!plainSet.test(source)) return undefined
    source = source.replace(plainSet, '(local.set $$old (i32.atomic.rmw8.or_u (local.get $$at) $1))')
  }
  return compileWat(source, `bloom-kernel-${kind}.wat`)
}

const N_ITEMS = 1024
const DESC = 64,
  PAIRS = DESC + N_ITEMS * 8,
  FLAGS = PAIRS + N_ITEMS * 16,
  ITEMS = FLAGS + N_ITEMS

/**
 * 100 batches of N_ITEMS new 16-byte items written into `memory`'s scratch area as filter-batch.ts
 * lays them out, each batch handed to `kernel` (hashItems + addLayer) when one is given.
 */
function addBatches(memory, kernel, bitCount, hashCount) {
  const mem = new Uint8Array(memory.buffer)
  const words = new Uint32Array(memory.buffer)
  let counter = 0
  return () => {
    for (let batch = 0; batch < 100; batch++) {
      for (let i = 0; i < N_ITEMS; i++) {
        const at = ITEMS + 16 * i
        const text = `k:${String(counter++).padStart(14, '0')}`
        for (let c = 0; c < 16; c++) mem[at + c] = text.charCodeAt(c)
        words[DESC / 4 + 2 * i] = at
        words[DESC / 4 + 2 * i + 1] = 16
      }
      kernel?.hashItems(DESC, N_ITEMS, PAIRS)
      mem.fill(0, FLAGS, FLAGS + N_ITEMS)
      kernel?.addLayer(PAIRS, FLAGS, 0, N_ITEMS, SCRATCH_BYTES, bitCount, hashCount, N_ITEMS, 0)
    }
  }
}

async function kernelBench() {
  const layerBytes = 13_800_000
  const pages = Math.ceil((SCRATCH_BYTES + layerBytes) / 65536)
  const ways = []
  for (const kind of ['plain', 'shared', 'atomic']) {
    const bytes = await kernelVariant(kind)
    if (bytes === undefined) {
      console.log(`\n(no ${kind} variant: bloom-kernel.wat's set changed)`)
      continue
    }
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: kind !== 'plain' })
    const kernel = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory } }).exports
    const name = `${kind} memory${kind === 'atomic' ? ' (shared), atomic sets' : ''}`
    ways.push({ name, units: 100 * N_ITEMS, run: addBatches(memory, kernel, layerBytes * 8, 7), memory })
  }
  // The items built as in those runs, no kernel call: subtract it to see the kernel's own part.
  const spare = new WebAssembly.Memory({ initial: SCRATCH_BYTES / 65536, maximum: SCRATCH_BYTES / 65536 })
  const buildOnly = { name: '(building the items only, no kernel)', units: 100 * N_ITEMS, run: addBatches(spare) }
  compare('Bloom kernel adds (hashItems + addLayer, new 16-byte items, 13.8 MB layer, k = 7)', 'item', [
    ...ways,
    buildOnly,
  ])
  const bits = ways.map((way) => new Uint8Array(way.memory.buffer, SCRATCH_BYTES, layerBytes))
  for (const other of bits.slice(1))
    if (Buffer.compare(bits[0], other) !== 0) throw new Error('the variants set different bits')
}

console.log(`node ${process.version}, ${rounds} rounds, medians of CPU time`)
if (part('merge')) for (const bytes of [1 << 20, 16 << 20, 256 << 20]) mergeBench(bytes)
if (part('count')) for (const bytes of [1 << 20, 256 << 20]) countBench(bytes)
if (part('window')) for (const kind of ['count', 'time']) windowBench(kind)
if (part('kernel')) await kernelBench()
