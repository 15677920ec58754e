/**
 * bfs nodes in cluster mode (cluster-enabled yes) for the distributed tests, and the real
 * `redis-cli --cluster` run against them. Nodes are the replication harness's processes
 * (cluster-nodes.ts: config file, log, kill -9, restart) with the cluster keys added, on ports
 * below 50000 (the bus port a node prints is its port + 10000, which must stay a port).
 * `redis-cli --cluster` waits for the cluster to join without a time limit: every run here has one.
 */
import { spawn } from 'node:child_process'
import net from 'node:net'
import path from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { Cluster, ClusterNode, waitUntil } from './cluster-nodes.js'
import { makeTempDir, removeTempDir } from './temp-dir.js'

/** The node timeout of the test nodes: a killed peer is `fail?` after it. */
export const NODE_TIMEOUT_MS = 2000

/** Whether `port` could be listened on a moment ago. */
function portFree(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const probe = net.createServer()
    probe.once('error', () => resolve(false))
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
  })
}

/** A port below 50000 that was free a moment ago. */
export async function freePortBelow50000(): Promise<number> {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 29000)
    if (await portFree(port)) return port
  }
}

/** What a redis-cli run printed, and how it ended. */
export interface CliRun {
  readonly code: number | null
  readonly output: string
}

/** Runs redis-cli with `args` (and `stdin`), killed after `timeoutMs` (then rejects with its output). */
export function redisCli(
  args: readonly string[],
  options: { stdin?: string; timeoutMs?: number } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('redis-cli', args, { stdio: ['pipe', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`redis-cli ${args.join(' ')} timed out after ${options.timeoutMs ?? 60_000} ms:\n${output}`))
    }, options.timeoutMs ?? 60_000)
    child.on('exit', (code) => {
      clearTimeout(timer)
      // Colours off: the tests read the text.
      resolve({ code, output: stripVTControlCharacters(output) })
    })
    // redis-cli may exit before it reads its input (an error, or a command that asks nothing):
    // the write then fails with EPIPE, which its exit code and output already tell.
    child.stdin.on('error', () => {})
    child.stdin.end(options.stdin ?? '')
  })
}

/** `redis-cli --cluster <subcommand> ...args`. */
export function clusterCli(
  subcommand: string,
  args: readonly string[],
  options: { stdin?: string; timeoutMs?: number } = {},
): Promise<CliRun> {
  return redisCli(['--cluster', subcommand, ...args], options)
}

/** Nodes in cluster mode, in one process group (Cluster: stopAll kills them and removes their files). */
export class ModeCluster {
  readonly processes = new Cluster()
  private count = 0

  /** Starts a node in cluster mode with extra config lines. */
  async node(extra: readonly string[] = []): Promise<ClusterNode> {
    for (let attempt = 1; ; attempt++) {
      const port = await freePortBelow50000()
      const node = new ClusterNode(this.processes, `node${++this.count}`, port, {
        extra: ['cluster-enabled yes', `cluster-node-timeout ${NODE_TIMEOUT_MS}`, ...extra],
      })
      try {
        await node.start()
        return node
      } catch (error) {
        if (attempt >= 3 || node.process?.exitCode === undefined) throw error
      }
    }
  }

  /** `count` nodes started side by side. */
  nodes(count: number, extra: readonly string[] = []): Promise<ClusterNode[]> {
    return Promise.all(Array.from({ length: count }, () => this.node(extra)))
  }

  stopAll(): Promise<void> {
    return this.processes.stopAll()
  }
}

/** "127.0.0.1:<port>" of a node, as redis-cli takes it. */
export function address(node: ClusterNode): string {
  return `127.0.0.1:${node.port}`
}

/** A node's CLUSTER NODES reply. */
export async function clusterNodes(node: ClusterNode): Promise<string> {
  return String(await node.command('CLUSTER', 'NODES'))
}

/** A node's CLUSTER INFO fields. */
export async function clusterInfo(node: ClusterNode): Promise<Map<string, string>> {
  const fields = new Map<string, string>()
  for (const line of String(await node.command('CLUSTER', 'INFO')).split('\r\n')) {
    const colon = line.indexOf(':')
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1))
  }
  return fields
}

/** Runs `redis-cli --cluster check` until it passes (the pull spreads a change within a few rounds). */
export async function waitCheckPasses(node: ClusterNode, timeoutMs = 20_000): Promise<CliRun> {
  let last: CliRun | undefined
  return waitUntil(
    () => `redis-cli --cluster check ${address(node)} passes; last:\n${last?.output ?? ''}`,
    async () => {
      last = await clusterCli('check', [address(node)], { timeoutMs: 15_000 })
      return last.code === 0 && !last.output.includes('[ERR]') && !last.output.includes('[WARNING]') ? last : undefined
    },
    { timeoutMs, intervalMs: 300 },
  )
}

/**
 * Waits until `nodes` form one cluster as the tools see it: each lists every other in its CLUSTER
 * NODES, then `--cluster check` passes from the first and each says cluster_state:ok. The first
 * wait is the one that matters: check and cluster_state:ok both hold while a master with every
 * slot has not yet heard of a node without slots (check compares only nodes that own slots, and
 * the state counts only those), and `--cluster reshard` or `add-node --cluster-master-id` from that
 * master then answers "The specified node (<id>) is not known or not a master".
 */
export async function waitJoined(nodes: readonly ClusterNode[], timeoutMs = 20_000): Promise<void> {
  const ids = await Promise.all(nodes.map(async (node) => String(await node.command('CLUSTER', 'MYID'))))
  let missing = ''
  await waitUntil(
    () => `every node lists the ${nodes.length} nodes in CLUSTER NODES (last: ${missing})`,
    async () => {
      for (const node of nodes) {
        const listed = await clusterNodes(node)
        const unknown = ids.filter((id) => !listed.includes(id))
        if (unknown.length > 0) {
          missing = `${address(node)} does not list ${unknown.join(', ')}`
          return false
        }
      }
      return true
    },
    { timeoutMs },
  )
  await waitCheckPasses(nodes[0]!, timeoutMs)
  for (const node of nodes) {
    await waitUntil(
      `${address(node)} says cluster_state:ok`,
      async () => (await clusterInfo(node)).get('cluster_state') === 'ok',
      { timeoutMs },
    )
  }
}

/** A real redis-server 7.0.15 in cluster mode (its own nodes.conf in a temporary directory), the reference. */
export async function startRedisClusterNode(): Promise<{ readonly port: number; stop(): Promise<void> }> {
  const dir = makeTempDir('bfs-redis-cluster-')
  let port = await freePortBelow50000()
  // Its bus listens on port + 10000.
  while (!(await portFree(port + 10000))) port = await freePortBelow50000()
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'no',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      path.join(dir, 'nodes.conf'),
      '--dir',
      dir,
    ],
    { stdio: 'ignore' },
  )
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  await waitUntil(
    'redis-server in cluster mode answers',
    async () => {
      const run = await redisCli(['-p', String(port), 'PING'], { timeoutMs: 5000 })
      return run.output.trim() === 'PONG'
    },
    { timeoutMs: 20_000 },
  )
  return {
    port,
    async stop() {
      child.kill('SIGTERM')
      await exited
      removeTempDir(dir)
    },
  }
}
