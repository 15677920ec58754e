/**
 * BF.* and APBF.* through an ioredis `Cluster`, sent straight to the shard that owns the key.
 *
 * ioredis (5 and 6) knows the keys of Redis's own commands only (its static `@ioredis/commands`
 * table): `cluster.call('BF.ADD', key, item)` has no slot, goes to a random master and follows
 * the `-MOVED` it gets back, which costs a redirect and a `CLUSTER SLOTS` refresh on most calls;
 * and with `scaleReads: 'slave'` it never sends BF.EXISTS to a replica, not knowing it only reads.
 * {@link bloomCluster} sends each command as an ioredis `Command` whose slot is the key's (Redis's
 * own rule, core/key-slot.ts, not npm cluster-key-slot's, which is wrong for keys with an empty
 * `{}`) and whose read-only flag is the command's, through `cluster.sendCommand(command)`: never
 * with a node argument, which would turn off ioredis's handling of MOVED and ASK while a slot moves.
 *
 * ioredis stays the application's dependency, not bfs's: the helper takes its `Command` class.
 * For batches, send BF.MADD / BF.MEXISTS or many calls at once (ioredis writes the commands in
 * flight to each node together); ioredis's `cluster.pipeline()` cannot place BF.* commands, whose
 * keys it does not know.
 *
 * ```ts
 * import { Cluster, Command } from 'ioredis'
 * import { bloomCluster } from 'bloom-filter-server'
 *
 * const cluster = new Cluster([{ host: '127.0.0.1', port: 7001 }], { scaleReads: 'slave' })
 * const bf = bloomCluster(cluster, Command)
 * await bf.add('urls', 'https://example.com/')            // 1, sent to the key's master
 * await bf.exists('urls', 'https://example.com/')         // 1, read from one of its replicas
 * await bf.call('APBF.ADD', 'recent', 'order-42')          // any BF.* or APBF.* command
 * ```
 */
import { slotOf } from '../core/key-slot.js'

/**
 * The BF.* and APBF.* commands (RedisBloom 2.4's and bfs's own), each with whether it only reads:
 * the `readonly` flag of its COMMAND row, which ioredis's `scaleReads` needs to send it to a
 * replica. Every one takes its key first; BF.MERGE's sources must share the destination's slot.
 */
export const BLOOM_CLUSTER_COMMANDS = {
  'BF.RESERVE': false,
  'BF.ADD': false,
  'BF.MADD': false,
  'BF.ADDED': false,
  'BF.INSERT': false,
  'BF.EXISTS': true,
  'BF.MEXISTS': true,
  'BF.INFO': true,
  'BF.CARD': true,
  'BF.DEBUG': true,
  'BF.SCANDUMP': true,
  'BF.LOADCHUNK': false,
  'BF.MERGE': false,
  'BF.SAVE': true,
  'BF.LOAD': false,
  'BFS.HEALTH': true,
  'APBF.RESERVE': false,
  'APBF.ADD': false,
  'APBF.ADDAT': false,
  'APBF.EXISTS': true,
  'APBF.INFO': true,
} as const satisfies Readonly<Record<string, boolean>>

/** A command name {@link BloomCluster.call} knows (any case is accepted at run time). */
export type BloomClusterCommandName = keyof typeof BLOOM_CLUSTER_COMMANDS

/** An argument as ioredis sends it. */
export type ClusterArgument = string | Buffer | number

/** What the helper uses of an ioredis `Command` (5.x and 6.x): the promise of its reply. */
export interface ClusterCommandLike {
  readonly promise: Promise<unknown>
}

/** ioredis's `Command` class (`import { Command } from 'ioredis'`, or `Redis.Command`). */
export type ClusterCommandClass<C extends ClusterCommandLike> = new (
  name: string,
  args: ClusterArgument[],
  options: { replyEncoding?: BufferEncoding | null; readOnly?: boolean },
) => C

/** What the helper uses of an ioredis `Cluster` (5.x and 6.x). */
export interface ClusterLike<C extends ClusterCommandLike> {
  sendCommand(command: C): unknown
  readonly options?: { readonly keyPrefix?: string }
}

/** How {@link bloomCluster} sends. */
export interface BloomClusterOptions {
  /** Put before every key, as ioredis's own `keyPrefix` (the default) does for commands it knows. */
  readonly keyPrefix?: string
}

/** The BF.* and APBF.* commands of one ioredis `Cluster`, each sent to its key's shard. */
export interface BloomCluster {
  /** Any BF.* or APBF.* command, its key first; string replies as UTF-8 text. */
  call(name: BloomClusterCommandName, key: string | Buffer, ...args: ClusterArgument[]): Promise<unknown>
  /** {@link BloomCluster.call} with string replies as Buffers (BF.SCANDUMP's chunks). */
  callBuffer(name: BloomClusterCommandName, key: string | Buffer, ...args: ClusterArgument[]): Promise<unknown>
  /** BF.RESERVE key errorRate capacity [EXPANSION n] [NONSCALING] → 'OK' */
  reserve(key: string | Buffer, errorRate: number, capacity: number, ...options: ClusterArgument[]): Promise<'OK'>
  /** BF.ADD key item → 1 when new, 0 when (probably) seen */
  add(key: string | Buffer, item: ClusterArgument): Promise<0 | 1>
  /** BF.MADD key item [item ...] → one 0 or 1 per item */
  madd(key: string | Buffer, ...items: ClusterArgument[]): Promise<(0 | 1)[]>
  /** BF.EXISTS key item → 1 when (probably) present, 0 when surely absent; a replica may answer (scaleReads) */
  exists(key: string | Buffer, item: ClusterArgument): Promise<0 | 1>
  /** BF.MEXISTS key item [item ...] → one 0 or 1 per item; a replica may answer (scaleReads) */
  mexists(key: string | Buffer, ...items: ClusterArgument[]): Promise<(0 | 1)[]>
}

/** The hash slot the cluster routes a command on `key` to (Redis's CRC16 and hash-tag rule). */
export function clusterSlotOf(key: string | Buffer): number {
  return slotOf(key)
}

/**
 * The BF.* and APBF.* commands of an ioredis `Cluster`, each sent to the master owning its key's
 * slot (or, for a read with `scaleReads: 'slave'`, to one of its replicas), with no redirect.
 *
 * @param cluster an ioredis `Cluster` (ioredis 5 or 6)
 * @param Command ioredis's `Command` class, from the same ioredis as `cluster`
 */
export function bloomCluster<C extends ClusterCommandLike>(
  cluster: ClusterLike<C>,
  Command: ClusterCommandClass<C>,
  options: BloomClusterOptions = {},
): BloomCluster {
  const prefix = options.keyPrefix ?? cluster.options?.keyPrefix ?? ''
  const send = (
    replyEncoding: BufferEncoding | null,
    name: string,
    key: string | Buffer,
    args: ClusterArgument[],
  ): Promise<unknown> => {
    const upper = name.toUpperCase()
    const readOnly = (BLOOM_CLUSTER_COMMANDS as Readonly<Record<string, boolean>>)[upper]
    if (readOnly === undefined)
      return Promise.reject(new TypeError(`bloomCluster: ${name} is not a BF.* or APBF.* command`))
    const fullKey =
      prefix === '' ? key : typeof key === 'string' ? prefix + key : Buffer.concat([Buffer.from(prefix), key])
    const command = new Command(upper, [fullKey, ...args], { replyEncoding, readOnly })
    // ioredis reads a preset slot instead of looking for the key in its table of Redis commands.
    ;(command as unknown as { slot: number }).slot = slotOf(fullKey)
    cluster.sendCommand(command)
    return command.promise
  }
  return {
    call: (name, key, ...args) => send('utf8', name, key, args),
    callBuffer: (name, key, ...args) => send(null, name, key, args),
    reserve: (key, errorRate, capacity, ...rest) =>
      send('utf8', 'BF.RESERVE', key, [errorRate, capacity, ...rest]) as Promise<'OK'>,
    add: (key, item) => send('utf8', 'BF.ADD', key, [item]) as Promise<0 | 1>,
    madd: (key, ...items) => send('utf8', 'BF.MADD', key, items) as Promise<(0 | 1)[]>,
    exists: (key, item) => send('utf8', 'BF.EXISTS', key, [item]) as Promise<0 | 1>,
    mexists: (key, ...items) => send('utf8', 'BF.MEXISTS', key, items) as Promise<(0 | 1)[]>,
  }
}
