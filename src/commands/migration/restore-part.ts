/**
 * BFS.RESTORE-PART, bfs's private command for a filter too large for one RESTORE (docs/MIGRATE.md):
 *
 *     BFS.RESTORE-PART key ttl transfer-id seq data [REPLACE] [ABSTTL]
 *
 * The parts of one transfer, seq 0, 1, 2 ..., carry a full-sync payload (format/sync-payload.ts)
 * holding the one filter: part 0 starts a staging for the key (any earlier one is dropped), each
 * part is decoded as it comes (store/sync-payload-decoder.ts: every header checked before its
 * bitmap is allocated, each bitmap filled and checksummed in place), and the part that completes
 * the payload commits it as RESTORE would (BUSYKEY, TTL, REPLACE). Nothing is visible before the
 * commit. Each part's work is bounded by its size, so a 1 GiB filter never holds the loop long,
 * but for a commit below that propagates the whole filter again (about as long as a RESTORE of it).
 *
 * Replicas and the append-only log get every part, verbatim, as it is accepted: they stage and
 * commit at the same part. A staging is in no snapshot, log rewrite or full sync's payload, so the
 * parts before such a start point are not in what follows it (the log moves to a new segment when
 * a snapshot captures its data, and drops the older ones once it commits; a replica's stream
 * follows its full sync's capture). A commit after one of those therefore propagates the whole
 * filter again, as parts 0, 1, ... of the same transfer in its own turn, instead of its last part:
 * the log and the replicas then hold the key whether the save, rewrite or sync finished before the
 * commit or not, and no background save or rewrite ever fails the transfer. A full sync waits for
 * an active transfer to commit ({@link stagingActive}), so that one rarely needs it. A replay (of the log,
 * or of a replica's stream) that meets a later part of a staging begun before its start point has
 * no staging for it and takes it as done: the whole filter follows at the commit.
 *
 * A staging's memory counts against `maxmemory` from the part that declares it (each filter
 * record's length, before it is allocated: -OOM past the limit, the staging dropped) until the
 * commit moves it into the keyspace, or it is dropped (a part out of sequence, bad data, a new
 * part 0 for its key, {@link ABANDONED_MS} without a part). At most {@link MAX_OPEN_STAGINGS} are
 * open at once; part 0 of another key past that is refused. Neither limit applies to what the
 * master's stream or the log's replay applies (the master accepted it).
 */
import { SyncPayloadDecoder } from '../../store/sync-payload-decoder.js'
import { DecodeError } from '../../format/decode-error.js'
import type { Databases } from '../../store/databases.js'
import { FilterRegistry } from '../../store/registry.js'
import { keyspace, type CommandContext, type ServerContext } from '../kernel/context.js'
import { ERR, ReplyError, tooManyTransfersText } from '../kernel/reply-error.js'
import { parseInteger } from '../kernel/args.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { parseRestoreOptions, parseRestoreTtl, storeRestored } from './restore.js'
import { reserveLoadBytes } from '../kernel/filter-budget.js'
import { captureRegistry } from '../../store/registry-capture.js'
import { quotedName } from '../../store/snapshot-save.js'
import { PART_BYTES } from './migrate.js'
import { MemoryGuard } from '../../store/memory-guard.js'

/** A staging left without a part this long is dropped (the next part 0, the server's housekeeping). */
const ABANDONED_MS = 5 * 60 * 1000
/**
 * Most stagings open at once on a server: a MIGRATE moves one key at a time, so this leaves room
 * for several sources migrating to one target together, and bounds what a client can hold open.
 */
export const MAX_OPEN_STAGINGS = 16
const TOO_MANY_STAGINGS = tooManyTransfersText(MAX_OPEN_STAGINGS)
/** A full sync waits for a staging that had a part this recently (see {@link stagingActive}). */
const ACTIVE_MS = 10_000

interface Staging {
  readonly id: string
  nextSeq: number
  readonly decoder: SyncPayloadDecoder
  /** Where the propagated records started when the first part came (see {@link propagationEpoch}). */
  readonly epoch: string
  lastPartMs: number
  /** Bytes counted against maxmemory for it so far. */
  bytes: number
  /** The part being decoded: what its memory is checked against (its client's maxmemory). */
  ctx: CommandContext
}

/** The open stagings of a server, by `db:name`, and their bytes for its memory guard. */
class Stagings extends Map<string, Staging> {
  bitmapBytes(): number {
    let bytes = 0
    for (const staging of this.values()) bytes += staging.bytes
    return bytes
  }

  /** Drops a staging, its memory no longer counted. */
  drop(key: string): void {
    const staging = this.get(key)
    if (staging === undefined) return
    this.delete(key)
    MemoryGuard.of(staging.ctx.server.databases).released(staging.bytes)
  }

  /** Drops the stagings without a part for {@link ABANDONED_MS} (part 0, the memory guard's housekeeping). */
  dropAbandoned(nowMs: number): void {
    for (const [key, staging] of this) if (nowMs - staging.lastPartMs > ABANDONED_MS) this.drop(key)
  }
}

/** The open stagings of each server (by its databases: the log's replay view shares them). */
const STAGINGS = new WeakMap<Databases, Stagings>()

function stagingsOf(server: ServerContext): Stagings {
  const databases = server.databases
  let stagings = STAGINGS.get(databases)
  if (stagings === undefined) {
    stagings = new Stagings()
    STAGINGS.set(databases, stagings)
    MemoryGuard.of(databases).holdOutside(stagings)
    server.masterSide.holdSync ??= () => stagingActive(databases)
    server.persistence.holdAutomaticSaves ??= () => stagingActive(databases)
  }
  return stagings
}

/**
 * Whether a transfer is staging on this server (a part came in the last 10 s). A full sync to a
 * replica waits until it committed (MasterSide.holdSync), so that the payload holds the key: a
 * replica's sub-replicas need that, their stream being this replica's master's, verbatim, with no
 * room for the whole filter again. The `save` rules and the automatic rewrite wait too
 * (Persistence.holdAutomaticSaves), sparing the commit the whole filter again. Past 10 s without
 * a part they go on.
 */
function stagingActive(databases: Databases): boolean {
  const stagings = STAGINGS.get(databases)
  if (stagings === undefined || stagings.size === 0) return false
  const now = Date.now()
  for (const staging of stagings.values()) if (now - staging.lastPartMs < ACTIVE_MS) return true
  return false
}

/**
 * Changes when what the parts were propagated to restarts without them: the log's open segment
 * (a snapshot's start point opens the next one; turning the log on opens one) and the full syncs
 * captured for replicas.
 */
function propagationEpoch(server: ServerContext): string {
  const log = server.persistence.appendLog
  return `${log.isOpen ? log.segmentSeq : 0}/${server.masterSide.syncCaptures}`
}

/** BFS.RESTORE-PART key ttl transfer-id seq data [REPLACE] [ABSTTL] → +OK */
export function restorePart(ctx: CommandContext, argv: CommandArgs): void {
  const options = parseRestoreOptions(argv, 6)
  const ttl = parseRestoreTtl(argv.get(2))
  const id = argv.latin1(3)
  const seq = parseInteger(argv.get(4))
  if (seq === undefined || seq < 0) throw new ReplyError(ERR.NOT_INTEGER)
  const name = FilterRegistry.nameOf(argv.get(1))
  const key = `${ctx.client.db}:${name}`
  const stagings = stagingsOf(ctx.server)
  // The source's own link and the log's replay run whatever the master accepted.
  const replaying = ctx.client.kind === 'master' || ctx.client.user === ''
  let staging = stagings.get(key)
  if (seq === 0) {
    if (!options.replace && keyspace(ctx).has(name)) throw new ReplyError(ERR.BUSYKEY)
    stagings.dropAbandoned(Date.now())
    stagings.drop(key)
    if (!replaying && stagings.size >= MAX_OPEN_STAGINGS) throw new ReplyError(TOO_MANY_STAGINGS)
    staging = startStaging(ctx, id, replaying)
    stagings.set(key, staging)
  } else if (staging === undefined && replaying) {
    // Its first parts came before this replay's start point (see the module comment).
    ctx.client.reply.simple('OK')
    return
  } else if (staging === undefined || staging.id !== id || staging.nextSeq !== seq) {
    if (staging?.id === id) stagings.drop(key)
    throw new ReplyError(ERR.RESTORE_PART_SEQUENCE)
  }
  staging.ctx = ctx
  try {
    staging.decoder.push(argv.get(5))
  } catch (error) {
    stagings.drop(key)
    if (error instanceof DecodeError || error instanceof RangeError) throw new ReplyError(ERR.BAD_DATA_FORMAT)
    throw error
  }
  staging.nextSeq++
  staging.lastPartMs = Date.now()
  if (staging.decoder.done) {
    // Its memory moves into the keyspace with the filter (counted there from now on), or is
    // given back when the commit is refused.
    stagings.delete(key)
    try {
      commit(ctx, argv, name, staging, ttl, options)
    } catch (error) {
      MemoryGuard.of(ctx.server.databases).released(staging.bytes)
      throw error
    }
  } else ctx.server.propagate(argv)
  ctx.client.reply.simple('OK')
}

/** A new staging: each record is counted against maxmemory (-OOM past it) before it is allocated. */
function startStaging(ctx: CommandContext, id: string, replaying: boolean): Staging {
  const maxFilterBytes = replaying ? 0 : ctx.server.config['max-filter-bytes']
  const reserve = (bytes: number): void => {
    reserveLoadBytes(staging.ctx, bytes)
    staging.bytes += bytes
  }
  const decoder = new SyncPayloadDecoder({ maxFilterBytes, reserve }, ctx.server.databases.count)
  const staging: Staging = {
    id,
    nextSeq: 0,
    decoder,
    epoch: propagationEpoch(ctx.server),
    lastPartMs: Date.now(),
    bytes: 0,
    ctx,
  }
  return staging
}

/** The last part: the filter is stored as RESTORE stores it, and propagated (replicas commit with it). */
function commit(
  ctx: CommandContext,
  argv: CommandArgs,
  name: string,
  staging: Staging,
  ttl: number,
  options: { replace: boolean; absttl: boolean },
): void {
  const filters = [...staging.decoder.filters()]
  if (filters.length !== 1) throw new ReplyError(ERR.BAD_DATA_FORMAT)
  if (!options.replace && keyspace(ctx).has(name)) throw new ReplyError(ERR.BUSYKEY)
  const stored = storeRestored(ctx, name, filters[0]!.filter, ttl, options)
  if (propagationEpoch(ctx.server) === staging.epoch) ctx.server.propagate(argv)
  else if (stored.propagate === 'restore' && ctx.server.persistence.propagates) {
    ctx.server.log.notice(
      `BFS.RESTORE-PART: a snapshot or a full sync took its start point during the transfer of ${quotedName(name)}; the whole filter is propagated again`,
    )
    propagateWhole(ctx, argv, name, stored.expiresAt, options.replace)
  }
  // A replica keeps what its stream restores, expired or not: the master's DEL removes it.
  if (stored.propagate !== 'restore') ctx.server.propagate([Buffer.from('DEL'), argv.get(1)])
}

/**
 * The stored filter propagated as a whole transfer, parts 0, 1, ... of `argv`'s transfer id, read
 * from a capture of it in this turn (nothing can change it meanwhile), with its absolute expiry.
 */
function propagateWhole(
  ctx: CommandContext,
  argv: CommandArgs,
  name: string,
  expiresAt: number | undefined,
  replace: boolean,
): void {
  const entry = keyspace(ctx).peek(name)
  if (entry === undefined) return
  const capture = captureRegistry([{ db: ctx.client.db, entry }])
  const partBytes = Math.min(PART_BYTES, ctx.server.config['proto-max-bulk-len'])
  const head = [
    Buffer.from('BFS.RESTORE-PART'),
    Buffer.from(argv.get(1)),
    Buffer.from(String(expiresAt ?? 0)),
    Buffer.from(argv.get(3)),
  ]
  const tail = replace ? [Buffer.from('REPLACE'), Buffer.from('ABSTTL')] : [Buffer.from('ABSTTL')]
  let seq = 0
  let pieces: Buffer[] = []
  let bytes = 0
  const send = (): void => {
    ctx.server.propagate([
      ...head,
      Buffer.from(String(seq++)),
      pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, bytes),
      ...tail,
    ])
    pieces = []
    bytes = 0
  }
  try {
    for (let piece = capture.next(partBytes); piece !== null; piece = capture.next(partBytes - bytes)) {
      pieces.push(piece)
      bytes += piece.length
      if (bytes >= partBytes) send()
    }
    if (bytes > 0) send()
  } finally {
    capture.release()
  }
}
