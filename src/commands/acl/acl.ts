/**
 * ACL and its subcommands, as redis 7.0.15 acl.c aclCommand answers them: SETUSER, GETUSER,
 * DELUSER, LIST, USERS, WHOAMI, CAT, LOG, GENPASS, DRYRUN, SAVE, LOAD (HELP is generated from
 * the rows). The users are in acl-users.ts; the check dispatch runs is in acl-check.ts.
 */
import { randomBytes } from 'node:crypto'
import type { ReplySink } from '../../protocol/reply-sink.js'
import type { AclSelector } from '../state/acl/acl-selector.js'
import type { AclCommandSpace } from '../state/acl/acl-commands.js'
import { readFileSync } from 'node:fs'
import type { CommandContext, CommandSpec, SubcommandSpec } from '../kernel/context.js'
import { arityAccepts, containerOnly, helpSubcommand, rowOf } from '../kernel/table.js'
import { CommandArgs } from '../../protocol/command-args.js'
import {
  ERR,
  ReplyError,
  aclFileOpenText,
  commandNotFoundText,
  errText,
  genpassBitsText,
  subcommandSyntaxWords,
  unknownCategoryText,
  userNotFoundText,
  wrongArityText,
} from '../kernel/reply-error.js'
import { parseInteger } from '../kernel/args.js'
import { ACL_CATEGORIES, categoryName } from '../state/acl/acl-categories.js'
import { channelsText, describeCommands, keysText } from '../state/acl/acl-describe.js'
import { aclDenial, channelAllowed } from '../kernel/acl-check.js'
import { DEFAULT_USER } from '../state/acl/acl-users.js'
import { replaceFileSync } from '../../store/durable-file.js'
import { strerror } from '../../store/disk-error.js'

/**
 * Closes the connections authenticated as `name` (redis ACLFreeUserAndKillClients): as the default
 * user and unauthenticated first, the sender itself after its reply.
 */
export function disconnectUser(ctx: CommandContext, name: string): void {
  for (const client of [...ctx.server.clients()]) {
    if (client.user !== name) continue
    client.user = DEFAULT_USER
    client.authenticated = false
    if (client === ctx.client) client.closeAfterReply()
    else client.kill()
  }
}

/** ACL SETUSER username [rule ...] → +OK, or the first bad rule's error (nothing changed) */
export function aclSetuser(ctx: CommandContext, argv: CommandArgs): void {
  const rules: Buffer[] = []
  for (let i = 3; i < argv.length; i++) rules.push(Buffer.from(argv.get(i)))
  const error = ctx.server.acl.setUser(argv.get(2), rules)
  if (error !== undefined) throw new ReplyError(errText(error), 'latin1')
  disconnectRevokedSubscribers(ctx, argv.get(2).toString('latin1'))
  ctx.client.reply.simple('OK')
}

/**
 * redis ACLKillPubsubClientsIfNeeded: the user's subscribers whose channels, patterns or shard
 * channels its new rules no longer allow are disconnected.
 */
function disconnectRevokedSubscribers(ctx: CommandContext, name: string): void {
  const user = ctx.server.acl.get(name)
  const selectors = user === undefined ? [] : [user, ...user.selectors]
  if (user === undefined || selectors.some((selector) => selector.allChannels)) return
  for (const client of [...ctx.server.clients()]) {
    const subscriptions = client.subscriptions
    if (client.user !== name || subscriptions === undefined) continue
    const allowed = (names: Iterable<Buffer>, pattern: boolean): boolean =>
      [...names].every((channel) => selectors.some((selector) => channelAllowed(selector, channel, pattern)))
    const keep =
      allowed(subscriptions.patterns.values(), true) &&
      allowed(subscriptions.channels.values(), false) &&
      allowed(subscriptions.shardChannels.values(), false)
    if (keep) continue
    if (client === ctx.client) client.closeAfterReply()
    else client.kill()
  }
}

/** ACL GETUSER username → flags, passwords, commands, keys, channels, selectors; null when unknown */
export function aclGetuser(ctx: CommandContext, argv: CommandArgs): void {
  const { acl } = ctx.server
  const reply = ctx.client.reply
  const user = acl.get(argv.get(2).toString('latin1'))
  if (user === undefined) return reply.nullBulk()
  const flags = [
    user.enabled ? 'on' : 'off',
    ...(user.nopass ? ['nopass'] : []),
    ...(user.sanitize !== '' ? [user.sanitize] : []),
  ]
  reply.map(6)
  reply.bulk('flags')
  reply.set(flags.length)
  for (const flag of flags) reply.bulk(flag)
  reply.bulk('passwords')
  reply.array(user.passwords.length)
  for (const hash of user.passwords) reply.bulk(hash)
  writeSelector(reply, user, acl.space)
  reply.bulk('selectors')
  reply.array(user.selectors.length)
  for (const selector of user.selectors) {
    reply.map(3)
    writeSelector(reply, selector, acl.space)
  }
}

/** redis aclAddReplySelectorDescription: commands, keys, channels. */
function writeSelector(reply: ReplySink, selector: AclSelector, space: AclCommandSpace): void {
  reply.bulk('commands')
  reply.bulk(describeCommands(selector, space))
  reply.bulk('keys')
  reply.bulk(Buffer.from(keysText(selector), 'latin1'))
  reply.bulk('channels')
  reply.bulk(Buffer.from(channelsText(selector), 'latin1'))
}

/** ACL DELUSER username [username ...] → how many existed; their connections are closed */
export function aclDeluser(ctx: CommandContext, argv: CommandArgs): void {
  const names: string[] = []
  for (let i = 2; i < argv.length; i++) names.push(argv.get(i).toString('latin1'))
  if (names.includes(DEFAULT_USER)) throw new ReplyError(ERR.DEFAULT_USER_UNDELETABLE)
  let deleted = 0
  for (const name of names) {
    if (!ctx.server.acl.delete(name)) continue
    deleted++
    disconnectUser(ctx, name)
  }
  ctx.client.reply.integer(deleted)
}

/** ACL LIST → every user as its config line */
export function aclList(ctx: CommandContext): void {
  const lines = ctx.server.acl.lines()
  const reply = ctx.client.reply
  reply.array(lines.length)
  for (const line of lines) reply.bulk(Buffer.from(line, 'latin1'))
}

/** ACL USERS → the user names */
export function aclUsers(ctx: CommandContext): void {
  const names = ctx.server.acl.names()
  const reply = ctx.client.reply
  reply.array(names.length)
  for (const name of names) reply.bulk(Buffer.from(name, 'latin1'))
}

/** ACL WHOAMI → the connection's user */
export function aclWhoami(ctx: CommandContext): void {
  ctx.client.reply.bulk(Buffer.from(ctx.client.user, 'latin1'))
}

/** ACL CAT [category] → the categories, or the commands and subcommands of one */
export function aclCat(ctx: CommandContext, argv: CommandArgs): void {
  const reply = ctx.client.reply
  if (argv.length === 2) {
    reply.array(ACL_CATEGORIES.length)
    for (const name of ACL_CATEGORIES) reply.bulk(name)
    return
  }
  if (argv.length !== 3) throw new ReplyError(subcommandSyntax(argv))
  const category = categoryName(argv.get(2).toString('latin1'))
  if (category === undefined)
    throw new ReplyError(unknownCategoryText(argv.get(2).toString('latin1').slice(0, 128)), 'latin1')
  const names = ctx.server.acl.space.all
    .filter((command) => command.categories.has(category))
    .map((command) => command.fullName)
  reply.array(names.length)
  for (const name of names) reply.bulk(name)
}

/** redis addReplySubcommandSyntaxError. */
function subcommandSyntax(argv: CommandArgs): string {
  return subcommandSyntaxWords('ACL', argv.get(1).toString('latin1'))
}

/** redis GENPASS_MAX_BITS. */
const GENPASS_MAX_BITS = 4096

/** ACL GENPASS [bits] → a random password, hex, 256 bits by default */
export function aclGenpass(ctx: CommandContext, argv: CommandArgs): void {
  if (argv.length > 3) throw new ReplyError(subcommandSyntax(argv))
  const bits = argv.length === 3 ? parseInteger(argv.get(2)) : 256
  if (bits === undefined) throw new ReplyError(ERR.NOT_INTEGER)
  if (bits <= 0 || bits > GENPASS_MAX_BITS) {
    throw new ReplyError(genpassBitsText(GENPASS_MAX_BITS))
  }
  const chars = Math.floor((bits + 3) / 4)
  ctx.client.reply.bulk(
    randomBytes(Math.ceil(chars / 2))
      .toString('hex')
      .slice(0, chars),
  )
}

/** ACL LOG [count | RESET] → the newest entries (10 by default), or +OK once emptied */
export function aclLog(ctx: CommandContext, argv: CommandArgs): void {
  if (argv.length > 3) throw new ReplyError(subcommandSyntax(argv))
  const log = ctx.server.acl.log
  let count = 10
  if (argv.length === 3) {
    if (argv.isKeyword(2, 'RESET')) {
      log.reset()
      return ctx.client.reply.simple('OK')
    }
    const given = parseInteger(argv.get(2))
    if (given === undefined) throw new ReplyError(ERR.NOT_INTEGER)
    count = given
  }
  log.write(ctx.client.reply, count)
}

/** ACL DRYRUN username command [arg ...] → +OK, or why the user could not run it (a bulk string) */
export function aclDryrun(ctx: CommandContext, argv: CommandArgs): void {
  const userName = argv.get(2).toString('latin1')
  const user = ctx.server.acl.get(userName)
  if (user === undefined) throw new ReplyError(userNotFoundText(userName), 'latin1')
  const args = argv.toArray().slice(3)
  const inner = CommandArgs.of(args)
  const entry = ctx.server.commands.lookup(args[0]!)
  const row = entry === undefined ? undefined : rowOf(entry, inner)
  if (entry === undefined || row === undefined)
    throw new ReplyError(commandNotFoundText(args[0]!.toString('latin1')), 'latin1')
  if (!arityAccepts(row.spec, args.length)) throw new ReplyError(wrongArityText(row.fullName))
  const denied = aclDenial(user, entry, row, inner)
  const reply = ctx.client.reply
  if (denied === undefined) return reply.simple('OK')
  if (denied.reason === 'command')
    return reply.bulk(`This user has no permissions to run the '${row.fullName}' command`)
  reply.bulk(
    Buffer.concat([
      Buffer.from(`This user has no permissions to access the '`),
      args[denied.index]!,
      Buffer.from(`' ${denied.reason}`),
    ]),
  )
}

function aclFile(ctx: CommandContext): string {
  const file = ctx.server.config.aclfile
  if (file === '') throw new ReplyError(ERR.NO_ACLFILE)
  return file
}

/** ACL LOAD → +OK once the aclfile's users replaced every user; connections of users other than default are closed */
export function aclLoad(ctx: CommandContext): void {
  const file = aclFile(ctx)
  let text: string
  try {
    text = readFileSync(file, 'latin1')
  } catch (error) {
    throw new ReplyError(aclFileOpenText(file, strerror((error as NodeJS.ErrnoException).code ?? '')))
  }
  const before = new Set(ctx.server.acl.names())
  const errors = ctx.server.acl.loadFile(text, file)
  if (errors !== undefined) throw new ReplyError(errText(errors), 'latin1')
  for (const name of before) if (name !== DEFAULT_USER) disconnectUser(ctx, name)
  ctx.client.reply.simple('OK')
}

/** ACL SAVE → +OK once the users are in the aclfile, replaced atomically (temp file, fsync, rename) */
export function aclSave(ctx: CommandContext): void {
  const file = aclFile(ctx)
  try {
    replaceFileSync(
      file,
      [Buffer.from(ctx.server.acl.fileText(), 'latin1')],
      `${file}.tmp-${process.pid}-${Date.now()}`,
    )
  } catch (error) {
    ctx.server.log.warning(`Writing ACL file for ACL SAVE: ${strerror((error as NodeJS.ErrnoException).code ?? '')}`)
    throw new ReplyError(ERR.ACL_SAVE_FAILED)
  }
  ctx.client.reply.simple('OK')
}

// redis 7.0 commands.def's ACL subcommands, in ACL HELP's order (aclCommand's help text).
const ACL_SUBCOMMANDS: readonly SubcommandSpec[] = [
  {
    name: 'CAT',
    arity: -2,
    help: [
      'CAT [<category>]',
      '    List all commands that belong to <category>, or all command categories',
      '    when no category is specified.',
    ],
    handler: aclCat,
  },
  {
    name: 'DELUSER',
    arity: -3,
    help: ['DELUSER <username> [<username> ...]', '    Delete a list of users.'],
    handler: aclDeluser,
  },
  {
    name: 'DRYRUN',
    arity: -4,
    help: [
      'DRYRUN <username> <command> [<arg> ...]',
      '    Returns whether the user can execute the given command without executing the command.',
    ],
    handler: aclDryrun,
  },
  { name: 'GETUSER', arity: 3, help: ['GETUSER <username>', "    Get the user's details."], handler: aclGetuser },
  {
    name: 'GENPASS',
    arity: -2,
    help: [
      'GENPASS [<bits>]',
      '    Generate a secure 256-bit user password. The optional `bits` argument can',
      '    be used to specify a different size.',
    ],
    handler: aclGenpass,
  },
  { name: 'LIST', arity: 2, help: ['LIST', '    Show users details in config file format.'], handler: aclList },
  { name: 'LOAD', arity: 2, help: ['LOAD', '    Reload users from the ACL file.'], handler: aclLoad },
  { name: 'LOG', arity: -2, help: ['LOG [<count> | RESET]', '    Show the ACL log entries.'], handler: aclLog },
  { name: 'SAVE', arity: 2, help: ['SAVE', '    Save the current config to the ACL file.'], handler: aclSave },
  {
    name: 'SETUSER',
    arity: -3,
    help: [
      'SETUSER <username> <attribute> [<attribute> ...]',
      '    Create or modify a user with the specified attributes.',
    ],
    handler: aclSetuser,
  },
  { name: 'USERS', arity: 2, help: ['USERS', '    List all the registered usernames.'], handler: aclUsers },
  { name: 'WHOAMI', arity: 2, help: ['WHOAMI', '    Return the current connection username.'], handler: aclWhoami },
  { ...helpSubcommand(['HELP', '    Prints this help.']), arity: 2 },
]

/** The ACL container's row (builtin.ts lists it). */
export const ACL_COMMAND: CommandSpec = {
  name: 'ACL',
  arity: -2,
  flags: ['noscript', 'loading', 'stale'],
  keys: [0, 0, 0],
  group: 'server',
  since: '6.0.0',
  summary: 'A container for Access List Control commands.',
  handler: containerOnly,
  subcommands: ACL_SUBCOMMANDS,
}
