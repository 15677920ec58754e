import { describe, expect, it } from 'vitest'
import { arenaOf, OWN_ARENA_BYTES } from '../../src/core/arena.js'
import { countSetBits } from '../../src/core/bitmap.js'
import { isFilterError } from '../../src/core/filter-error.js'
import type { ItemList } from '../../src/core/filter-batch.js'
import { MAX_BATCH_ITEM_BYTES, MAX_BATCH_ITEMS } from '../../src/core/filter-batch.js'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'
import type { FilterOptions } from '../../src/core/scalable-filter.js'
import { toHex, utf8, vectors } from './vectors.js'

/**
 * How a command's items lie: back to back in one buffer; in one buffer with a RESP header's worth
 * of other bytes between them, as the request parser leaves a command read whole (one copy of the
 * range stages them); or each in a buffer of its own (staged one by one).
 */
type Layout = 'packed' | 'headers' | 'separate'

/** Items as a command's arguments, laid out as `layout` says. */
function itemList(items: readonly Uint8Array[], layout: Layout = 'packed'): ItemList {
  if (layout === 'separate') {
    const copies = items.map((item) => Uint8Array.from(item))
    return { bytes: (i) => copies[i]!, start: () => 0, end: (i) => copies[i]!.length }
  }
  const gap = layout === 'headers' ? 9 : 0
  const total = items.reduce((sum, item) => sum + item.length + gap, 0)
  const buffer = new Uint8Array(total + 3).fill(0xa5)
  const starts: number[] = []
  let at = 3
  for (const item of items) {
    starts.push(at)
    buffer.set(item, at)
    at += item.length + gap
  }
  return { bytes: () => buffer, start: (i) => starts[i]!, end: (i) => starts[i]! + items[i]!.length }
}

/** BF.MADD as bloom.ts runs it: the kernel while it serves, one item the JavaScript way when not. */
function addAll(filter: ScalableBloomFilter, items: readonly Uint8Array[], layout: Layout = 'packed'): number[] {
  const list = itemList(items, layout)
  const out = new Uint8Array(items.length)
  const results: number[] = []
  let kernelItems = 0
  for (let i = 0; i < items.length;) {
    const next = filter.addMany(list, i, items.length, out, i)
    for (let j = i; j < next; j++) results.push(out[j]!)
    kernelItems += next - i
    if (next > i) {
      i = next
      continue
    }
    const outcome = filter.add(items[i]!)
    results.push(isFilterError(outcome) ? (outcome.code === 'non-scaling-full' ? -2 : -1) : outcome)
    i++
  }
  expect(kernelItems).toBeGreaterThan(0)
  return results
}

function hasAll(filter: ScalableBloomFilter, items: readonly Uint8Array[], layout: Layout = 'packed'): boolean[] {
  const list = itemList(items, layout)
  const out = new Uint8Array(items.length)
  const results: boolean[] = []
  for (let i = 0; i < items.length;) {
    const next = filter.hasMany(list, i, items.length, out, i)
    for (let j = i; j < next; j++) results.push(out[j] === 1)
    if (next > i) {
      i = next
      continue
    }
    results.push(filter.has(items[i]!))
    i++
  }
  return results
}

const options = (capacity: number, errorRate: number, expansion = 2): FilterOptions => ({
  capacity,
  errorRate,
  expansion,
  nonScaling: false,
})

describe('the Bloom kernel against RedisBloom 2.4 SBChain (golden chains)', () => {
  for (const chain of vectors.chains) {
    it(`${chain.name}: same add results, bitmaps, items and false positives`, () => {
      const filter = new ScalableBloomFilter({
        ...options(chain.capacity, chain.errorRate, chain.expansion),
        nonScaling: chain.nonScaling,
      })
      const adds = Array.from({ length: chain.addCount }, (_, i) => utf8(chain.addPrefix + (i % chain.addRepeatAfter)))
      expect(addAll(filter, adds)).toEqual(chain.addResults)
      const probes = Array.from({ length: chain.probeCount }, (_, i) => utf8(chain.probePrefix + i))
      const present = hasAll(filter, probes).flatMap((found, i) => (found ? [i] : []))
      expect(present).toEqual(chain.probePresent)
      expect(filter.info().items).toBe(chain.items)
      filter.layers.forEach((layer, i) => {
        expect(layer.arena).toBeDefined()
        expect(layer.items).toBe(chain.layers[i]!.items)
        expect(toHex(layer.bitmap as Uint8Array)).toBe(chain.layers[i]!.bitmapHex)
        expect(layer.setBits).toBe(countSetBits(layer.bitmap))
      })
    })
  }
})

describe('the Bloom kernel beside the JavaScript loops', () => {
  it.each(['packed', 'headers', 'separate'] as const)(
    'answers and sets exactly as add/has, across scale-ups, batches and item lengths (items %s)',
    (layout) => {
      const viaKernel = new ScalableBloomFilter(options(700, 0.001, 3))
      const viaLoops = new ScalableBloomFilter(options(700, 0.001, 3))
      // Lengths 0..40 (every tail length), some long items, and more items than one call takes.
      const items = Array.from({ length: 3 * MAX_BATCH_ITEMS + 77 }, (_, i) =>
        utf8(`item:${i}:`.padEnd(i % 41, 'x') + (i % 9 === 0 ? 'y'.repeat(300) : '')),
      )
      items.push(...items.slice(0, 500)) // duplicates answer 0
      const expected = items.map((item) => viaLoops.add(item))
      expect(addAll(viaKernel, items, layout)).toEqual(expected)
      expect(viaKernel.layers.length).toBeGreaterThan(2)
      viaKernel.layers.forEach((layer, i) => {
        const twin = viaLoops.layers[i]!
        expect(layer.items).toBe(twin.items)
        expect(layer.setBits).toBe(twin.setBits)
        expect(Buffer.compare(layer.bitmap as Uint8Array, twin.bitmap as Uint8Array)).toBe(0)
      })
      const probes = Array.from({ length: 5000 }, (_, i) => utf8(`probe-${i}`)).concat(items.slice(0, 2000))
      expect(hasAll(viaKernel, probes, layout)).toEqual(probes.map((item) => viaLoops.has(item)))
    },
  )

  it('commands of ten items from two reads in turns (runs copied through a kept DataView) answer and set as add/has', () => {
    const viaKernel = new ScalableBloomFilter(options(5000, 0.01)) // one layer: no call stops at a full one
    const viaLoops = new ScalableBloomFilter(options(5000, 0.01))
    const items = Array.from({ length: 3000 }, (_, i) => utf8(`r${i}:`.padEnd(i % 45, 'z')))
    // Two reads, as two clients' reads would be, in turns of three commands: the next run from the
    // same read takes the view kept for it, the first from the other read makes a new one.
    const reads = [itemList(items, 'headers'), itemList(items, 'headers')]
    const readOf = (i: number) => Math.floor(i / 30) % 2
    const out = new Uint8Array(10)
    for (let i = 0; i < items.length; i += 10) {
      const list = reads[readOf(i)]!
      expect(viaKernel.addMany(list, i, i + 10, out, 0)).toBe(i + 10)
      expect(Array.from(out)).toEqual(items.slice(i, i + 10).map((item) => viaLoops.add(item)))
    }
    viaKernel.layers.forEach((layer, i) =>
      expect(Buffer.compare(layer.bitmap as Uint8Array, viaLoops.layers[i]!.bitmap as Uint8Array)).toBe(0),
    )
    const probes = items.slice(0, 1500).concat(Array.from({ length: 1500 }, (_, i) => utf8(`absent-${i}`)))
    const probeReads = [itemList(probes, 'headers'), itemList(probes, 'headers')]
    for (let i = 0; i < probes.length; i += 10) {
      expect(viaKernel.hasMany(probeReads[readOf(i)]!, i, i + 10, out, 0)).toBe(i + 10)
      expect(Array.from(out, (found) => found === 1)).toEqual(probes.slice(i, i + 10).map((item) => viaLoops.has(item)))
    }
  })

  it('an item longer than one call takes is added the JavaScript way, the items around it by the kernel', () => {
    const filter = new ScalableBloomFilter(options(100, 0.01))
    const long = new Uint8Array(MAX_BATCH_ITEM_BYTES + 1).fill(7)
    const list = itemList([utf8('a'), long, utf8('b')])
    const out = new Uint8Array(3)
    expect(filter.addMany(list, 0, 3, out, 0)).toBe(1)
    expect(filter.addMany(list, 1, 3, out, 1)).toBe(1)
    expect(filter.add(long)).toBe(1)
    expect(filter.addMany(list, 2, 3, out, 2)).toBe(3)
    expect(Array.from(out)).toEqual([1, 0, 1])
    expect(hasAll(filter, [utf8('a'), long, utf8('b'), utf8('c')])).toEqual([true, true, true, false])
  })

  it('items staged one by one across commands (stageCheck) are answered as has() answers them, until the scratch area is full', () => {
    const filter = new ScalableBloomFilter(options(300, 0.01, 2))
    const members = Array.from({ length: 1000 }, (_, i) => utf8(`m${i}:`.padEnd(i % 90, 'q')))
    addAll(filter, members)
    expect(filter.layers.length).toBeGreaterThan(2)
    const probes = members.slice(0, 600).concat(Array.from({ length: 600 }, (_, i) => utf8(`absent-${i}`)))
    // Each probe from a read of its own, as each BF.EXISTS command's item is.
    const reads = probes.map((probe) => itemList([probe], 'headers'))
    const out = new Uint8Array(MAX_BATCH_ITEMS)
    let staged = 0
    let answered = 0
    const settle = (): void => {
      filter.checkStaged(staged, out)
      for (let j = 0; j < staged; j++) expect(out[j] === 1).toBe(filter.has(probes[answered + j]!))
      answered += staged
      staged = 0
    }
    for (let i = 0; i < probes.length; i++) {
      if (!filter.stageCheck(reads[i]!, 0, staged)) {
        settle()
        expect(filter.stageCheck(reads[i]!, 0, 0)).toBe(true)
      }
      staged++
    }
    settle()
    expect(answered).toBe(probes.length)
    // Full: the 1025th item, or an item past the scratch area's bytes, is not taken.
    const one = itemList([utf8('x')])
    for (let j = 0; j < MAX_BATCH_ITEMS; j++) expect(filter.stageCheck(one, 0, j)).toBe(true)
    expect(filter.stageCheck(one, 0, MAX_BATCH_ITEMS)).toBe(false)
    const long = itemList([new Uint8Array(MAX_BATCH_ITEM_BYTES - 100)])
    expect(filter.stageCheck(long, 0, 0)).toBe(true)
    expect(filter.stageCheck(long, 0, 1)).toBe(false)
    // Seed-format filters (other hashing) are not the kernel's.
    const seeded = new ScalableBloomFilter({ ...options(100, 0.01), hashing: { kind: 'seeded', seed: 7 } })
    expect(seeded.stageCheck(one, 0, 0)).toBe(false)
  })

  it('adds staged one by one (stageAdd) add as add() does, and only while the newest layer has room for all of them', () => {
    const viaKernel = new ScalableBloomFilter(options(50, 0.01, 2))
    const viaLoops = new ScalableBloomFilter(options(50, 0.01, 2))
    const items = Array.from({ length: 400 }, (_, i) => utf8(`a${i % 300}:`.padEnd(i % 70, 'w')))
    const out = new Uint8Array(MAX_BATCH_ITEMS)
    let staged = 0
    let done = 0
    const settle = (): void => {
      viaKernel.addStaged(staged, out)
      for (let j = 0; j < staged; j++) expect(out[j]).toBe(viaLoops.add(items[done + j]!))
      done += staged
      staged = 0
    }
    for (let i = 0; i < items.length; i++) {
      const list = itemList([items[i]!], 'headers')
      if (viaKernel.stageAdd(list, 0, staged)) {
        staged++
        continue
      }
      settle()
      const newest = viaKernel.layers[viaKernel.layers.length - 1]!
      // Refused only when the newest layer could fill within the batch: then add() grows it.
      if (!viaKernel.stageAdd(list, 0, 0)) {
        expect(newest.items + 1).toBeGreaterThanOrEqual(newest.capacity)
        expect(viaKernel.add(items[i]!)).toBe(viaLoops.add(items[i]!))
        done++
      } else staged++
    }
    settle()
    expect(done).toBe(items.length)
    expect(viaKernel.layers.length).toBeGreaterThan(2)
    viaKernel.layers.forEach((layer, i) => {
      expect(layer.items).toBe(viaLoops.layers[i]!.items)
      expect(Buffer.compare(layer.bitmap as Uint8Array, viaLoops.layers[i]!.bitmap as Uint8Array)).toBe(0)
    })
  })

  it('a capture reading the newest layer keeps adds on the JavaScript path; checks stay on the kernel', () => {
    const filter = new ScalableBloomFilter(options(100, 0.01))
    const list = itemList([utf8('a')])
    const out = new Uint8Array(1)
    filter.layers[0]!.writeGuard = { beforeWrite: () => undefined }
    expect(filter.addMany(list, 0, 1, out, 0)).toBe(0)
    expect(filter.hasMany(list, 0, 1, out, 0)).toBe(1)
    filter.layers[0]!.writeGuard = null
    expect(filter.addMany(list, 0, 1, out, 0)).toBe(1)
  })

  it('a layer of more than 2^30 bits (an arena of its own) takes the same positions', () => {
    const viaKernel = new ScalableBloomFilter({ ...options(120_000_000, 0.01), nonScaling: true })
    const layer = viaKernel.layers[0]!
    expect(layer.bitCount).toBeGreaterThan(2 ** 30)
    expect(layer.bitmap.length).toBeGreaterThanOrEqual(OWN_ARENA_BYTES)
    expect(arenaOf(layer.bitmap as Uint8Array)?.own).toBe(true)
    const items = Array.from({ length: 2000 }, (_, i) => utf8(`big-${i}`))
    expect(addAll(viaKernel, items)).toEqual(items.map(() => 1))
    // The JavaScript loops of the same layer find every item, and no other.
    for (const item of items) expect(viaKernel.has(item)).toBe(true)
    expect(hasAll(viaKernel, [utf8('big-1'), utf8('absent')])).toEqual([true, false])
    expect(layer.setBits).toBe(countSetBits(layer.bitmap))
  })
})
