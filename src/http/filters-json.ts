/**
 * The filter listing behind GET /filters (JSON) and the status page (GET /): the figures from
 * BF.INFO / CF.INFO and BFS.HEALTH (core/filter-health.ts, core/cuckoo-health.ts) of every Bloom
 * and Cuckoo filter the user may read (window filters have no such figures), sorted and paged by the query string
 * `?limit=&offset=&sort=name|bytes|estimatedErrorRate`.
 *
 * Orders: `name` ascending by the name's bytes (the default), `bytes` descending (the largest
 * first), `estimatedErrorRate` descending (the worst first); ties by name. Sorting by name or bytes
 * reads only the counters for every filter and the health (set bits, taken slots) of the page's
 * filters; sorting by estimated rate needs the health of every filter.
 */
import { filterHealth, type FilterHealth, type HealthVerdict } from '../core/filter-health.js'
import { cuckooHealth } from '../core/cuckoo-health.js'
import type { ScalableBloomFilter } from '../core/scalable-filter.js'
import type { CuckooFilter } from '../core/cuckoo-filter.js'
import { FilterRegistry, type BloomEntry, type CuckooEntry } from '../store/registry.js'
import { decodeQueryValue } from './query-value.js'

export type FilterSort = 'name' | 'bytes' | 'estimatedErrorRate'

/** A page of the listing, as asked for in the query string. */
export interface ListingQuery {
  readonly limit: number
  readonly offset: number
  readonly sort: FilterSort
}

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 1000
const SORTS: readonly FilterSort[] = ['name', 'bytes', 'estimatedErrorRate']
const PARAMETERS = ['limit', 'offset', 'sort']

/** One filter as GET /filters lists it. */
export interface FilterRow {
  /** The key, its bytes decoded as UTF-8 (invalid sequences become U+FFFD). */
  readonly name: string
  /** `bloom`: RedisBloom's hashing; `bloom (seeded)`: the original library's seeded hashing; `cuckoo`: a CF.* key. */
  readonly type: 'bloom' | 'bloom (seeded)' | 'cuckoo'
  readonly capacity: number
  readonly items: number
  /** Layers or sub-filters ("Number of filters" in BF.INFO / CF.INFO). */
  readonly layers: number
  /** Memory as BF.INFO / CF.INFO Size reports it. */
  readonly bytes: number
  readonly fillRatio: number
  readonly estimatedErrorRate: number
  /** The rate the filter was reserved for. */
  readonly errorRate: number
  /** Seconds left before the key expires, as TTL answers; -1 for none. */
  readonly ttl: number
  readonly verdict: HealthVerdict
  /** Items a non-scaling filter takes before it is full; -1 for one that scales. */
  readonly itemsLeft: number
  readonly scaling: boolean
}

/** A listed filter: its row and the filter itself (the page draws a Bloom filter's chart from its layers). */
export interface ListedFilter {
  readonly row: FilterRow
  readonly filter: ScalableBloomFilter | CuckooFilter
}

/** A key the listing and the per-filter series show: a Bloom or a Cuckoo filter. */
export type ListedEntry = BloomEntry | CuckooEntry

/** The Bloom and Cuckoo filters a client can see, in insertion order. */
export function* listedEntries(registry: FilterRegistry): IterableIterator<ListedEntry> {
  for (const entry of registry.entries()) if (entry.kind !== 'window') yield entry
}

/** BFS.HEALTH's figures of either kind. */
export function healthOf(entry: ListedEntry): FilterHealth {
  return entry.kind === 'cuckoo' ? cuckooHealth(entry.filter) : filterHealth(entry.filter)
}

/** Memory as BF.INFO / CF.INFO Size reports it. */
export function sizeOf(entry: ListedEntry): number {
  return entry.kind === 'cuckoo' ? entry.filter.sizeBytes() : entry.filter.info().sizeBytes
}

/** One page of filters and the count of all of them. */
export interface Listing {
  readonly total: number
  readonly filters: readonly ListedFilter[]
}

/** A query-string value that cannot be used: the text of the 400 answer. */
export class ListingQueryError extends Error {}

/** A non-negative decimal integer, or undefined. */
function integerParameter(value: string): number | undefined {
  if (!/^\d{1,15}$/.test(value)) return undefined
  return Number(value)
}

/**
 * The listing query from a request target's query string (`a=1&b=2`, no `?`).
 *
 * @throws ListingQueryError naming the parameter for an unknown, repeated or bad parameter
 */
export function parseListingQuery(query: string): ListingQuery {
  let limit = DEFAULT_LIMIT
  let offset = 0
  let sort: FilterSort = 'name'
  const seen = new Set<string>()
  for (const part of query === '' ? [] : query.split('&')) {
    const equals = part.indexOf('=')
    const key = decodeQueryValue(part, 0, equals < 0 ? part.length : equals).toString('latin1')
    const value = equals < 0 ? '' : decodeQueryValue(part, equals + 1).toString('latin1')
    if (!PARAMETERS.includes(key))
      throw new ListingQueryError(`unknown parameter '${printable(key)}' (known: limit, offset, sort)`)
    if (seen.has(key)) throw new ListingQueryError(`parameter '${key}' given twice`)
    seen.add(key)
    if (key === 'sort') {
      if (!SORTS.includes(value as FilterSort))
        throw new ListingQueryError(`sort must be one of name, bytes, estimatedErrorRate`)
      sort = value as FilterSort
    } else if (key === 'limit') {
      const parsed = integerParameter(value)
      if (parsed === undefined || parsed < 1 || parsed > MAX_LIMIT)
        throw new ListingQueryError(`limit must be an integer from 1 to ${MAX_LIMIT}`)
      limit = parsed
    } else {
      const parsed = integerParameter(value)
      if (parsed === undefined) throw new ListingQueryError('offset must be a non-negative integer')
      offset = parsed
    }
  }
  return { limit, offset, sort }
}

/** A parameter name as it may appear in an error text: printable ASCII, at most 40 characters. */
function printable(text: string): string {
  return text.slice(0, 40).replace(/[^\x20-\x7e]/g, '?')
}

/** The row of one filter, from its health (`health`, computed once by the caller when it has it). */
function filterRow(entry: ListedEntry, health: FilterHealth = healthOf(entry)): FilterRow {
  const cuckoo = entry.kind === 'cuckoo'
  return {
    name: FilterRegistry.bytesOf(entry.name).toString('utf8'),
    type: cuckoo ? 'cuckoo' : entry.filter.hashing.kind === 'seeded' ? 'bloom (seeded)' : 'bloom',
    capacity: health.capacity,
    items: health.items,
    layers: cuckoo ? entry.filter.numFilters : entry.filter.layers.length,
    bytes: sizeOf(entry),
    fillRatio: health.fillRatio,
    estimatedErrorRate: health.estimatedErrorRate,
    errorRate: health.errorRate,
    ttl: entry.expiresAt === undefined ? -1 : Math.trunc((Math.max(0, entry.expiresAt - Date.now()) + 500) / 1000),
    verdict: health.verdict,
    itemsLeft: health.itemsLeft,
    scaling: cuckoo ? entry.filter.expansion !== 0 : entry.filter.canScale,
  }
}

/** Byte order of the stored names (latin1 strings: one char per byte). */
function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0
}

/** Which keys a listing may show (the HTTP user's readable ones); undefined: every key. */
export type KeyFilter = ((name: string) => boolean) | undefined

/** Every filter shown, in the query's order, with the key it was sorted by computed once. */
function sortedEntries(
  registry: FilterRegistry,
  sort: FilterSort,
  shown: KeyFilter,
): { entry: ListedEntry; health?: FilterHealth }[] {
  const all = [...listedEntries(registry)].filter((entry) => shown === undefined || shown(entry.name))
  if (sort === 'name') return all.sort(byName).map((entry) => ({ entry }))
  if (sort === 'bytes') {
    const keyed = all.map((entry) => ({ entry, name: entry.name, bytes: sizeOf(entry) }))
    return keyed.sort((a, b) => b.bytes - a.bytes || byName(a, b))
  }
  const keyed = all.map((entry) => ({ entry, name: entry.name, health: healthOf(entry) }))
  return keyed.sort((a, b) => b.health.estimatedErrorRate - a.health.estimatedErrorRate || byName(a, b))
}

/** One page of the registry's filters (those `shown`), in the query's order. */
export function listFilters(registry: FilterRegistry, query: ListingQuery, shown?: KeyFilter): Listing {
  const sorted = sortedEntries(registry, query.sort, shown)
  const page = sorted.slice(query.offset, query.offset + query.limit)
  return {
    total: sorted.length,
    filters: page.map(({ entry, health }) => ({ row: filterRow(entry, health), filter: entry.filter })),
  }
}

/** GET /filters' body: the page's rows as a JSON array. */
export function filtersJson(listing: Listing): string {
  return JSON.stringify(listing.filters.map((listed) => listed.row))
}
