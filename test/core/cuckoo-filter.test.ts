/**
 * The Cuckoo filter core against RedisBloom 2.4.23's recorded replies (test/fixtures/
 * redisbloom-2.4-cf-replies.txt) where they follow from the core alone, against a plain model on
 * seeded random streams, and the kick walk's roll back.
 */
import { describe, expect, it } from 'vitest'
import {
  CuckooFilter,
  GROWTH_FAILED,
  INSERTED,
  NO_SPACE,
  EXISTS,
  reserveSettings,
  nextPowerOfTwo,
  roundExpansion,
} from '../../src/core/cuckoo-filter.js'
import { MAX_SUB_FILTER_BYTES, altHash, bucketIndex, fingerprintOf, kickInsert } from '../../src/core/cuckoo-buckets.js'
import { murmurHash64ABig } from '../../src/core/murmur-hash.js'
import { MAX_CUCKOO_FILTER_BYTES, MAX_CUCKOO_SUB_FILTER_BYTES } from '../../src/format/limits.js'
import { MAX_CUCKOO_BYTES } from '../../src/core/cuckoo-filter.js'
import { seededRandom } from '../helpers/seeded-random.js'

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)

function reserve(capacity: number, bucketSize = 2, maxIterations = 20, expansion = 1): CuckooFilter {
  return new CuckooFilter(reserveSettings(capacity, bucketSize, maxIterations, expansion))
}

function add(filter: CuckooFilter, item: string, unique = false): number {
  const b = bytes(item)
  return filter.add(b, 0, b.length, unique)
}

function has(filter: CuckooFilter, item: string): boolean {
  const b = bytes(item)
  return filter.has(b, 0, b.length)
}

function count(filter: CuckooFilter, item: string): number {
  const b = bytes(item)
  return filter.count(b, 0, b.length)
}

function del(filter: CuckooFilter, item: string): boolean {
  const b = bytes(item)
  return filter.delete(b, 0, b.length)
}

function range(prefix: string, from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `${prefix}${from + i}`)
}

describe('RedisBloom arithmetic', () => {
  it('rounds bucket counts and expansions to powers of two, 0 staying 0', () => {
    expect(nextPowerOfTwo(0)).toBe(1)
    expect(nextPowerOfTwo(500)).toBe(512)
    expect(nextPowerOfTwo(512)).toBe(512)
    expect(roundExpansion(0)).toBe(0)
    expect(roundExpansion(3)).toBe(4)
    expect(roundExpansion(32768)).toBe(32768)
    expect(roundExpansion(100)).toBe(128)
  })

  it('takes the fingerprint as hash % 255 + 1 of the whole 64-bit hash', () => {
    for (const item of ['', 'a', 'hello', 'z254', 'a much longer item than the others']) {
      const hash = murmurHash64ABig(bytes(item), 0n)
      const hi = Number(hash >> 32n)
      const lo = Number(hash & 0xffffffffn)
      expect(fingerprintOf(hi, lo)).toBe(Number(hash % 255n) + 1)
    }
  })

  it('pairs the alternate buckets both ways', () => {
    for (const buckets of [1, 2, 64, 2 ** 20, 2 ** 32]) {
      for (const [fp, h] of [
        [1, 0],
        [255, 0xffffffff],
        [0xc4, 12345],
        [7, 0x80000001],
      ] as const) {
        const i1 = bucketIndex(h, buckets)
        const i2 = bucketIndex(altHash(fp, i1), buckets)
        expect(bucketIndex(altHash(fp, i2), buckets)).toBe(i1)
      }
    }
  })

  it('bounds sub-filters as the format does', () => {
    expect(MAX_SUB_FILTER_BYTES).toBe(MAX_CUCKOO_SUB_FILTER_BYTES)
    expect(MAX_CUCKOO_BYTES).toBe(MAX_CUCKOO_FILTER_BYTES)
  })
})

describe('the reference file at the core level', () => {
  it('CF.RESERVE sizes: Size 40 + 16 * filters + bytes of buckets', () => {
    const cf = reserve(1000)
    expect([cf.numBuckets, cf.numFilters, cf.sizeBytes()]).toEqual([512, 1, 1080])
    const c3 = reserve(4, 1, 5, 3)
    expect([c3.numBuckets, c3.expansion, c3.sizeBytes()]).toEqual([4, 4, 60])
    expect(reserve(510, 255).numBuckets).toBe(2)
    expect(reserve(100, 4, 65535, 32768).numBuckets).toBe(32)
    expect(reserve(100).numBuckets).toBe(64)
    expect(reserve(100, 2, 20, 0).expansion).toBe(0)
    expect(reserve(50).numBuckets).toBe(32)
    expect(reserve(8).numBuckets).toBe(4)
  })

  it('adds, tests, counts and deletes (the "cf" lines)', () => {
    const cf = reserve(1000)
    expect(add(cf, 'hello')).toBe(INSERTED)
    expect(add(cf, 'hello')).toBe(INSERTED)
    expect(add(cf, 'hello', true)).toBe(EXISTS)
    expect(add(cf, 'world', true)).toBe(INSERTED)
    expect([has(cf, 'hello'), has(cf, 'nope')]).toEqual([true, false])
    expect([count(cf, 'hello'), count(cf, 'nope')]).toEqual([2, 0])
    expect(del(cf, 'hello')).toBe(true)
    expect(count(cf, 'hello')).toBe(1)
    expect(del(cf, 'nope')).toBe(false)
    expect([cf.numItems, cf.numDeletes, cf.sizeBytes()]).toEqual([2n, 1n, 1080])
  })

  it('answers full at EXPANSION 0 after the same kicks (the "full" lines)', () => {
    const full = reserve(4, 2, 20, 0)
    expect(range('f', 1, 10).map((item) => add(full, item))).toEqual([1, 1, 1, -1, 1, -1, -1, -1, -1, -1])
    expect(add(full, 'k')).toBe(NO_SPACE)
    expect(add(full, 'f1', true)).toBe(EXISTS)
    expect([full.numItems, full.numFilters, full.sizeBytes()]).toEqual([4n, 1, 60])
  })

  it('grows by EXPANSION and compacts on deletes (the "grow" lines)', () => {
    const grow = reserve(4, 1, 1, 2)
    expect(range('g', 1, 12).map((item) => add(grow, item))).toEqual(Array(12).fill(1))
    expect([grow.numFilters, grow.sizeBytes(), grow.numItems]).toEqual([3, 116, 12n])
    expect(del(grow, 'g1')).toBe(true)
    expect(del(grow, 'g2')).toBe(true)
    expect([grow.numItems, grow.numDeletes, grow.numFilters]).toEqual([10n, 0n, 3])
    grow.compact(true)
    expect([grow.numItems, grow.numDeletes, grow.numFilters]).toEqual([10n, 0n, 3])
    for (const item of range('g', 3, 12)) expect(has(grow, item)).toBe(true)
  })

  it('makes 40 sub-filters for m1..m80 (the "max" lines)', () => {
    const max = reserve(2, 1, 1, 1)
    expect(range('m', 1, 80).map((item) => add(max, item))).toEqual(Array(80).fill(1))
    expect([max.numFilters, max.numItems, max.numBuckets]).toEqual([40, 80n, 2])
    expect(has(max, 'm1')).toBe(true)
  })

  it('counts a fingerprint twice where both buckets coincide (the "two" lines)', () => {
    const two = reserve(4)
    add(two, 'y1')
    expect(count(two, 'y1')).toBe(2)
    add(two, 'y2')
    expect(count(two, 'y2')).toBe(1)
  })

  it('leaves the recorded bucket bytes (the "small" lines)', () => {
    const small = reserve(4)
    add(small, 'a')
    expect([...small.subFilters[0]!]).toEqual([0, 0, 0xc4, 0])
  })

  it('wraps numItems below zero after a delete of a loaded fingerprint (the "u" lines)', () => {
    const u = reserve(4)
    u.subFilters[0]!.set([1, 2, 3, 4])
    expect(del(u, 'z254')).toBe(true)
    expect([u.numItems, u.numDeletes]).toEqual([2n ** 64n - 1n, 1n])
    add(u, 'z1')
    expect(u.numItems).toBe(0n)
    add(u, 'z2')
    expect(u.numItems).toBe(1n)
  })

  it('keeps the u64 counters exact past 2^53 and wraps them at 2^64', () => {
    const filter = reserve(1024)
    filter.numItems = 2n ** 53n - 1n
    filter.numDeletes = 2n ** 64n - 1n
    add(filter, 'a')
    add(filter, 'b')
    expect(filter.numItems).toBe(2n ** 53n + 1n)
    expect(del(filter, 'a')).toBe(true)
    expect([filter.numItems, filter.numDeletes]).toEqual([2n ** 53n, 0n])
    filter.numItems = 2n ** 64n + 5n
    expect(filter.numItems).toBe(5n)
  })

  it('compacts a sub-filter the same whether its bytes are word-aligned or not', () => {
    for (const bucketSize of [1, 2, 3]) {
      const random = seededRandom(bucketSize)
      const settings = reserveSettings(16 * bucketSize, bucketSize, 20, 2)
      // The newest sub-filter sparsely filled, the older ones half: some fingerprints move, some stay.
      const sizes = [0, 1, 2].map((i) => settings.numBuckets * 2 ** i * bucketSize)
      const contents = sizes.map((size, i) =>
        Uint8Array.from({ length: size }, () =>
          random() < (i === 2 ? 0.1 : 0.5) ? 1 + Math.floor(random() * 255) : 0,
        ),
      )
      const filterAt = (offset: number): CuckooFilter => {
        const subFilters = contents.map((bytes) => {
          const view = new Uint8Array(new ArrayBuffer(bytes.length + offset), offset, bytes.length)
          view.set(bytes)
          return view
        })
        return CuckooFilter.fromParts({ ...settings, numItems: 100n, numDeletes: 0n, subFilters })
      }
      const aligned = filterAt(0)
      const unaligned = filterAt(1)
      aligned.compact(true)
      unaligned.compact(true)
      expect(unaligned.numFilters).toBe(aligned.numFilters)
      aligned.subFilters.forEach((bytes, i) =>
        expect([...unaligned.subFilters[i]!], `bucket size ${bucketSize}`).toEqual([...bytes]),
      )
      expect(aligned.subFilters.map((bytes) => [...bytes])).not.toEqual(
        contents.slice(0, aligned.numFilters).map((bytes) => [...bytes]),
      )
    }
  })
})

describe('seeded streams against a model', () => {
  it.each([1, 2, 3, 4])('seed %i: no false negatives, counts at least the model, items tracked', (seed) => {
    const next = seededRandom(seed)
    const bucketSize = 1 + Math.floor(next() * 4)
    const filter = reserve(64, bucketSize, 1 + Math.floor(next() * 30), [1, 2, 4][Math.floor(next() * 3)]!)
    const model = new Map<string, number>()
    let items = 0n
    for (let op = 0; op < 3000; op++) {
      const item = `item-${Math.floor(next() * 400)}`
      const roll = next()
      if (roll < 0.55) {
        const status = add(filter, item, roll < 0.1)
        if (status === INSERTED) {
          model.set(item, (model.get(item) ?? 0) + 1)
          items++
        } else expect(status === EXISTS && roll < 0.1).toBe(true)
      } else if (roll < 0.75 && (model.get(item) ?? 0) > 0) {
        // Only items that were added: deleting others may remove another item's fingerprint.
        expect(del(filter, item)).toBe(true)
        model.set(item, model.get(item)! - 1)
        items--
      } else {
        const n = model.get(item) ?? 0
        if (n > 0) expect(has(filter, item)).toBe(true)
        expect(count(filter, item)).toBeGreaterThanOrEqual(n)
      }
    }
    expect(filter.numItems).toBe(items)
    for (const [item, n] of model) {
      if (n > 0) expect(has(filter, item), item).toBe(true)
    }
    filter.compact(true)
    for (const [item, n] of model) {
      if (n > 0) expect(has(filter, item), `${item} after compaction`).toBe(true)
    }
  })
})

describe('kicks', () => {
  it('restores every bucket when the walk fails', () => {
    const next = seededRandom(9)
    for (let round = 0; round < 200; round++) {
      const bucketSize = 1 + Math.floor(next() * 4)
      const buckets = 2 ** Math.floor(next() * 4)
      const data = Uint8Array.from({ length: buckets * bucketSize }, () => 1 + Math.floor(next() * 255))
      const before = data.slice()
      const ok = kickInsert(
        data,
        buckets,
        bucketSize,
        1 + Math.floor(next() * 50),
        1 + Math.floor(next() * 255),
        Math.floor(next() * 2 ** 32),
      )
      expect(ok).toBe(false)
      expect(data).toEqual(before)
    }
  })

  it('moves the displaced fingerprint to its other bucket', () => {
    // Two buckets of one slot: bucket 0 full, bucket 1 empty.
    const fp = 5
    const data = new Uint8Array([9, 0])
    const other = bucketIndex(altHash(9, 0), 2)
    expect(kickInsert(data, 2, 1, 20, fp, 0)).toBe(true)
    expect(data[0]).toBe(fp)
    expect(other === 1 ? data[1] : data[0]).toBe(other === 1 ? 9 : fp)
  })

  it('answers a refused growth as GROWTH_FAILED and keeps the items', () => {
    const filter = reserve(2, 1, 1, 2)
    const statuses = range('x', 1, 20).map((item) => {
      const b = bytes(item)
      return filter.add(b, 0, b.length, false, () => false)
    })
    expect(statuses).toContain(GROWTH_FAILED)
    expect(filter.numFilters).toBe(1)
    range('x', 1, 20).forEach((item, i) => {
      if (statuses[i] === INSERTED) expect(has(filter, item)).toBe(true)
    })
  })
})
