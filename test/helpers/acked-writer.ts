/**
 * A client in Sentinel mode that writes one item at a time, each followed by `WAIT 1 1000`, and
 * keeps the items whose write is acknowledged: WAIT answered ≥ 1 and both commands ran on the same
 * connection (ioredis re-sends a WAIT in flight at a disconnection
 * on the new connection, where its answer says nothing about the write). Those are the writes
 * that must survive a failover.
 */
import { Redis } from 'ioredis'
import { createSentinel } from 'redis'
import { items, sleep, waitUntil, withTimeout } from './cluster-nodes.js'
import { MASTER_NAME, type Sentinel } from './cluster-sentinels.js'

export interface AckedWrite {
  item: string
  /** When the WAIT answered (Date.now()). */
  at: number
  /** The port of the node that acknowledged it. */
  port: number
}

/** One write + WAIT; resolves with the acknowledging node's port, or undefined if not acknowledged. */
type WriteOnce = (item: string) => Promise<number | undefined>

export abstract class AckedWriter {
  readonly acked: AckedWrite[] = []
  notAcked = 0
  errors: string[] = []
  private stopped = false
  private loop: Promise<void> | undefined
  private sequence = 0

  constructor(readonly prefix: string) {}

  protected abstract writeOnce: WriteOnce
  protected abstract close(): Promise<void>

  start(): void {
    this.loop = (async () => {
      while (!this.stopped) {
        const item = `${this.prefix}:${this.sequence++}`
        try {
          const port = await withTimeout(this.writeOnce(item), 20_000, `write ${item}`)
          if (port === undefined) this.notAcked++
          else this.acked.push({ item, at: Date.now(), port })
        } catch (error) {
          this.notAcked++
          if (this.errors.length < 50) this.errors.push(`${item}: ${(error as Error).message}`)
          await sleep(100)
        }
        await sleep(50)
      }
    })()
  }

  /** Waits until `count` writes were acknowledged after `since` (ms), optionally by the node on `port`. */
  async waitAcked(
    count: number,
    since = 0,
    options: { port?: number; timeoutMs?: number } = {},
  ): Promise<AckedWrite[]> {
    const matching = (): AckedWrite[] =>
      this.acked.filter((w) => w.at >= since && (options.port === undefined || w.port === options.port))
    await waitUntil(
      () =>
        `${count} acknowledged writes by ${this.prefix}${options.port === undefined ? '' : ` on ${options.port}`} (${this.progress()})`,
      () => matching().length >= count,
      { timeoutMs: options.timeoutMs ?? 60_000 },
    )
    return matching()
  }

  /** What the writer has done so far, for failure messages. */
  progress(): string {
    const ports = [...new Set(this.acked.map((w) => w.port))].join(',')
    return `${this.acked.length} acknowledged (ports ${ports}), ${this.notAcked} not; last errors: ${this.errors.slice(-3).join('; ')}`
  }

  async stop(): Promise<void> {
    this.stopped = true
    await this.close()
    await withTimeout(this.loop ?? Promise.resolve(), 30_000, `${this.prefix} writer loop ends`).catch(() => {})
  }
}

/** ioredis (5) in Sentinel mode: `new Redis({ sentinels, name })`, its defaults otherwise. */
export class IoredisWriter extends AckedWriter {
  readonly redis: Redis

  constructor(sentinels: readonly Sentinel[], prefix = 'io') {
    super(prefix)
    this.redis = new Redis({
      sentinels: sentinels.map((s) => ({ host: '127.0.0.1', port: s.port })),
      name: MASTER_NAME,
    })
    this.redis.on('error', () => {})
  }

  protected writeOnce: WriteOnce = async (item) => {
    const stream = this.redis.stream
    const [command, ...args] = items.add(item)
    await this.redis.call(command!, ...args)
    const acks = Number(await this.redis.call('WAIT', '1', '1000'))
    return acks >= 1 && this.redis.stream === stream ? this.redis.stream.remotePort : undefined
  }

  protected async close(): Promise<void> {
    this.redis.disconnect()
  }
}

/**
 * node-redis (6) `createSentinel`: both commands on one leased master client, counted only if no
 * MASTER_CHANGE happened between them (node-redis rejects commands in flight at a disconnection
 * instead of re-sending them, and replaces its master clients on a master change).
 */
export class NodeRedisWriter extends AckedWriter {
  readonly sentinel
  private masterChanges = 0

  constructor(sentinels: readonly Sentinel[], prefix = 'nr') {
    super(prefix)
    this.sentinel = createSentinel({
      name: MASTER_NAME,
      sentinelRootNodes: sentinels.map((s) => ({ host: '127.0.0.1', port: s.port })),
    })
    this.sentinel.on('error', () => {})
    this.sentinel.on('topology-change', (event: { type: string }) => {
      if (event.type === 'MASTER_CHANGE') this.masterChanges++
    })
  }

  async connect(): Promise<void> {
    await withTimeout(this.sentinel.connect(), 30_000, 'node-redis createSentinel connects')
  }

  protected writeOnce: WriteOnce = async (item) => {
    const changes = this.masterChanges
    const acks = await this.sentinel.use(async (client) => {
      await client.sendCommand(false, items.add(item))
      return Number(await client.sendCommand(false, ['WAIT', '1', '1000']))
    })
    const port = this.sentinel.getMasterNode()?.port
    return acks >= 1 && this.masterChanges === changes ? port : undefined
  }

  protected async close(): Promise<void> {
    await this.sentinel.destroy().catch(() => {})
  }
}
