/**
 * The BF.EXISTS commands of one read, answered together. A pipelined client sends many in one
 * read; run one by one, each waits for its own cache misses in a large bitmap. Here each stages
 * its item in the Bloom kernel's scratch area (core/filter-batch.ts) and writes a `:0` whose
 * digit is set later (ReplyWriter.integerLater); one kernel call then answers them all, their
 * misses in flight together, as BF.MEXISTS's are.
 *
 * The answers are those of the commands run in turn. A batch holds consecutive checks of one
 * filter by one client, and it is answered before anything else can change that filter, use the
 * kernel's scratch area or send the client's output:
 *   - before any other command runs (dispatch.ts settles unless the command is a BF.EXISTS on
 *     its fast path, which nothing refuses);
 *   - before a check that does not join it (another filter or client, or one of the cases below);
 *   - when the read's commands are done (client.ts {@link endRead}), so nothing of it waits for
 *     timers, other clients or the next read;
 *   - before the client's output is taken or cut (the reply writer runs the settle it was given).
 * Checks join a batch only during a client's read, outside MULTI/EXEC, with replies on (CLIENT
 * REPLY), from an ordinary client, and on a key without a time to live (a lookup could expire it
 * meanwhile).
 */
import type { ReplyWriter } from '../protocol/reply-writer.js'
import type { ItemList } from '../core/filter-batch.js'
import { MAX_BATCH_ITEMS } from '../core/filter-batch.js'
import type { ClientSession } from './context.js'
import type { BloomEntry } from '../store/registry.js'

/** Whether a client's read is being run (client.ts): a batch is settled before it ends. */
let reading = false
let filter: BloomEntry['filter'] | undefined
let writer: ReplyWriter | undefined
let count = 0
const replyAt = new Int32Array(MAX_BATCH_ITEMS)
const found = new Uint8Array(MAX_BATCH_ITEMS)

/** A client's read begins: its BF.EXISTS commands may be answered together. */
export function beginRead(): void {
  reading = true
}

/** The read's commands are done: the checks that wait are answered now. */
export function endRead(): void {
  reading = false
  settleChecks()
}

/** Whether checks wait to be answered. */
export function checksPending(): boolean {
  return count !== 0
}

/**
 * BF.EXISTS's item `i` of `items` on `entry`'s filter, for `client`: added to the batch, its reply
 * a `:0` until the batch is settled (true); or, when it cannot join one, false once the waiting
 * checks are answered (the caller answers this one at once).
 */
export function checkLater(client: ClientSession, entry: BloomEntry, items: ItemList, i: number): boolean {
  const reply = client.reply
  if (count !== 0 && (entry.filter !== filter || reply !== writer)) settleChecks()
  if (!reading || client.transaction !== undefined || client.replyMode !== undefined || client.kind !== 'normal' ||
    entry.expiresAt !== undefined || !entry.filter.stageCheck(items, i, count)) {
    settleChecks()
    return false
  }
  filter = entry.filter
  writer = reply
  replyAt[count++] = reply.integerLater(settleChecks)
  return true
}

/** Answers the waiting checks: one kernel call, then each reply's digit. */
export function settleChecks(): void {
  if (count === 0) return
  const n = count
  const reply = writer!
  count = 0
  reply.settled()
  filter!.checkStaged(n, found)
  filter = undefined
  writer = undefined
  for (let j = 0; j < n; j++) reply.answer(replyAt[j]!, found[j] === 1)
}
