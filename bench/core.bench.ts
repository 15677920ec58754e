/**
 * In process: the filter core without a server. MurmurHash64A on 16/64/256-byte Buffers (one
 * hash in JavaScript, and the pair an item needs, by the WebAssembly module and in JavaScript), then add
 * and check on one-layer filters of 1e3 to 1e8 bits (k = 7, as for error rate 0.01), beside the npm
 * `bloomfilter` package (FNV-1a over strings) with the same bits and k in the same run. bfs three
 * ways: `add`/`has` one item at a time by the JavaScript loops over a plain array (the path before
 * the WebAssembly arenas, still taken by seeded filters and layers outside the arenas), and the
 * Bloom kernel over an arena bitmap (core/filter-batch.ts) one item per call (BF.ADD, BF.EXISTS)
 * and ten per call (BF.MADD, BF.MEXISTS ×10: items/s is the column to compare).
 *
 * Then the same three ways again as CPU time per item (process.cpuUsage, which other processes on
 * the cores inflate far less than wall time), in rounds that alternate between the ways, medians
 * of the rounds, and the kernel's ratio to the JavaScript loops: the figure to compare on a busy
 * machine. There the kernel's items lie two ways: each in a Buffer of its own, as above, and in one
 * buffer with RESP headers between them, as the request parser leaves a command read whole.
 *
 * Run: npm run bench:core       (BENCH_SECONDS=2 for longer samples; CORE_ROUNDS=15 for more
 *                                rounds; CORE_CPU_ONLY=1 for the CPU-time table alone)
 */
import { BloomFilter } from 'bloomfilter'
import { allocateBitmap } from '../src/core/bitmap.js'
import type { ItemList } from '../src/core/filter-batch.js'
import { CommandArgs } from '../src/protocol/command-args.js'
import { murmurHash64A, murmurHash64AChained, murmurHash64AChainedJs } from '../src/core/murmur-hash.js'
import { ScalableBloomFilter } from '../src/core/scalable-filter.js'
import { REDISBLOOM_HASHING } from '../src/core/hashing.js'
import { bitsPerEntryFor, hashCountFor } from '../src/core/sizing.js'
import { runSuite, type BenchCase } from './run-suite.js'

const ERROR_RATE = 0.01
const ITEM_COUNT = 1 << 16
// 16-byte items, as Buffers for bfs and as the same text for `bloomfilter` (which takes strings).
const itemTexts = Array.from({ length: ITEM_COUNT }, (_, i) => `item:${String(i * 7919).padStart(11, '0')}`)
const items = itemTexts.map((text) => Buffer.from(text, 'latin1'))

const out = new Uint32Array(4)
const hashCases: BenchCase[] = [16, 64, 256].flatMap((size) => {
  const data = Buffer.alloc(size, 0x61)
  return [
    {
      name: `MurmurHash64A ${size} B (JS)`,
      fn: () => murmurHash64A(data, 0, data.length, 0xc6a4a793, 0x5bd1e995, out, 0),
    },
    {
      name: `pair ${size} B (WebAssembly)`,
      fn: () => murmurHash64AChained(data, 0, data.length, 0xc6a4a793, 0x5bd1e995, false, out),
    },
    {
      name: `pair ${size} B (JS)`,
      fn: () => murmurHash64AChainedJs(data, 0, data.length, 0xc6a4a793, 0x5bd1e995, false, out),
    },
  ]
})
/** CORE_CPU_ONLY=1: only the CPU-time table at the end. */
const cpuOnly = process.env.CORE_CPU_ONLY !== undefined
if (!cpuOnly) runSuite('MurmurHash64A', hashCases)

/**
 * A one-layer bfs filter of about `bits` bits that never fills: its capacity is set above any
 * item count, so every add takes the normal path (no scale-up, no "full" answer).
 */
function bfsFilter(bits: number, inArena: boolean): ScalableBloomFilter {
  const bitCount = Math.ceil(bits / 64) * 64
  const bitsPerEntry = bitsPerEntryFor(ERROR_RATE)
  return ScalableBloomFilter.fromParts({
    hashing: REDISBLOOM_HASHING,
    expansion: 2,
    nonScaling: false,
    layers: [
      {
        capacity: Number.MAX_SAFE_INTEGER,
        errorRate: ERROR_RATE,
        bitsPerEntry,
        hashCount: hashCountFor(bitsPerEntry),
        bitCount,
        items: 0,
        bitmap: inArena ? allocateBitmap(bitCount / 8) : new Uint8Array(bitCount / 8),
      },
    ],
  })
}

const hashCount = hashCountFor(bitsPerEntryFor(ERROR_RATE))
/** Each item in a Buffer of its own, as arguments the request parser's CommandArgs holds. */
const list: ItemList = CommandArgs.of(items)
const outcomes = new Uint8Array(16)
/** Calls `run` on the next `per` items (from 0 again before the end of the items). */
function batches(per: number, run: (from: number, to: number) => number): () => void {
  let at = 0
  return () => {
    run(at, at + per)
    at = at + 2 * per > ITEM_COUNT ? 0 : at + per
  }
}
for (const bits of cpuOnly ? [] : [1e3, 1e5, 1e7, 1e8]) {
  const loops = bfsFilter(bits, false)
  const kernel = bfsFilter(bits, true)
  const theirs = new BloomFilter(Math.ceil(bits / 64) * 64, hashCount)
  const at = [0, 0, 0, 0]
  const add = (from: number, to: number): number => kernel.addMany(list, from, to, outcomes, 0)
  const has = (from: number, to: number): number => kernel.hasMany(list, from, to, outcomes, 0)
  runSuite(`${bits.toExponential(0)} bits, k = ${hashCount}, ${ITEM_COUNT} distinct 16-byte items`, [
    { name: 'bfs add (JavaScript loops)', fn: () => void loops.add(items[at[0]++ & (ITEM_COUNT - 1)]!) },
    { name: 'bfs add (kernel, 1 per call)', fn: batches(1, add) },
    { name: 'bfs add (kernel, 10 per call)', items: 10, fn: batches(10, add) },
    { name: 'bloomfilter add', fn: () => theirs.add(itemTexts[at[1]++ & (ITEM_COUNT - 1)]!) },
    { name: 'bfs has (JavaScript loops)', fn: () => void loops.has(items[at[2]++ & (ITEM_COUNT - 1)]!) },
    { name: 'bfs has (kernel, 1 per call)', fn: batches(1, has) },
    { name: 'bfs has (kernel, 10 per call)', items: 10, fn: batches(10, has) },
    { name: 'bloomfilter test', fn: () => void theirs.test(itemTexts[at[3]++ & (ITEM_COUNT - 1)]!) },
  ])
}

/** Items of 16 bytes in one buffer as a read holds them: `$16\r\n<item>\r\n` each. */
function itemsInOneRead(): ItemList {
  const read = Buffer.alloc(ITEM_COUNT * 23)
  const starts = new Uint32Array(ITEM_COUNT)
  for (let i = 0; i < ITEM_COUNT; i++) {
    read.write('$16\r\n', i * 23, 'latin1')
    items[i]!.copy(read, i * 23 + 5)
    read.write('\r\n', i * 23 + 21, 'latin1')
    starts[i] = i * 23 + 5
  }
  const args = new CommandArgs()
  for (const start of starts) args.push(read, start, start + 16)
  return args
}

/** CPU ns per item of `run` over all the items twice. */
function cpuPerItem(run: () => void): number {
  const started = process.cpuUsage()
  run()
  run()
  const used = process.cpuUsage(started)
  return ((used.user + used.system) * 1000) / (2 * ITEM_COUNT)
}

const median = (values: number[]): number => [...values].sort((p, q) => p - q)[Math.floor(values.length / 2)]!
const rounds = Number(process.env.CORE_ROUNDS ?? 9)
const oneRead = itemsInOneRead()
console.log(`\n### CPU ns per item, median of ${rounds} alternating rounds (x: items/s against the JavaScript loops)\n`)
console.log('| bits | way | add ns | add x | has ns | has x |')
console.log('|---:|---|---:|---:|---:|---:|')
for (const bits of [1e5, 1e7, 1e8]) {
  const loops = bfsFilter(bits, false)
  const kernel = bfsFilter(bits, true)
  const over = (list: ItemList, per: number) => ({
    add: () => {
      for (let i = 0; i + per <= ITEM_COUNT; i += per) kernel.addMany(list, i, i + per, outcomes, 0)
    },
    has: () => {
      for (let i = 0; i + per <= ITEM_COUNT; i += per) kernel.hasMany(list, i, i + per, outcomes, 0)
    },
  })
  const ways: Array<{ name: string; add: () => void; has: () => void }> = [
    {
      name: 'JavaScript loops',
      add: () => {
        for (let i = 0; i < ITEM_COUNT; i++) loops.add(items[i]!)
      },
      has: () => {
        for (let i = 0; i < ITEM_COUNT; i++) loops.has(items[i]!)
      },
    },
    { name: 'kernel, 1 per call', ...over(list, 1) },
    { name: 'kernel, 10 per call', ...over(list, 10) },
    { name: 'kernel, 10 per call, one read', ...over(oneRead, 10) },
  ]
  for (let warm = 0; warm < 20; warm++)
    for (const way of ways) {
      way.add()
      way.has()
    }
  const times = ways.map(() => ({ add: [] as number[], has: [] as number[] }))
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ways.map((_, w) => w) : ways.map((_, w) => ways.length - 1 - w)
    for (const w of order) {
      times[w]!.add.push(cpuPerItem(ways[w]!.add))
      times[w]!.has.push(cpuPerItem(ways[w]!.has))
    }
  }
  const base = { add: median(times[0]!.add), has: median(times[0]!.has) }
  ways.forEach((way, w) => {
    const add = median(times[w]!.add)
    const has = median(times[w]!.has)
    console.log(
      `| ${bits.toExponential(0)} | ${way.name} | ${add.toFixed(1)} | ${(base.add / add).toFixed(2)} | ${has.toFixed(1)} | ${(base.has / has).toFixed(2)} |`,
    )
  })
}
