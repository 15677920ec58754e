/**
 * Cluster mode's refusal in dispatch (redis 7.0 cluster.c getNodeByQuery and
 * clusterRedirectClient, as processCommand calls them): a command whose keys hash to a slot this
 * node does not serve is answered `-MOVED slot ip:port`; `-ASK` while the slot migrates and the key
 * is gone; `-CROSSSLOT` for keys of different slots; `-TRYAGAIN` for several keys of an open slot
 * of which some are missing; `-CLUSTERDOWN` when the slot is unowned or the cluster is down. A
 * replica serves reads of its master's slots on READONLY connections; an importing slot serves a
 * command after ASKING (or one with the `asking` flag, RESTORE-ASKING). The master's link and the
 * log's replay are never redirected; a queued command is checked when queued, EXEC over them all.
 * Key positions come from the command's key specs (key-positions.ts), planned once per row; a
 * row whose keys no single range gives (MIGRATE's migrateGetKeys rule among them) asks
 * key-positions.ts for the line's keys. A shard channel (SPUBLISH, SSUBSCRIBE, SUNSUBSCRIBE) is
 * routed as a key, though its key spec says `not_key` (redis getKeysFromCommand takes it from the
 * legacy range): -MOVED to its slot's owner, -CROSSSLOT for channels of several slots; never
 * -ASK or -TRYAGAIN (no key is looked up: the channel stays on the owner until the slot has
 * moved), served while the cluster is down (`cluster-allow-pubsubshard-when-down yes`), and on a
 * replica of the owner without READONLY.
 */
import { keyspace, type CommandContext, type CommandEntry, type CommandRow } from './context.js'
import { rowOf } from './table.js'
import { CommandArgs } from '../../protocol/command-args.js'
import { commandKeyPositions } from './key-positions.js'
import { COMMAND_DOCS } from '../data/command-docs/by-name.js'
import { keyHashSlot } from '../../core/key-slot.js'
import { FilterRegistry } from '../../store/registry.js'
import type { ClusterState } from '../../cluster/cluster-state.js'
import { ERR, askText, movedText } from './reply-error.js'

/** How a row's keys are found: none, a [first, last, step] range, or the key specs in full. */
type KeyPlan =
  | { readonly kind: 'none' }
  | { readonly kind: 'range'; readonly first: number; readonly last: number; readonly step: number }
  | { readonly kind: 'specs' }

const NONE: KeyPlan = { kind: 'none' }
const SPECS: KeyPlan = { kind: 'specs' }
const plans = new WeakMap<CommandRow, KeyPlan>()

/** The plan of a row: its one index+range key spec (or an undocumented row's keys) as a range. */
function planOf(entry: CommandEntry, row: CommandRow): KeyPlan {
  let plan = plans.get(row)
  if (plan !== undefined) return plan
  const specs = COMMAND_DOCS.get(row.fullName)?.key_specs
  if (specs === undefined || specs.length === 0) {
    const keys = row === entry.row ? entry.spec.keys : undefined
    plan = keys === undefined || keys[0] === 0 ? NONE : { kind: 'range', first: keys[0], last: keys[1], step: keys[2] }
  } else if (
    specs.length === 1 &&
    specs[0]!.begin_search.type === 'index' &&
    specs[0]!.find_keys.type === 'range' &&
    Number(specs[0]!.find_keys.spec.limit) === 0
  ) {
    const first = Number(specs[0]!.begin_search.spec.index)
    const lastkey = Number(specs[0]!.find_keys.spec.lastkey)
    plan = {
      kind: 'range',
      first,
      last: lastkey < 0 ? lastkey : first + lastkey,
      step: Number(specs[0]!.find_keys.spec.keystep),
    }
  } else plan = SPECS
  plans.set(row, plan)
  return plan
}

/** The key positions of a command line by its plan. */
function keyPositions(ctx: CommandContext, entry: CommandEntry, row: CommandRow, argv: CommandArgs): number[] {
  const plan = planOf(entry, row)
  if (plan.kind === 'none') return []
  if (plan.kind === 'specs')
    return (commandKeyPositions(ctx.server.commands, argv.toArray()) ?? []).map((key) => key.pos)
  const last = plan.last < 0 ? argv.length + plan.last : plan.last
  const positions: number[] = []
  for (let pos = plan.first; pos <= last && pos < argv.length; pos += Math.max(plan.step, 1)) positions.push(pos)
  return positions
}

/** What the keys of a request (one command, or EXEC's queue) say about where it may run. */
interface Query {
  slot: number
  firstKey: Buffer | undefined
  multipleKeys: boolean
  crossSlot: boolean
  /** The first key's slot has no owner (redis answers that before looking at more keys). */
  unbound: boolean
  missing: number
  existing: number
  writes: boolean
  /** A shard channel command (redis is_pubsubshard): its channels are looked up as no key. */
  shardChannels: boolean
}

/** The commands whose arguments are shard channels (redis getNodeByQuery's is_pubsubshard). */
const SHARD_CHANNEL_COMMANDS = new Set(['SPUBLISH', 'SSUBSCRIBE', 'SUNSUBSCRIBE'])

/** Adds one command line's keys to the query; counts missing keys when the slot is open here. */
function addKeys(ctx: CommandContext, state: ClusterState, query: Query, entry: CommandEntry, argv: CommandArgs): void {
  const row = rowOf(entry, argv)
  if (row === undefined || query.crossSlot || query.unbound) return
  query.writes ||= entry.writes
  for (const pos of keyPositions(ctx, entry, row, argv)) {
    const bytes = argv.bytes(pos)
    const slot = keyHashSlot(bytes, argv.start(pos), argv.end(pos))
    if (query.firstKey === undefined) {
      query.firstKey = argv.get(pos)
      query.slot = slot
      if (state.slotOwner(slot) === undefined) {
        query.unbound = true
        return
      }
    } else if (!query.firstKey.equals(argv.get(pos))) {
      if (slot !== query.slot) {
        query.crossSlot = true
        return
      }
      query.multipleKeys = true
    }
    if (!query.shardChannels && (state.migratingTo.has(slot) || state.importingFrom.has(slot))) {
      if (keyspace(ctx).has(FilterRegistry.nameOf(bytes, argv.start(pos), argv.end(pos)))) query.existing++
      else query.missing++
    }
  }
}

/** The query of a command, or of EXEC's queued commands. */
function queryOf(ctx: CommandContext, state: ClusterState, entry: CommandEntry, argv: CommandArgs): Query {
  const query: Query = {
    slot: 0,
    firstKey: undefined,
    multipleKeys: false,
    crossSlot: false,
    unbound: false,
    missing: 0,
    existing: 0,
    writes: false,
    shardChannels: SHARD_CHANNEL_COMMANDS.has(entry.spec.name),
  }
  if (!entry.isExec) addKeys(ctx, state, query, entry, argv)
  else
    for (const queued of ctx.client.transaction?.queued ?? [])
      addKeys(ctx, state, query, queued.entry, CommandArgs.of(queued.argv))
  return query
}

/**
 * The common case without allocating: a command of one key (or none) whose slot this node owns,
 * stable, while the cluster is ok. Anything else takes the full query.
 */
function servedAtOnce(state: ClusterState, entry: CommandEntry, argv: CommandArgs): boolean {
  if (entry.isExec || (entry.subcommands !== undefined && argv.length >= 2)) return false
  const plan = planOf(entry, entry.row)
  if (plan.kind === 'none') return true
  if (plan.kind !== 'range' || plan.first !== plan.last || plan.first >= argv.length || state.state !== 'ok')
    return false
  return state.servesAtOnce(keyHashSlot(argv.bytes(plan.first), argv.start(plan.first), argv.end(plan.first)))
}

/** The refusal text for a command in cluster mode, or undefined when this node serves it. */
export function clusterRefusal(ctx: CommandContext, entry: CommandEntry, argv: CommandArgs): string | undefined {
  const client = ctx.client
  if (client.user === '') return undefined
  const asking = client.asking === true
  // redis resetClient: ASKING lasts one command (the whole transaction inside MULTI).
  if (asking && client.transaction === undefined && entry.row.fullName !== 'asking') client.asking = false
  const state = ctx.server.cluster!
  if (servedAtOnce(state, entry, argv)) return undefined
  const query = queryOf(ctx, state, entry, argv)
  if (query.unbound) return ERR.CLUSTERDOWN_UNBOUND
  if (query.crossSlot) return ERR.CROSSSLOT
  if (query.firstKey === undefined) return undefined
  return redirection(ctx, state, entry, query, asking)
}

/** getNodeByQuery's decision once the slot is known. */
function redirection(
  ctx: CommandContext,
  state: ClusterState,
  entry: CommandEntry,
  query: Query,
  asking: boolean,
): string | undefined {
  const slot = query.slot
  const owner = state.slotOwner(slot)
  if (owner === undefined) return ERR.CLUSTERDOWN_UNBOUND
  const myself = state.myself
  const migrating = owner === myself && state.migratingTo.has(slot)
  const importing = !migrating && state.importingFrom.has(slot)
  // cluster-allow-pubsubshard-when-down is yes in bfs: shard channels are served while down.
  if (state.state !== 'ok' && !query.shardChannels) {
    if (!ctx.server.config['cluster-allow-reads-when-down']) return ERR.CLUSTERDOWN
    if (query.writes) return ERR.CLUSTERDOWN_READS_ONLY
  }
  if ((migrating || importing) && entry.row.fullName === 'migrate') return undefined
  if (migrating && query.missing > 0) {
    if (query.existing > 0) return ERR.TRYAGAIN
    const target = state.migratingTo.get(slot)!
    return askText(slot, `${target.ip}:${state.clientPort(target, ctx.client.tls !== false)}`)
  }
  if (importing && (asking || entry.spec.flags.includes('asking'))) {
    return query.multipleKeys && query.missing > 0 ? ERR.TRYAGAIN : undefined
  }
  if (
    (ctx.client.clusterReadonly === true || query.shardChannels) &&
    !query.writes &&
    !myself.isMaster &&
    myself.masterId === owner.id
  )
    return undefined
  // redis clusterRedirectClient: under tls-cluster a plaintext client is sent to the plaintext port.
  return owner === myself
    ? undefined
    : movedText(slot, `${owner.ip}:${state.clientPort(owner, ctx.client.tls !== false)}`)
}
