/**
 * CLUSTER COUNTKEYSINSLOT and CLUSTER GETKEYSINSLOT (redis 7.0.15 cluster.c clusterCommand): the
 * keys of one hash slot, which `redis-cli --cluster reshard` lists before it MIGRATEs them. They
 * read the per-slot key index (store/slot-index.ts) of the client's database, which cluster mode
 * turns on for database 0; without it they walk the keys (the same answers, slower).
 */
import { keyspace, type CommandContext } from '../kernel/context.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { ERR, ReplyError } from '../kernel/reply-error.js'
import { parseInteger } from '../kernel/args.js'
import { CLUSTER_SLOTS } from '../../core/key-slot.js'
import { FilterRegistry } from '../../store/registry.js'

/** getLongLongFromObjectOrReply: an integer, or "ERR value is not an integer or out of range". */
function integerArg(argv: CommandArgs, index: number): number {
  const value = parseInteger(argv.get(index))
  if (value === undefined) throw new ReplyError(ERR.NOT_INTEGER)
  return value
}

/** CLUSTER COUNTKEYSINSLOT slot → the number of keys in the slot, or "ERR Invalid slot" */
export function clusterCountkeysinslot(ctx: CommandContext, argv: CommandArgs): void {
  const slot = integerArg(argv, 2)
  if (slot < 0 || slot >= CLUSTER_SLOTS) throw new ReplyError(ERR.INVALID_SLOT)
  ctx.client.reply.integer(keyspace(ctx).countKeysInSlot(slot))
}

/** CLUSTER GETKEYSINSLOT slot count → at most count keys of the slot, or "ERR Invalid slot or number of keys" */
export function clusterGetkeysinslot(ctx: CommandContext, argv: CommandArgs): void {
  const slot = integerArg(argv, 2)
  const max = integerArg(argv, 3)
  if (slot < 0 || slot >= CLUSTER_SLOTS || max < 0) throw new ReplyError(ERR.INVALID_SLOT_OR_COUNT)
  const names = keyspace(ctx).keysInSlot(slot, max)
  const reply = ctx.client.reply
  reply.array(names.length)
  for (const name of names) reply.bulk(FilterRegistry.bytesOf(name))
}
