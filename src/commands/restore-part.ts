/**
 * RESTORE-PART, bfs's private command for a filter too large for one RESTORE (docs/MIGRATE.md):
 *
 *     RESTORE-PART key ttl transfer-id seq data [REPLACE] [ABSTTL]
 *
 * The parts of one transfer, seq 0, 1, 2 ..., carry a full-sync payload (format/sync-payload.ts)
 * holding the one filter: part 0 starts a staging for the key (any earlier one is dropped), each
 * part is decoded as it comes (store/sync-payload-decoder.ts: every header checked before its
 * bitmap is allocated, each bitmap filled and checksummed in place), and the part that completes
 * the payload commits it as RESTORE would (BUSYKEY, TTL, REPLACE). Nothing is visible before the
 * commit. Each part's work is bounded by its size, so a 1 GiB filter never holds the loop long.
 *
 * Replicas and the append-only log get every part, verbatim, as it is accepted: they stage and
 * commit at the same part. A staging is not in a snapshot, a log rewrite or a full sync's
 * payload; so when one of those started while a staging was open here, the commit is refused
 * (the source's MIGRATE fails and keeps the key; run it again) rather than leave a key that a
 * restart or a replica would not have.
 */
import { SyncPayloadDecoder } from '../store/sync-payload-decoder.js'
import { DecodeError } from '../format/decode-error.js'
import type { Databases } from '../store/databases.js'
import { FilterRegistry } from '../store/registry.js'
import { keyspace, type CommandContext, type ServerContext } from './context.js'
import { ERR, ReplyError } from './reply-error.js'
import { parseInteger } from './args.js'
import type { CommandArgs } from '../protocol/command-args.js'
import { BAD_DATA_FORMAT, BUSYKEY, parseRestoreOptions, parseRestoreTtl, storeRestored } from './restore.js'

/** A staging left without a part this long is dropped at the next part 0 of any key. */
const ABANDONED_MS = 5 * 60 * 1000

interface Staging {
  readonly id: string
  nextSeq: number
  readonly decoder: SyncPayloadDecoder
  /** What must not move between the first part and the commit (see the module comment). */
  readonly durability: string
  lastPartMs: number
}

/** The open stagings of each server (by its databases: the log's replay view shares them), by `db:name`. */
const STAGINGS = new WeakMap<Databases, Map<string, Staging>>()

function stagingsOf(server: ServerContext): Map<string, Staging> {
  let stagings = STAGINGS.get(server.databases)
  if (stagings === undefined) {
    stagings = new Map()
    STAGINGS.set(server.databases, stagings)
  }
  return stagings
}

/** Saves, log rewrites and full syncs started or done: a staging's parts are in none of them. */
function durabilityFingerprint(server: ServerContext): string {
  const { snapshots, logRewriter } = server.persistence
  return `${snapshots.saves}/${snapshots.inProgress}/${logRewriter.rewrites}/${logRewriter.inProgress}/${server.stats.syncFull}`
}

/** RESTORE-PART key ttl transfer-id seq data [REPLACE] [ABSTTL] → +OK */
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
    if (!options.replace && keyspace(ctx).has(name)) throw new ReplyError(BUSYKEY)
    dropAbandoned(stagings)
    const maxFilterBytes = replaying ? 0 : ctx.server.config['max-filter-bytes']
    staging = { id, nextSeq: 0, decoder: new SyncPayloadDecoder({ maxFilterBytes }, ctx.server.databases.count), durability: durabilityFingerprint(ctx.server), lastPartMs: Date.now() }
    stagings.set(key, staging)
  } else if (staging === undefined || staging.id !== id || staging.nextSeq !== seq) {
    if (staging?.id === id) stagings.delete(key)
    throw new ReplyError('ERR RESTORE-PART out of sequence: no such transfer, or a part is missing')
  }
  try {
    staging.decoder.push(argv.get(5))
  } catch (error) {
    stagings.delete(key)
    if (error instanceof DecodeError || error instanceof RangeError) throw new ReplyError(BAD_DATA_FORMAT)
    throw error
  }
  staging.nextSeq++
  staging.lastPartMs = Date.now()
  if (staging.decoder.done) {
    stagings.delete(key)
    commit(ctx, argv, name, staging, ttl, options, replaying)
  } else ctx.server.propagate(argv)
  ctx.client.reply.simple('OK')
}

/** The last part: the filter is stored as RESTORE stores it, and the part propagated (replicas commit with it). */
function commit(ctx: CommandContext, argv: CommandArgs, name: string, staging: Staging, ttl: number, options: { replace: boolean; absttl: boolean }, replaying: boolean): void {
  const filters = [...staging.decoder.filters()]
  if (filters.length !== 1) throw new ReplyError(BAD_DATA_FORMAT)
  if (!replaying && durabilityFingerprint(ctx.server) !== staging.durability) {
    throw new ReplyError('ERR RESTORE-PART interrupted: a save, a log rewrite or a full sync started during the transfer; MIGRATE again')
  }
  if (!options.replace && keyspace(ctx).has(name)) throw new ReplyError(BUSYKEY)
  const stored = storeRestored(ctx, name, filters[0]!.filter, ttl, options)
  ctx.server.propagate(argv)
  // A replica keeps what its stream restores, expired or not: the master's DEL removes it.
  if (stored.propagate !== 'restore') ctx.server.propagate([Buffer.from('DEL'), argv.get(1)])
}

function dropAbandoned(stagings: Map<string, Staging>): void {
  const now = Date.now()
  for (const [key, staging] of stagings) if (now - staging.lastPartMs > ABANDONED_MS) stagings.delete(key)
}
