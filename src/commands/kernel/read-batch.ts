/**
 * The single-item BF.EXISTS and BF.ADD commands of one read, run together, and so the CF.EXISTS,
 * CF.ADD and CF.DEL commands (core/cuckoo-filter.ts stageItem: the Cuckoo kernel). A pipelined client
 * sends many in one read; run one by one, each waits for its own cache misses in a large bitmap.
 * Here each stages its item in the Bloom kernel's scratch area (core/filter-batch.ts) and writes
 * a `:0` whose digit is set later (ReplySink.integerLater); one kernel call then answers them
 * all, their misses in flight together, as BF.MEXISTS's and BF.MADD's are.
 *
 * Everything a client or a replica sees is what the commands run in turn give. A batch holds
 * consecutive commands of one kind (checks, adds or deletes) on one filter by one client, and it is
 * settled before anything else can change that filter, use the kernel's scratch area, log a write
 * or send the client's output:
 *   - before any other command runs (dispatch.ts settles unless the command is one of these
 *     on its fast path, which nothing refuses);
 *   - before a command that does not join it (another filter, kind or client, or a case below);
 *   - when the read's commands are done (client.ts {@link endRead}), while the client is still
 *     the one whose writes the log ties to its replies (appendfsync always waits for them), and
 *     before timers, other clients or the next read;
 *   - before the client's output is taken or cut (the reply writer runs the settle it was given).
 * When a batch of adds is settled, each item a command added is propagated as that command
 * (`BF.ADD key item`, spelled as the client spelled it), in order, as BF.ADD does itself; so are
 * a batch's CF.ADD commands that added and CF.DEL commands that removed. A CF.ADD that fails at
 * the settle (the filter is full, or may not grow) has its error put in its reply's place.
 *
 * Commands join a batch only during their own client's read, outside MULTI/EXEC, with replies on (CLIENT
 * REPLY), from an ordinary client or a replica's master link (master-session.ts), on a key without a time to live (a lookup could expire it
 * meanwhile). Adds also need: no WATCHed key anywhere, a newest layer with room for every item
 * of the batch (no scale-up, so no error), no capture reading it, and the name spelled `BF.ADD`
 * or `bf.add` (any other spelling runs at once, so a renamed command's log record keeps its
 * original name). CF commands need the kernel to serve the filter (its sub-filters in one arena);
 * CF.ADD and CF.DEL also need no WATCHed key, no `maxmemory` and the spelling `CF.ADD` / `cf.add`,
 * `CF.DEL` / `cf.del`.
 */
import type { ReplySink } from '../../protocol/reply-sink.js'
import { CommandArgs } from '../../protocol/command-args.js'
import { MAX_BATCH_ITEMS, type ItemList } from '../../core/filter-batch.js'
import { keyspace, type CommandContext } from './context.js'
import type { BloomEntry, CuckooEntry } from '../../store/registry.js'
import type { GrowthCheck, CuckooFilter } from '../../core/cuckoo-filter.js'
import { ERR } from './reply-error.js'
import { RememberedBytes } from '../../protocol/remembered-bytes.js'
import { watchHealth } from './health-watch.js'

/** The client whose read is being run (client.ts), while it is: only its commands join a batch. */
let reader: CommandContext | undefined
/** The batch: its commands' context (one client), key, kind and size (set while it has items). */
let context: CommandContext | undefined
let entry: BloomEntry | CuckooEntry | undefined
/** The batch's key as the commands sent it (a key too long to keep is never matched: settled). */
const batchKey = new RememberedBytes()
/** What the batch's commands do. */
const CHECK = 0
const ADD = 1
const CF_CHECK = 2
const CF_ADD = 3
const CF_DEL = 4
let mode = CHECK
let count = 0
/** For writes: the name as spelled (one of {@link ADD_SPELLINGS}, {@link CF_ADD_SPELLINGS}, {@link CF_DEL_SPELLINGS}). */
let addName: Buffer | undefined
const replyAt = new Int32Array(MAX_BATCH_ITEMS)
const outcomes = new Uint8Array(MAX_BATCH_ITEMS)
const cuckooOutcomes = new Int8Array(MAX_BATCH_ITEMS)

/** The spellings of BF.ADD whose log records a batch writes itself. */
const ADD_SPELLINGS = [Buffer.from('BF.ADD'), Buffer.from('bf.add')]
const CF_ADD_SPELLINGS = [Buffer.from('CF.ADD'), Buffer.from('cf.add')]
const CF_DEL_SPELLINGS = [Buffer.from('CF.DEL'), Buffer.from('cf.del')]

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
  if (
    count !== 0 &&
    mode !== CHECK &&
    mode !== CF_CHECK &&
    !batchKey.matches(argv.bytes(1), argv.start(1), argv.end(1))
  )
    settleBatch()
}

/**
 * BF.EXISTS key item, for a key holding `target`: joins the batch, its reply a `:0` until the
 * batch is settled (true); or, when it cannot join one, false once the batch is settled (the
 * caller answers it at once).
 */
export function checkLater(ctx: CommandContext, target: BloomEntry, argv: CommandArgs): boolean {
  if (!join(ctx, target, CHECK)) return false
  if (target.filter.stageCheck(argv, 2, count)) return staged(ctx, target, argv, CHECK)
  settleBatch()
  return false
}

/** BF.ADD key item: {@link checkLater} for an add (the caller adds it at once on false). */
export function addLater(ctx: CommandContext, target: BloomEntry, argv: CommandArgs): boolean {
  if (!joinWrite(ctx, target, argv, ADD, ADD_SPELLINGS)) return false
  if (target.filter.stageAdd(argv, 2, count)) return staged(ctx, target, argv, ADD)
  settleBatch()
  return false
}

/** CF.EXISTS key item: {@link checkLater} for a Cuckoo filter. */
export function cuckooCheckLater(ctx: CommandContext, target: CuckooEntry, argv: CommandArgs): boolean {
  if (!join(ctx, target, CF_CHECK)) return false
  if (target.filter.stageItem(argv, 2, count)) return staged(ctx, target, argv, CF_CHECK)
  settleBatch()
  return false
}

/**
 * CF.ADD key item: {@link addLater} for a Cuckoo filter. One that could not join a batch (false)
 * runs at once, the batch settled.
 */
export function cuckooAddLater(
  ctx: CommandContext,
  target: CuckooEntry,
  argv: CommandArgs,
  rules: CuckooAddRules,
): boolean {
  if (!joinCuckooWrite(ctx, target, argv, CF_ADD, CF_ADD_SPELLINGS)) return false
  addRules = rules
  if (target.filter.stageItem(argv, 2, count)) return staged(ctx, target, argv, CF_ADD)
  settleBatch()
  return false
}

/** What a batch of CF.ADD commands settles by (cuckoo.ts: its limits and the memory checks of a growth). */
export interface CuckooAddRules {
  /** Sub-filters at which CF.ADD answers "Maximum expansions reached". */
  readonly maxFilters: number
  /** The check a growing filter asks, valid until {@link endGrowthCheck} (cuckoo-budget.ts). */
  growthCheck(ctx: CommandContext, filter: CuckooFilter): GrowthCheck
  endGrowthCheck(): void
}

let addRules: CuckooAddRules | undefined

/** CF.DEL key item: {@link cuckooAddLater} for a delete. */
export function cuckooDelLater(ctx: CommandContext, target: CuckooEntry, argv: CommandArgs): boolean {
  if (!joinCuckooWrite(ctx, target, argv, CF_DEL, CF_DEL_SPELLINGS)) return false
  if (target.filter.stageItem(argv, 2, count)) return staged(ctx, target, argv, CF_DEL)
  settleBatch()
  return false
}

/**
 * {@link joinWrite} for CF.ADD and CF.DEL, which also need no `maxmemory`: a batch's add may grow
 * the filter and its delete compact it, and the memory that takes or frees decides whether redis
 * refuses the next command (-OOM) before it runs; here that would be known only at the settle.
 */
function joinCuckooWrite(
  ctx: CommandContext,
  target: CuckooEntry,
  argv: CommandArgs,
  kind: number,
  spellings: readonly Buffer[],
): boolean {
  if (ctx.server.config.maxmemory > 0) {
    settleBatch()
    return false
  }
  return joinWrite(ctx, target, argv, kind, spellings)
}

/** {@link join} for a write, which also needs a spelling the batch logs itself and no WATCHed key. */
function joinWrite(
  ctx: CommandContext,
  target: BloomEntry | CuckooEntry,
  argv: CommandArgs,
  kind: number,
  spellings: readonly Buffer[],
): boolean {
  const spelling = spellingOf(argv, spellings)
  if (spelling === undefined || ctx.server.watchedKeys.size !== 0) {
    settleBatch()
    return false
  }
  if (count !== 0 && spelling !== addName) settleBatch()
  if (!join(ctx, target, kind)) return false
  addName = spelling
  return true
}

/**
 * Settles the batch when this command cannot extend it; false when the command cannot start or
 * join one at all (the batch is settled then too).
 */
function join(ctx: CommandContext, target: BloomEntry | CuckooEntry, kind: number): boolean {
  if (count !== 0 && (target !== entry || ctx !== context || kind !== mode)) settleBatch()
  const client = ctx.client
  if (
    ctx !== reader ||
    client.transaction !== undefined ||
    client.replyMode !== undefined ||
    (client.kind !== 'normal' && client.kind !== 'master') ||
    target.expiresAt !== undefined
  ) {
    settleBatch()
    return false
  }
  return true
}

/** The command's item is staged: its reply becomes a placeholder (the first one opens the batch). */
function staged(ctx: CommandContext, target: BloomEntry | CuckooEntry, argv: CommandArgs, kind: number): true {
  if (count === 0) {
    context = ctx
    entry = target
    mode = kind
    if (kind !== CHECK && kind !== CF_CHECK) batchKey.remember(argv.bytes(1), argv.start(1), argv.end(1))
  }
  replyAt[count++] = ctx.client.reply.integerLater(settleBatch)
  return true
}

/** The command's name as the client spelled it, when it is one of `spellings` (each of 6 bytes); else undefined. */
function spellingOf(argv: CommandArgs, spellings: readonly Buffer[]): Buffer | undefined {
  const bytes = argv.bytes(0)
  const start = argv.start(0)
  if (argv.end(0) - start !== 6) return undefined
  outer: for (const spelling of spellings) {
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
  if (mode === CF_ADD) {
    cuckooAddAll(ctx, target as CuckooEntry, n)
    return
  }
  if (mode === ADD) addAll(ctx, target as BloomEntry, n)
  else if (mode === CHECK) (target as BloomEntry).filter.checkStaged(n, outcomes)
  else if (mode === CF_CHECK) (target as CuckooEntry).filter.checkStaged(n, outcomes)
  else cuckooDelAll(ctx, target as CuckooEntry, n)
  for (let j = 0; j < n; j++) reply.answer(replyAt[j]!, outcomes[j] === 1)
}

/** The batch's adds, and what BF.ADD does after adding an item (bloom.ts bfAdd), in order. */
function addAll(ctx: CommandContext, target: BloomEntry, n: number): void {
  const filter = target.filter
  filter.addStaged(n, outcomes)
  if (changed(ctx, target, n) === 0) return
  propagateStaged(ctx, target, n)
  watchHealth(ctx.server.log, target)
}

/** The batch's deletes, and what CF.DEL does after removing an item (cuckoo.ts cfDel), in order. */
function cuckooDelAll(ctx: CommandContext, target: CuckooEntry, n: number): void {
  target.filter.deleteStaged(n, outcomes)
  if (changed(ctx, target, n) !== 0) propagateStaged(ctx, target, n)
}

/**
 * The batch's CF.ADD commands, and what each does after its add (cuckoo.ts insertItems), in
 * order; a command that fails has its error in its reply's place, counted as dispatch counts a
 * failed command's.
 */
function cuckooAddAll(ctx: CommandContext, target: CuckooEntry, n: number): void {
  const filter = target.filter
  const rules = addRules!
  try {
    filter.addStaged(n, cuckooOutcomes, rules.growthCheck(ctx, filter), rules.maxFilters)
  } finally {
    rules.endGrowthCheck()
  }
  const reply = ctx.client.reply
  let shift = 0
  for (let j = 0; j < n; j++) {
    const outcome = cuckooOutcomes[j]!
    outcomes[j] = outcome === 1 ? 1 : 0
    if (outcome === 1) {
      reply.answer(replyAt[j]! + shift, true)
      continue
    }
    const text = outcome === -3 ? ERR.CF_MAX_EXPANSIONS : outcome === -2 ? ERR.CF_ALLOCATION_FAILURE : ERR.CF_FULL
    shift += reply.answerError(replyAt[j]! + shift, text)
    ctx.server.stats.countError(text)
    const command = ctx.server.commands.lookup(addName!, 0, addName!.length)
    if (command !== undefined) command.row.counts.failedCalls++
  }
  if (changed(ctx, target, n) !== 0) propagateStaged(ctx, target, n)
}

/** Counts the batch's changes (outcomes 1) against its key: how many. */
function changed(ctx: CommandContext, target: BloomEntry | CuckooEntry, n: number): number {
  let total = 0
  for (let j = 0; j < n; j++) total += outcomes[j]!
  if (total !== 0) keyspace(ctx).touch(target, total)
  return total
}

/** Propagates each staged command whose outcome is 1 as itself (`addName key item`), in order. */
function propagateStaged(ctx: CommandContext, target: BloomEntry | CuckooEntry, n: number): void {
  const filter = target.filter as { stagedItems(): ItemList }
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
}
