/**
 * One full sync (redis startBgsaveForReplication and what follows): a point-in-time capture of
 * the registry (the sync-payload's `captureRegistry`), shared by every replica waiting when it is
 * taken, sent in slices that never hold the event loop for long and that respect each socket's
 * backpressure (a slow replica slows its sync; the master never buffers the payload).
 *
 * - Diskless (`repl-diskless-sync yes` and the replica has capa eof): `$EOF:<40 chars>\r\n`, the
 *   payload, the same 40 chars. The replica is online at once, its stream starting at its first
 *   REPLCONF ACK (redis repl_start_cmd_stream_on_ack: the end mark is then the last thing read).
 * - Disk: the payload goes to a temporary file in `dir` first, then to each replica as
 *   `$<length>\r\n` + the file, with no CRLF after it; its stream follows at once.
 * The stream written after the capture point waits in each replica (AttachedReplica) meanwhile.
 */
import { randomBytes } from 'node:crypto'
import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs'
import path from 'node:path'
import type { Logger } from '../runtime/logger.js'
import type { AttachedReplica } from './replica-peer.js'
import { captureRegistry, type RegistryCapture } from '../store/registry-capture.js'
import type { Databases } from '../store/databases.js'
import { SYNC_TEMP_PREFIX } from '../store/owned-files.js'

export { captureRegistry, type RegistryCapture }

/** Bytes asked of the capture, or read from the file, per slice. */
const CHUNK_BYTES = 256 * 1024
/** A socket holding more than this unsent waits for its drain before it gets more. */
const HIGH_WATER_BYTES = 1024 * 1024
/** Longest run of slices in one event-loop turn. */
const SLICE_MS = 5

export interface FullSyncOptions {
  readonly replicas: AttachedReplica[]
  readonly diskless: boolean
  readonly capture: RegistryCapture
  readonly dir: string
  readonly log: Logger
  /** The payload reached the replica: it goes online (diskless: its stream waits for its ACK). */
  readonly onSent: (replica: AttachedReplica, diskless: boolean) => void
  /** Every replica of this sync is done (or gone). */
  readonly onFinished: () => void
}

let tempFiles = 0

export class FullSync {
  private replicas: AttachedReplica[]
  private readonly mark = randomBytes(20).toString('hex')
  private file = ''
  private sending = 0
  private finished = false
  private readonly startedMs = performance.now()
  /** The longest run of slices in one event-loop turn, for the closing log line (bench/). */
  private longestSliceMs = 0

  constructor(private readonly options: FullSyncOptions) {
    this.replicas = [...options.replicas]
  }

  get diskless(): boolean {
    return this.options.diskless
  }

  /** Replicas still taking part. */
  has(replica: AttachedReplica): boolean {
    return this.replicas.includes(replica)
  }

  start(): void {
    if (this.options.diskless) {
      const preamble = Buffer.from(`$EOF:${this.mark}\r\n`)
      for (const replica of this.replicas) replica.peer.writeRaw(preamble)
      this.pumpSockets()
    } else {
      this.file = path.join(this.options.dir, `${SYNC_TEMP_PREFIX}${process.pid}-${++tempFiles}.bfssync`)
      this.writeFile(openSync(this.file, 'w'))
    }
  }

  /** Diskless: each chunk to every replica, waiting for the slowest one's drain. */
  private pumpSockets(): void {
    const started = performance.now()
    try {
      this.pumpSocketsSlice(started)
    } finally {
      this.noteSlice(started)
    }
  }

  private noteSlice(started: number): void {
    this.longestSliceMs = Math.max(this.longestSliceMs, performance.now() - started)
  }

  private pumpSocketsSlice(started: number): void {
    for (;;) {
      this.replicas = this.replicas.filter((replica) => replica.peer.state === 'open')
      if (this.replicas.length === 0) return this.finish()
      const slow = this.replicas.find((replica) => replica.peer.outputBytes() > HIGH_WATER_BYTES)
      if (slow !== undefined) return slow.peer.onceDrained(() => this.pumpSockets())
      if (performance.now() - started > SLICE_MS) return void setImmediate(() => this.pumpSockets())
      const chunk = this.options.capture.next(CHUNK_BYTES)
      if (chunk === null) break
      // A piece may be empty (the capture checksums a layer before its header): only null ends it.
      if (chunk.length > 0) for (const replica of this.replicas) replica.peer.writeRaw(chunk)
    }
    const mark = Buffer.from(this.mark)
    for (const replica of this.replicas) {
      replica.peer.writeRaw(mark)
      this.options.log.notice(
        `Streamed RDB transfer with replica ${replica.label} succeeded (socket). Waiting for REPLCONF ACK from slave to enable streaming`,
      )
      this.options.onSent(replica, true)
    }
    this.finish()
  }

  /** Disk: the payload to the temporary file, a slice at a time. */
  private writeFile(fd: number): void {
    const started = performance.now()
    try {
      this.writeFileSlice(fd, started)
    } finally {
      this.noteSlice(started)
    }
  }

  private writeFileSlice(fd: number, started: number): void {
    try {
      for (;;) {
        if (performance.now() - started > SLICE_MS) return void setImmediate(() => this.writeFile(fd))
        const chunk = this.options.capture.next(CHUNK_BYTES)
        if (chunk === null) break
        let written = 0
        while (written < chunk.length) written += writeSync(fd, chunk, written)
      }
      closeSync(fd)
    } catch (error) {
      this.options.log.warning(`SYNC failed. BGSAVE for replication failed: ${(error as Error).message}`)
      closeQuietly(fd)
      for (const replica of this.replicas) replica.close()
      this.replicas = []
      return this.finish()
    }
    this.options.log.notice('Background RDB transfer terminated with success')
    this.sending = this.replicas.length
    for (const replica of this.replicas) this.sendFile(replica)
    if (this.sending === 0) this.finish()
  }

  /** Disk: `$<length>\r\n` and the file to one replica, as its socket takes it. */
  private sendFile(replica: AttachedReplica): void {
    const fd = openSync(this.file, 'r')
    const length = this.options.capture.totalBytes
    replica.state = 'send_bulk'
    replica.peer.writeRaw(Buffer.from(`$${length}\r\n`))
    let position = 0
    const pump = (): void => {
      const started = performance.now()
      try {
        slice(started)
      } finally {
        this.noteSlice(started)
      }
    }
    const slice = (started: number): void => {
      while (position < length) {
        if (replica.peer.state !== 'open') return done(false)
        if (replica.peer.outputBytes() > HIGH_WATER_BYTES) return replica.peer.onceDrained(pump)
        if (performance.now() - started > SLICE_MS) return void setImmediate(pump)
        const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, length - position))
        const read = readSync(fd, chunk, 0, chunk.length, position)
        if (read === 0) return done(false)
        position += read
        replica.peer.writeRaw(read === chunk.length ? chunk : chunk.subarray(0, read))
      }
      done(true)
    }
    const done = (sent: boolean): void => {
      closeQuietly(fd)
      if (sent) this.options.onSent(replica, false)
      else replica.close()
      if (--this.sending === 0) this.finish()
    }
    pump()
  }

  private finish(): void {
    if (this.finished) return
    this.finished = true
    this.options.capture.release()
    const ms = Math.round(performance.now() - this.startedMs)
    this.options.log.notice(
      `Full sync of ${this.options.capture.totalBytes} bytes (${this.options.diskless ? 'diskless' : 'disk'}) done in ${ms} ms, longest event-loop slice ${this.longestSliceMs.toFixed(1)} ms`,
    )
    if (this.file !== '') {
      try {
        unlinkSync(this.file)
      } catch {
        // Already gone.
      }
      this.file = ''
    }
    this.options.onFinished()
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd)
  } catch {
    // Closed already.
  }
}

/** The capture for one sync: every filter, or none for replicas that asked for no data. */
export function captureFor(databases: Databases, excludeData: boolean): RegistryCapture {
  return captureRegistry(excludeData ? [] : databases.allEntries())
}
