#!/usr/bin/env node
/**
 * bfs-copy: copies Bloom filters from one RESP endpoint to another with BF.SCANDUMP and
 * BF.LOADCHUNK, the chunked dump RedisBloom 2.4 and bfs share, so nothing is re-added and the copy
 * answers exactly as the original. Either end may be bfs or Redis with RedisBloom.
 *
 *   bfs-copy --from host:port --to host:port [--from-password x] [--to-password y]
 *            [--replace] [--parallel n] [--tls|--from-tls|--to-tls [--cacert f] [--cert f --key f]]
 *            [pattern ...]
 *
 * Filters are listed with SCAN ... TYPE MBbloom-- (a pattern without glob characters names one
 * filter); each copy is header first, then chunks, with the next chunk read from the source while
 * the previous one is written to the target. Exit status: 0 all copied, 1 some filter failed,
 * 2 bad usage or an endpoint that cannot be reached.
 */
import type tls from 'node:tls'
import { RespClient, RespReplyError, type RespValue } from './resp-client.js'
import { readArgs, tlsConnectOptions, tlsOptionTable, type TlsArgs } from './cli-args.js'
import { EXIT_FAILED, EXIT_OK, SetupError, errorText, runCli } from './cli-main.js'
import { ProgressLine, REDRAW_MS, formatBar } from './progress-line.js'
import { dumpHeaderBitmapBytes } from '../format/dump-size.js'

/** RedisBloom's module type name, as SCAN's TYPE option and TYPE know it. */
const FILTER_TYPE = 'MBbloom--'
/** SCAN's COUNT hint. */
const SCAN_COUNT = 1000
/** Header reads in flight at once while sizing the job. */
const HEADER_WINDOW = 256
/** LOADCHUNKs (up to 16 MiB each) in flight per filter before the next chunk is read. */
const CHUNK_WINDOW = 2
const DEFAULT_PARALLEL = 4
const MAX_PARALLEL = 64

const USAGE = `usage: bfs-copy --from host:port --to host:port [options] [pattern ...]

Copies Bloom filters between RESP servers (bfs, or Redis with RedisBloom) with
BF.SCANDUMP / BF.LOADCHUNK. Patterns are SCAN globs; a name without * ? [ or \\
is one filter. With no pattern every filter is copied.

options:
  --from host:port        source (port defaults to 6379)
  --to host:port          target
  --from-password pass    AUTH on the source (or env BFS_COPY_FROM_PASSWORD)
  --to-password pass      AUTH on the target (or env BFS_COPY_TO_PASSWORD)
  --replace               overwrite filters that exist on the target (DEL first);
                          without it an existing target key fails that filter
  --parallel n            filters copied at once (default ${DEFAULT_PARALLEL})
  --tls                   connect to both over TLS (as redis-cli --tls); --from-tls
                          or --to-tls: only to that one; with:
  --cacert file           CA certificate(s) the servers' certificates must chain to
  --cert file, --key file client certificate and its key
  -h, --help              this text
`

interface Endpoint {
  host: string
  port: number
  password?: string
  /** Over TLS with these options. */
  tls?: tls.ConnectionOptions
}

interface CopyOptions {
  from: Endpoint
  to: Endpoint
  replace: boolean
  parallel: number
  patterns: string[]
}

/** One filter to copy: its raw name, and what the source's header said about it. */
interface Job {
  name: Buffer
  header?: Buffer
  /** Sum of the layers' bitmap bytes, from the header (0 when it could not be read). */
  totalBytes: number
  copiedBytes: number
  error?: string
  warning?: string
}

function parseEndpoint(text: string, flag: string): Endpoint {
  const match = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d+))?$/.exec(text)
  const port = match?.[3] === undefined ? 6379 : Number(match[3])
  if (match === null || !(port > 0 && port < 65536)) throw new SetupError(`${flag}: expected host:port, got '${text}'`)
  return { host: match[1] ?? match[2]!, port }
}

function parseArgs(args: readonly string[]): CopyOptions | 'help' {
  let from: Endpoint | undefined
  let to: Endpoint | undefined
  let fromPassword = process.env.BFS_COPY_FROM_PASSWORD
  let toPassword = process.env.BFS_COPY_TO_PASSWORD
  let replace = false
  let parallel = DEFAULT_PARALLEL
  const tlsArgs: TlsArgs = { tls: false }
  const tlsSides = { from: false, to: false }
  const patterns = readArgs(args, {
    ...tlsOptionTable(tlsArgs),
    '--tls': () => {
      tlsArgs.tls = tlsSides.from = tlsSides.to = true
    },
    '--from-tls': () => {
      tlsArgs.tls = tlsSides.from = true
    },
    '--to-tls': () => {
      tlsArgs.tls = tlsSides.to = true
    },
    '--from': (value, flag) => {
      from = parseEndpoint(value(), flag)
    },
    '--to': (value, flag) => {
      to = parseEndpoint(value(), flag)
    },
    '--from-password': (value) => {
      fromPassword = value()
    },
    '--to-password': (value) => {
      toPassword = value()
    },
    '--replace': () => {
      replace = true
    },
    '--parallel': (value) => {
      const text = value()
      parallel = Number(text)
      if (!Number.isInteger(parallel) || parallel < 1 || parallel > MAX_PARALLEL) {
        throw new SetupError(`--parallel: expected an integer from 1 to ${MAX_PARALLEL}, got '${text}'`)
      }
    },
  })
  if (patterns === 'help') return 'help'
  if (from === undefined) throw new SetupError('--from is required')
  if (to === undefined) throw new SetupError('--to is required')
  if (fromPassword !== undefined && fromPassword !== '') from.password = fromPassword
  if (toPassword !== undefined && toPassword !== '') to.password = toPassword
  const tlsOptions = tlsConnectOptions(tlsArgs)
  if (tlsSides.from) from.tls = tlsOptions
  if (tlsSides.to) to.tls = tlsOptions
  if (from.host === to.host && from.port === to.port) throw new SetupError('--from and --to are the same endpoint')
  return { from, to, replace, parallel, patterns: patterns.length === 0 ? ['*'] : patterns }
}

/** Whether a SCAN pattern holds glob syntax (otherwise it names one filter). */
function isGlob(pattern: string): boolean {
  return /[*?[\\]/.test(pattern)
}

/** A name for the terminal: printable ASCII as is, other bytes as \xNN. */
function displayName(name: Buffer): string {
  let out = ''
  for (const byte of name) {
    out += byte >= 0x20 && byte < 0x7f && byte !== 0x5c ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, '0')}`
  }
  return out
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(1)} ${units[unit]}`
}

/** A SCANDUMP reply: [iterator, bytes]. */
function dumpReply(value: RespValue): { next: number; data: Buffer } {
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== 'number' || !Buffer.isBuffer(value[1])) {
    throw new Error('unexpected BF.SCANDUMP reply')
  }
  return { next: value[0], data: value[1] }
}

/** Progress on a terminal (a redrawn bar) or as log lines (one per filter). */
class Progress {
  private readonly tty: boolean
  private readonly line: ProgressLine
  done = 0
  failed = 0

  constructor(
    out: NodeJS.WriteStream,
    private readonly jobs: readonly Job[],
  ) {
    this.tty = out.isTTY === true
    this.line = new ProgressLine(out)
  }

  private totals(): { copied: number; total: number } {
    let copied = 0
    let total = 0
    for (const job of this.jobs) {
      copied += job.copiedBytes
      total += Math.max(job.totalBytes, job.copiedBytes)
    }
    return { copied, total }
  }

  /** Redraws the bar when on a terminal and enough time has passed (or `force`). */
  tick(force = false): void {
    if (!this.tty || !this.line.due(Date.now(), REDRAW_MS, force)) return
    const { copied, total } = this.totals()
    const fraction = total === 0 ? (this.jobs.length === 0 ? 1 : (this.done + this.failed) / this.jobs.length) : copied / total
    const failed = this.failed > 0 ? `, ${this.failed} failed` : ''
    this.line.draw(`${formatBar(fraction)} ${formatBytes(copied)} / ${formatBytes(total)}  ${this.done + this.failed}/${this.jobs.length} filters${failed}`)
  }

  /** A line that must stay on screen (a failure, a warning, or a copied filter when not on a terminal). */
  log(line: string, always: boolean): void {
    if (this.tty && !always) return
    this.line.print(line)
    this.tick(true)
  }

  finish(): void {
    this.tick(true)
    this.line.end()
  }
}

/** Names of the filters matching the patterns on the source, each once, in SCAN order. */
async function listFilters(source: RespClient, patterns: readonly string[]): Promise<Buffer[]> {
  const seen = new Set<string>()
  const names: Buffer[] = []
  const add = (name: Buffer): void => {
    const key = name.toString('latin1')
    if (seen.has(key)) return
    seen.add(key)
    names.push(name)
  }
  for (const pattern of patterns) {
    if (!isGlob(pattern)) {
      add(Buffer.from(pattern, 'utf8'))
      continue
    }
    let cursor = '0'
    do {
      const reply = await source.send(['SCAN', cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT, 'TYPE', FILTER_TYPE])
      if (!Array.isArray(reply) || reply.length !== 2 || !Buffer.isBuffer(reply[0]) || !Array.isArray(reply[1])) {
        throw new Error('unexpected SCAN reply')
      }
      cursor = reply[0].toString('latin1')
      for (const name of reply[1]) if (Buffer.isBuffer(name)) add(name)
    } while (cursor !== '0')
  }
  return names
}

/** Reads every job's header (pipelined, a window at a time), which also sizes the job. */
async function readHeaders(source: RespClient, jobs: readonly Job[]): Promise<void> {
  for (let start = 0; start < jobs.length; start += HEADER_WINDOW) {
    const batch = jobs.slice(start, start + HEADER_WINDOW)
    await Promise.all(
      batch.map(async (job) => {
        try {
          const { data } = dumpReply(await source.send(['BF.SCANDUMP', job.name, 0]))
          job.header = data
          const declared = dumpHeaderBitmapBytes(data)
          job.totalBytes = declared !== undefined && Number.isFinite(declared) ? declared : 0
        } catch (error) {
          job.error = error instanceof RespReplyError && error.message === 'ERR not found' ? 'not found on the source' : errorText(error)
        }
      }),
    )
  }
}

/** Copies one filter whose header was read; records the outcome on the job. */
async function copyFilter(source: RespClient, target: RespClient, job: Job, replace: boolean, progress: Progress): Promise<void> {
  const name = job.name
  const header = job.header!
  let created = false
  const inFlight: Promise<unknown>[] = []
  try {
    // Both go out together; the header must be answered before any chunk is sent, so that no chunk
    // can land in a filter that was already on the target.
    const check = target.send(replace ? ['DEL', name] : ['EXISTS', name])
    const load = target.send(['BF.LOADCHUNK', name, 1, header])
    const [existed] = await Promise.allSettled([check, load])
    if (existed.status === 'rejected') throw existed.reason
    if (!replace && existed.value === 1) {
      await load.catch(() => undefined)
      throw new Error('exists on the target (use --replace to overwrite)')
    }
    await load
    created = true
    let iterator = 1
    for (;;) {
      const { next, data } = dumpReply(await source.send(['BF.SCANDUMP', name, iterator]))
      if (next === 0) break
      if (data.length === 0 || next <= iterator) throw new Error('BF.SCANDUMP did not advance')
      const length = data.length
      inFlight.push(target.send(['BF.LOADCHUNK', name, next, data]).then(() => {
        job.copiedBytes += length
        progress.tick()
      }))
      if (inFlight.length >= CHUNK_WINDOW) await inFlight.shift()
      iterator = next
    }
    await Promise.all(inFlight)
    // Chunks are read one by one while the source keeps serving writes: if its header moved, the
    // copy mixes two moments (still a valid filter, but not a snapshot).
    const { data: after } = dumpReply(await source.send(['BF.SCANDUMP', name, 0]))
    if (!after.equals(header)) job.warning = 'the source changed during the copy; run again with --replace for an exact copy'
  } catch (error) {
    await Promise.allSettled(inFlight)
    job.error = errorText(error)
    // Leave no half-copied filter behind (only one this run created).
    if (created) await target.send(['DEL', name]).catch(() => undefined)
  }
}

async function copy(options: CopyOptions, out: NodeJS.WriteStream, err: NodeJS.WriteStream): Promise<number> {
  const startedMs = Date.now()
  const describe = (endpoint: Endpoint): string => `${endpoint.host}:${endpoint.port}`
  const connect = async (endpoint: Endpoint, role: string): Promise<RespClient> => {
    let client: RespClient
    try {
      client = await RespClient.connect(endpoint.host, endpoint.port, { password: endpoint.password, tls: endpoint.tls })
    } catch (error) {
      throw new SetupError(`cannot connect to the ${role} ${describe(endpoint)}: ${errorText(error)}`)
    }
    // An endpoint that wants a password and got none answers NOAUTH to everything: unusable (exit 2),
    // not a failure of every filter (exit 1).
    try {
      await client.send(['PING'])
    } catch (error) {
      await client.close()
      throw new SetupError(`cannot use the ${role} ${describe(endpoint)}: ${errorText(error)}`)
    }
    return client
  }
  const source = await connect(options.from, 'source')
  let target: RespClient
  try {
    target = await connect(options.to, 'target')
  } catch (error) {
    await source.close()
    throw error
  }
  try {
    const names = await listFilters(source, options.patterns)
    const jobs: Job[] = names.map((name) => ({ name, totalBytes: 0, copiedBytes: 0 }))
    await readHeaders(source, jobs)
    const progress = new Progress(out, jobs)
    for (const job of jobs) {
      if (job.error !== undefined) {
        progress.failed++
        progress.log(`failed ${displayName(job.name)}: ${job.error}`, true)
      }
    }
    progress.tick(true)
    const queue = jobs.filter((job) => job.error === undefined)
    const worker = async (): Promise<void> => {
      for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
        await copyFilter(source, target, job, options.replace, progress)
        if (job.error !== undefined) {
          progress.failed++
          progress.log(`failed ${displayName(job.name)}: ${job.error}`, true)
        } else {
          progress.done++
          progress.log(`copied ${displayName(job.name)} (${formatBytes(job.totalBytes)})`, false)
          if (job.warning !== undefined) progress.log(`warning ${displayName(job.name)}: ${job.warning}`, true)
        }
        progress.tick()
      }
    }
    await Promise.all(Array.from({ length: Math.min(options.parallel, Math.max(queue.length, 1)) }, worker))
    progress.finish()

    const copiedBytes = jobs.reduce((sum, job) => sum + job.copiedBytes, 0)
    const seconds = ((Date.now() - startedMs) / 1000).toFixed(1)
    const failed = jobs.filter((job) => job.error !== undefined)
    out.write(
      `bfs-copy: copied ${progress.done} of ${jobs.length} filters (${formatBytes(copiedBytes)}) from ${describe(options.from)} to ${describe(options.to)} in ${seconds} s; ${failed.length} failed\n`,
    )
    for (const job of failed) err.write(`bfs-copy: ${displayName(job.name)}: ${job.error}\n`)
    return failed.length === 0 ? EXIT_OK : EXIT_FAILED
  } finally {
    await Promise.all([source.close(), target.close()])
  }
}

runCli({
  name: 'bfs-copy',
  usage: USAGE,
  parseArgs,
  run: (options) => copy(options, process.stdout, process.stderr),
})
