/**
 * A deleted filter's memory can go back to the system: nothing in the registry keeps the filter
 * (a large layer's WebAssembly memory is freed only once the filter is unreachable), and a drop
 * of a filter with a memory of its own runs a collection soon (store/memory-reclaim.ts).
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { OWN_ARENA_BYTES } from '../../src/core/arena.js'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'
import { holdsOwnArena } from '../../src/store/memory-reclaim.js'
import { FilterRegistry } from '../../src/store/registry.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const small = () => new ScalableBloomFilter({ capacity: 100, errorRate: 0.01, expansion: 2, nonScaling: false })

/** Sets `name`, looks it up by its bytes (the registry remembers the last key), deletes it. */
function setLookUpDelete(registry: FilterRegistry, name: string): WeakRef<ScalableBloomFilter> {
  const filter = small()
  registry.set(name, filter)
  expect(registry.lookup(Buffer.from(name))?.filter).toBe(filter)
  expect(registry.delete(name)).toBe(true)
  return new WeakRef(filter)
}

async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10)) // a WeakRef holds until the turn ends
    gc()
    if (ref.deref() === undefined) return true
  }
  return false
}

describe('a deleted filter is not kept by the registry', () => {
  it('after DEL of the key last looked up, the filter can be collected', async () => {
    const registry = new FilterRegistry()
    const ref = setLookUpDelete(registry, 'gone')
    expect(await collected(ref)).toBe(true)
    expect(registry.lookup(Buffer.from('gone'))).toBeUndefined()
  })

  it('after FLUSHALL, the filter last looked up can be collected', async () => {
    const registry = new FilterRegistry()
    const ref = ((): WeakRef<ScalableBloomFilter> => {
      const filter = small()
      registry.set('flushed', filter)
      expect(registry.lookup(Buffer.from('flushed'))?.filter).toBe(filter)
      return new WeakRef(filter)
    })()
    expect(registry.clear()).toBe(1)
    expect(await collected(ref)).toBe(true)
  })
})

describe('holdsOwnArena', () => {
  it('is true only for a filter with a layer of 64 MiB or more', () => {
    expect(holdsOwnArena(small())).toBe(false)
    const big = ScalableBloomFilter.fromParts({
      hashing: { kind: 'redisbloom' },
      expansion: 2,
      nonScaling: false,
      layers: [
        {
          capacity: 1,
          errorRate: 0.01,
          bitsPerEntry: 9.585,
          hashCount: 7,
          bitCount: OWN_ARENA_BYTES * 8,
          items: 0,
          bitmap: new Uint8Array(OWN_ARENA_BYTES),
        },
      ],
    })
    expect(holdsOwnArena(big)).toBe(true)
  })
})
