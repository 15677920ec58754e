import { describe, expect, it } from 'vitest'
import { createHashPair, hashRedisBloom } from '../../src/core/hashing.js'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'
import { estimateFilterBytes } from '../../src/core/sizing.js'
import { positionsBig, utf8 } from './vectors.js'

// These allocate 0.5-1.5 GB; typed arrays are zeroed lazily by the OS, so only touched pages cost.
describe('filters beyond 2^32 bits', () => {
  it('adds and finds items at bit positions above 2^32, exactly where (a + i*b) mod 2^64 mod m says', () => {
    const filter = new ScalableBloomFilter({ capacity: 450_000_000, errorRate: 0.01, expansion: 2, nonScaling: true })
    const layer = filter.layers[0]
    expect(layer.bitCount).toBeGreaterThan(2 ** 32)
    expect(layer.bitmap.length).toBe(layer.bitCount / 8)

    const pair = createHashPair()
    let highPositions = 0
    for (let i = 0; i < 200; i++) {
      const item = utf8(`big-item-${i}`)
      expect(filter.add(item)).toBe(1)
      hashRedisBloom(item, 0, item.length, pair)
      const a = (BigInt(pair[0]) << 32n) | BigInt(pair[1])
      const b = (BigInt(pair[2]) << 32n) | BigInt(pair[3])
      for (const pos of positionsBig(a, b, layer.hashCount, layer.bitCount)) {
        if (pos >= 2 ** 32) highPositions++
        expect((layer.bitmap as Uint8Array)[Math.floor(pos / 8)] & (1 << (pos % 8))).not.toBe(0)
      }
    }
    expect(highPositions).toBeGreaterThan(0)
    for (let i = 0; i < 200; i++) expect(filter.has(utf8(`big-item-${i}`))).toBe(true)
    let falsePositives = 0
    for (let i = 0; i < 2000; i++) if (filter.has(utf8(`absent-${i}`))) falsePositives++
    expect(falsePositives).toBe(0)
    expect(filter.info()).toMatchObject({ items: 200, sizeBytes: 96 + layer.bitmap.length })
  })

  it('creates BF.RESERVE x11 0.01 1073741825 (about 1.48 GB) and uses it', () => {
    const size = estimateFilterBytes(1073741825, 0.01, false)
    const filter = new ScalableBloomFilter({ capacity: 1073741825, errorRate: 0.01, expansion: 2, nonScaling: false })
    expect(filter.info()).toEqual({ capacity: 1073741825, sizeBytes: size, layerCount: 1, items: 0, expansion: 2 })
    expect(filter.layers[0].bitCount).toBeGreaterThan(2 ** 33)
    expect(filter.add(utf8('x'))).toBe(1)
    expect(filter.add(utf8('x'))).toBe(0)
    expect(filter.has(utf8('x'))).toBe(true)
    expect(filter.has(utf8('y'))).toBe(false)
  })
})
