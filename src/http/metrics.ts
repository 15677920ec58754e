/**
 * GET /metrics: the server's figures in the Prometheus text format, through prom-client with a
 * registry of its own per server (several servers in one process never share a metric).
 *
 * Every figure INFO shows is read from INFO's own fields as values (infoFields), so /metrics and INFO cannot
 * disagree, and fields other sections add later (persistence: last snapshot, append-log status)
 * appear here without a change: a numeric INFO persistence field `x` becomes the gauge `bfs_x`,
 * an `ok`/`err` status becomes 1/0, anything else is left out. Commands by name come from the
 * command table's counters (what INFO commandstats prints).
 */
import { Counter, Gauge, Registry } from 'prom-client'
import type { CommandContext, ServerContext } from '../commands/kernel/context.js'
import { infoFields, type InfoValue } from '../commands/admin/info.js'
import { infoNumber, infoPart } from './info-values.js'
import { entryCounts } from '../commands/kernel/table.js'
import { FilterRegistry, type FilterEntry } from '../store/registry.js'
import type { FilterHealth } from '../core/filter-health.js'
import { healthOf, listedEntries, type ListedEntry } from './filters-json.js'
import { ReplicationMetrics } from './replication-metrics.js'

/** INFO sections /metrics reads. */
const INFO_SECTIONS = ['server', 'clients', 'memory', 'persistence', 'stats', 'replication', 'keyspace']

/** The named INFO sections of a server, as a field map (each value as INFO holds it). */
export function readInfo(ctx: CommandContext, sections: readonly string[] = INFO_SECTIONS): Map<string, InfoValue> {
  return infoFields(ctx, sections)
}

/** A persistence field's value as a number: numbers as they are, ok/err as 1/0, else undefined. */
function persistenceValue(value: InfoValue): number | undefined {
  if (value === 'ok') return 1
  if (value === 'err') return 0
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  if (typeof value !== 'string' || !/^-?\d+(\.\d+)?$/.test(value)) return undefined
  return Number(value)
}

/**
 * Prometheus metric names: [a-zA-Z_:][a-zA-Z0-9_:]*, prefixed `bfs_` once (bfs's own INFO fields,
 * such as `bfs_snapshot_bytes`, already carry it).
 */
export function metricName(field: string): string {
  const name = field.replace(/[^a-zA-Z0-9_]/g, '_')
  return name.startsWith('bfs_') ? name : `bfs_${name}`
}

/** Filter names are bytes; labels are UTF-8 text, so show them decoded as UTF-8. */
function filterLabel(name: string): string {
  return FilterRegistry.bytesOf(name).toString('utf8')
}

/** The `count` entries with the highest score, highest first (a bounded selection, no full sort). */
function topBy<T>(entries: Iterable<T>, count: number, score: (entry: T) => number): { entry: T; score: number }[] {
  const top: { entry: T; score: number }[] = []
  if (count <= 0) return top
  for (const entry of entries) {
    const value = score(entry)
    if (top.length === count && value <= top[top.length - 1]!.score) continue
    let at = top.length
    while (at > 0 && top[at - 1]!.score < value) at--
    top.splice(at, 0, { entry, score: value })
    if (top.length > count) top.pop()
  }
  return top
}

/** Which filters a scrape may show one by one (the HTTP user's readable keys); undefined: every one. */
export type FilterShown = ((name: string) => boolean) | undefined

/** The registry's Bloom and Cuckoo filters a scrape may show. */
function* shownEntries(registry: FilterRegistry, shown: FilterShown): Iterable<ListedEntry> {
  for (const entry of listedEntries(registry)) if (shown === undefined || shown(entry.name)) yield entry
}

/** Items added (BF.INFO), or items inserted less deleted (CF.INFO). */
function itemsOf(entry: ListedEntry): number {
  return entry.kind === 'cuckoo' ? Number(entry.filter.numItems) : entry.filter.info().items
}

/** The `count` filters (of those shown) holding the most items, largest first. */
export function topFiltersByItems(
  registry: FilterRegistry,
  count: number,
  shown?: FilterShown,
): { name: string; items: number }[] {
  return topBy(shownEntries(registry, shown), count, itemsOf).map(({ entry, score }) => ({
    name: entry.name,
    items: score,
  }))
}

/** A filter's health as /metrics shows it. */
interface HealthRow {
  readonly name: string
  readonly health: FilterHealth
}

/**
 * The filters whose health /metrics lists: the `count` holding the most items and the `count`
 * whose estimated false-positive rate is highest against their target (worst first), each once;
 * and how many filters in all are over their target. The estimate comes from each layer's live
 * count of set bits, or each Cuckoo sub-filter's live count of taken slots, so this reads no
 * bitmap and no bucket (past a Cuckoo filter's first count).
 */
export function filtersForHealth(
  registry: FilterRegistry,
  count: number,
  shown?: FilterShown,
): { rows: HealthRow[]; overTarget: number } {
  const healths = new Map<FilterEntry, FilterHealth>()
  let overTarget = 0
  for (const entry of listedEntries(registry)) {
    const health = healthOf(entry)
    if (health.verdict === 'over target') overTarget++
    // The count is of all filters (as INFO's figures are); the rows only of those shown.
    if (shown === undefined || shown(entry.name)) healths.set(entry, health)
  }
  const largest = topBy(healths.keys(), count, (entry) => healths.get(entry)!.items)
  const worst = topBy(healths.keys(), count, (entry) => {
    const health = healths.get(entry)!
    return health.estimatedErrorRate / health.errorRate
  })
  const rows = new Map<FilterEntry, HealthRow>()
  for (const { entry } of [...largest, ...worst]) rows.set(entry, { name: entry.name, health: healths.get(entry)! })
  return { rows: [...rows.values()], overTarget }
}

/** The database of the HTTP API (config http-db), whose filters /metrics lists one by one. */
export function httpRegistry(server: ServerContext): FilterRegistry {
  return server.databases.db(server.config['http-db'])
}

/** The end of the per-filter health series' help texts. */
const HEALTH_OF =
  'for the filters holding the most items and those furthest over their target (config metrics-top-filters each)'

/** One server's /metrics: call `render()` per scrape. */
export class ServerMetrics {
  readonly registry = new Registry()
  private readonly persistence = new Map<string, Gauge>()
  private queue: Promise<unknown> = Promise.resolve()
  // The series, made in the order a scrape lists them.
  private readonly uptime = this.gauge(
    'bfs_uptime_seconds',
    'Seconds since the server started (INFO uptime_in_seconds)',
  )
  private readonly commands = this.counter(
    'bfs_commands_total',
    'Commands run, by command name (INFO commandstats calls)',
    ['command'],
  )
  private readonly failedCommands = this.counter(
    'bfs_command_failed_calls_total',
    'Commands that ran and replied with an error, by name (INFO commandstats failed_calls)',
    ['command'],
  )
  private readonly rejectedCommands = this.counter(
    'bfs_command_rejected_calls_total',
    'Commands refused before running (arity, auth, loading), by name (INFO commandstats rejected_calls)',
    ['command'],
  )
  // Mean latency per command: rate(bfs_command_duration_seconds_total) / rate(bfs_commands_total).
  private readonly commandSeconds = this.counter(
    'bfs_command_duration_seconds_total',
    'Time spent running commands, by command name (INFO commandstats usec)',
    ['command'],
  )
  private readonly commandsProcessed = this.counter(
    'bfs_commands_processed_total',
    'Commands processed, unknown ones included (INFO total_commands_processed)',
  )
  private readonly errorReplies = this.counter(
    'bfs_error_replies_total',
    'Error replies sent (INFO total_error_replies)',
  )
  private readonly connectionsReceived = this.counter(
    'bfs_connections_received_total',
    'RESP connections accepted (INFO total_connections_received)',
  )
  private readonly rejectedConnections = this.counter(
    'bfs_rejected_connections_total',
    'RESP connections refused over maxclients (INFO rejected_connections)',
  )
  private readonly httpRequests = this.counter(
    'bfs_http_requests_total',
    'HTTP requests answered (INFO bfs_total_http_requests)',
  )
  private readonly connectedClients = this.gauge(
    'bfs_connected_clients',
    'Open client connections, by protocol (INFO connected_clients, bfs_http_connected_clients)',
    ['protocol'],
  )
  private readonly filters = this.gauge('bfs_filters', 'Filters (keys) held (INFO keyspace keys)')
  private readonly filtersExpiring = this.gauge(
    'bfs_filters_with_expiry',
    'Filters (keys) with an expiry (INFO keyspace expires)',
  )
  // As redis_exporter's redis_db_keys{db="db0"} and redis_db_keys_expiring: a series per database holding keys.
  private readonly dbKeys = this.gauge('bfs_db_keys', 'Filters (keys) held, by database (INFO keyspace dbN keys)', [
    'db',
  ])
  private readonly dbKeysExpiring = this.gauge(
    'bfs_db_keys_expiring',
    'Filters (keys) with an expiry, by database (INFO keyspace dbN expires)',
    ['db'],
  )
  private readonly httpDb = this.gauge(
    'bfs_http_db',
    'The database the HTTP API, the status page and the per-filter series here use (config http-db)',
  )
  private readonly expiredKeys = this.counter(
    'bfs_expired_keys_total',
    'Keys deleted because they expired (INFO expired_keys)',
  )
  private readonly filterBytes = this.gauge(
    'bfs_filter_bytes',
    'Bytes of bitmap held by all filters (INFO bfs_filter_bytes)',
  )
  private readonly filterItems = this.gauge(
    'bfs_filter_items',
    'Items added (a Cuckoo filter: inserted less deleted), for the filters holding the most (config metrics-top-filters)',
    ['filter'],
  )
  private readonly filterFill = this.gauge(
    'bfs_filter_fill_ratio',
    `Set bits over all bits, taken slots over all slots for a Cuckoo filter (BFS.HEALTH Fill ratio), ${HEALTH_OF}`,
    ['filter'],
  )
  private readonly filterEstimate = this.gauge(
    'bfs_filter_estimated_error_rate',
    `False-positive rate estimated from the bits or the sub-filters' loads (BFS.HEALTH Estimated error rate), ${HEALTH_OF}`,
    ['filter'],
  )
  private readonly filterTarget = this.gauge(
    'bfs_filter_target_error_rate',
    `False-positive rate the filter was reserved with, or one full sub-filter's for a Cuckoo filter (BFS.HEALTH Error rate), ${HEALTH_OF}`,
    ['filter'],
  )
  private readonly filterOverTarget = this.gauge(
    'bfs_filter_over_target',
    `1 when the estimated false-positive rate is over the target, else 0, ${HEALTH_OF}`,
    ['filter'],
  )
  private readonly filtersOverTarget = this.gauge(
    'bfs_filters_over_target',
    'Filters whose estimated false-positive rate is over their target, of all filters',
  )
  private readonly usedMemory = this.gauge(
    'bfs_used_memory_bytes',
    'Heap and external memory in use (INFO used_memory)',
  )
  private readonly residentMemory = this.gauge(
    'bfs_used_memory_rss_bytes',
    'Resident set size of the process (INFO used_memory_rss)',
  )
  private readonly heapUsed = this.gauge(
    'bfs_process_heap_used_bytes',
    'V8 heap in use (process.memoryUsage().heapUsed)',
  )
  private readonly replication = new ReplicationMetrics(this.registry)

  constructor(
    private readonly ctx: CommandContext,
    /** Open HTTP connections, counted by the HTTP listener. */
    private readonly httpClients: () => number,
  ) {}

  private gauge(name: string, help: string, labelNames: string[] = []): Gauge {
    return new Gauge({ name, help, labelNames, registers: [this.registry] })
  }

  private counter(name: string, help: string, labelNames: string[] = []): Counter {
    return new Counter({ name, help, labelNames, registers: [this.registry] })
  }

  get contentType(): string {
    return this.registry.contentType
  }

  /**
   * The text of one scrape, its series per filter for the filters `shown` (the scraping user's
   * readable keys; taken now, as the scrape may wait behind another). Scrapes run one after
   * another so none sees another's half-set values.
   */
  render(shown?: FilterShown): Promise<string> {
    const next = this.queue.then(() => {
      this.refresh(shown)
      return this.registry.metrics()
    })
    this.queue = next.catch(() => undefined)
    return next
  }

  private refresh(shown: FilterShown): void {
    const server = this.ctx.server
    const info = readInfo(this.ctx)
    const number = (field: string): number | undefined => infoNumber(info.get(field))
    const setGauge = (metric: Gauge, field: string): void => {
      const value = number(field)
      if (value !== undefined) metric.set(value)
    }
    const setCounter = (metric: Counter, field: string): void => {
      metric.reset()
      const value = number(field)
      if (value !== undefined && value >= 0) metric.inc(value)
    }

    setGauge(this.uptime, 'uptime_in_seconds')
    setCounter(this.commandsProcessed, 'total_commands_processed')
    setCounter(this.errorReplies, 'total_error_replies')
    setCounter(this.connectionsReceived, 'total_connections_received')
    setCounter(this.rejectedConnections, 'rejected_connections')
    setCounter(this.httpRequests, 'bfs_total_http_requests')
    setCounter(this.expiredKeys, 'expired_keys')
    setGauge(this.usedMemory, 'used_memory')
    setGauge(this.residentMemory, 'used_memory_rss')
    this.heapUsed.set(process.memoryUsage().heapUsed)

    this.connectedClients.reset()
    this.connectedClients.set({ protocol: 'resp' }, number('connected_clients') ?? 0)
    this.connectedClients.set({ protocol: 'http' }, number('bfs_http_connected_clients') ?? this.httpClients())

    this.commands.reset()
    this.failedCommands.reset()
    this.rejectedCommands.reset()
    this.commandSeconds.reset()
    for (const entry of server.commands) {
      const { calls, micros, failedCalls, rejectedCalls } = entryCounts(entry)
      if (calls + rejectedCalls === 0) continue
      const labels = { command: entry.lowerName }
      this.commands.inc(labels, calls)
      this.failedCommands.inc(labels, failedCalls)
      this.rejectedCommands.inc(labels, rejectedCalls)
      this.commandSeconds.inc(labels, micros / 1e6)
    }

    this.refreshKeyspace(info)
    setGauge(this.filterBytes, 'bfs_filter_bytes')
    this.filterItems.reset()
    for (const { name, items } of topFiltersByItems(
      httpRegistry(server),
      server.config['metrics-top-filters'],
      shown,
    )) {
      this.filterItems.set({ filter: filterLabel(name) }, items)
    }

    this.refreshHealth(shown)
    this.replication.refresh(info)

    for (const [field, raw] of readInfo(this.ctx, ['persistence'])) {
      const value = persistenceValue(raw)
      if (value === undefined) continue
      let metric = this.persistence.get(field)
      if (metric === undefined) {
        const status = raw === 'ok' || raw === 'err'
        metric = new Gauge({
          name: metricName(field),
          help: `INFO persistence ${field}${status ? ' (1 = ok, 0 = err)' : ''}`,
          registers: [this.registry],
        })
        this.persistence.set(field, metric)
      }
      metric.set(value)
    }
  }

  /** INFO keyspace's figures, per database and in all: keys a client can see, expired ones not yet deleted left out. */
  private refreshKeyspace(info: Map<string, InfoValue>): void {
    let keys = 0
    let expiring = 0
    this.dbKeys.reset()
    this.dbKeysExpiring.reset()
    for (const [field, value] of info) {
      if (!/^db\d+$/.test(field)) continue
      const dbKeys = infoPart(value, 'keys')
      const dbExpiring = infoPart(value, 'expires')
      if (typeof dbKeys !== 'number' || typeof dbExpiring !== 'number') continue
      this.dbKeys.set({ db: field }, dbKeys)
      this.dbKeysExpiring.set({ db: field }, dbExpiring)
      keys += dbKeys
      expiring += dbExpiring
    }
    this.filters.set(keys)
    this.filtersExpiring.set(expiring)
    this.httpDb.set(this.ctx.server.config['http-db'])
  }

  /** The health gauges (see {@link filtersForHealth}). */
  private refreshHealth(shown: FilterShown): void {
    const server = this.ctx.server
    const { rows, overTarget } = filtersForHealth(httpRegistry(server), server.config['metrics-top-filters'], shown)
    for (const metric of [this.filterFill, this.filterEstimate, this.filterTarget, this.filterOverTarget])
      metric.reset()
    for (const { name, health } of rows) {
      const labels = { filter: filterLabel(name) }
      this.filterFill.set(labels, health.fillRatio)
      this.filterEstimate.set(labels, health.estimatedErrorRate)
      this.filterTarget.set(labels, health.errorRate)
      this.filterOverTarget.set(labels, health.verdict === 'over target' ? 1 : 0)
    }
    this.filtersOverTarget.set(overTarget)
  }
}
