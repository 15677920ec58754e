/**
 * CLUSTER COUNTKEYSINSLOT and CLUSTER GETKEYSINSLOT (redis 7.0 cluster.c): the keys of one hash
 * slot, which `redis-cli --cluster reshard` lists before it MIGRATEs them. Placeholder until the
 * per-slot key index lands; the CLUSTER container (cluster mode) names these handlers.
 */
import type { CommandContext } from './context.js'
import type { CommandArgs } from '../protocol/command-args.js'
import { ReplyError } from './reply-error.js'

/** CLUSTER COUNTKEYSINSLOT slot → the number of keys in the slot */
export function clusterCountkeysinslot(_ctx: CommandContext, _argv: CommandArgs): void {
  throw new ReplyError('ERR CLUSTER COUNTKEYSINSLOT is not built yet')
}

/** CLUSTER GETKEYSINSLOT slot count → at most count keys of the slot */
export function clusterGetkeysinslot(_ctx: CommandContext, _argv: CommandArgs): void {
  throw new ReplyError('ERR CLUSTER GETKEYSINSLOT is not built yet')
}
