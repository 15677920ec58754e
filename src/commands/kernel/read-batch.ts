/**
 * The single-item BF.EXISTS and BF.ADD commands of one read, run together. A pipelined client
 * sends many in one read; run one by one, each waits for its own cache misses in a large bitmap.
 * Here each stages its item in the Bloom kernel's scratch area (core/filter-batch.ts) and writes
 * a `:0` whose digit is set later (ReplySink.integerLater); one kernel call then answers them
 * all, their misses in flight together, as BF.MEXISTS's and BF.MADD's are.
 *
 * Everything a client or a replica sees is what the commands run in turn give. A batch holds
 * consecutive commands of one kind (checks or adds) on one filter by one client, and it is
 * settled before anything else can change that filter, use the kernel's scratch area, log a write
 * or send the client's output:
 *   - before any other command runs (dispatch.ts settles unless the command is one of these two
 *     on its fast path, which nothing refuses);
 *   - before a command that does not join it (another filter, kind or client, or a case below);
 *   - when the read's commands are done (client.ts {@link endRead}), while the client is still
 *     the one whose writes the log ties to its replies (appendfsync always waits for them), and
 *     before timers, other clients or the next read;
 *   - before the client's output is taken or cut (the reply writer runs the settle it was given).
 * When a batch of adds is settled, each item a command added is propagated as that command
 * (`BF.ADD key item`, spelled as the client spelled it), in order, as BF.ADD does itself.
 *
 * Commands join a batch only during their own client's read, outside MULTI/EXEC, with replies on (CLIENT
 * REPLY), from an ordinary client or a replica's master link (master-session.ts), on a key without a time to live (a lookup could expire it
 * meanwhile). Adds also need: no WATCHed key anywhere, a newest layer with room for every item
 * of the batch (no scale-up, so no error), no capture reading it, and the name spelled `BF.ADD`
 * or `bf.add` (any other spelling runs at once, so a renamed command's log record keeps its
 * original name).
 */
import type { ReplySink } from '../../protocol/reply-sink.js'
import { CommandArgs } from '../../protocol/command-args.js'
import { MAX_BATCH_ITEMS } from '../../core/filter-batch.js'
import { keyspace, type CommandContext } from './context.js'
import type { BloomEntry } from '../../store/registry.js'
import { RememberedBytes } from '../../protocol/remembered-bytes.js'
import { watchHealth } from './health-watch.js'

/** The client whose read is being run (client.ts), while it is: only its commands join a batch. */
let reader: CommandContext | undefined
/** The batch: its commands' context (one client), key, kind and size (set while it has items). */
let context: CommandContext | undefined
let entry: BloomEntry | undefined
/** The batch's key as the commands sent it (a key too long to keep is never matched: settled). */
const batchKey = new RememberedBytes()
let adding = false
let count = 0
/** For adds: the name as spelled (one of {@link ADD_SPELLINGS}). */
let addName: Buffer | undefined
const replyAt = new Int32Array(MAX_BATCH_ITEMS)
const outcomes = new Uint8Array(MAX_BATCH_ITEMS)

/** The spellings of BF.ADD whose log records a batch writes itself. */
const ADD_SPELLINGS = [Buffer.from('BF.ADD'), Buffer.from('bf.add')]

/** Off: every command runs at once (the reference the differential test compares batches with). */
let enabled = true

/** Turns batching on or off (test/commands/kernel/read-batch.test.ts runs its reference with it off). */
export function setReadBatching(on: boolean): void {
  settleBatch()
  enabled = on
}

/**
 * A client's read begins: its BF.EXISTS and BF.ADD commands may run together (not another
 * client's that it unblocks meanwhile: those run at once, their replies sent after them).
 */
export function beginRead(ctx: CommandContext): void {
  reader = enabled ? ctx : undefined
}

/** The read's commands are done: the batch is settled now. */
export function endRead(): void {
  reader = undefined
  settleBatch()
}

/** Whether a batch waits to be settled. */
export function batchPending(): boolean {
  return count !== 0
}

/**
 * Called by BF.EXISTS and BF.ADD before they look their key up: a batch of adds on another key
 * is settled first, since the lookup may log something (a key found expired is deleted, BF.ADD
 * creates a missing filter) that must follow the batch's records.
 */
export function beforeLookup(argv: CommandArgs): void {
  if (count !== 0 && adding && !batchKey.matches(argv.bytes(1), argv.start(1), argv.end(1))) settleBatch()
}

/**
 * BF.EXISTS key item, for a key holding `target`: joins the batch, its reply a `:0` until the
 * batch is settled (true); or, when it cannot join one, false once the batch is settled (the
 * caller answers it at once).
 */
export function checkLater(ctx: CommandContext, target: BloomEntry, argv: CommandArgs): boolean {
  if (!join(ctx, target, false)) return false
  if (target.filter.stageCheck(argv, 2, count)) return staged(ctx, target, argv, false)
  settleBatch()
  return false
}

/** BF.ADD key item: {@link checkLater} for an add (the caller adds it at once on false). */
export function addLater(ctx: CommandContext, target: BloomEntry, argv: CommandArgs): boolean {
  const spelling = spellingOf(argv)
  if (spelling === undefined || ctx.server.watchedKeys.size !== 0) {
    settleBatch()
    return false
  }
  if (count !== 0 && spelling !== addName) settleBatch()
  if (!join(ctx, target, true)) return false
  addName = spelling
  if (target.filter.stageAdd(argv, 2, count)) return staged(ctx, target, argv, true)
  settleBatch()
  return false
}

/**
 * Settles the batch when this command cannot extend it; false when the command cannot start or
 * join one at all (the batch is settled then too).
 */
function join(ctx: CommandContext, target: BloomEntry, add: boolean): boolean {
  if (count !== 0 && (target !== entry || ctx !== context || add !== adding)) settleBatch()
  const client = ctx.client
  if (ctx !== reader || client.transaction !== undefined || client.replyMode !== undefined || (client.kind !== 'normal' && client.kind !== 'master') || target.expiresAt !== undefined) {
    settleBatch()
    return false
  }
  return true
}

/** The command's item is staged: its reply becomes a placeholder (the first one opens the batch). */
function staged(ctx: CommandContext, target: BloomEntry, argv: CommandArgs, add: boolean): true {
  if (count === 0) {
    context = ctx
    entry = target
    adding = add
    if (add) batchKey.remember(argv.bytes(1), argv.start(1), argv.end(1))
  }
  replyAt[count++] = ctx.client.reply.integerLater(settleBatch)
  return true
}

/** BF.ADD as the client spelled it, when a batch logs that spelling; else undefined. */
function spellingOf(argv: CommandArgs): Buffer | undefined {
  const bytes = argv.bytes(0)
  const start = argv.start(0)
  if (argv.end(0) - start !== 6) return undefined
  outer: for (const spelling of ADD_SPELLINGS) {
    for (let i = 0; i < 6; i++) if (bytes[start + i] !== spelling[i]) continue outer
    return spelling
  }
  return undefined
}

/** Runs the batch: one kernel call, then the adds' log records, then each reply's digit. */
export function settleBatch(): void {
  if (count === 0) return
  const n = count
  const ctx = context!
  const target = entry!
  const reply: ReplySink = ctx.client.reply
  count = 0
  // Not kept: a deleted filter (and its arena) must not stay reachable from here.
  context = undefined
  entry = undefined
  reply.settled()
  if (adding) addAll(ctx, target, n)
  else target.filter.checkStaged(n, outcomes)
  for (let j = 0; j < n; j++) reply.answer(replyAt[j]!, outcomes[j] === 1)
}

/** The batch's adds, and what BF.ADD does after adding an item (bloom.ts bfAdd), in order. */
function addAll(ctx: CommandContext, target: BloomEntry, n: number): void {
  const filter = target.filter
  filter.addStaged(n, outcomes)
  let total = 0
  for (let j = 0; j < n; j++) total += outcomes[j]!
  if (total === 0) return
  keyspace(ctx).touch(target, total)
  const server = ctx.server
  if (server.persistence.propagates) {
    server.persistence.db = ctx.client.db
    // Each record in a CommandArgs, as BF.ADD's own argv: the log and the replicas' stream encode
    // it in place, and propagate applies rename-command as it does for a client's command. The
    // items are read where they were staged; made per settle, so that nothing here keeps a view
    // of the arena after it.
    const name = addName!
    const key = Buffer.from(target.name, 'latin1')
    const staged = filter.stagedItems()
    const memory = staged.bytes(0)
    const source = Buffer.from(memory.buffer, memory.byteOffset, staged.end(n - 1))
    const record = new CommandArgs()
    for (let j = 0; j < n; j++) {
      if (outcomes[j] !== 1) continue
      record.clear()
      record.push(name, 0, name.length)
      record.push(key, 0, key.length)
      record.push(source, staged.start(j), staged.end(j))
      server.propagate(record)
    }
    // What its WAIT waits for (client.ts sets it after each command, before these records).
    ctx.client.replOffset = server.replication.masterReplOffset
  }
  watchHealth(server.log, target)
}
