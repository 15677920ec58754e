/**
 * Several real server processes for the distributed tests (test/distributed): masters, replicas
 * and (cluster-sentinels.ts) real redis-sentinel processes, each with its own config file in one
 * temporary directory, on ports picked free, stopped and removed by `stopAll()` (call it in
 * afterAll: it SIGKILLs whatever is still running, and an exit hook does the same if the test
 * process dies first).
 *
 * The node under test is bfs (`node dist/main.js <conf>`). For developing the harness itself,
 * `BFS_DISTRIBUTED_NODE=redis-server` runs redis-server 7.0 nodes instead, with plain keys in
 * place of Bloom filters (SET/MSET/MGET for BF.ADD/BF.MADD/BF.MEXISTS, DBSIZE for BF.CARD):
 * that validates the harness's waits and expectations against the reference implementation.
 * It is a development switch only: the committed tests always run bfs unless it is set.
 * BFS_DISTRIBUTED_KEEP=1 keeps each test file's directory (config files, logs, data) for a look.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Redis } from 'ioredis'
import { BFS_MAIN, testIoThreadsLines } from './child-server.js'
import { freePort } from './tools.js'
import { makeTempDir } from './temp-dir.js'

export type NodeKind = 'bfs' | 'redis-server'

/** Which server the distributed tests run: bfs unless the development switch names redis-server. */
export const NODE_KIND: NodeKind = process.env.BFS_DISTRIBUTED_NODE === 'redis-server' ? 'redis-server' : 'bfs'

/** The filter (bfs) every item of the distributed tests goes into. */
const FILTER = 'acc'

/**
 * The data commands of the tests, for the node kind: items go into one Bloom filter on bfs and
 * are plain keys on redis-server (dev switch). A filter answers "maybe present" for items never
 * added, so presence checks prove that nothing is missing; `count` (BF.CARD) compares a replica
 * with its master (an item that was a false positive when added is not counted: compare counts
 * between nodes, never with the number of items written).
 */
export const items = {
  /** One item, as one command. */
  add: (item: string): string[] => (NODE_KIND === 'bfs' ? ['BF.ADD', FILTER, item] : ['SET', item, '1']),
  /** Several items in one command. */
  addMany: (list: readonly string[]): string[] =>
    NODE_KIND === 'bfs' ? ['BF.MADD', FILTER, ...list] : ['MSET', ...list.flatMap((item) => [item, '1'])],
  /** For each item, whether the node has it. */
  async present(client: Redis, list: readonly string[]): Promise<boolean[]> {
    if (NODE_KIND === 'bfs') return ((await client.call('BF.MEXISTS', FILTER, ...list)) as number[]).map((v) => v === 1)
    return ((await client.mget(...list)) as (string | null)[]).map((v) => v !== null)
  },
  /** How many items the node holds (BF.CARD: the filter's item count). */
  async count(client: Redis): Promise<number> {
    if (NODE_KIND === 'bfs') return Number(await client.call('BF.CARD', FILTER))
    return client.dbsize()
  },
}

/** Every process of one test file, and the directory that holds their files. */
export class Cluster {
  readonly dir = makeTempDir('bfs-distributed-')
  readonly processes = new Set<ManagedProcess>()
  private readonly clients = new Set<Redis>()
  private readonly onExit = (): void => {
    for (const managed of this.processes) managed.child.kill('SIGKILL')
  }

  constructor() {
    process.once('exit', this.onExit)
  }

  /** Creates a node's directory and config file (its port picked free now) and starts it. */
  node(name: string, options: NodeOptions = {}): Promise<ClusterNode> {
    return startOnFreePort(async (port) => new ClusterNode(this, name, port, options))
  }

  /** An ioredis client that is closed by stopAll (no reconnection, no retries). */
  client(port: number): Redis {
    const client = new Redis({ port, host: '127.0.0.1', retryStrategy: () => null, maxRetriesPerRequest: 0 })
    client.on('error', () => {})
    this.clients.add(client)
    return client
  }

  /**
   * Kills every process (SIGKILL), closes every client and removes the directory (kept, and
   * named on stderr, with BFS_DISTRIBUTED_KEEP=1: the nodes' and Sentinels' logs and files).
   */
  async stopAll(): Promise<void> {
    for (const client of this.clients) client.disconnect()
    this.clients.clear()
    await Promise.all([...this.processes].map((managed) => managed.kill()))
    process.removeListener('exit', this.onExit)
    if (process.env.BFS_DISTRIBUTED_KEEP === '1') process.stderr.write(`distributed test files kept in ${this.dir}\n`)
    else rmSync(this.dir, { recursive: true, force: true })
  }
}

/** A spawned process whose output goes to a log file in the cluster directory. */
export class ManagedProcess {
  readonly exited: Promise<number | null>
  exitCode: number | null | undefined = undefined

  constructor(
    cluster: Cluster,
    readonly child: ChildProcess,
    readonly logFile: string,
  ) {
    cluster.processes.add(this)
    this.exited = new Promise((resolve) => {
      child.on('exit', (code) => {
        this.exitCode = code
        cluster.processes.delete(this)
        resolve(code)
      })
    })
  }

  static spawn(cluster: Cluster, command: string, args: readonly string[], logFile: string): ManagedProcess {
    const fd = openSync(logFile, 'a')
    try {
      return new ManagedProcess(cluster, spawn(command, args, { stdio: ['ignore', fd, fd] }), logFile)
    } finally {
      closeSync(fd)
    }
  }

  /** SIGKILL, and resolves once it has exited. */
  async kill(): Promise<void> {
    if (this.exitCode === undefined) this.child.kill('SIGKILL')
    await this.exited
  }

  /** The last lines of its log, for failure messages. */
  logTail(lines = 30): string {
    try {
      return readFileSync(this.logFile, 'utf8').split('\n').slice(-lines).join('\n')
    } catch {
      return '(no log)'
    }
  }
}

export interface NodeOptions {
  /** `replicaof 127.0.0.1 <port>` in the config file. */
  replicaOf?: number
  /** Extra config lines (`key value`). */
  extra?: readonly string[]
}

/**
 * One server node: its config file `<dir>/<name>/node.conf` (port, dir, no snapshots rules, the
 * append-only log on bfs, replicaof), restartable with the same file, as an operator would.
 */
export class ClusterNode {
  readonly dir: string
  readonly configFile: string
  process: ManagedProcess | undefined

  constructor(
    readonly cluster: Cluster,
    readonly name: string,
    readonly port: number,
    options: NodeOptions,
  ) {
    this.dir = path.join(cluster.dir, name)
    mkdirSync(this.dir, { recursive: true })
    this.configFile = path.join(this.dir, 'node.conf')
    const lines = [
      ...(NODE_KIND === 'bfs' ? testIoThreadsLines() : []),
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${this.dir}`,
      'save ""',
      // redis-server (dev switch) keeps its replication id across a clean restart only in an RDB.
      NODE_KIND === 'bfs' ? 'appendonly yes' : 'appendonly no',
      // One second of diskless-sync delay instead of five: still one "\n" keep-alive, less waiting.
      'repl-diskless-sync-delay 1',
      ...(options.replicaOf === undefined ? [] : [`replicaof 127.0.0.1 ${options.replicaOf}`]),
      ...(options.extra ?? []),
    ]
    writeFileSync(this.configFile, lines.join('\n') + '\n')
  }

  /** Starts the node with its config file and waits until it answers PING. */
  async start(): Promise<void> {
    if (this.process !== undefined && this.process.exitCode === undefined)
      throw new Error(`${this.name} is already running`)
    const log = path.join(this.dir, 'node.log')
    this.process =
      NODE_KIND === 'bfs'
        ? ManagedProcess.spawn(this.cluster, process.execPath, [BFS_MAIN, this.configFile], log)
        : ManagedProcess.spawn(this.cluster, 'redis-server', [this.configFile], log)
    await waitUntil(`${this.name} answers PING`, () => answersPing(this.port), { process: this.process })
  }

  /**
   * kill -9, and resolves once it has exited. On redis-server (dev switch) its dump.rdb goes too:
   * a restarted node then has what a bfs node has after a crash, data without a replication
   * offset to resume from (bfs trusts its saved offset only if it replayed nothing from its log).
   */
  async kill(): Promise<void> {
    await this.process?.kill()
    if (NODE_KIND === 'redis-server') rmSync(path.join(this.dir, 'dump.rdb'), { force: true })
  }

  /** SHUTDOWN SAVE (the final snapshot, then exit), and resolves once the process has exited. */
  async shutdown(): Promise<void> {
    const client = this.cluster.client(this.port)
    await client.call('SHUTDOWN', 'SAVE').catch(() => {}) // the connection closes without a reply
    client.disconnect()
    await withTimeout(this.process!.exited, 30_000, `${this.name} exits after SHUTDOWN SAVE`)
  }

  /** One command on a fresh connection (the node may have been restarted since the last one). */
  command(...args: (string | number)[]): Promise<unknown> {
    return commandOn(this.port, args)
  }

  /** INFO <section> as a map of its `key:value` lines. */
  async info(section = 'replication'): Promise<Map<string, string>> {
    return parseInfo(String(await this.command('INFO', section)))
  }

  /** Waits until this node is a replica of `masterPort` with its link up; returns its INFO replication. */
  waitLinkUp(masterPort: number, timeoutMs = 60_000): Promise<Map<string, string>> {
    let seen = ''
    return waitUntil(
      () => `${this.name} is a replica of ${masterPort} with master_link_status:up (it says ${seen})`,
      async () => {
        const info = await this.info()
        seen = ['role', 'master_port', 'master_link_status'].map((key) => `${key}:${info.get(key)}`).join(' ')
        const up =
          info.get('role') === 'slave' &&
          info.get('master_port') === String(masterPort) &&
          info.get('master_link_status') === 'up'
        return up ? info : undefined
      },
      { timeoutMs, process: this.process },
    )
  }

  /** Waits until this master lists `count` replicas in state=online; returns their ports. */
  waitOnlineReplicas(count: number, timeoutMs = 60_000): Promise<number[]> {
    return waitUntil(
      `${this.name} lists ${count} online replicas`,
      async () => {
        const info = await this.info()
        const ports = [...info].filter(([key, value]) => /^slave\d+$/.test(key) && value.includes('state=online'))
        const list = ports.map(([, value]) => Number(/port=(\d+)/.exec(value)?.[1]))
        return info.get('role') === 'master' && list.length === count ? list.sort((a, b) => a - b) : undefined
      },
      { timeoutMs, process: this.process },
    )
  }

  /** A number from INFO `section` (stats: sync_full, sync_partial_ok...). */
  async infoNumber(section: string, field: string): Promise<number> {
    const value = (await this.info(section)).get(field)
    if (value === undefined) throw new Error(`${this.name}: INFO ${section} has no ${field}`)
    return Number(value)
  }
}

/**
 * Starts what `make(port)` builds on a port that was free a moment ago; if the process exits while
 * starting (another program took the port in between), tries again with another port, 3 times.
 */
export async function startOnFreePort<T extends { start(): Promise<void>; process: ManagedProcess | undefined }>(
  make: (port: number) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const started = await make(await freePort())
    try {
      await started.start()
      return started
    } catch (error) {
      if (attempt >= 3 || started.process?.exitCode === undefined) throw error
    }
  }
}

/** One command to the server on `port`, on a connection of its own. */
export async function commandOn(port: number, args: readonly (string | number)[]): Promise<unknown> {
  const client = new Redis({ port, host: '127.0.0.1', retryStrategy: () => null, maxRetriesPerRequest: 0 })
  client.on('error', () => {})
  try {
    return await client.call(String(args[0]), ...args.slice(1).map(String))
  } finally {
    client.disconnect()
  }
}

/** `key:value` lines of an INFO reply. */
export function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>()
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':')
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1))
  }
  return fields
}

/** Whether a server on `port` answers PING with +PONG (or -LOADING, still loading) within 2 s. */
export async function answersPing(port: number): Promise<boolean> {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
  })
  client.on('error', () => {})
  try {
    return (await withTimeout(client.ping(), 2000, 'PING')) === 'PONG'
  } catch {
    return false
  } finally {
    client.disconnect()
  }
}

/**
 * Polls `check` every `intervalMs` until it returns something truthy (returned), or throws after
 * `timeoutMs` with `what`, the last value or error, and the watched process's log tail. A
 * watched process that exits fails at once. Errors thrown by `check` count as "not yet".
 */
export async function waitUntil<T>(
  what: string | (() => string),
  check: () => Promise<T> | T,
  options: { timeoutMs?: number; intervalMs?: number; process?: ManagedProcess } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000)
  let last: unknown
  for (;;) {
    try {
      last = await check()
      if (last) return last as NonNullable<T>
    } catch (error) {
      last = error
    }
    const watched = options.process
    if (watched !== undefined && watched.exitCode !== undefined) {
      throw new Error(
        `${typeof what === 'string' ? what : what()}: the process exited with ${watched.exitCode}\n${watched.logTail()}`,
      )
    }
    if (Date.now() > deadline) {
      const tail = watched === undefined ? '' : `\n${watched.logTail()}`
      throw new Error(
        `timed out waiting until ${typeof what === 'string' ? what : what()}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}${tail}`,
      )
    }
    await sleep(options.intervalMs ?? 100)
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** `promise`, or a rejection naming `what` after `ms`. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}
