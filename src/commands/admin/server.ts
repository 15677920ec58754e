/** Server commands: COMMAND, INFO, CONFIG, TIME, MODULE, SHUTDOWN, as redis 7.0 answers them. */
import { INERT_CONFIG } from '../../runtime/config-inert.js'
import { isUtf8 } from 'node:buffer'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { CommandContext, CommandEntry } from '../kernel/context.js'
import { containerOnly, entryRows } from '../kernel/table.js'
import {
  ERR,
  ReplyError,
  configRewriteFailedText,
  configSetFailedText,
  configSetUnknownText,
} from '../kernel/reply-error.js'
import { isKeyword, lowerAscii, text } from '../kernel/args.js'
import { globMatch } from '../kernel/glob.js'
import { infoText } from './info.js'
import { MODULE_NAME, writeModuleList } from '../kernel/modules.js'
import { hasKeys, keyedRowOf, positionsOf } from '../kernel/key-positions.js'
import { lookupDocumented, writeCommandDocs, writeDocTipsAndKeySpecs, writeTipsAndKeySpecs } from './command-docs.js'
import { COMMAND_DOCS } from '../data/command-docs/by-name.js'
import { SUBCOMMAND_INFO } from '../data/command-docs/subcommand-info.js'
import {
  CONFIG_NAMES,
  ConfigError,
  configName,
  formatConfigValue,
  parseConfigValue,
  type Config,
  type ConfigKey,
  type ConfigName,
} from '../../runtime/config.js'
import { rewriteConfigText } from '../../runtime/config-rewrite.js'
import { TlsConfigError } from '../../runtime/tls-context.js'
import { replaceFileSync } from '../../store/durable-file.js'
import { categoriesOf } from '../state/acl/acl-categories.js'
import { strerror } from '../../store/disk-error.js'
import type { CommandArgs } from '../../protocol/command-args.js'

/** INFO [section ...] → the INFO text (a verbatim string in RESP3) */
export function info(ctx: CommandContext, argv: CommandArgs): void {
  const sections = argv
    .toArray()
    .slice(1)
    .map((arg) => lowerAscii(arg))
  ctx.client.reply.verbatim(infoText(ctx, sections))
}

/** TIME → [unix seconds, microseconds] */
export function time(ctx: CommandContext): void {
  const micros = BigInt(Date.now()) * 1000n + BigInt(Math.floor((performance.now() % 1) * 1000))
  const reply = ctx.client.reply
  reply.array(2)
  reply.bulk(String(micros / 1_000_000n))
  reply.bulk(String(micros % 1_000_000n))
}

/** MODULE LIST → one entry, RedisBloom's name and version, as tools that look for it expect */
export function moduleList(ctx: CommandContext): void {
  writeModuleList(ctx.client.reply)
}

/** MODULE LOAD | UNLOAD | LOADEX → an error: there is nothing to load */
export function moduleLoad(): void {
  throw new ReplyError(ERR.MODULE_NOT_SUPPORTED)
}

/** SHUTDOWN [NOSAVE | SAVE] [NOW] [FORCE] → no reply on success: the server exits */
export function shutdown(ctx: CommandContext, argv: CommandArgs): void {
  let save = false
  let noSave = false
  let otherFlag = false
  let abort = false
  for (let i = 1; i < argv.length; i++) {
    const arg = argv.get(i)
    if (isKeyword(arg, 'SAVE')) save = true
    else if (isKeyword(arg, 'NOSAVE')) noSave = true
    else if (isKeyword(arg, 'NOW') || isKeyword(arg, 'FORCE')) otherFlag = true
    else if (isKeyword(arg, 'ABORT')) abort = true
    else throw new ReplyError(ERR.SYNTAX)
  }
  // redis 7.0 shutdownCommand: ABORT takes no other flag, and cancels a shutdown rather than starting one.
  if ((abort && (save || noSave || otherFlag)) || (save && noSave)) throw new ReplyError(ERR.SYNTAX)
  // bfs's shutdown never waits for replicas, so there is never one in progress to abort.
  if (abort) throw new ReplyError(ERR.NO_SHUTDOWN_IN_PROGRESS)
  const error = ctx.server.shutdown({ save, noSave })
  if (error !== undefined) throw new ReplyError(error)
  ctx.client.closeAfterReply()
}

/**
 * CONFIG SET's checks in redis 7.0 config.c configSetCommand's order: an odd count is a syntax
 * error; then every name is looked up (the first unknown one wins, then an immutable or repeated
 * name before it), and only then are the values parsed, in order; a value's error names the key
 * as the table spells the name given. A key's own name and an alias are two names: both may be
 * given, the later value wins (redis compares its config entries, one per name).
 */
function checkConfigSet(ctx: CommandContext, argv: CommandArgs): [ConfigKey, ReturnType<typeof parseConfigValue>][] {
  if (argv.length % 2 !== 0) throw new ReplyError(ERR.SYNTAX)
  const names: ConfigName[] = []
  let refusal: string | undefined
  for (let i = 2; i < argv.length; i += 2) {
    const name = text(argv.get(i))
    const entry = configName(name)
    if (entry === undefined) {
      if (refusal === undefined) throw new ReplyError(configSetUnknownText(name))
      continue
    }
    if (refusal !== undefined) continue
    if (!entry.spec.mutable) refusal = configSetFailedText(name, "can't set immutable config")
    if (names.includes(entry)) refusal = configSetFailedText(name, 'duplicate parameter')
    names.push(entry)
  }
  if (refusal !== undefined) throw new ReplyError(refusal)
  return names.map((entry, k) => {
    const value = argv.get(3 + 2 * k)
    try {
      // Values are held as text (a config file's, a flag's): bytes that are not UTF-8 would be
      // changed on the way, so that a requirepass set so could never be matched.
      if (!isUtf8(value)) throw new ConfigError('argument must be valid UTF-8')
      return [entry.spec.name, parseConfigValue(entry.spec, [text(value)], ctx.server.config)]
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error
      throw new ReplyError(configSetFailedText(entry.name, error.message))
    }
  })
}

/**
 * CONFIG GET pattern [pattern ...] → the matching parameters and their values. redis 7.0
 * configGetCommand: a name without `[*?` is looked up (any case) and answered under the name as
 * given; a pattern matches every name, a key's own and its aliases (`*slave*` finds the old
 * names); a name already answered (compared in any case) is not repeated.
 */
export function configGet(ctx: CommandContext, argv: CommandArgs): void {
  const reply = ctx.client.reply
  const found = new Map<string, { name: string; value: () => string }>()
  const own = (name: string, key: ConfigKey) => ({ name, value: () => formatConfigValue(ctx.server.config, key) })
  for (const pattern of argv.toArray().slice(2)) {
    const given = text(pattern)
    if (!/[[*?]/.test(given)) {
      const lower = given.toLowerCase()
      const entry = configName(given)
      const inert = INERT_CONFIG.get(lower)
      if (found.has(lower)) continue
      if (entry !== undefined) found.set(lower, own(given, entry.spec.name))
      else if (inert !== undefined) found.set(lower, { name: given, value: () => inert })
      continue
    }
    for (const entry of CONFIG_NAMES) {
      if (!found.has(entry.name) && globMatch(pattern, Buffer.from(entry.name), true))
        found.set(entry.name, own(entry.name, entry.spec.name))
    }
    // The redis 7.0 keys bfs has no behaviour for (runtime/config-inert.ts).
    for (const [name, value] of INERT_CONFIG) {
      if (!found.has(name) && globMatch(pattern, Buffer.from(name), true)) found.set(name, { name, value: () => value })
    }
  }
  reply.map(found.size)
  for (const { name, value } of found.values()) {
    reply.bulk(name)
    reply.bulk(value())
  }
}

export function configSet(ctx: CommandContext, argv: CommandArgs): void {
  const reply = ctx.client.reply
  const updates = checkConfigSet(ctx, argv)
  // All values checked first: CONFIG SET applies all or nothing, as in redis 7.0. Those with a
  // side effect that can fail go first.
  applyTls(ctx, updates)
  const appendonly = updates.find(([name]) => name === 'appendonly')
  if (appendonly !== undefined) {
    try {
      ctx.server.persistence.setAppendOnly(appendonly[1] as boolean)
    } catch (error) {
      if (updates.some(([name]) => name.startsWith('tls-'))) ctx.server.reconfigureTls?.(ctx.server.config)
      // redis config.c updateAppendonly's words; the reason goes to the log.
      ctx.server.log.warning(`Cannot turn on the append only file: ${(error as Error).message}`)
      throw new ReplyError(configSetFailedText('appendonly', 'Unable to turn on AOF. Check server logs.'))
    }
  }
  const target = ctx.server.config as unknown as Record<string, unknown>
  for (const [name, value] of updates) target[name] = value
  // redis updateRequirePass: requirepass is the default user's one password.
  if (updates.some(([name]) => name === 'requirepass')) ctx.server.acl.setDefaultPassword(ctx.server.config.requirepass)
  reply.simple('OK')
}

/**
 * redis config.c applyTlsCfg: a TLS key (VOLATILE: set again to the same path, it reads the
 * renewed file) makes a new context from the configuration it would give, for new connections;
 * one that cannot be used is refused, its reason logged, the old context and values kept.
 */
function applyTls(ctx: CommandContext, updates: readonly [ConfigKey, ReturnType<typeof parseConfigValue>][]): void {
  const first = updates.find(([name]) => name.startsWith('tls-'))
  if (first === undefined || ctx.server.reconfigureTls === undefined) return
  const next = { ...ctx.server.config, ...Object.fromEntries(updates) } as Config
  try {
    ctx.server.reconfigureTls(next)
  } catch (error) {
    if (!(error instanceof TlsConfigError)) throw error
    ctx.server.log.warning(error.message)
    throw new ReplyError(configSetFailedText(first[0], 'Unable to update TLS configuration. Check server logs.'))
  }
}

/** CONFIG RESETSTAT → +OK: INFO's counters and commandstats start again */
export function configResetstat(ctx: CommandContext): void {
  const reply = ctx.client.reply
  // What the I/O threads answered so far is counted, then reset with the rest.
  ctx.server.threadPlane?.fold()
  ctx.server.stats.reset()
  for (const entry of ctx.server.commands) {
    for (const row of entryRows(entry))
      Object.assign(row.counts, { calls: 0, micros: 0, failedCalls: 0, rejectedCalls: 0 })
  }
  reply.simple('OK')
}

/**
 * CONFIG REWRITE → +OK once the config file holds the running configuration (runtime/
 * config-rewrite.ts); replaced atomically as redis rewriteConfigOverwriteFile does: a new temp
 * file beside it, fsync, rename, fsync of the directory. Errors are redis's words.
 */
export function configRewrite(ctx: CommandContext): void {
  const { configFile, config, log } = ctx.server
  if (configFile === '') throw new ReplyError(ERR.NO_CONFIG_FILE)
  try {
    // The count asked for (auto stays auto), not the one this machine and Node resolved it to.
    const asConfigured = { ...config, 'io-threads': ctx.server.ioThreadsConfigured ?? config['io-threads'] }
    const newText = rewriteConfigText(
      readOldConfig(configFile),
      asConfigured,
      path.resolve(config.dir),
      ctx.server.acl.lines(),
    )
    // mkstemp's <file>.XXXXXX: a name no earlier, interrupted rewrite can have left.
    replaceFileSync(configFile, [Buffer.from(newText)], `${configFile}.${randomBytes(3).toString('hex')}`)
  } catch (error) {
    const reason = strerror((error as NodeJS.ErrnoException).code ?? '')
    log.warning(`CONFIG REWRITE failed: ${reason}`)
    throw new ReplyError(configRewriteFailedText(reason))
  }
  log.warning('CONFIG REWRITE executed with success.')
  ctx.client.reply.simple('OK')
}

/** The config file's text; '' when it is gone (redis rewrites a missing file as an empty one). */
function readOldConfig(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ''
    throw error
  }
}

/** The order redis 7.0 addReplyFlagsForCommand lists a command's flags in (src/server.c). */
const FLAG_ORDER = [
  'write',
  'readonly',
  'denyoom',
  'module',
  'admin',
  'pubsub',
  'noscript',
  'blocking',
  'loading',
  'stale',
  'skip_monitor',
  'skip_slowlog',
  'asking',
  'fast',
  'no_auth',
  'no_mandatory_keys',
  'no_async_loading',
  'no_multi',
  'movablekeys',
  'allow_busy',
]
const flagRank = (flag: string) => (FLAG_ORDER.includes(flag) ? FLAG_ORDER.indexOf(flag) : FLAG_ORDER.length)

/** redis 7.0 COMMAND INFO's ten fields for one command. */
function writeCommandInfo(ctx: CommandContext, entry: CommandEntry): void {
  const reply = ctx.client.reply
  const spec = entry.spec
  reply.array(10)
  reply.bulk(entry.lowerName)
  reply.integer(spec.reportedArity ?? spec.arity)
  // A container that needs a subcommand shows no flags of its own, as redis 7.0: its subcommands carry them.
  const flags = spec.handler === containerOnly ? [] : [...spec.flags].sort((a, b) => flagRank(a) - flagRank(b))
  reply.set(flags.length)
  for (const flag of flags) reply.simple(flag)
  reply.integer(spec.keys[0])
  reply.integer(spec.keys[1])
  reply.integer(spec.keys[2])
  const categories = aclCategories(entry)
  reply.set(categories.length)
  for (const category of categories) reply.simple(category)
  writeTipsAndKeySpecs(reply, entry)
  if (entry.subcommands === undefined) reply.set(0)
  else writeSubcommandInfo(reply, entry)
}

/** A container's tenth element: each subcommand's own ten fields, as redis 7.0 (command-docs/subcommand-info.ts). */
function writeSubcommandInfo(reply: CommandContext['client']['reply'], entry: CommandEntry): void {
  const rows = [...entry.subcommands!.values()]
  reply.array(rows.length)
  for (const row of rows) {
    const info = SUBCOMMAND_INFO[row.fullName] ?? { flags: entry.spec.flags, keys: [0, 0, 0] }
    const categories = categoriesOf(entry, row.fullName).map((category) => `@${category}`)
    reply.array(10)
    reply.bulk(row.fullName)
    reply.integer(row.spec.reportedArity ?? row.spec.arity)
    reply.set(info.flags.length)
    for (const flag of info.flags) reply.simple(flag)
    for (const key of info.keys) reply.integer(key)
    reply.set(categories.length)
    for (const category of categories) reply.simple(category)
    writeDocTipsAndKeySpecs(reply, COMMAND_DOCS.get(row.fullName))
    reply.set(0)
  }
}

/** COMMAND INFO's ACL categories: redis 7.0.15's for its commands, the flags' (and @bloom) for bfs's (acl-categories.ts). */
function aclCategories(entry: CommandEntry): string[] {
  return categoriesOf(entry, entry.spec.name.toLowerCase()).map((name) => `@${name}`)
}

/** COMMAND → every command's COMMAND INFO */
export function command(ctx: CommandContext): void {
  const reply = ctx.client.reply
  const table = ctx.server.commands
  reply.array(table.size)
  for (const entry of table) writeCommandInfo(ctx, entry)
}

/** COMMAND COUNT → the number of commands */
export function commandCount(ctx: CommandContext): void {
  ctx.client.reply.integer(ctx.server.commands.size)
}

/** COMMAND INFO [name ...] → each command's ten fields, or null */
export function commandInfo(ctx: CommandContext, argv: CommandArgs): void {
  const reply = ctx.client.reply
  const table = ctx.server.commands
  const names = argv
    .toArray()
    .slice(2)
    .map((arg) => lowerAscii(arg))
  const entries = names.length === 0 ? [...table] : names.map((name) => table.get(name))
  reply.array(entries.length)
  for (const entry of entries) {
    if (entry === undefined) reply.nullBulk()
    else writeCommandInfo(ctx, entry)
  }
}

/**
 * COMMAND DOCS [name ...] → each command's documentation (command-docs.ts): every command, or the
 * named ones that exist (`container|sub` names one subcommand), as redis 7.0 commandDocsCommand.
 */
export function commandDocs(ctx: CommandContext, argv: CommandArgs): void {
  const reply = ctx.client.reply
  const table = ctx.server.commands
  if (argv.length === 2) {
    reply.map(table.size)
    for (const entry of table) {
      reply.bulk(entry.lowerName)
      writeCommandDocs(reply, entry)
    }
    return
  }
  const found = argv
    .toArray()
    .slice(2)
    .map((arg) => lookupDocumented(table, lowerAscii(arg)))
    .filter((doc) => doc !== undefined)
  reply.map(found.length)
  for (const doc of found) {
    reply.bulk(doc.name)
    doc.write(reply)
  }
}

/** COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern] → command names */
export function commandList(ctx: CommandContext, argv: CommandArgs): void {
  const reply = ctx.client.reply
  const table = ctx.server.commands
  let filter: (entry: CommandEntry) => boolean = () => true
  if (argv.length === 5 && argv.isKeyword(2, 'FILTERBY')) {
    const value = argv.get(4)
    if (argv.isKeyword(3, 'MODULE')) filter = (entry) => entry.spec.group === 'bf' && text(value) === MODULE_NAME
    else if (argv.isKeyword(3, 'ACLCAT')) filter = (entry) => aclCategories(entry).includes(`@${lowerAscii(value)}`)
    else if (argv.isKeyword(3, 'PATTERN')) filter = (entry) => globMatch(value, Buffer.from(entry.lowerName), true)
    else throw new ReplyError(ERR.SYNTAX)
  } else if (argv.length !== 2) {
    throw new ReplyError(ERR.SYNTAX)
  }
  const names = [...table].filter(filter).map((entry) => entry.lowerName)
  reply.array(names.length)
  for (const name of names) reply.bulk(name)
}

/**
 * COMMAND GETKEYS / GETKEYSANDFLAGS command [arg ...], as redis 7.0 server.c getKeysSubcommandImpl:
 * the key arguments of a command line (kernel/key-positions.ts).
 */
function getKeys(ctx: CommandContext, argv: CommandArgs, withFlags: boolean): void {
  const args = argv.toArray().slice(2)
  const row = keyedRowOf(ctx.server.commands, args)
  // redis server.c getKeysSubcommandImpl, word for word.
  if (row === undefined) throw new ReplyError(ERR.GETKEYS_INVALID_COMMAND)
  if (!hasKeys(row)) throw new ReplyError(ERR.GETKEYS_NO_KEYS)
  if ((row.arity > 0 && row.arity !== args.length) || args.length < -row.arity)
    throw new ReplyError(ERR.GETKEYS_ARGUMENT_COUNT)
  const keys = positionsOf(row, args)
  if (keys.length === 0 && !row.noMandatoryKeys) throw new ReplyError(ERR.GETKEYS_INVALID_ARGUMENTS)
  const reply = ctx.client.reply
  reply.array(keys.length)
  for (const key of keys) {
    if (withFlags) reply.array(2)
    reply.bulk(args[key.pos]!)
    if (!withFlags) continue
    const flags = key.flags.filter((flag) => flag !== 'not_key')
    reply.set(flags.length)
    for (const flag of flags) reply.simple(flag)
  }
}

/** COMMAND GETKEYS command [arg ...] → the key arguments */
export function commandGetkeys(ctx: CommandContext, argv: CommandArgs): void {
  getKeys(ctx, argv, false)
}

/** COMMAND GETKEYSANDFLAGS command [arg ...] → each key argument with its key spec's flags */
export function commandGetkeysandflags(ctx: CommandContext, argv: CommandArgs): void {
  getKeys(ctx, argv, true)
}
