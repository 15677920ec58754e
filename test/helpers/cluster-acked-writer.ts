/**
 * A writer through a cluster-mode bfs (an AckedWriter, acked-writer.ts): one item at a time,
 * `BF.ADD <filter> <item>` then `WAIT 1 1000` on the same connection to the master that CLUSTER
 * SLOTS names for the filter's slot (a cluster client sends WAIT, which has no key, to any node:
 * here it must follow its write). An item counts as acknowledged when WAIT answered ≥ 1 on the
 * connection that took the write; those must survive a failover. On -MOVED or a lost connection
 * the writer reads the slot map again from any node that answers, and goes on with the next item.
 */
import { Redis } from 'ioredis'
import { slotOf } from '../../src/core/key-slot.js'
import { AckedWriter, type AckedWrite } from './acked-writer.js'
import { withTimeout } from './cluster-nodes.js'
import { clusterSlots, ownerIn, type SlotRange } from './cluster-shards.js'

export class ClusterAckedWriter extends AckedWriter {
  /** Writes BF.ADD answered, acknowledged by a replica or not (WAIT answers 0 without one). */
  readonly answered: AckedWrite[] = []
  private ranges: SlotRange[] = []
  private readonly connections = new Map<number, Redis>()

  /** `ports`: every node's port (the slot map is read from whichever answers); `filters`: the keys written, in turn. */
  constructor(
    private readonly ports: readonly number[],
    readonly filters: readonly string[],
  ) {
    super('item')
  }

  /** The filter an item goes to: the filters in turn, by the item's sequence number. */
  filterOf(item: string): string {
    return this.filters[Number(item.slice(item.lastIndexOf(':') + 1)) % this.filters.length]!
  }

  protected writeOnce = async (item: string): Promise<number | undefined> => {
    try {
      if (this.ranges.length === 0) await this.refresh()
      const filter = this.filterOf(item)
      const port = ownerIn(this.ranges, slotOf(filter))
      if (port === undefined) throw new Error(`no master for ${filter}'s slot`)
      const connection = this.connection(port)
      await connection.call('BF.ADD', filter, item)
      this.answered.push({ item, at: Date.now(), port })
      const acks = Number(await connection.call('WAIT', '1', '1000'))
      // No reconnection (retryStrategy null): both commands ran on the connection that took the write.
      return acks >= 1 && connection.status === 'ready' ? port : undefined
    } catch (error) {
      await this.refresh()
      throw error
    }
  }

  private connection(port: number): Redis {
    let connection = this.connections.get(port)
    if (connection === undefined || connection.status === 'end' || connection.status === 'close') {
      connection = new Redis({
        port,
        host: '127.0.0.1',
        retryStrategy: () => null,
        maxRetriesPerRequest: 0,
        connectTimeout: 1000,
      })
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

  protected async close(): Promise<void> {
    for (const connection of this.connections.values()) connection.disconnect()
    this.connections.clear()
  }
}

/**
 * The acknowledged writes that the cluster does not find: each filter's items are asked with
 * BF.MEXISTS of the master that CLUSTER SLOTS (of the node on `port`) names for the filter.
 */
export async function missingThroughCluster(
  port: number,
  writer: ClusterAckedWriter,
  writes: readonly AckedWrite[],
): Promise<string[]> {
  const ranges = await clusterSlots(port)
  const missing: string[] = []
  for (const filter of writer.filters) {
    const list = writes.map((w) => w.item).filter((item) => writer.filterOf(item) === filter)
    if (list.length === 0) continue
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
