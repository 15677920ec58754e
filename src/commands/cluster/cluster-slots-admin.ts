/**
 * The CLUSTER subcommands that change the slot map and the epochs (redis 7.0.15 cluster.c
 * clusterCommand): ADDSLOTS, DELSLOTS, ADDSLOTSRANGE, DELSLOTSRANGE, FLUSHSLOTS, SETSLOT,
 * BUMPEPOCH, SET-CONFIG-EPOCH, SAVECONFIG. Each changes this node's table only; the pull spreads
 * what its owner claims (docs/CLUSTER.md).
 */
import { keyspace, type CommandContext } from '../kernel/context.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import {
  ERR,
  ReplyError,
  dontKnowNodeText,
  invalidConfigEpochText,
  nodesConfSaveText,
  slotHasKeysText,
  slotOwnerText,
  slotRangeReversedText,
  slotRefusalText,
  unknownNodeText,
  wrongArityText,
} from '../kernel/reply-error.js'
import { parseInteger } from '../kernel/args.js'
import { CLUSTER_SLOTS } from '../../core/key-slot.js'
import type { ClusterState } from '../../cluster/cluster-state.js'
import { clusterOf, namedNode } from './cluster-view.js'

/** redis getSlotOrReply. */
function slotArg(argv: CommandArgs, index: number): number {
  const slot = parseInteger(argv.get(index))
  if (slot === undefined || slot < 0 || slot >= CLUSTER_SLOTS) throw new ReplyError(ERR.INVALID_OR_OUT_OF_RANGE_SLOT)
  return slot
}

/** redis checkSlotAssignmentsOrReply over [start, end], marking each slot in `seen`. */
function checkSlots(state: ClusterState, seen: Uint8Array, del: boolean, start: number, end: number): void {
  for (let slot = start; slot <= end; slot++) {
    const owner = state.slotOwner(slot)
    if (del && owner === undefined) throw new ReplyError(slotRefusalText(slot, 'unassigned'))
    if (!del && owner !== undefined) throw new ReplyError(slotRefusalText(slot, 'busy'))
    if (seen[slot]++ === 1) throw new ReplyError(slotRefusalText(slot, 'repeated'))
  }
}

/** redis clusterUpdateSlots: each marked slot added to myself (or deleted), its importing state cleared. */
function updateSlots(ctx: CommandContext, seen: Uint8Array, del: boolean): void {
  const state = clusterOf(ctx)
  for (let slot = 0; slot < CLUSTER_SLOTS; slot++) {
    if (seen[slot] === 0) continue
    state.importingFrom.delete(slot)
    if (del) state.migratingTo.delete(slot)
    state.setSlotOwner(slot, del ? undefined : state.myself)
  }
  state.changed()
  ctx.client.reply.simple('OK')
}

function addOrDelSlots(ctx: CommandContext, argv: CommandArgs, del: boolean): void {
  const state = clusterOf(ctx)
  for (let i = 2; i < argv.length; i++) slotArg(argv, i)
  const seen = new Uint8Array(CLUSTER_SLOTS)
  for (let i = 2; i < argv.length; i++) {
    const slot = slotArg(argv, i)
    checkSlots(state, seen, del, slot, slot)
  }
  updateSlots(ctx, seen, del)
}

function addOrDelRanges(ctx: CommandContext, argv: CommandArgs, del: boolean): void {
  if (argv.length % 2 === 1)
    throw new ReplyError(wrongArityText(del ? 'cluster|delslotsrange' : 'cluster|addslotsrange'))
  const state = clusterOf(ctx)
  const seen = new Uint8Array(CLUSTER_SLOTS)
  for (let i = 2; i < argv.length; i += 2) {
    const start = slotArg(argv, i)
    const end = slotArg(argv, i + 1)
    if (start > end) throw new ReplyError(slotRangeReversedText(start, end))
    checkSlots(state, seen, del, start, end)
  }
  updateSlots(ctx, seen, del)
}

/** CLUSTER ADDSLOTS slot [slot ...] → +OK */
export function clusterAddslots(ctx: CommandContext, argv: CommandArgs): void {
  addOrDelSlots(ctx, argv, false)
}

/** CLUSTER DELSLOTS slot [slot ...] → +OK */
export function clusterDelslots(ctx: CommandContext, argv: CommandArgs): void {
  addOrDelSlots(ctx, argv, true)
}

/** CLUSTER ADDSLOTSRANGE start end [start end ...] → +OK */
export function clusterAddslotsrange(ctx: CommandContext, argv: CommandArgs): void {
  addOrDelRanges(ctx, argv, false)
}

/** CLUSTER DELSLOTSRANGE start end [start end ...] → +OK */
export function clusterDelslotsrange(ctx: CommandContext, argv: CommandArgs): void {
  addOrDelRanges(ctx, argv, true)
}

/** CLUSTER FLUSHSLOTS → +OK: myself owns no slot (its database must be empty) */
export function clusterFlushslots(ctx: CommandContext): void {
  const state = clusterOf(ctx)
  if (keyspace(ctx).size !== 0) throw new ReplyError(ERR.FLUSHSLOTS_NOT_EMPTY)
  for (const slot of state.slotsOf(state.myself)) state.setSlotOwner(slot, undefined)
  state.changed()
  ctx.client.reply.simple('OK')
}

/** CLUSTER BUMPEPOCH → +BUMPED n or +STILL n */
export function clusterBumpepoch(ctx: CommandContext): void {
  const state = clusterOf(ctx)
  const bumped = state.bumpEpochWithoutConsensus()
  ctx.client.reply.simple(`${bumped ? 'BUMPED' : 'STILL'} ${state.myself.configEpoch}`)
}

/** CLUSTER SET-CONFIG-EPOCH epoch → +OK, on a node that knows no other and has epoch 0 */
export function clusterSetConfigEpoch(ctx: CommandContext, argv: CommandArgs): void {
  const state = clusterOf(ctx)
  const epoch = parseInteger(argv.get(2))
  if (epoch === undefined) throw new ReplyError(ERR.NOT_INTEGER)
  if (epoch < 0) throw new ReplyError(invalidConfigEpochText(epoch))
  if (state.nodes.size > 1) throw new ReplyError(ERR.EPOCH_WITH_OTHER_NODES)
  if (state.myself.configEpoch !== 0) throw new ReplyError(ERR.EPOCH_ALREADY_SET)
  state.myself.configEpoch = epoch
  ctx.server.log.warning(`configEpoch set to ${epoch} via CLUSTER SET-CONFIG-EPOCH`)
  if (state.currentEpoch < epoch) state.currentEpoch = epoch
  state.changed()
  ctx.client.reply.simple('OK')
}

/** CLUSTER SAVECONFIG → +OK once nodes.conf is written */
export function clusterSaveconfig(ctx: CommandContext): void {
  try {
    clusterOf(ctx).saveConfig()
  } catch (error) {
    throw new ReplyError(nodesConfSaveText((error as Error).message))
  }
  ctx.client.reply.simple('OK')
}

/** SETSLOT's node argument: a known master (`unknown` names redis's text for an unknown id). */
function targetMaster(state: ClusterState, argv: CommandArgs, unknown: (id: string) => string) {
  const id = argv.get(4).toString('utf8')
  const node = state.nodeById(id)
  if (node === undefined) throw new ReplyError(unknown(id))
  if (!node.isMaster) throw new ReplyError(ERR.TARGET_NOT_MASTER)
  return node
}

/** CLUSTER SETSLOT slot IMPORTING|MIGRATING node-id | STABLE | NODE node-id → +OK */
export function clusterSetslot(ctx: CommandContext, argv: CommandArgs): void {
  const state = clusterOf(ctx)
  if (!state.myself.isMaster) throw new ReplyError(ERR.SETSLOT_ON_REPLICA)
  const slot = slotArg(argv, 2)
  const action = argv.get(3).toString('latin1').toLowerCase()
  if (action === 'migrating' && argv.length === 5) {
    if (state.slotOwner(slot) !== state.myself) throw new ReplyError(slotOwnerText(slot, 'not-mine'))
    state.migratingTo.set(slot, targetMaster(state, argv, dontKnowNodeText))
  } else if (action === 'importing' && argv.length === 5) {
    if (state.slotOwner(slot) === state.myself) throw new ReplyError(slotOwnerText(slot, 'mine'))
    state.importingFrom.set(slot, targetMaster(state, argv, dontKnowNodeText))
  } else if (action === 'stable' && argv.length === 4) {
    state.importingFrom.delete(slot)
    state.migratingTo.delete(slot)
  } else if (action === 'node' && argv.length === 5) {
    setSlotNode(ctx, state, slot, targetMaster(state, argv, unknownNodeText))
  } else {
    throw new ReplyError(ERR.SETSLOT_SYNTAX)
  }
  state.changed()
  ctx.client.reply.simple('OK')
}

/**
 * SETSLOT NODE (redis 7.0 cluster.c): refused while myself still holds keys of a slot it gives
 * away; a master left without slots becomes a replica of the new owner; the importing node takes
 * a new config epoch without consensus, so that its claim wins everywhere.
 */
function setSlotNode(ctx: CommandContext, state: ClusterState, slot: number, node: ReturnType<typeof namedNode>): void {
  const myself = state.myself
  const keys = state.host.countKeysInSlot(slot)
  if (state.slotOwner(slot) === myself && node !== myself && keys !== 0) {
    throw new ReplyError(slotHasKeysText(slot))
  }
  if (keys === 0) state.migratingTo.delete(slot)
  const wasMine = state.slotOwner(slot) === myself
  state.setSlotOwner(slot, node)
  if (wasMine && node !== myself && myself.slotCount === 0) state.followWinner(node)
  if (node === myself && state.importingFrom.has(slot)) {
    if (state.bumpEpochWithoutConsensus()) ctx.server.log.warning(`configEpoch updated after importing slot ${slot}`)
    state.importingFrom.delete(slot)
  }
}
