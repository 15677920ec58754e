/**
 * The CLUSTER container and the cluster connection commands (READONLY, READWRITE, ASKING), with
 * redis 7.0.15's arities and CLUSTER HELP's lines in its order (cluster.c clusterCommand). Outside
 * cluster mode every CLUSTER subcommand answers redis's "This instance has cluster support
 * disabled". The handlers live in cluster-view.ts (what is read), cluster-slots-admin.ts (the slot
 * map and epochs), cluster-membership.ts (who is in the cluster), cluster-keys.ts (keys of a slot)
 * and cluster-failover.ts.
 */
import type { CommandContext, CommandHandler, CommandSpec, SubcommandSpec } from '../kernel/context.js'
import { containerOnly, helpSubcommand } from '../kernel/table.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { ERR, ReplyError } from '../kernel/reply-error.js'
import {
  clusterCountFailureReports,
  clusterInfo,
  clusterKeyslot,
  clusterLinks,
  clusterMyid,
  clusterNodes,
  clusterReplicas,
  clusterShards,
  clusterSlots,
} from './cluster-view.js'
import {
  clusterAddslots,
  clusterAddslotsrange,
  clusterBumpepoch,
  clusterDelslots,
  clusterDelslotsrange,
  clusterFlushslots,
  clusterSaveconfig,
  clusterSetConfigEpoch,
  clusterSetslot,
} from './cluster-slots-admin.js'
import {
  asking,
  clusterForget,
  clusterMeet,
  clusterReplicate,
  clusterReset,
  readonly,
  readwrite,
} from './cluster-membership.js'
import { clusterCountkeysinslot, clusterGetkeysinslot } from './cluster-keys.js'
import { clusterFailover } from './cluster-failover.js'

/** A subcommand's handler, run only in cluster mode. */
function inClusterMode(handler: CommandHandler): CommandHandler {
  return (ctx: CommandContext, argv: CommandArgs) => {
    if (ctx.server.cluster === undefined) throw new ReplyError(ERR.CLUSTER_DISABLED)
    handler(ctx, argv)
  }
}

type Row = [name: string, arity: number, help: readonly string[] | undefined, handler: CommandHandler]

// In CLUSTER HELP's order (redis 7.0.15 cluster.c); SLAVES has no help lines.
const ROWS: readonly Row[] = [
  ['ADDSLOTS', -3, ['ADDSLOTS <slot> [<slot> ...]', '    Assign slots to current node.'], clusterAddslots],
  [
    'ADDSLOTSRANGE',
    -4,
    [
      'ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]',
      '    Assign slots which are between <start-slot> and <end-slot> to current node.',
    ],
    clusterAddslotsrange,
  ],
  ['BUMPEPOCH', 2, ['BUMPEPOCH', '    Advance the cluster config epoch.'], clusterBumpepoch],
  [
    'COUNT-FAILURE-REPORTS',
    3,
    ['COUNT-FAILURE-REPORTS <node-id>', '    Return number of failure reports for <node-id>.'],
    clusterCountFailureReports,
  ],
  [
    'COUNTKEYSINSLOT',
    3,
    ['COUNTKEYSINSLOT <slot>', '    Return the number of keys in <slot>.'],
    clusterCountkeysinslot,
  ],
  [
    'DELSLOTS',
    -3,
    ['DELSLOTS <slot> [<slot> ...]', '    Delete slots information from current node.'],
    clusterDelslots,
  ],
  [
    'DELSLOTSRANGE',
    -4,
    [
      'DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]',
      '    Delete slots information which are between <start-slot> and <end-slot> from current node.',
    ],
    clusterDelslotsrange,
  ],
  [
    'FAILOVER',
    -2,
    ['FAILOVER [FORCE|TAKEOVER]', '    Promote current replica node to being a master.'],
    clusterFailover,
  ],
  ['FORGET', 3, ['FORGET <node-id>', '    Remove a node from the cluster.'], clusterForget],
  [
    'GETKEYSINSLOT',
    4,
    ['GETKEYSINSLOT <slot> <count>', '    Return key names stored by current node in a slot.'],
    clusterGetkeysinslot,
  ],
  ['FLUSHSLOTS', 2, ['FLUSHSLOTS', '    Delete current node own slots information.'], clusterFlushslots],
  ['INFO', 2, ['INFO', '    Return information about the cluster.'], clusterInfo],
  ['KEYSLOT', 3, ['KEYSLOT <key>', '    Return the hash slot for <key>.'], clusterKeyslot],
  ['MEET', -4, ['MEET <ip> <port> [<bus-port>]', '    Connect nodes into a working cluster.'], clusterMeet],
  ['MYID', 2, ['MYID', '    Return the node id.'], clusterMyid],
  [
    'NODES',
    2,
    [
      'NODES',
      '    Return cluster configuration seen by node. Output format:',
      '    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...',
    ],
    clusterNodes,
  ],
  ['REPLICATE', 3, ['REPLICATE <node-id>', '    Configure current node as replica to <node-id>.'], clusterReplicate],
  ['RESET', -2, ['RESET [HARD|SOFT]', '    Reset current node (default: soft).'], clusterReset],
  ['SET-CONFIG-EPOCH', 3, ['SET-CONFIG-EPOCH <epoch>', '    Set config epoch of current node.'], clusterSetConfigEpoch],
  [
    'SETSLOT',
    -4,
    ['SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)', '    Set slot state.'],
    clusterSetslot,
  ],
  ['REPLICAS', 3, ['REPLICAS <node-id>', '    Return <node-id> replicas.'], clusterReplicas],
  ['SAVECONFIG', 2, ['SAVECONFIG', '    Force saving cluster configuration on disk.'], clusterSaveconfig],
  [
    'SLOTS',
    2,
    [
      'SLOTS',
      '    Return information about slots range mappings. Each range is made of:',
      '    start, end, master and replicas IP addresses, ports and ids',
    ],
    clusterSlots,
  ],
  [
    'SHARDS',
    2,
    ['SHARDS', '    Return information about slot range mappings and the nodes associated with them.'],
    clusterShards,
  ],
  [
    'LINKS',
    2,
    [
      'LINKS',
      '    Return information about all network links between this node and its peers.',
      '    Output format is an array where each array element is a map containing attributes of a link',
    ],
    clusterLinks,
  ],
  ['SLAVES', 3, undefined, clusterReplicas],
]

const PRINT_HELP = ['HELP', '    Prints this help.']

const CLUSTER_SUBCOMMANDS: readonly SubcommandSpec[] = [
  ...ROWS.map(([name, arity, help, handler]): SubcommandSpec => ({
    name,
    arity,
    ...(help === undefined ? {} : { help }),
    handler: inClusterMode(handler),
  })),
  { ...helpSubcommand(PRINT_HELP), arity: 2, handler: inClusterMode(helpSubcommand(PRINT_HELP).handler) },
]

/** CLUSTER, READONLY, READWRITE and ASKING (redis 7.0 commands.def). */
export const CLUSTER_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'CLUSTER',
    arity: -2,
    flags: ['stale'],
    keys: [0, 0, 0],
    group: 'cluster',
    since: '3.0.0',
    summary: 'A container for cluster commands',
    handler: containerOnly,
    subcommands: CLUSTER_SUBCOMMANDS,
  },
  {
    name: 'READONLY',
    arity: 1,
    flags: ['fast', 'loading', 'stale'],
    keys: [0, 0, 0],
    group: 'cluster',
    since: '3.0.0',
    summary: 'Enables read queries for a connection to a cluster replica node',
    handler: readonly,
  },
  {
    name: 'READWRITE',
    arity: 1,
    flags: ['fast', 'loading', 'stale'],
    keys: [0, 0, 0],
    group: 'cluster',
    since: '3.0.0',
    summary: 'Disables read queries for a connection to a cluster replica node',
    handler: readwrite,
  },
  {
    name: 'ASKING',
    arity: 1,
    flags: ['fast'],
    keys: [0, 0, 0],
    group: 'cluster',
    since: '3.0.0',
    summary: 'Sent by cluster clients after an -ASK redirect',
    handler: asking,
  },
]
