/**
 * In process: the filter core without a server. MurmurHash64A on 16/64/256-byte Buffers (one
 * hash in JavaScript, and the pair an item needs, by the WebAssembly module and in JavaScript), then add
 * and check on one-layer filters of 1e3 to 1e8 bits (k = 7, as for error rate 0.01), beside the npm
 * `bloomfilter` package (FNV-1a over strings) with the same bits and k in the same run.
 *
 * Run: npm run bench:core       (BENCH_SECONDS=2 for longer samples)
 */
import { BloomFilter } from 'bloomfilter'
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
    { name: `MurmurHash64A ${size} B (JS)`, fn: () => murmurHash64A(data, 0, data.length, 0xc6a4a793, 0x5bd1e995, out, 0) },
    { name: `pair ${size} B (WebAssembly)`, fn: () => murmurHash64AChained(data, 0, data.length, 0xc6a4a793, 0x5bd1e995, false, out) },
    { name: `pair ${size} B (JS)`, fn: () => murmurHash64AChainedJs(data, 0, data.length, 0xc6a4a793, 0x5bd1e995, false, out) },
  ]
})
runSuite('MurmurHash64A', hashCases)

/**
 * A one-layer bfs filter of about `bits` bits that never fills: its capacity is set above any
 * item count, so every add takes the normal path (no scale-up, no "full" answer).
 */
function bfsFilter(bits: number): ScalableBloomFilter {
  const bitCount = Math.ceil(bits / 64) * 64
  const bitsPerEntry = bitsPerEntryFor(ERROR_RATE)
  return ScalableBloomFilter.fromParts({
    hashing: REDISBLOOM_HASHING,
    expansion: 2,
    nonScaling: false,
    layers: [{
      capacity: Number.MAX_SAFE_INTEGER,
      errorRate: ERROR_RATE,
      bitsPerEntry,
      hashCount: hashCountFor(bitsPerEntry),
      bitCount,
      items: 0,
      bitmap: new Uint8Array(bitCount / 8),
    }],
  })
}

const hashCount = hashCountFor(bitsPerEntryFor(ERROR_RATE))
for (const bits of [1e3, 1e5, 1e7, 1e8]) {
  const ours = bfsFilter(bits)
  const theirs = new BloomFilter(Math.ceil(bits / 64) * 64, hashCount)
  let a = 0
  let b = 0
  let c = 0
  let d = 0
  runSuite(`${bits.toExponential(0)} bits, k = ${hashCount}, ${ITEM_COUNT} distinct 16-byte items`, [
    { name: 'bfs add', fn: () => void ours.add(items[a++ & (ITEM_COUNT - 1)]!) },
    { name: 'bloomfilter add', fn: () => theirs.add(itemTexts[b++ & (ITEM_COUNT - 1)]!) },
    { name: 'bfs has', fn: () => void ours.has(items[c++ & (ITEM_COUNT - 1)]!) },
    { name: 'bloomfilter test', fn: () => void theirs.test(itemTexts[d++ & (ITEM_COUNT - 1)]!) },
  ])
}
