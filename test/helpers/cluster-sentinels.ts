/**
 * Real, unmodified redis-sentinel processes (Debian's redis-sentinel 7.0) monitoring the nodes of
 * a Cluster (cluster-nodes.ts) as `mymaster`, each with its own config file (Sentinel rewrites it)
 * in the cluster directory, stopped by the cluster's stopAll().
 */
import { writeFileSync, mkdirSync } from 'node:fs'
import path from 'node:path'
import { answersPing, commandOn, ManagedProcess, startOnFreePort, waitUntil, type Cluster } from './cluster-nodes.js'

export const MASTER_NAME = 'mymaster'

/** Sentinel settings of the tests (quorum 2, down-after 3000 ms). */
export const SENTINEL_SETTINGS = { quorum: 2, downAfterMs: 3000, failoverTimeoutMs: 10_000 }

export class Sentinel {
  process: ManagedProcess | undefined

  constructor(
    readonly cluster: Cluster,
    readonly name: string,
    readonly port: number,
    readonly configFile: string,
  ) {}

  async start(): Promise<void> {
    this.process = ManagedProcess.spawn(
      this.cluster,
      'redis-sentinel',
      [this.configFile],
      path.join(path.dirname(this.configFile), 'sentinel.log'),
    )
    await waitUntil(`${this.name} answers PING`, () => answersPing(this.port), { process: this.process })
  }

  /** One command on a fresh connection. */
  command(...args: (string | number)[]): Promise<unknown> {
    return commandOn(this.port, args)
  }

  /** The master's port by SENTINEL get-master-addr-by-name <name> (mymaster unless named). */
  async masterPort(name = MASTER_NAME): Promise<number> {
    const [, port] = (await this.command('SENTINEL', 'get-master-addr-by-name', name)) as [string, string]
    return Number(port)
  }

  /** SENTINEL master <name> (mymaster unless named) as a map. */
  async master(name = MASTER_NAME): Promise<Map<string, string>> {
    return pairs((await this.command('SENTINEL', 'master', name)) as string[])
  }

  /** SENTINEL replicas <name> (mymaster unless named), each as a map. */
  async replicas(name = MASTER_NAME): Promise<Map<string, string>[]> {
    return ((await this.command('SENTINEL', 'replicas', name)) as string[][]).map(pairs)
  }
}

function pairs(flat: string[]): Map<string, string> {
  const map = new Map<string, string>()
  for (let i = 0; i + 1 < flat.length; i += 2) map.set(flat[i]!, flat[i + 1]!)
  return map
}

/** Starts `count` Sentinels monitoring 127.0.0.1:masterPort. */
export async function startSentinels(cluster: Cluster, masterPort: number, count = 3): Promise<Sentinel[]> {
  const sentinels: Sentinel[] = []
  for (let i = 1; i <= count; i++) {
    sentinels.push(await startOnFreePort(async (port) => sentinelOn(cluster, `sentinel${i}`, port, masterPort)))
  }
  return sentinels
}

/** A Sentinel's directory and config file, monitoring 127.0.0.1:masterPort. */
function sentinelOn(cluster: Cluster, name: string, port: number, masterPort: number): Sentinel {
  const dir = path.join(cluster.dir, name)
  mkdirSync(dir, { recursive: true })
  const configFile = path.join(dir, 'sentinel.conf')
  writeFileSync(configFile, sentinelConfigLines(port, dir, masterPort).join('\n') + '\n')
  return new Sentinel(cluster, name, port, configFile)
}

/**
 * The config file of a test Sentinel on `port` (its own `dir`) monitoring 127.0.0.1:masterPort.
 * docs/operations/replication.md's failover set-up writes these lines too (test/docs/replication-examples.test.ts).
 */
export function sentinelConfigLines(port: number, dir: string, masterPort: number): string[] {
  const { quorum, downAfterMs, failoverTimeoutMs } = SENTINEL_SETTINGS
  return [
    `port ${port}`,
    'bind 127.0.0.1',
    `dir ${dir}`,
    `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${masterPort} ${quorum}`,
    `sentinel down-after-milliseconds ${MASTER_NAME} ${downAfterMs}`,
    `sentinel failover-timeout ${MASTER_NAME} ${failoverTimeoutMs}`,
    `sentinel parallel-syncs ${MASTER_NAME} 1`,
  ]
}

/**
 * Waits until every Sentinel sees `masterPort` as the master with `replicas` replicas and knows
 * the other Sentinels (they find each other through the master's __sentinel__:hello channel).
 */
export async function waitSentinelsConverged(
  sentinels: readonly Sentinel[],
  masterPort: number,
  replicas: number,
): Promise<void> {
  await waitUntil(
    `every Sentinel sees master ${masterPort} with ${replicas} replicas and ${sentinels.length - 1} other Sentinels`,
    async () => {
      for (const sentinel of sentinels) {
        const master = await sentinel.master()
        if (master.get('port') !== String(masterPort) || master.get('flags') !== 'master') return false
        if (
          master.get('num-slaves') !== String(replicas) ||
          master.get('num-other-sentinels') !== String(sentinels.length - 1)
        )
          return false
      }
      return true
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  )
}

/** Polls every Sentinel until they all name one master of `name` (mymaster) other than `oldPort`; returns its port. */
export async function waitNewMaster(
  sentinels: readonly Sentinel[],
  oldPort: number,
  timeoutMs: number,
  name = MASTER_NAME,
): Promise<number> {
  return waitUntil(
    `every Sentinel names a master of ${name} other than ${oldPort}`,
    async () => {
      const ports = await Promise.all(sentinels.map((sentinel) => sentinel.masterPort(name)))
      return ports.every((port) => port === ports[0] && port !== oldPort) ? ports[0] : undefined
    },
    { timeoutMs, intervalMs: 100 },
  )
}

/** Waits until every Sentinel lists the replica on `port` of `name` (mymaster) as healthy (no s_down, not disconnected). */
export async function waitSentinelsSeeReplica(
  sentinels: readonly Sentinel[],
  port: number,
  timeoutMs = 60_000,
  name = MASTER_NAME,
): Promise<void> {
  await waitUntil(
    `every Sentinel lists 127.0.0.1:${port} as a healthy replica of ${name}`,
    async () => {
      for (const sentinel of sentinels) {
        const replica = (await sentinel.replicas(name)).find((r) => r.get('port') === String(port))
        const flags = replica?.get('flags') ?? 'absent'
        if (flags.includes('s_down') || flags.includes('disconnected') || flags === 'absent') return false
      }
      return true
    },
    { timeoutMs, intervalMs: 200 },
  )
}
