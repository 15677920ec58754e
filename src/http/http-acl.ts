/**
 * Who an HTTP request runs as: HTTP Basic credentials name any ACL user (checked as AUTH checks
 * them: on, password or nopass; a failure is in ACL LOG), no credentials the default user while it
 * needs no password. That user's permissions apply: /add= and /contain= through dispatch's own
 * check (BF.ADD, BF.EXISTS), /metrics as INFO, the status page and its listing as SCAN; a denial
 * is in ACL LOG, and answered 403 with the NOPERM text.
 */
import type { CommandContext } from '../commands/context.js'
import type { AclUser } from '../commands/acl-user.js'
import { DEFAULT_USER } from '../commands/acl-users.js'
import { aclDenial, denialText, logDenial, logDenied } from '../commands/acl-check.js'
import { rowOf } from '../commands/table.js'
import { CommandArgs } from '../protocol/command-args.js'

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
 * Whether the session's user may run `argv` (INFO for /metrics, SCAN for the listings): undefined,
 * or the NOPERM text (the denial logged), as dispatch would answer the command.
 */
export function requestRefusal(ctx: CommandContext, argv: readonly Buffer[]): string | undefined {
  const user = ctx.server.acl.get(ctx.client.user)
  if (user === undefined || user.unrestricted) return undefined
  const args = CommandArgs.of(argv)
  const entry = ctx.server.commands.lookup(argv[0]!)
  const row = entry === undefined ? undefined : rowOf(entry, args)
  if (entry === undefined || row === undefined) return undefined
  const denied = aclDenial(user, entry, row, args)
  if (denied === undefined) return undefined
  logDenied(ctx, denied, row, args)
  return denialText(denied, row)
}
