#!/usr/bin/env node
/**
 * Issue 21's two ways for a command's items to reach the Bloom kernel, measured in process: the
 * read lands in an ordinary buffer and filter-batch.ts copies the command's items into the arena's
 * scratch area (what the server does), or the read lands in the filter's own arena and the kernel
 * reads the items where the request parser found them (filter-batch.ts describeInPlace: the
 * descriptors only, no copy). Same requests, same parser, same filter: pipelined reads of
 * BF.MEXISTS ×10 (items present) and BF.MADD ×10 (new items) on a 10M-capacity filter at 0.01
 * (one 12 MB layer, k = 7) holding 1M items, as bench/wire.sh sets it up. CPU time per command
 * (process.cpuUsage), rounds alternating between the ways, medians.
 *
 *   npm run build && node bench/read-in-arena.mjs [rounds=9] [commands per read=400]
 */
import { allocateArenaBitmap, arenaOf } from '../dist/core/arena.js'
import { ScalableBloomFilter } from '../dist/core/scalable-filter.js'
import { RequestParser } from '../dist/protocol/request-parser.js'

const rounds = Number(process.argv[2] ?? 9)
const perRead = Number(process.argv[3] ?? 400)
const reads = 25
const median = (values) => [...values].sort((p, q) => p - q)[Math.floor(values.length / 2)]

const filter = new ScalableBloomFilter({ capacity: 10_000_000, errorRate: 0.01, expansion: 2, nonScaling: false })
const layer = filter.toParts().layers[0].bitmap
for (let i = 0; i < 1_000_000; i++) filter.add(Buffer.from(String(i)))

let random = 12345
const next = (range) => {
  random = (Math.imul(random, 1103515245) + 12345) >>> 0
  return random % range
}
const bulk = (text) => `$${Buffer.byteLength(text)}\r\n${text}\r\n`
/** `reads` pipelined reads, each `perRead` commands of ten items. */
function requests(name, item) {
  return Array.from({ length: reads }, () => {
    let text = ''
    for (let c = 0; c < perRead; c++) {
      text += `*12\r\n${bulk(name)}${bulk('bench')}`
      for (let j = 0; j < 10; j++) text += bulk(item())
    }
    return Buffer.from(text)
  })
}
const present = requests('BF.MEXISTS', () => String(next(1_000_000)))
let fresh = 2_000_000
const adds = () => requests('BF.MADD', () => String(fresh++))

const largest = Math.max(...present.map((read) => read.length)) + 64 * 1024
const region = allocateArenaBitmap(largest, layer)
if (region === undefined || arenaOf(region)?.bytes.buffer !== layer.buffer) throw new Error("no room for a read buffer in the filter's arena")
const inArena = Buffer.from(region.buffer, region.byteOffset, region.length)
const plain = Buffer.alloc(largest)

const out = new Uint8Array(16)
let answered = 0
function onCommand(args) {
  const n = args.length
  const add = args.get(0)[3] === 0x4d // BF.MADD
  const done = add ? filter.addMany(args, 2, n, out, 0) : filter.hasMany(args, 2, n, out, 0)
  if (done !== n) throw new Error('the kernel did not take every item')
  for (let j = 0; j < n - 2; j++) answered += out[j]
}

/** CPU ns per command for one way: each read copied into `buffer` (untimed), then parsed and run. */
function run(buffer, batch) {
  const parser = new RequestParser()
  let ns = 0
  for (const read of batch) {
    buffer.set(read)
    const started = process.cpuUsage()
    parser.parse(buffer, onCommand, read.length)
    const used = process.cpuUsage(started)
    ns += (used.user + used.system) * 1000
  }
  return ns / (batch.length * perRead)
}

const ways = [['read copied into the scratch area', plain], ['read in the arena, items in place', inArena]]
for (const [label, batchOf] of [['BF.MEXISTS ×10, present', () => present], ['BF.MADD ×10, new', adds]]) {
  const times = ways.map(() => [])
  run(plain, batchOf()) // warm-up
  run(inArena, batchOf())
  // Every batch made before any is timed; the order of the ways alternates round by round.
  const batches = Array.from({ length: rounds }, () => ways.map(() => batchOf()))
  globalThis.gc?.()
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0]
    for (const i of order) times[i].push(run(ways[i][1], batches[round][i]))
  }
  console.log(`${label}: CPU ns per command, median of ${rounds} rounds of ${reads * perRead} commands`)
  const base = median(times[0])
  ways.forEach(([name], i) => {
    const value = median(times[i])
    console.log(`  ${name.padEnd(36)} ${value.toFixed(0).padStart(6)} ns  ${(base / value).toFixed(2)}×`)
  })
}
if (answered === 0) throw new Error('no item answered 1')
