/**
 * Who an HTTP request runs as: HTTP Basic credentials name any ACL user (checked as AUTH checks
 * them: on, password or nopass; a failure is in ACL LOG), no credentials the default user while it
 * needs no password. That user's permissions apply: /add= and /contain= through dispatch's own
 * check (BF.ADD, BF.EXISTS), /metrics as INFO, the status page and its listing as SCAN (the
 * commands themselves, whatever rename-command called them; a check that cannot be made refuses); a
 * denial is in ACL LOG, and answered 403 with the NOPERM text. The listings and /metrics' series per
 * filter show only the keys the user may read.
 */
import type { CommandContext } from '../commands/kernel/context.js'
import type { AclUser } from '../commands/state/acl/acl-user.js'
import { DEFAULT_USER } from '../commands/state/acl/acl-users.js'
import { aclDenial, denialText, keyReadable, logDenial, logDenied } from '../commands/kernel/acl-check.js'
import { FilterRegistry } from '../store/registry.js'
import { rowOf } from '../commands/kernel/table.js'
import { CommandArgs } from '../protocol/command-args.js'
import { nopermCommandText } from '../protocol/error-texts.js'

const AUTH = Buffer.from('AUTH')

/** The user a request runs as; undefined when it must authenticate (401). */
export function requestUser(ctx: CommandContext, authorization: string | undefined): AclUser | undefined {
  const acl = ctx.server.acl
  if (authorization === undefined) return acl.defaultOpen ? acl.get(DEFAULT_USER) : undefined
  const match = /^basic +([A-Za-z0-9+/=]+) *$/i.exec(authorization)
  if (match === null) return undefined
  const credentials = Buffer.from(match[1]!, 'base64')
  const colon = credentials.indexOf(0x3a)
  if (colon < 0) return undefined
  const name = credentials.subarray(0, colon)
  const user = acl.authenticate(name, credentials.subarray(colon + 1))
  if (user === undefined) logDenial(ctx, 'auth', AUTH, name)
  return user
}

/**
 * Whether the session's user may run `argv` (INFO for /metrics, SCAN for the listings), the command
 * named by its own name (renamed or disabled, it is still the permission asked): undefined, or the
 * NOPERM text (the denial logged), as dispatch would answer the command.
 */
export function requestRefusal(ctx: CommandContext, argv: readonly Buffer[]): string | undefined {
  const user = ctx.server.acl.get(ctx.client.user)
  if (user?.unrestricted === true) return undefined
  const name = argv[0]!.toString('latin1').toLowerCase()
  const args = CommandArgs.of(argv)
  const entry = ctx.server.commands.original(name)
  const row = entry === undefined ? undefined : rowOf(entry, args)
  // No user, no such command: nothing allows the request.
  if (user === undefined || entry === undefined || row === undefined) return nopermCommandText(name)
  const denied = aclDenial(user, entry, row, args)
  if (denied === undefined) return undefined
  logDenied(ctx, denied, row, args)
  return denialText(denied, row)
}

/**
 * Which filters the session's user may see in the listings and /metrics' series per filter: the
 * keys it may read (undefined: every key). Nothing when the user is gone.
 */
export function readableFilters(ctx: CommandContext): ((name: string) => boolean) | undefined {
  const user = ctx.server.acl.get(ctx.client.user)
  if (user === undefined) return () => false
  if (user.unrestricted || user.allKeys) return undefined
  return (name) => keyReadable(user, FilterRegistry.bytesOf(name))
}
