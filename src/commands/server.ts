/** Server commands: COMMAND, INFO, CONFIG, TIME, MODULE, SHUTDOWN, as redis 7.0 answers them. */
import { isUtf8 } from 'node:buffer'
import type { CommandContext } from './context.js'
import type { CommandEntry } from './table.js'
import { ERR, ReplyError, unknownSubcommandText, wrongArityText } from './reply-error.js'
import { isKeyword, lowerAscii, text } from './args.js'
import { globMatch } from './glob.js'
import { infoText } from './info.js'
import { MODULE_NAME, writeModuleList } from './modules.js'
import {
  CONFIG_KEYS, ConfigError, configKeySpec, formatConfigValue, parseConfigValue, type ConfigKey,
} from '../server/config.js'
import type { CommandArgs } from '../protocol/command-args.js'

/** INFO [section ...] → the INFO text (a verbatim string in RESP3) */
export function info(ctx: CommandContext, argv: CommandArgs): void {
  const sections = argv.toArray().slice(1).map((arg) => lowerAscii(arg))
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
export function module(ctx: CommandContext, argv: CommandArgs): void {
  const reply = ctx.client.reply
  if (!argv.isKeyword(1, 'LIST')) {
    if (argv.isKeyword(1, 'LOAD') || argv.isKeyword(1, 'UNLOAD') || argv.isKeyword(1, 'LOADEX')) {
      throw new ReplyError('ERR bfs does not load modules: Bloom filter commands are built in')
    }
    throw new ReplyError(unknownSubcommandText('module', argv.get(1)), 'latin1')
  }
  if (argv.length !== 2) throw new ReplyError(wrongArityText('module|list'))
  writeModuleList(reply)
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
  if (abort) throw new ReplyError('ERR No shutdown in progress.')
  const error = ctx.server.shutdown({ save, noSave })
  if (error !== undefined) throw new ReplyError(error)
  ctx.client.closeAfterReply()
}

/** CONFIG GET pattern [pattern ...] | SET key value [key value ...] | RESETSTAT | REWRITE | HELP */
export function config(ctx: CommandContext, argv: CommandArgs): void {
  const sub = argv.get(1)
  const reply = ctx.client.reply
  if (isKeyword(sub, 'GET')) {
    if (argv.length < 3) throw new ReplyError(wrongArityText('config|get'))
    const found = new Map<ConfigKey, string>()
    for (const pattern of argv.toArray().slice(2)) {
      for (const spec of CONFIG_KEYS) {
        if (globMatch(pattern, Buffer.from(spec.name), true)) found.set(spec.name, formatConfigValue(ctx.server.config, spec.name))
      }
    }
    reply.map(found.size)
    for (const [name, value] of found) {
      reply.bulk(name)
      reply.bulk(value)
    }
  } else if (isKeyword(sub, 'SET')) {
    if (argv.length < 4 || argv.length % 2 !== 0) throw new ReplyError(wrongArityText('config|set'))
    const updates: [ConfigKey, ReturnType<typeof parseConfigValue>][] = []
    for (let i = 2; i < argv.length; i += 2) {
      const name = text(argv.get(i))
      const spec = configKeySpec(name)
      if (spec === undefined) throw new ReplyError(`ERR Unknown option or number of arguments for CONFIG SET - '${name}'`)
      if (!spec.mutable) throw new ReplyError(`ERR CONFIG SET failed (possibly related to argument '${name}') - can't set immutable config`)
      try {
        // Values are held as text (a config file's, a flag's): bytes that are not UTF-8 would be
        // changed on the way, so that a requirepass set so could never be matched.
        if (!isUtf8(argv.get(i + 1))) throw new ConfigError('argument must be valid UTF-8')
        updates.push([spec.name, parseConfigValue(spec, [text(argv.get(i + 1))], ctx.server.config)])
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error
        throw new ReplyError(`ERR CONFIG SET failed (possibly related to argument '${name}') - ${error.message}`)
      }
    }
    // All values checked first: CONFIG SET applies all or nothing, as in redis 7.0. The one with a
    // side effect that can fail goes first.
    const appendonly = updates.find(([name]) => name === 'appendonly')
    if (appendonly !== undefined) {
      try {
        ctx.server.persistence.setAppendOnly(appendonly[1] as boolean)
      } catch (error) {
        // redis config.c updateAppendonly's words; the reason goes to the log.
        ctx.server.log.warning(`Cannot turn on the append only file: ${(error as Error).message}`)
        throw new ReplyError("ERR CONFIG SET failed (possibly related to argument 'appendonly') - Unable to turn on AOF. Check server logs.")
      }
    }
    const target = ctx.server.config as unknown as Record<string, unknown>
    for (const [name, value] of updates) target[name] = value
    reply.simple('OK')
  } else if (isKeyword(sub, 'RESETSTAT')) {
    if (argv.length !== 2) throw new ReplyError(wrongArityText('config|resetstat'))
    ctx.server.stats.reset()
    for (const entry of ctx.server.commands) {
      entry.calls = 0
      entry.failedCalls = 0
      entry.rejectedCalls = 0
    }
    reply.simple('OK')
  } else if (isKeyword(sub, 'REWRITE')) {
    throw new ReplyError('ERR The server is running without a config file')
  } else if (isKeyword(sub, 'HELP')) {
    const lines = ['CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:', 'GET <pattern>', '    Return parameters matching the glob-like <pattern> and their values.', 'SET <directive> <value>', '    Set the configuration <directive> to <value>.', 'RESETSTAT', '    Reset statistics reported by the INFO command.', 'HELP', '    Print this help.']
    reply.array(lines.length)
    for (const line of lines) reply.simple(line)
  } else {
    throw new ReplyError(unknownSubcommandText('config', sub), 'latin1')
  }
}

/** redis 7.0 COMMAND INFO's ten fields for one command. */
function writeCommandInfo(ctx: CommandContext, entry: CommandEntry): void {
  const reply = ctx.client.reply
  const spec = entry.spec
  reply.array(10)
  reply.bulk(entry.lowerName)
  reply.integer(spec.arity)
  reply.set(spec.flags.length)
  for (const flag of spec.flags) reply.simple(flag)
  reply.integer(spec.keys[0])
  reply.integer(spec.keys[1])
  reply.integer(spec.keys[2])
  const categories = aclCategories(entry)
  reply.set(categories.length)
  for (const category of categories) reply.simple(category)
  reply.set(0) // tips
  reply.array(0) // key specs
  reply.array(0) // subcommands
}

function aclCategories(entry: CommandEntry): string[] {
  const flags = entry.spec.flags
  const categories: string[] = []
  if (flags.includes('write')) categories.push('@write')
  if (flags.includes('readonly')) categories.push('@read')
  if (flags.includes('fast')) categories.push('@fast')
  else categories.push('@slow')
  if (flags.includes('admin')) categories.push('@admin', '@dangerous')
  categories.push(entry.spec.group === 'bf' ? '@bloom' : `@${entry.spec.group}`)
  return categories
}

/** COMMAND | COMMAND COUNT | INFO [name ...] | DOCS [name ...] | LIST [FILTERBY ...] | HELP */
export function command(ctx: CommandContext, argv: CommandArgs): void {
  const reply = ctx.client.reply
  const table = ctx.server.commands
  if (argv.length === 1) {
    reply.array(table.size)
    for (const entry of table) writeCommandInfo(ctx, entry)
    return
  }
  const sub = argv.get(1)
  if (isKeyword(sub, 'COUNT')) {
    if (argv.length !== 2) throw new ReplyError(wrongArityText('command|count'))
    reply.integer(table.size)
  } else if (isKeyword(sub, 'INFO')) {
    const names = argv.toArray().slice(2).map((arg) => lowerAscii(arg))
    const entries = names.length === 0 ? [...table] : names.map((name) => table.get(name))
    reply.array(entries.length)
    for (const entry of entries) {
      if (entry === undefined) reply.nullBulk()
      else writeCommandInfo(ctx, entry)
    }
  } else if (isKeyword(sub, 'DOCS')) {
    const names = argv.toArray().slice(2).map((arg) => lowerAscii(arg))
    const entries = (names.length === 0 ? [...table] : names.map((name) => table.get(name))).filter(
      (entry): entry is CommandEntry => entry !== undefined,
    )
    reply.map(entries.length)
    for (const entry of entries) {
      reply.bulk(entry.lowerName)
      reply.map(3)
      reply.bulk('summary')
      reply.bulk(entry.spec.summary)
      reply.bulk('since')
      reply.bulk(entry.spec.since)
      reply.bulk('group')
      reply.bulk(entry.spec.group === 'bf' ? 'module' : entry.spec.group)
    }
  } else if (isKeyword(sub, 'LIST')) {
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
  } else if (isKeyword(sub, 'HELP')) {
    const lines = ['COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:', '(no subcommand)', '    Return details about all Redis commands.', 'COUNT', '    Return the total number of commands in this Redis server.', 'LIST', '    Return a list of all commands in this Redis server.', 'INFO [<command-name> ...]', '    Return details about multiple Redis commands.', 'DOCS [<command-name> ...]', '    Return documentation details about multiple Redis commands.', 'HELP', '    Print this help.']
    reply.array(lines.length)
    for (const line of lines) reply.simple(line)
  } else {
    throw new ReplyError(unknownSubcommandText('command', sub), 'latin1')
  }
}
