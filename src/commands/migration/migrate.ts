/**
 * MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password]
 * [AUTH2 username password] [KEYS key ...] (redis 7.0.15 cluster.c migrateCommand): each key is
 * sent to the target as RESTORE (RESTORE-ASKING in cluster mode) over a cached connection
 * (migrate-link.ts), then deleted here and the deletion propagated as DEL, unless COPY. Replies
 * and errors are redis's: +OK, +NOKEY, `IOERR error or timeout ...`, `ERR Target instance
 * replied with error: ...`.
 *
 * Node cannot block on a socket, so MIGRATE is asynchronous: its client waits for the reply as a
 * client in WAIT does (its later commands wait too), and every other client goes on. What keeps
 * an acknowledged write from being lost: while the keys move, every write to one of them (and
 * every write without keys, FLUSHALL...) waits (client-pause.ts holdKeys). So nothing lands on a
 * key between the moment its bytes are taken and its deletion here; the held writes run after
 * the deletion, find no key, and are redirected to the target by cluster routing (redis's MIGRATE
 * blocks the whole server for the same reason). Reads go on and see the key until it is deleted.
 *
 * A filter larger than one RESTORE should carry (above 2 MiB, or above `proto-max-bulk-len`) is
 * streamed in BFS.RESTORE-PART parts (restore-part.ts, docs/MIGRATE.md) from a copy-on-write capture
 * (store/registry-capture.ts), a few ms of work per step: the key stays readable here until the
 * target committed it. Such a target must be bfs.
 */
import { performance } from 'node:perf_hooks'
import { captureRegistry, MAX_PIECE_BYTES, type RegistryCapture } from '../../store/registry-capture.js'
import { FilterRegistry, type FilterEntry } from '../../store/registry.js'
import type { Databases } from '../../store/databases.js'
import { keyspace, type ClientSession, type CommandContext, type ServerContext } from '../kernel/context.js'
import { ERR, ReplyError, errText, migrateTargetErrorText } from '../kernel/reply-error.js'
import { parseInteger } from '../kernel/args.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { encodeCommand, encodeCommandPieces } from '../../protocol/command-encoder.js'
import { dumpPayloadOf } from './restore.js'
import { LinkError, type MigrateLink, MigrateLinks } from './migrate-link.js'

/** Above this many bitmap bytes a filter goes in parts (one RESTORE's CRC-64 and copy stay within a few ms). */
export const SINGLE_RESTORE_MAX_BYTES = 2 * 1024 * 1024
/**
 * Bytes of one BFS.RESTORE-PART at most (and at most proto-max-bulk-len): a copy, a CRC-32 and a bit
 * count of them on the target, first writes to fresh pages of its new bitmap included, within a
 * few ms even on a loaded machine.
 */
export const PART_BYTES = 512 * 1024
/** Bitmap bytes the source checksums or copies per step (first reads of untouched pages fault too). */
const STEP_WORK_BYTES = 256 * 1024
/** BFS.RESTORE-PARTs sent ahead of their replies. */
const PARTS_IN_FLIGHT = 2
/** Work of one turn of the event loop while a part is gathered. */
const TURN_MS = 5

interface MigrateRequest {
  readonly host: string
  readonly port: number
  readonly db: number
  readonly timeoutMs: number
  readonly copy: boolean
  readonly replace: boolean
  readonly auth: readonly Buffer[] | undefined
  readonly keys: readonly Buffer[]
}

const LINKS = new WeakMap<Databases, MigrateLinks>()
let transfers = 0

/** redis migrateCommand's parse, its errors in its order. */
function parseMigrate(argv: CommandArgs): MigrateRequest {
  let copy = false
  let replace = false
  let auth: Buffer[] | undefined
  let keys: Buffer[] = [argv.get(3)]
  for (let j = 6; j < argv.length; j++) {
    const more = argv.length - 1 - j
    if (argv.isKeyword(j, 'COPY')) copy = true
    else if (argv.isKeyword(j, 'REPLACE')) replace = true
    else if (argv.isKeyword(j, 'AUTH')) {
      if (more < 1) throw new ReplyError(ERR.SYNTAX)
      auth = [Buffer.from(argv.get(++j))]
    } else if (argv.isKeyword(j, 'AUTH2')) {
      if (more < 2) throw new ReplyError(ERR.SYNTAX)
      auth = [Buffer.from(argv.get(j + 1)), Buffer.from(argv.get(j + 2))]
      j += 2
    } else if (argv.isKeyword(j, 'KEYS')) {
      if (argv.get(3).length !== 0) throw new ReplyError(ERR.MIGRATE_KEYS_WITH_KEY)
      keys = []
      for (let k = j + 1; k < argv.length; k++) keys.push(Buffer.from(argv.get(k)))
      break
    } else throw new ReplyError(ERR.SYNTAX)
  }
  const timeout = parseInteger(argv.get(5))
  const db = parseInteger(argv.get(4))
  if (timeout === undefined || db === undefined) throw new ReplyError(ERR.NOT_INTEGER)
  const port = parseInteger(argv.get(2))
  return {
    host: argv.latin1(1),
    port: port ?? -1,
    db,
    timeoutMs: timeout <= 0 ? 1000 : timeout,
    copy,
    replace,
    auth,
    keys: keys.map((key) => Buffer.from(key)),
  }
}

/** MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw] [AUTH2 user pw] [KEYS key ...] → +OK, +NOKEY or an error */
export function migrate(ctx: CommandContext, argv: CommandArgs): void {
  const request = parseMigrate(argv)
  const registry = keyspace(ctx)
  const present = request.keys.filter((key) => registry.lookup(key) !== undefined)
  if (present.length === 0) {
    ctx.client.reply.simple('NOKEY')
    return
  }
  const peer = ctx.client.peer
  if (peer === undefined || ctx.server.persistence.inTransaction) throw new ReplyError(ERR.MIGRATE_NEEDS_CONNECTION)
  const names = present.map((key) => FilterRegistry.nameOf(key))
  const release = ctx.server.pause.holdKeys(ctx.client.db, names)
  peer.block()
  const job = new Migration(ctx.server, ctx.client, registry, request, present)
  job
    .run()
    .then(
      (error) => {
        if (error === undefined) peer.reply.simple('OK')
        else peer.reply.error(error)
      },
      (error: unknown) => {
        if (error instanceof ReplyError) peer.reply.error(error.message)
        else {
          ctx.server.log.warning(`MIGRATE failed: ${(error as Error).message}`)
          peer.reply.error(errText((error as Error).message))
        }
      },
    )
    .finally(() => {
      peer.unblock() // its reply first, then the writes that waited
      release()
    })
}

/** One MIGRATE at work. */
class Migration {
  private readonly links: MigrateLinks
  /** Whether a key was acknowledged (no retry on a new connection after that). */
  private progressed = false
  /** The replies of AUTH and SELECT (status lines; +OK for those not sent), read once. */
  private prelude: () => Promise<string[]> = async () => ['+OK', '+OK']

  constructor(
    private readonly server: ServerContext,
    private readonly client: ClientSession,
    private readonly registry: FilterRegistry,
    private readonly request: MigrateRequest,
    private readonly keys: readonly Buffer[],
  ) {
    let links = LINKS.get(server.databases)
    if (links === undefined) {
      links = new MigrateLinks()
      LINKS.set(server.databases, links)
    }
    this.links = links
  }

  /** Moves the keys; resolves with the error text to answer, or undefined for +OK. */
  async run(): Promise<string | undefined> {
    const { host, port } = this.request
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.attempt()
      } catch (error) {
        if (!(error instanceof LinkError)) throw error
        this.links.close(host, port)
        // redis retries once on a new connection: a cached one the target closed, not a timeout.
        if (attempt === 0 && !error.timedOut && !this.progressed) continue
        return error.message
      }
    }
  }

  private async attempt(): Promise<string | undefined> {
    const { host, port, timeoutMs, db, auth } = this.request
    if (port < 0 || port > 65535) throw new LinkError('writing', false)
    const { link } = await this.links.get(host, port, timeoutMs, this.server.config)
    const prelude: Buffer[] = []
    if (auth !== undefined) prelude.push(encodeCommand(['AUTH', ...auth]))
    const select = link.lastDb !== db
    if (select) prelude.push(encodeCommand(['SELECT', db]))
    if (prelude.length > 0) await link.write(prelude, timeoutMs)
    // Their replies are read before the first key's, after it was sent (redis writes it all, then reads).
    let preludeReplies: Promise<string[]> | undefined
    this.prelude = () =>
      (preludeReplies ??= (async () => [
        auth !== undefined ? await link.readLine(timeoutMs) : '+OK',
        select ? await link.readLine(timeoutMs) : '+OK',
      ])())
    let targetError: string | undefined
    for (const key of this.keys) {
      const name = FilterRegistry.nameOf(key)
      const entry = this.registry.get(name)
      if (entry === undefined) continue
      let ttl = 0
      if (entry.expiresAt !== undefined) {
        ttl = entry.expiresAt - Date.now()
        if (ttl < 0) continue
        if (ttl < 1) ttl = 1
      }
      const reply =
        entry.filter.bitmapBytes() <= this.singleLimit()
          ? await this.restoreWhole(link, key, entry, ttl)
          : await this.restoreInParts(link, key, entry)
      const failed = [...(await this.prelude()), reply].find((line) => line.startsWith('-'))
      if (failed !== undefined) {
        link.lastDb = -1
        targetError ??= migrateTargetErrorText(failed.slice(1))
        continue
      }
      this.progressed = true
      if (!this.request.copy) this.deleteMoved(name, key, entry)
    }
    await this.prelude()
    if (targetError !== undefined) return targetError
    link.lastDb = db
    return undefined
  }

  private singleLimit(): number {
    return Math.min(SINGLE_RESTORE_MAX_BYTES, this.server.config['proto-max-bulk-len'] - 1024)
  }

  private restoreCommandName(): string {
    // redis sends RESTORE-ASKING in cluster mode (the slot is importing there), RESTORE otherwise.
    return this.server.config['cluster-enabled'] ? 'RESTORE-ASKING' : 'RESTORE'
  }

  /** One RESTORE with the whole payload; its reply line. */
  private async restoreWhole(link: MigrateLink, key: Buffer, entry: FilterEntry, ttl: number): Promise<string> {
    const args = [Buffer.from(this.restoreCommandName()), key, Buffer.from(String(ttl)), dumpPayloadOf(entry)]
    if (this.request.replace) args.push(Buffer.from('REPLACE'))
    await link.write([encodeCommand(args)], this.request.timeoutMs)
    await this.prelude()
    return link.readLine(this.request.timeoutMs)
  }

  /**
   * BFS.RESTORE-PART after BFS.RESTORE-PART from a capture of the filter taken now (its writes wait
   * anyway), a part gathered a few ms at a time, up to PARTS_IN_FLIGHT parts sent ahead of their
   * replies. The reply of the first part that failed, or of the last one.
   */
  private async restoreInParts(link: MigrateLink, key: Buffer, entry: FilterEntry): Promise<string> {
    const { timeoutMs, replace } = this.request
    const partBytes = Math.min(PART_BYTES, this.server.config['proto-max-bulk-len'])
    const id = Buffer.from(`${this.server.runId.slice(0, 12)}-${++transfers}`)
    const ttl = Buffer.from(String(entry.expiresAt ?? 0))
    const tail = replace ? [Buffer.from('REPLACE'), Buffer.from('ABSTTL')] : [Buffer.from('ABSTTL')]
    const capture = captureRegistry([{ db: this.client.db, entry }])
    let inFlight = 0
    let failed: string | undefined
    let last = '+OK'
    const readReply = async (): Promise<void> => {
      await this.prelude()
      last = await link.readLine(timeoutMs)
      inFlight--
      if (last.startsWith('-')) failed ??= last
    }
    try {
      for (let seq = 0, done = false; !done && failed === undefined; seq++) {
        const part = await gatherPart(capture, partBytes)
        done = part.done
        if (part.bytes === 0 && seq > 0) break
        await link.write(partCommand(key, ttl, id, seq, part.pieces, tail), timeoutMs)
        inFlight++
        if (inFlight >= PARTS_IN_FLIGHT) await readReply()
      }
      while (inFlight > 0) await readReply()
      return failed ?? last
    } finally {
      capture.release()
    }
  }

  /** The key left: deleted here, its DEL propagated in its database (redis: MIGRATE becomes DEL). */
  private deleteMoved(name: string, key: Buffer, entry: FilterEntry): void {
    const db = this.client.db
    if (this.registry.peek(name) !== entry) return
    this.registry.delete(name)
    this.server.watchedKeys.touch(db, name)
    this.server.persistence.propagate([Buffer.from('DEL'), key], undefined, db)
  }
}

/** The next part's pieces from the capture, a few ms of work per turn of the event loop; done at the payload's end. */
async function gatherPart(
  capture: RegistryCapture,
  partBytes: number,
): Promise<{ pieces: Buffer[]; bytes: number; done: boolean }> {
  const pieces: Buffer[] = []
  let bytes = 0
  let turn = performance.now()
  while (bytes < partBytes) {
    const piece = capture.next(Math.min(MAX_PIECE_BYTES, partBytes - bytes), STEP_WORK_BYTES)
    if (piece === null) return { pieces, bytes, done: true }
    // A fresh buffer per next(): sent as it is.
    if (piece.length > 0) pieces.push(piece)
    bytes += piece.length
    if (performance.now() - turn > TURN_MS) {
      await new Promise((resolve) => setImmediate(resolve))
      turn = performance.now()
    }
  }
  return { pieces, bytes, done: false }
}

/** `BFS.RESTORE-PART key ttl id seq <data> [REPLACE] ABSTTL` as RESP pieces: the data's pieces are written as they are, not joined. */
function partCommand(
  key: Buffer,
  ttl: Buffer,
  id: Buffer,
  seq: number,
  pieces: readonly Buffer[],
  tail: readonly Buffer[],
): Buffer[] {
  return encodeCommandPieces(['BFS.RESTORE-PART', key, ttl, id, seq, pieces, ...tail])
}
