import type { ScalableBloomFilter } from '../../src/core/scalable-filter.js'
import type { FilterEntry, StoredFilter } from '../../src/store/registry.js'
import { WindowFilter } from '../../src/core/window-filter.js'
import { CuckooFilter } from '../../src/core/cuckoo-filter.js'

/** The Bloom filter a registry entry holds; throws for a window filter or a missing key. */
export function bloomOf(entry: FilterEntry | undefined): ScalableBloomFilter {
  if (entry?.kind !== 'bloom')
    throw new Error(`expected a Bloom filter, found ${entry === undefined ? 'no key' : entry.kind}`)
  return entry.filter
}

/** A stored filter that must be a Bloom filter (a decoded payload's, say); throws for a window filter. */
export function bloomFilter(filter: StoredFilter): ScalableBloomFilter {
  if (filter instanceof WindowFilter) throw new Error('expected a Bloom filter, found a window filter')
  if (filter instanceof CuckooFilter) throw new Error('expected a Bloom filter, found a Cuckoo filter')
  return filter
}
