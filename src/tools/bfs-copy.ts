#!/usr/bin/env node
/**
 * bfs-copy: copies Bloom and Cuckoo filters from one RESP endpoint to another with BF.SCANDUMP /
 * BF.LOADCHUNK and CF.SCANDUMP / CF.LOADCHUNK, the chunked dumps RedisBloom 2.4 and bfs share, so
 * nothing is re-added and the copy answers exactly as the original. Either end may be bfs or Redis
 * with RedisBloom. A Cuckoo filter with no items has no dump (CF.SCANDUMP answers [0, nil]): it is
 * made anew on the target with CF.RESERVE and CF.INFO's settings. bfs's
 * sliding-window filters (APBF.*, which only bfs has) go as DUMP / RESTORE. A key's expiry time
 * goes with it.
 *
 *   bfs-copy --from host:port --to host:port [--from-user u] [--from-pass x] [--to-user u]
 *            [--to-pass y] [--replace] [--parallel n]
 *            [--tls|--from-tls|--to-tls [--cacert f] [--cert f --key f]] [pattern ...]
 *
 * Filters are listed with SCAN ... TYPE for each filter type (a pattern without glob characters
 * names one filter, whose TYPE is asked); each Bloom or Cuckoo filter copy is header first, then chunks, with
 * the next chunk read from the source while the previous one is written to the target. Exit
 * status: 0 all copied, 1 some filter failed, 2 bad usage or an endpoint that cannot be reached.
 */
import type tls from 'node:tls'
import { RespClient } from './resp-client.js'
import { RespReplyError, type RespValue } from '../protocol/reply-reader.js'
import { readArgs, tlsConnectOptions, tlsOptionTable, type TlsArgs } from './cli-args.js'
import { BFS_DEFAULT_PORT, EXIT_FAILED, EXIT_OK, SetupError, errorText, runCli } from './cli-main.js'
import { ProgressLine, REDRAW_MS, formatBar } from './progress-line.js'
import { dumpHeaderBitmapBytes } from '../format/dump-size.js'
import { cuckooSubFilterSizes, decodeCuckooHeader } from '../format/cuckoo-dump.js'

/** RedisBloom's module type names, as SCAN's TYPE option and TYPE know them. */
const FILTER_TYPE = 'MBbloom--'
const CUCKOO_TYPE = 'MBbloomCF'
/** The TYPE names of bfs's sliding-window filters (a COUNT window, a TIME window). */
const WINDOW_TYPES = ['APBFcTYPE', 'APBFtTYPE']
/** SCAN's COUNT hint. */
const SCAN_COUNT = 1000
/** Header reads in flight at once while sizing the job. */
const HEADER_WINDOW = 256
/** LOADCHUNKs (up to 16 MiB each) in flight per filter before the next chunk is read. */
const CHUNK_WINDOW = 2
const DEFAULT_PARALLEL = 4
const MAX_PARALLEL = 64

const USAGE = `usage: bfs-copy --from host:port --to host:port [options] [pattern ...]

Copies Bloom and Cuckoo filters between RESP servers (bfs, or Redis with RedisBloom)
with BF.SCANDUMP / BF.LOADCHUNK and CF.SCANDUMP / CF.LOADCHUNK, and bfs's
sliding-window filters (APBF.*) with DUMP / RESTORE; expiry times are kept. Patterns are SCAN globs; a name without * ? [
or \\ is one filter. With no pattern every filter is copied.

options:
  --from host:port        source (default port ${BFS_DEFAULT_PORT}, bfs's, not Redis's 6379)
  --to host:port          target (the same default port)
  --from-user name        AUTH on the source as this ACL user (or env
                          BFS_COPY_FROM_USER); needs --from-pass
  --from-pass pass        AUTH on the source (or env BFS_COPY_FROM_PASSWORD);
                          --from-password is the same
  --to-user name          AUTH on the target as this ACL user (or env
                          BFS_COPY_TO_USER); needs --to-pass
  --to-pass pass          AUTH on the target (or env BFS_COPY_TO_PASSWORD);
                          --to-password is the same
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
  username?: string
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

/** One filter to copy: its raw name, its kind, and what the source said about it. */
interface Job {
  name: Buffer
  /** A Bloom or Cuckoo filter (SCANDUMP / LOADCHUNK) or a sliding-window filter (DUMP / RESTORE). */
  kind: 'bloom' | 'cuckoo' | 'window'
  /** The expiry time left when it was read (PTTL: -1 none), and when that was (Date.now()). */
  ttlMs?: number
  ttlReadAt?: number
  /** The dump's header; undefined for a Cuckoo filter with no items (none to dump). */
  header?: Buffer
  /** Sum of the layers' bitmap bytes or the sub-filters' buckets, from the header (0 when it could not be read). */
  totalBytes: number
  copiedBytes: number
  error?: string
  warning?: string
}

function parseEndpoint(text: string, flag: string): Endpoint {
  const match = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d+))?$/.exec(text)
  const port = match?.[3] === undefined ? BFS_DEFAULT_PORT : Number(match[3])
  if (match === null || !(port > 0 && port < 65536)) throw new SetupError(`${flag}: expected host:port, got '${text}'`)
  return { host: match[1] ?? match[2]!, port }
}

function parseArgs(args: readonly string[]): CopyOptions | 'help' {
  let from: Endpoint | undefined
  let to: Endpoint | undefined
  let fromPassword = process.env.BFS_COPY_FROM_PASSWORD
  let toPassword = process.env.BFS_COPY_TO_PASSWORD
  let fromUser = process.env.BFS_COPY_FROM_USER
  let toUser = process.env.BFS_COPY_TO_USER
  const setFromPassword = (value: () => string): void => {
    fromPassword = value()
  }
  const setToPassword = (value: () => string): void => {
    toPassword = value()
  }
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
    '--from-password': setFromPassword,
    '--from-pass': setFromPassword,
    '--to-password': setToPassword,
    '--to-pass': setToPassword,
    '--from-user': (value) => {
      fromUser = value()
    },
    '--to-user': (value) => {
      toUser = value()
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
  setAuth(from, fromUser, fromPassword, '--from')
  setAuth(to, toUser, toPassword, '--to')
  const tlsOptions = tlsConnectOptions(tlsArgs)
  if (tlsSides.from) from.tls = tlsOptions
  if (tlsSides.to) to.tls = tlsOptions
  if (from.host === to.host && from.port === to.port) throw new SetupError('--from and --to are the same endpoint')
  return { from, to, replace, parallel, patterns: patterns.length === 0 ? ['*'] : patterns }
}

/** An endpoint's AUTH: a password alone (requirepass), or an ACL user with its password. */
function setAuth(endpoint: Endpoint, user: string | undefined, password: string | undefined, side: string): void {
  if (password !== undefined && password !== '') endpoint.password = password
  if (user === undefined || user === '') return
  if (endpoint.password === undefined) throw new SetupError(`${side}-user needs ${side}-pass`)
  endpoint.username = user
}

/** Whether a SCAN pattern holds glob syntax (otherwise it names one filter). */
function isGlob(pattern: string): boolean {
  return /[*?[\\]/.test(pattern)
}

/** A name for the terminal: printable ASCII as is, other bytes as \xNN. */
function displayName(name: Buffer): string {
  let out = ''
  for (const byte of name) {
    out +=
      byte >= 0x20 && byte < 0x7f && byte !== 0x5c
        ? String.fromCharCode(byte)
        : `\\x${byte.toString(16).padStart(2, '0')}`
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

/** A SCANDUMP reply: [iterator, bytes]; [0, nil] (a Cuckoo filter with no items) as an empty Buffer when `empty` allows it. */
function dumpReply(value: RespValue, empty = false): { next: number; data: Buffer } {
  if (empty && Array.isArray(value) && value[0] === 0 && value[1] === null) return { next: 0, data: Buffer.alloc(0) }
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== 'number' || !Buffer.isBuffer(value[1])) {
    throw new Error('unexpected SCANDUMP reply')
  }
  return { next: value[0], data: value[1] }
}

/** Bytes of buckets a CF.SCANDUMP header declares (0 when it cannot be read). */
function cuckooHeaderBytes(header: Buffer): number {
  const decoded = decodeCuckooHeader(header, 0)
  if (typeof decoded === 'string') return 0
  return (cuckooSubFilterSizes(decoded, decoded.numFilters, 0) ?? []).reduce((sum, bytes) => sum + bytes, 0)
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
    const fraction =
      total === 0 ? (this.jobs.length === 0 ? 1 : (this.done + this.failed) / this.jobs.length) : copied / total
    const failed = this.failed > 0 ? `, ${this.failed} failed` : ''
    this.line.draw(
      `${formatBar(fraction)} ${formatBytes(copied)} / ${formatBytes(total)}  ${this.done + this.failed}/${this.jobs.length} filters${failed}`,
    )
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

/** A filter's kind from its TYPE; undefined for any other type (or none). */
function kindOfType(type: string): Job['kind'] | undefined {
  if (type === FILTER_TYPE) return 'bloom'
  if (type === CUCKOO_TYPE) return 'cuckoo'
  return WINDOW_TYPES.includes(type) ? 'window' : undefined
}

/**
 * The filters matching the patterns on the source, each once, in SCAN order (Bloom filters first
 * for a glob, then Cuckoo filters, then windows). A name without glob characters is looked up with TYPE: missing or not
 * a filter, its job carries the error (a Redis source without APBF types answers them the same).
 */
async function listFilters(source: RespClient, patterns: readonly string[]): Promise<Job[]> {
  const seen = new Set<string>()
  const jobs: Job[] = []
  const add = (name: Buffer, kind: Job['kind'], error?: string): void => {
    const key = name.toString('latin1')
    if (seen.has(key)) return
    seen.add(key)
    jobs.push({ name, kind, totalBytes: 0, copiedBytes: 0, error })
  }
  for (const pattern of patterns) {
    if (!isGlob(pattern)) {
      const name = Buffer.from(pattern, 'utf8')
      const type = String(await source.send(['TYPE', name]))
      const kind = kindOfType(type)
      add(
        name,
        kind ?? 'bloom',
        kind !== undefined ? undefined : type === 'none' ? 'not found on the source' : `not a filter (type ${type})`,
      )
      continue
    }
    for (const type of [FILTER_TYPE, CUCKOO_TYPE, ...WINDOW_TYPES]) {
      let cursor = '0'
      do {
        const reply = await source.send(['SCAN', cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT, 'TYPE', type])
        if (!Array.isArray(reply) || reply.length !== 2 || !Buffer.isBuffer(reply[0]) || !Array.isArray(reply[1])) {
          throw new Error('unexpected SCAN reply')
        }
        cursor = reply[0].toString('latin1')
        for (const name of reply[1]) if (Buffer.isBuffer(name)) add(name, kindOfType(type)!)
      } while (cursor !== '0')
    }
  }
  return jobs
}

/**
 * Reads every Bloom and Cuckoo filter's header, which also sizes the job, and every job's expiry time
 * (pipelined, a window at a time). A window filter is read whole when it is copied.
 */
async function readHeaders(source: RespClient, jobs: readonly Job[]): Promise<void> {
  const pending = jobs.filter((job) => job.error === undefined)
  for (let start = 0; start < pending.length; start += HEADER_WINDOW) {
    const batch = pending.slice(start, start + HEADER_WINDOW)
    await Promise.all(
      batch.map(async (job) => {
        try {
          const scandump =
            job.kind === 'window'
              ? undefined
              : source.send([job.kind === 'cuckoo' ? 'CF.SCANDUMP' : 'BF.SCANDUMP', job.name, 0])
          const [header, ttl] = await Promise.all([scandump, source.send(['PTTL', job.name])])
          job.ttlReadAt = Date.now()
          job.ttlMs = Number(ttl)
          if (job.ttlMs === -2) throw new Error('not found on the source')
          if (header === undefined) return
          const { data } = dumpReply(header, job.kind === 'cuckoo')
          if (data.length === 0) return // a Cuckoo filter with no items
          job.header = data
          const declared = job.kind === 'cuckoo' ? cuckooHeaderBytes(data) : dumpHeaderBitmapBytes(data)
          job.totalBytes = declared !== undefined && Number.isFinite(declared) ? declared : 0
        } catch (error) {
          job.error =
            error instanceof RespReplyError && error.message === 'ERR not found'
              ? 'not found on the source'
              : errorText(error)
        }
      }),
    )
  }
}

/** The expiry time a copy gets: what the source had left, less the time since it was read (-1: none). */
function ttlLeft(job: Job): number {
  if (job.ttlMs === undefined || job.ttlMs < 0) return -1
  return Math.max(1, job.ttlMs - (Date.now() - job.ttlReadAt!))
}

/** Copies one sliding-window filter with DUMP and RESTORE (bfs's own payload), its expiry time with it. */
async function copyWindow(source: RespClient, target: RespClient, job: Job, replace: boolean): Promise<void> {
  try {
    const payload = await source.send(['DUMP', job.name])
    if (!Buffer.isBuffer(payload)) throw new Error('not found on the source')
    job.totalBytes = payload.length
    const ttl = ttlLeft(job)
    await target.send(['RESTORE', job.name, ttl < 0 ? 0 : ttl, payload, ...(replace ? ['REPLACE'] : [])])
    job.copiedBytes = payload.length
  } catch (error) {
    job.error =
      error instanceof RespReplyError && error.message.startsWith('BUSYKEY')
        ? 'exists on the target (use --replace to overwrite)'
        : errorText(error)
  }
}

/** CF.RESERVE arguments that make the filter CF.INFO describes, empty (for a Cuckoo filter with no items to dump). */
async function cuckooReserve(source: RespClient, name: Buffer): Promise<(string | number | Buffer)[]> {
  const reply = await source.send(['CF.INFO', name])
  const info = new Map<string, number>()
  if (Array.isArray(reply))
    for (let i = 0; i + 1 < reply.length; i += 2) info.set(String(reply[i]), Number(reply[i + 1]))
  const buckets = info.get('Number of buckets')
  const bucketSize = info.get('Bucket size')
  if (buckets === undefined || bucketSize === undefined) throw new Error('unexpected CF.INFO reply')
  // CF.RESERVE makes next-power-of-two(capacity / BUCKETSIZE) buckets: the source's count.
  return [
    'CF.RESERVE',
    name,
    buckets * bucketSize,
    'BUCKETSIZE',
    bucketSize,
    'MAXITERATIONS',
    info.get('Max iterations')!,
    'EXPANSION',
    info.get('Expansion rate')!,
  ]
}

/** Copies one Bloom or Cuckoo filter whose header was read; records the outcome on the job. */
async function copyFilter(
  source: RespClient,
  target: RespClient,
  job: Job,
  replace: boolean,
  progress: Progress,
): Promise<void> {
  const name = job.name
  const header = job.header
  const [scandump, loadchunk] =
    job.kind === 'cuckoo' ? ['CF.SCANDUMP', 'CF.LOADCHUNK'] : ['BF.SCANDUMP', 'BF.LOADCHUNK']
  let created = false
  const inFlight: Promise<unknown>[] = []
  try {
    // Both go out together; the header must be answered before any chunk is sent, so that no chunk
    // can land in a filter that was already on the target.
    const check = target.send(replace ? ['DEL', name] : ['EXISTS', name])
    const load = target.send(header === undefined ? await cuckooReserve(source, name) : [loadchunk, name, 1, header])
    const [existed] = await Promise.allSettled([check, load])
    if (existed.status === 'rejected') throw existed.reason
    if (!replace && existed.value === 1) {
      await load.catch(() => undefined)
      throw new Error('exists on the target (use --replace to overwrite)')
    }
    await load
    created = true
    let iterator = header === undefined ? 0 : 1
    while (iterator !== 0) {
      const { next, data } = dumpReply(await source.send([scandump, name, iterator]), job.kind === 'cuckoo')
      if (next === 0) break
      if (data.length === 0 || next <= iterator) throw new Error(`${scandump} did not advance`)
      const length = data.length
      inFlight.push(
        target.send([loadchunk, name, next, data]).then(() => {
          job.copiedBytes += length
          progress.tick()
        }),
      )
      if (inFlight.length >= CHUNK_WINDOW) await inFlight.shift()
      iterator = next
    }
    await Promise.all(inFlight)
    const ttl = ttlLeft(job)
    if (ttl > 0) await target.send(['PEXPIRE', name, ttl])
    // Chunks are read one by one while the source keeps serving writes: if its header moved, the
    // copy mixes two moments (still a valid filter, but not a snapshot).
    const { data: after } = dumpReply(await source.send([scandump, name, 0]), true)
    if (!after.equals(header ?? Buffer.alloc(0)))
      job.warning = 'the source changed during the copy; run again with --replace for an exact copy'
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
      client = await RespClient.connect(endpoint.host, endpoint.port, {
        password: endpoint.password,
        username: endpoint.username,
        tls: endpoint.tls,
      })
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
    const jobs = await listFilters(source, options.patterns)
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
        if (job.kind === 'window') await copyWindow(source, target, job, options.replace)
        else await copyFilter(source, target, job, options.replace, progress)
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
