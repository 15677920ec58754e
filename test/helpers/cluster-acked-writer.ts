/**
 * A writer through a cluster-mode bfs: one item at a time, `BF.ADD <filter> <item>` then
 * `WAIT 1 1000` on the same connection to the master that CLUSTER SLOTS names for the filter's
 * slot (a cluster client sends WAIT, which has no key, to any node: here it must follow its
 * write). An item counts as acknowledged when WAIT answered ≥ 1 on the connection that took the
 * write; those must survive a failover. On -MOVED or a lost connection the writer reads the slot
 * map again from any node that answers, and goes on with the next item.
 */
import { Redis } from 'ioredis'
import { slotOf } from '../../src/core/key-slot.js'
import { sleep, waitUntil, withTimeout } from './cluster-nodes.js'
import { clusterSlots, ownerIn, type SlotRange } from './cluster-shards.js'

export interface ClusterAckedWrite {
  filter: string
  item: string
  /** When WAIT answered (Date.now()). */
  at: number
  /** The port of the master that acknowledged it. */
  port: number
}

export class ClusterAckedWriter {
  readonly acked: ClusterAckedWrite[] = []
  /** Writes BF.ADD answered, acknowledged by a replica or not (WAIT answered 0 without one). */
  readonly answered: ClusterAckedWrite[] = []
  notAcked = 0
  readonly errors: string[] = []
  private ranges: SlotRange[] = []
  private readonly connections = new Map<number, Redis>()
  private stopped = false
  private loop: Promise<void> | undefined

  /** `ports`: every node's port (the slot map is read from whichever answers); `filters`: the keys written, in turn. */
  constructor(
    private readonly ports: readonly number[],
    readonly filters: readonly string[],
    readonly prefix = 'item',
  ) {}

  start(): void {
    this.loop = (async () => {
      await this.refresh()
      for (let sequence = 0; !this.stopped; sequence++) {
        const filter = this.filters[sequence % this.filters.length]!
        const item = `${this.prefix}:${sequence}`
        try {
          await withTimeout(this.writeOnce(filter, item), 20_000, `write ${item}`)
        } catch (error) {
          this.notAcked++
          if (this.errors.length < 50) this.errors.push(`${item}: ${(error as Error).message}`)
          await this.refresh()
          await sleep(100)
        }
        await sleep(20)
      }
    })()
  }

  private async writeOnce(filter: string, item: string): Promise<void> {
    const port = ownerIn(this.ranges, slotOf(filter))
    if (port === undefined) throw new Error(`no master for ${filter}'s slot`)
    const connection = this.connection(port)
    await connection.call('BF.ADD', filter, item)
    this.answered.push({ filter, item, at: Date.now(), port })
    const acks = Number(await connection.call('WAIT', '1', '1000'))
    // No reconnection (retryStrategy null): both commands ran on the connection that took the write.
    if (acks >= 1 && connection.status === 'ready') this.acked.push({ filter, item, at: Date.now(), port })
    else this.notAcked++
  }

  private connection(port: number): Redis {
    let connection = this.connections.get(port)
    if (connection === undefined || connection.status === 'end' || connection.status === 'close') {
      connection = new Redis({ port, host: '127.0.0.1', retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 1000 })
      connection.on('error', () => {})
      this.connections.set(port, connection)
    }
    return connection
  }

  /** Reads CLUSTER SLOTS from the first node that answers. */
  private async refresh(): Promise<void> {
    for (const port of this.ports) {
      try {
        this.ranges = await withTimeout(clusterSlots(port), 2000, `CLUSTER SLOTS on ${port}`)
        return
      } catch {
        // that node is down: the next one
      }
    }
  }

  /**
   * Waits until `count` writes were acknowledged (`answered`: only answered) after `since` (ms),
   * optionally by the master on `port`.
   */
  async waitAcked(count: number, since = 0, port?: number, list: 'acked' | 'answered' = 'acked'): Promise<ClusterAckedWrite[]> {
    const matching = (): ClusterAckedWrite[] => this[list].filter((w) => w.at >= since && (port === undefined || w.port === port))
    await waitUntil(
      () => `${count} ${list} writes${port === undefined ? '' : ` on ${port}`} (${this.progress()})`,
      () => matching().length >= count,
      { timeoutMs: 60_000 },
    )
    return matching()
  }

  progress(): string {
    const ports = [...new Set(this.acked.map((w) => w.port))].join(',')
    return `${this.acked.length} acknowledged (ports ${ports}), ${this.notAcked} not; last errors: ${this.errors.slice(-3).join('; ')}`
  }

  async stop(): Promise<void> {
    this.stopped = true
    await withTimeout(this.loop ?? Promise.resolve(), 30_000, 'the writer loop ends').catch(() => {})
    for (const connection of this.connections.values()) connection.disconnect()
    this.connections.clear()
  }
}

/**
 * The acknowledged writes that the cluster does not find: each filter's items are asked with
 * BF.MEXISTS of the master that CLUSTER SLOTS (of the node on `port`) names for the filter.
 */
export async function missingThroughCluster(port: number, writes: readonly ClusterAckedWrite[]): Promise<string[]> {
  const ranges = await clusterSlots(port)
  const missing: string[] = []
  for (const filter of new Set(writes.map((w) => w.filter))) {
    const list = writes.filter((w) => w.filter === filter).map((w) => w.item)
    const owner = ownerIn(ranges, slotOf(filter))
    if (owner === undefined) throw new Error(`no master for ${filter}`)
    const client = new Redis({ port: owner, host: '127.0.0.1', retryStrategy: () => null, maxRetriesPerRequest: 0 })
    client.on('error', () => {})
    try {
      const present = (await client.call('BF.MEXISTS', filter, ...list)) as number[]
      missing.push(...list.filter((_, i) => present[i] !== 1))
    } finally {
      client.disconnect()
    }
  }
  return missing
}
