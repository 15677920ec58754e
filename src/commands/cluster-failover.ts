/**
 * CLUSTER FAILOVER [FORCE|TAKEOVER] (redis 7.0 cluster.c): placeholder until the failover work
 * lands; the CLUSTER container (cluster.ts) names this handler.
 */
import type { CommandContext } from './context.js'
import type { CommandArgs } from '../protocol/command-args.js'
import { ReplyError } from './reply-error.js'

/** CLUSTER FAILOVER [FORCE|TAKEOVER] → +OK */
export function clusterFailover(_ctx: CommandContext, _argv: CommandArgs): void {
  throw new ReplyError('ERR CLUSTER FAILOVER is not built yet')
}
