/**
 * The ACL check dispatch runs after authentication (redis 7.0 server.c processCommand →
 * ACLCheckAllPerm, acl.c ACLSelectorCheckCmd): the command (or subcommand, or an allowed first
 * argument), then the keys COMMAND GETKEYS finds (key-positions.ts: the key specs, a
 * subcommand's and MIGRATE's KEYS included), each for the access its own key spec needs (redis
 * ACLSelectorCheckKey; for BF.* and extensions, which no key spec documents, the command's flags),
 * then the channels of PUBLISH and the SUBSCRIBEs. A denial is logged in ACL LOG and answered with
 * redis's texts.
 */
import type { CommandContext, CommandEntry, CommandRow } from './context.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import type { AclUser } from '../state/acl/acl-user.js'
import { KEY_READ, KEY_WRITE, type AclSelector } from '../state/acl/acl-selector.js'
import type { AclDenial } from '../state/acl/acl-log.js'
import { keyPlanOf, planKeyPositions, type KeyPlan } from './key-positions.js'
import { globMatch } from './glob.js'
import { clientInfoLine } from './client-info.js'
import { ERR, aclChangedInExecText, nopermCommandText } from './reply-error.js'

/** A denial: why, and the argument (key or channel) it is about. */
export interface AclDenied {
  readonly reason: Exclude<AclDenial, 'auth'>
  readonly index: number
}

/** redis 7.0's channel arguments: from this position to the end (PUBLISH and SPUBLISH: one). */
const CHANNEL_ARGS: ReadonlyMap<string, { readonly last: number; readonly pattern: boolean }> = new Map([
  ['publish', { last: 1, pattern: false }],
  ['spublish', { last: 1, pattern: false }],
  ['subscribe', { last: -1, pattern: false }],
  ['ssubscribe', { last: -1, pattern: false }],
  ['psubscribe', { last: -1, pattern: true }],
])

/** redis ACLSelectorCheckKey's key_flags from a key spec's flags: read for access; write for insert, delete, update. */
function accessOf(flags: readonly string[]): number {
  let access = 0
  for (const flag of flags) {
    if (flag === 'access') access |= KEY_READ
    else if (flag === 'insert' || flag === 'delete' || flag === 'update') access |= KEY_WRITE
  }
  return access
}

/** The access of a plan's one range of keys, by plan. */
const RANGE_ACCESS = new WeakMap<KeyPlan, number>()

function rangeAccess(entry: CommandEntry, plan: Extract<KeyPlan, { kind: 'range' }>): number {
  let access = RANGE_ACCESS.get(plan)
  if (access !== undefined) return access
  if (!plan.derived) access = accessOf(plan.flags)
  else {
    // A module command's keys are RW ACCESS UPDATE in redis; bfs asks of a read-only one read access only.
    access = 0
    if (entry.spec.flags.includes('readonly') || entry.spec.flags.includes('write')) access |= KEY_READ
    if (entry.spec.flags.includes('write')) access |= KEY_WRITE
  }
  RANGE_ACCESS.set(plan, access)
  return access
}

/** The first key of the line the selector may not touch as its key spec asks, or undefined. */
function keyDenial(user: AclSelector, entry: CommandEntry, row: CommandRow, argv: CommandArgs): AclDenied | undefined {
  // Shard channels are keys to the table (their slots), channels to ACL (redis's not_key key specs).
  if (user.allKeys || entry.spec.flags.includes('pubsub')) return undefined
  const plan = keyPlanOf(entry, row)
  if (plan.kind === 'none') return undefined
  if (plan.kind === 'range') {
    const access = rangeAccess(entry, plan)
    const end = plan.last < 0 ? argv.length + plan.last : plan.last
    for (let i = plan.first; i <= end && i < argv.length; i += plan.step) {
      if (!keyAllowed(user, argv.get(i), access)) return { reason: 'key', index: i }
    }
    return undefined
  }
  for (const key of planKeyPositions(plan, argv.toArray())) {
    if (!keyAllowed(user, argv.get(key.pos), accessOf(key.flags))) return { reason: 'key', index: key.pos }
  }
  return undefined
}

function commandAllowed(user: AclSelector, entry: CommandEntry, row: CommandRow, argv: CommandArgs): boolean {
  if (user.allCommands || entry.allowedWithoutAuth || user.allowed.has(row.fullName)) return true
  const args = user.firstArgs.get(row.fullName)
  if (args === undefined || argv.length < 2) return false
  const index = row === entry.row ? 1 : 2
  if (argv.length <= index) return false
  const given = argv.get(index).toString('latin1').toLowerCase()
  return args.some((arg) => arg.toLowerCase() === given)
}

/**
 * Whether the user's root selector lets it run each of `entries` (undefined: none) on any key,
 * whatever the arguments: no check of those commands could refuse it.
 */
export function runsAnywhere(user: AclUser, entries: readonly (CommandEntry | undefined)[]): boolean {
  if (user.unrestricted) return true
  if (!user.allKeys) return false
  return entries.every(
    (entry) =>
      entry !== undefined && (user.allCommands || entry.allowedWithoutAuth || user.allowed.has(entry.row.fullName)),
  )
}

function keyAllowed(user: AclSelector, key: Buffer, access: number): boolean {
  for (const pattern of user.keys) {
    if ((pattern.flags & access) !== access) continue
    if (globMatch(pattern.pattern, key)) return true
  }
  return false
}

/**
 * Whether the user may read the key by its key patterns, its own or any selector's (the check a
 * RESP read of that key makes of them): what the HTTP views may show it.
 */
export function keyReadable(user: AclUser, key: Buffer): boolean {
  if (user.unrestricted) return true
  for (const selector of [user, ...user.selectors])
    if (selector.allKeys || keyAllowed(selector, key, KEY_READ)) return true
  return false
}

/** redis ACLCheckChannelAgainstList: a pattern subscription must be one of the selector's patterns as it is; a channel must match one. */
export function channelAllowed(user: AclSelector, channel: Buffer, pattern: boolean): boolean {
  for (const allowed of user.channels) {
    if (pattern ? allowed.equals(channel) : globMatch(allowed, channel)) return true
  }
  return false
}

/**
 * redis ACLCheckAllUserCommandPerm: allowed when the root selector or any other allows; else the
 * denial of highest reason (command < key < channel), the latest argument among equals.
 */
export function aclDenial(
  user: AclUser,
  entry: CommandEntry,
  row: CommandRow,
  argv: CommandArgs,
): AclDenied | undefined {
  let denied = selectorDenial(user, entry, row, argv)
  if (denied === undefined) return undefined
  for (const selector of user.selectors) {
    const other = selectorDenial(selector, entry, row, argv)
    if (other === undefined) return undefined
    const rank = REASON_RANK[other.reason] - REASON_RANK[denied.reason]
    if (rank > 0 || (rank === 0 && other.index > denied.index)) denied = other
  }
  return denied
}

/** redis's ACL_DENIED_* order. */
const REASON_RANK = { command: 1, key: 2, channel: 4 } as const

/** redis ACLSelectorCheckCmd for one selector; undefined when allowed. */
function selectorDenial(
  user: AclSelector,
  entry: CommandEntry,
  row: CommandRow,
  argv: CommandArgs,
): AclDenied | undefined {
  if (!commandAllowed(user, entry, row, argv)) return { reason: 'command', index: 0 }
  const keyDenied = keyDenial(user, entry, row, argv)
  if (keyDenied !== undefined) return keyDenied
  const channels = user.allChannels ? undefined : CHANNEL_ARGS.get(entry.spec.name.toLowerCase())
  if (channels !== undefined) {
    const end = channels.last < 0 ? argv.length - 1 : channels.last
    for (let i = 1; i <= end && i < argv.length; i++) {
      if (!channelAllowed(user, argv.get(i), channels.pattern)) return { reason: 'channel', index: i }
    }
  }
  return undefined
}

/** The reply to a denial (redis processCommand's rejectCommandFormat texts). */
export function denialText(denied: AclDenied, row: CommandRow): string {
  if (denied.reason === 'command') return nopermCommandText(row.fullName)
  return denied.reason === 'key' ? ERR.NOPERM_KEY : ERR.NOPERM_CHANNEL
}

/** Logs a denial in ACL LOG (redis addACLLogEntry). `object` defaults to the command or the argument. */
export function logDenial(ctx: CommandContext, reason: AclDenial, object: Buffer, username?: Buffer): void {
  const { client, server } = ctx
  server.acl.log.add(
    {
      reason,
      context: client.transaction !== undefined ? 'multi' : 'toplevel',
      object,
      username: username ?? Buffer.from(client.user, 'latin1'),
      time: Date.now(),
      clientInfo: clientInfoLine(ctx, client),
    },
    server.config['acllog-max-len'],
  )
}

/** Logs a denial of `argv`: its object is the command's full name, or the key or channel refused. */
export function logDenied(ctx: CommandContext, denied: AclDenied, row: CommandRow, argv: CommandArgs): void {
  logDenial(
    ctx,
    denied.reason,
    denied.reason === 'command' ? Buffer.from(row.fullName) : Buffer.from(argv.get(denied.index)),
  )
}

/**
 * Dispatch's check for a client whose server has restricted users: undefined when allowed,
 * else the error text (the denial logged). The master's link and the log's replay run anything.
 */
export function aclRefusal(
  ctx: CommandContext,
  entry: CommandEntry,
  row: CommandRow,
  argv: CommandArgs,
): string | undefined {
  const user = ctx.server.acl.get(ctx.client.user)
  if (user === undefined || user.unrestricted) return undefined
  const denied = aclDenial(user, entry, row, argv)
  if (denied === undefined) return undefined
  logDenied(ctx, denied, row, argv)
  return denialText(denied, row)
}

/** redis 7.0 multi.c execCommand's text for a queued command that may no longer run. */
export function aclExecText(denied: AclDenied): string {
  return aclChangedInExecText(denied.reason)
}
