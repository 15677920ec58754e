#!/usr/bin/env node
/**
 * bfs-import: adds items, one per line, from files or standard input to a Bloom filter on a RESP
 * server (bfs, or Redis with RedisBloom), with pipelined BF.MADD in batches.
 *
 *   bfs-import --filter name [--host h] [--port p] [--user u] [--pass x]
 *              [--tls [--cacert f] [--cert f --key f]] [--batch n] [--window n]
 *              [--capacity n --error-rate p [--expansion n] [--nonscaling]] [file ... | -]
 *
 * A line is an item as its bytes, without the line ending (LF or CRLF); empty lines are skipped.
 * Progress goes to standard error (a bar on a terminal, a line every few seconds otherwise), the
 * summary to standard output. Exit status: 0 every item stored, 1 some items failed or the
 * connection was lost, 2 bad usage, an unreadable input or a server that cannot be used.
 */
import { createReadStream, fstatSync, statSync } from 'node:fs'
import type tls from 'node:tls'
import type { Readable } from 'node:stream'
import { RespClient } from './resp-client.js'
import type { CommandArg } from '../protocol/command-encoder.js'
import { RespReplyError, type RespValue } from '../protocol/reply-reader.js'
import { readArgs, tlsConnectOptions, tlsOptionTable, type TlsArgs } from './cli-args.js'
import { BFS_DEFAULT_PORT, EXIT_FAILED, EXIT_OK, SetupError, errorText, runCli } from './cli-main.js'
import { ProgressLine, REDRAW_MS, formatBar } from './progress-line.js'

const DEFAULT_BATCH = 1000
const MAX_BATCH = 1_000_000
/**
 * BF.MADD commands in flight before reading waits for a reply: enough to keep the server busy
 * while this process waits for a CPU (about 4 MB of 60-byte items at the default batch).
 */
const DEFAULT_WINDOW = 64
const MAX_WINDOW = 4096
const DEFAULT_PROGRESS_INTERVAL_S = 10
/** Distinct error texts shown at the end; the rest are only counted. */
const MAX_ERROR_TEXTS = 5
const READ_CHUNK_BYTES = 1024 * 1024

const LF = 0x0a // \n
const CR = 0x0d // \r

const USAGE = `usage: bfs-import --filter name [options] [file ... | -]

Adds items (one per line) from the files, or standard input when there are none
or for '-', to a Bloom filter with pipelined BF.MADD. Empty lines are skipped.

options:
  -f, --filter name       the filter (key) to add to (required)
  --host host             server host (default 127.0.0.1)
  --port port             server port (default ${BFS_DEFAULT_PORT}, bfs's, not Redis's 6379)
  --user name             AUTH as this ACL user (or env BFS_IMPORT_USER); needs --pass
  --pass pass             AUTH with this password (or env BFS_IMPORT_PASSWORD);
                          --password is the same
  --tls                   connect over TLS (as redis-cli --tls), with:
  --cacert file           CA certificate(s) the server's certificate must chain to
  --cert file, --key file client certificate and its key
  --batch n               items per BF.MADD (default ${DEFAULT_BATCH})
  --window n              BF.MADD commands in flight (default ${DEFAULT_WINDOW})
  --capacity n            create the filter first (BF.RESERVE) with this capacity...
  --error-rate p          ...and this error rate (both needed to create it)
  --expansion n           ...and this expansion (default 2, as BF.RESERVE)
  --nonscaling            ...as a non-scaling filter
  --progress mode         auto (bar on a terminal, lines otherwise), bar, lines or none
  --progress-interval s   seconds between progress lines (default ${DEFAULT_PROGRESS_INTERVAL_S})
  -h, --help              this text

An existing filter is used as it is (with a warning when --capacity was given).
Exit status: 0 all stored, 1 some items failed, 2 bad usage or unusable server.
`

type ProgressMode = 'auto' | 'bar' | 'lines' | 'none'

interface ImportOptions {
  filter: string
  host: string
  port: number
  password?: string
  /** With a password: the ACL user to AUTH as. */
  username?: string
  /** --tls: the connection's TLS options. */
  tls?: tls.ConnectionOptions
  batch: number
  window: number
  create?: { capacity: number; errorRate: number; expansion?: number; nonScaling: boolean }
  progress: ProgressMode
  progressIntervalMs: number
  /** Paths; '-' is standard input. */
  inputs: string[]
}

function parseCount(text: string, flag: string, min: number, max: number): number {
  const n = Number(text)
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new SetupError(`${flag}: expected an integer from ${min} to ${max}, got '${text}'`)
  }
  return n
}

/** --error-rate: a number strictly between 0 and 1. */
function parseErrorRateFlag(text: string, flag: string): number {
  const errorRate = Number(text)
  if (text.trim() === '' || !(errorRate > 0 && errorRate < 1)) {
    throw new SetupError(`${flag}: expected a number between 0 and 1, got '${text}'`)
  }
  return errorRate
}

/** --progress: auto, bar, lines or none. */
function parseProgressMode(mode: string): ProgressMode {
  if (mode !== 'auto' && mode !== 'bar' && mode !== 'lines' && mode !== 'none') {
    throw new SetupError(`--progress: expected auto, bar, lines or none, got '${mode}'`)
  }
  return mode
}

/** --progress-interval: finite seconds, 0 or more. */
function parseSecondsFlag(text: string, flag: string): number {
  const seconds = Number(text)
  if (text.trim() === '' || !(seconds >= 0) || !Number.isFinite(seconds)) {
    throw new SetupError(`${flag}: expected seconds, got '${text}'`)
  }
  return seconds
}

/** What --capacity, --error-rate, --expansion and --nonscaling ask for: the filter to create, if any. */
function createOptions(
  capacity: number | undefined,
  errorRate: number | undefined,
  expansion: number | undefined,
  nonScaling: boolean,
): ImportOptions['create'] {
  if ((capacity === undefined) !== (errorRate === undefined)) {
    throw new SetupError('--capacity and --error-rate go together (they create the filter)')
  }
  if (capacity === undefined && (expansion !== undefined || nonScaling)) {
    throw new SetupError('--expansion and --nonscaling need --capacity and --error-rate')
  }
  if (expansion !== undefined && nonScaling) throw new SetupError('--expansion and --nonscaling exclude each other')
  return capacity !== undefined && errorRate !== undefined ? { capacity, errorRate, expansion, nonScaling } : undefined
}

function parseArgs(args: readonly string[]): ImportOptions | 'help' {
  let filter: string | undefined
  let host = '127.0.0.1'
  let port = BFS_DEFAULT_PORT
  let password = process.env.BFS_IMPORT_PASSWORD
  let username = process.env.BFS_IMPORT_USER
  const setPassword = (value: () => string): string => (password = value())
  let batch = DEFAULT_BATCH
  let window = DEFAULT_WINDOW
  let capacity: number | undefined
  let errorRate: number | undefined
  let expansion: number | undefined
  let nonScaling = false
  let progress: ProgressMode = 'auto'
  let progressIntervalMs = DEFAULT_PROGRESS_INTERVAL_S * 1000
  const tlsArgs: TlsArgs = { tls: false }
  const setFilter = (value: () => string): void => {
    filter = value()
  }
  const inputs = readArgs(args, {
    ...tlsOptionTable(tlsArgs),
    '-f': setFilter,
    '--filter': setFilter,
    '--host': (value) => {
      host = value()
    },
    '--port': (value, flag) => {
      port = parseCount(value(), flag, 1, 65535)
    },
    '--password': setPassword,
    '--pass': setPassword,
    '--user': (value) => {
      username = value()
    },
    '--batch': (value, flag) => {
      batch = parseCount(value(), flag, 1, MAX_BATCH)
    },
    '--window': (value, flag) => {
      window = parseCount(value(), flag, 1, MAX_WINDOW)
    },
    '--capacity': (value, flag) => {
      capacity = parseCount(value(), flag, 1, Number.MAX_SAFE_INTEGER)
    },
    '--error-rate': (value, flag) => {
      errorRate = parseErrorRateFlag(value(), flag)
    },
    '--expansion': (value, flag) => {
      expansion = parseCount(value(), flag, 1, 0xffffffff)
    },
    '--nonscaling': () => {
      nonScaling = true
    },
    '--progress': (value) => {
      progress = parseProgressMode(value())
    },
    '--progress-interval': (value, flag) => {
      progressIntervalMs = parseSecondsFlag(value(), flag) * 1000
    },
  })
  if (inputs === 'help') return 'help'
  if (filter === undefined || filter === '') throw new SetupError('--filter is required')
  if (username !== undefined && username !== '' && (password === undefined || password === ''))
    throw new SetupError('--user needs --pass')
  const tlsOptions = tlsConnectOptions(tlsArgs)
  const create = createOptions(capacity, errorRate, expansion, nonScaling)
  return {
    filter,
    host,
    port,
    password: password === '' ? undefined : password,
    username: username === '' ? undefined : username,
    tls: tlsOptions,
    batch,
    window,
    create,
    progress,
    progressIntervalMs,
    inputs: inputs.length === 0 ? ['-'] : inputs,
  }
}

/** 1234567 → "1,234,567". */
function grouped(n: number): string {
  return Math.round(n).toLocaleString('en-US')
}

function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`
}

/** What has happened so far. */
interface Counts {
  /** Items read from the inputs (non-empty lines). */
  read: number
  /** Items the server answered for (new + present + errors so far). */
  done: number
  added: number
  present: number
  errors: number
  bytesRead: number
}

/** Progress on standard error: a redrawn bar, periodic lines, or nothing. */
class Progress {
  private readonly line: ProgressLine

  constructor(
    out: NodeJS.WritableStream,
    private readonly mode: 'bar' | 'lines' | 'none',
    private readonly intervalMs: number,
    private readonly counts: Counts,
    /** Total input bytes when every input is a regular file; undefined otherwise. */
    private readonly totalBytes: number | undefined,
    private readonly startedMs: number,
  ) {
    this.line = new ProgressLine(out)
  }

  private status(now: number): { text: string; fraction?: number } {
    const c = this.counts
    const elapsedMs = Math.max(now - this.startedMs, 1)
    const rate = (c.done / elapsedMs) * 1000
    let text = `${grouped(c.done)} items  ${grouped(rate)} items/s`
    if (c.errors > 0) text += `  ${grouped(c.errors)} errors`
    if (this.totalBytes === undefined || this.totalBytes === 0) return { text }
    const fraction = Math.min(c.bytesRead / this.totalBytes, 1)
    const etaMs = fraction > 0 ? (elapsedMs * (1 - fraction)) / fraction : undefined
    text += etaMs === undefined ? '  ETA --' : `  ETA ${formatDuration(etaMs)}`
    return { text, fraction }
  }

  /** Redraws the bar or prints a line when it is time to (or always with `force`). */
  tick(force = false): void {
    if (this.mode === 'none') return
    const now = Date.now()
    if (!this.line.due(now, this.mode === 'bar' ? REDRAW_MS : this.intervalMs, force)) return
    const { text, fraction } = this.status(now)
    if (this.mode === 'lines') {
      const percent = fraction === undefined ? '' : `${(fraction * 100).toFixed(1)}%  `
      this.line.print(`bfs-import: ${percent}${text}`)
      return
    }
    this.line.draw(fraction === undefined ? text : `${formatBar(fraction)}  ${text}`)
  }

  finish(): void {
    this.tick(true)
    this.line.end()
  }
}

/** Total bytes of the inputs when all are regular files (standard input redirected from a file counts). */
function inputBytes(inputs: readonly string[]): number | undefined {
  let total = 0
  for (const input of inputs) {
    try {
      const stat = input === '-' ? fstatSync(0) : statSync(input)
      if (!stat.isFile()) return undefined
      total += stat.size
    } catch {
      return undefined
    }
  }
  return total
}

function openInput(input: string): Readable {
  if (input === '-') return process.stdin
  return createReadStream(input, { highWaterMark: READ_CHUNK_BYTES })
}

/**
 * Reads the inputs line by line and sends the items in pipelined BF.MADD batches of `batch`,
 * with at most `window` commands awaiting their reply.
 */
class Importer {
  readonly counts: Counts = { read: 0, done: 0, added: 0, present: 0, errors: 0, bytesRead: 0 }
  /** Distinct error texts, with how many items each one cost. */
  readonly errorTexts = new Map<string, number>()
  /** Set when the connection failed: nothing more can be sent. */
  fatal: Error | undefined
  private batchItems: Buffer[] = []
  private readonly inFlight = new Set<Promise<void>>()
  progress: Progress | undefined

  constructor(
    private readonly client: RespClient,
    private readonly options: ImportOptions,
  ) {}

  async run(): Promise<void> {
    for (const input of this.options.inputs) {
      if (this.fatal !== undefined) break
      await this.readInput(input)
    }
    await Promise.all(this.inFlight)
    if (this.batchItems.length === 0) return
    if (this.fatal === undefined) {
      this.flush()
      await Promise.all(this.inFlight)
    } else {
      // Read but never sent: count them, so that read = new + present + errors in the summary.
      this.fail(this.batchItems.length, this.fatal)
      this.batchItems = []
    }
  }

  private async readInput(input: string): Promise<void> {
    const stream = openInput(input)
    let rest: Buffer | undefined
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        if (this.fatal !== undefined) break
        this.counts.bytesRead += chunk.length
        const data = rest === undefined ? chunk : Buffer.concat([rest, chunk])
        let start = 0
        for (let lf = data.indexOf(LF, start); lf >= 0; lf = data.indexOf(LF, start)) {
          if (this.fatal !== undefined) break
          this.item(data, start, lf)
          start = lf + 1
          if (this.inFlight.size >= this.options.window) await Promise.race(this.inFlight)
        }
        rest = start < data.length ? data.subarray(start) : undefined
      }
    } catch (error) {
      throw new SetupError(`cannot read ${input === '-' ? 'standard input' : input}: ${errorText(error)}`)
    } finally {
      if (input !== '-') stream.destroy()
    }
    if (rest !== undefined) this.item(rest, 0, rest.length) // a last line without LF
  }

  private item(data: Buffer, start: number, end: number): void {
    if (end > start && data[end - 1] === CR) end--
    if (end === start) return
    this.counts.read++
    this.batchItems.push(data.subarray(start, end))
    if (this.batchItems.length >= this.options.batch) this.flush()
  }

  private flush(): void {
    const items = this.batchItems
    this.batchItems = []
    const argv: CommandArg[] = ['BF.MADD', this.options.filter, ...items]
    const done = this.client.send(argv).then(
      (reply) => this.settle(items.length, reply),
      (error: Error) => this.fail(items.length, error),
    )
    const tracked = done.finally(() => this.inFlight.delete(tracked))
    this.inFlight.add(tracked)
  }

  private settle(count: number, reply: RespValue): void {
    const c = this.counts
    if (!Array.isArray(reply)) {
      this.fail(count, new Error(`unexpected reply to BF.MADD: ${String(reply)}`))
      return
    }
    for (const outcome of reply) {
      if (outcome === 1) c.added++
      else if (outcome === 0) c.present++
      else
        this.noteError(1, outcome instanceof RespReplyError ? outcome.message : `unexpected element ${String(outcome)}`)
    }
    // BF.MADD stops at the first item a full filter refuses: the ones after it were not added.
    if (reply.length < count) this.noteError(count - reply.length, 'not added after an earlier error in the same batch')
    c.done += count
    this.progress?.tick()
  }

  private fail(count: number, error: Error): void {
    if (!(error instanceof RespReplyError) && this.fatal === undefined) this.fatal = error
    this.noteError(count, error.message)
    this.counts.done += count
    this.progress?.tick()
  }

  private noteError(count: number, text: string): void {
    this.counts.errors += count
    if (this.errorTexts.has(text) || this.errorTexts.size < MAX_ERROR_TEXTS) {
      this.errorTexts.set(text, (this.errorTexts.get(text) ?? 0) + count)
    }
  }
}

/** Connects, checks the server answers (and AUTH worked), creates the filter when asked. */
async function prepare(options: ImportOptions, warn: (line: string) => void): Promise<RespClient> {
  const where = `${options.host}:${options.port}`
  let client: RespClient
  try {
    client = await RespClient.connect(options.host, options.port, {
      password: options.password,
      username: options.username,
      tls: options.tls,
    })
  } catch (error) {
    throw new SetupError(`cannot connect to ${where}: ${errorText(error)}`)
  }
  try {
    await client.send(['PING'])
    if (options.create !== undefined) {
      const { capacity, errorRate, expansion, nonScaling } = options.create
      const argv: CommandArg[] = ['BF.RESERVE', options.filter, String(errorRate), capacity]
      if (expansion !== undefined) argv.push('EXPANSION', expansion)
      if (nonScaling) argv.push('NONSCALING')
      try {
        await client.send(argv)
      } catch (error) {
        // RedisBloom's reply for an existing key: keep its own parameters and add to it.
        if (!(error instanceof RespReplyError) || !/item exists/.test(error.message)) throw error
        warn(`bfs-import: filter '${options.filter}' exists; adding to it with its own capacity and error rate`)
      }
    }
  } catch (error) {
    await client.close()
    throw new SetupError(`${where}: ${errorText(error)}`)
  }
  return client
}

async function runImport(options: ImportOptions, out: NodeJS.WritableStream, err: NodeJS.WriteStream): Promise<number> {
  const startedMs = Date.now()
  const client = await prepare(options, (line) => err.write(`${line}\n`))
  const importer = new Importer(client, options)
  const mode = options.progress === 'auto' ? (err.isTTY === true ? 'bar' : 'lines') : options.progress
  const progress = new Progress(
    err,
    mode,
    options.progressIntervalMs,
    importer.counts,
    inputBytes(options.inputs),
    startedMs,
  )
  importer.progress = progress
  try {
    await importer.run()
  } finally {
    progress.finish()
    await client.close()
  }
  const c = importer.counts
  const elapsedMs = Date.now() - startedMs
  const rate = elapsedMs > 0 ? (c.read / elapsedMs) * 1000 : 0
  out.write(
    `bfs-import: ${grouped(c.read)} items read into '${options.filter}' in ${(elapsedMs / 1000).toFixed(2)} s (${grouped(rate)} items/s): ` +
      `${grouped(c.added)} new, ${grouped(c.present)} already present, ${grouped(c.errors)} errors\n`,
  )
  for (const [text, count] of importer.errorTexts) err.write(`bfs-import: ${grouped(count)} items: ${text}\n`)
  if (importer.fatal !== undefined) {
    err.write(`bfs-import: stopped: ${importer.fatal.message}\n`)
    return EXIT_FAILED
  }
  return c.errors === 0 ? EXIT_OK : EXIT_FAILED
}

runCli({
  name: 'bfs-import',
  usage: USAGE,
  parseArgs,
  run: (options) => runImport(options, process.stdout, process.stderr),
})
