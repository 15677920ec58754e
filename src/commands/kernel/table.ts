/**
 * The declarative command table: every command's name, arity, flags and key positions in one
 * place. Dispatch checks arity, authentication and loading from here, once, before any handler;
 * COMMAND, COMMAND INFO/DOCS/COUNT/LIST and INFO commandstats are generated from it. What a row
 * holds (CommandSpec, CommandEntry, the handler's type) is declared in context.ts, beside the
 * context a handler takes.
 */
import { RememberedBytes } from '../../protocol/remembered-bytes.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import {
  COMMAND_FLAGS,
  type CommandEntry,
  type CommandHandler,
  type CommandRow,
  type CommandSpec,
  type CommandTableView,
  type ExtensionHandler,
  type RowCounts,
  type RowSpec,
  type SubcommandSpec,
} from './context.js'

/**
 * A command as an embedding program declares it: a {@link CommandSpec} whose descriptive fields
 * may be left out. {@link defineCommand} fills them in.
 */
export interface CommandDefinition extends Omit<
  CommandSpec,
  'keys' | 'group' | 'summary' | 'since' | 'handler' | 'subcommands' | 'roles' | 'help' | 'answersTogether'
> {
  readonly handler: ExtensionHandler
  /** [firstKey, lastKey, step]; default [0, 0, 0] (no key). A one-key command is [1, 1, 1]. */
  readonly keys?: readonly [number, number, number]
  /** COMMAND DOCS group and ACL category (`@group`); default 'extension'. */
  readonly group?: string
  /** COMMAND DOCS summary; default ''. */
  readonly summary?: string
  /** COMMAND DOCS "since"; default '0.0.0'. */
  readonly since?: string
}

/**
 * A full {@link CommandSpec} from a definition: the name in upper case, omitted fields defaulted,
 * the handler given its arguments as a Buffer[].
 */
export function defineCommand(definition: CommandDefinition): CommandSpec {
  const handler = definition.handler
  return {
    ...definition,
    handler: (ctx, argv) => handler(ctx, argv.toArray()),
    name: definition.name.toUpperCase(),
    keys: definition.keys ?? [0, 0, 0],
    group: definition.group ?? 'extension',
    summary: definition.summary ?? '',
    since: definition.since ?? '0.0.0',
  }
}

/** A command's counters over its own row and its subcommands' (the `/metrics` per-command totals). */
export function entryCounts(entry: CommandEntry): RowCounts {
  const total: RowCounts = { calls: 0, micros: 0, failedCalls: 0, rejectedCalls: 0 }
  for (const row of entryRows(entry)) {
    total.calls += row.counts.calls
    total.micros += row.counts.micros
    total.failedCalls += row.counts.failedCalls
    total.rejectedCalls += row.counts.rejectedCalls
  }
  return total
}

/** A command's own row, then its subcommands' rows. */
export function entryRows(entry: CommandEntry): CommandRow[] {
  return [entry.row, ...(entry.subcommands?.values() ?? [])]
}

/** A command's own row or a subcommand's. */
function makeRow(spec: RowSpec, fullName: string, handler: CommandHandler, module: boolean): CommandRow {
  checkArity(spec.arity, fullName)
  if (spec.reportedArity !== undefined) checkArity(spec.reportedArity, fullName)
  // RedisBloom registers every command with arity -1 and checks in its handlers.
  return {
    spec,
    fullName,
    handler,
    queuedArity: module ? -1 : (spec.reportedArity ?? spec.arity),
    counts: { calls: 0, micros: 0, failedCalls: 0, rejectedCalls: 0 },
  }
}

function checkArity(arity: number, name: string): void {
  if (!Number.isInteger(arity) || arity === 0) throw new Error(`bad arity for ${name}`)
}

function makeEntry(spec: CommandSpec): CommandEntry {
  const lowerName = spec.name.toLowerCase()
  const flags = spec.flags
  const roles = spec.roles ?? []
  const module = flags.includes('module')
  const subcommands = spec.subcommands === undefined ? undefined : new Map<string, CommandRow>()
  for (const sub of spec.subcommands ?? []) {
    const name = sub.name.toLowerCase()
    if (subcommands!.has(name)) throw new Error(`duplicate subcommand ${spec.name} ${sub.name}`)
    subcommands!.set(name, makeRow(sub, `${lowerName}|${name}`, sub.handler, module))
  }
  return {
    spec,
    lowerName,
    row: makeRow(spec, lowerName, spec.handler, module),
    subcommands,
    deniedOverMaxmemory: flags.includes('denyoom'),
    deniedOnDiskError: flags.includes('write') || lowerName === 'ping',
    allowedWhileLoading: flags.includes('loading'),
    allowedWithoutAuth: flags.includes('no_auth'),
    writes: flags.includes('write'),
    isExec: roles.includes('exec'),
    runsInsideTransaction: roles.includes('unqueued'),
    refusedOverMaxmemoryInTransaction: !roles.includes('oom_exempt'),
    refusedInTransaction: flags.includes('no_multi'),
    skipsSlowlog: flags.includes('skip_slowlog'),
    answersTogether: spec.answersTogether === true,
  }
}

/** Spellings remembered by {@link CommandTable.lookup} before the cache starts afresh. */
const MAX_SPELLINGS = 1024

/** Commands by lower-case wire name. */
export class CommandTable implements CommandTableView {
  private readonly entries = new Map<string, CommandEntry>()
  /** Every command under the name it was added with, whatever rename-command did since. */
  private readonly originals = new Map<string, CommandEntry>()
  /** Exact spellings clients sent (latin1) → entry; most clients use one spelling per command. */
  private readonly spellings = new Map<string, CommandEntry>()
  /** The last spelling {@link lookup} found, copied, and its entry: pipelines repeat one command. */
  private readonly lastSpelling = new RememberedBytes()
  private lastEntry: CommandEntry | undefined

  /** Adds a command; throws on a duplicate name, a bad arity or an unknown flag. */
  add(spec: CommandSpec): CommandEntry {
    if (this.entries.has(spec.name.toLowerCase())) throw new Error(`duplicate command ${spec.name}`)
    for (const flag of spec.flags) {
      if (!(COMMAND_FLAGS as readonly string[]).includes(flag)) {
        throw new Error(`unknown flag ${flag} for ${spec.name}`)
      }
    }
    const entry = makeEntry(spec)
    this.entries.set(entry.lowerName, entry)
    this.originals.set(entry.lowerName, entry)
    this.forgetSpellings()
    return entry
  }

  /**
   * Looks a command up by the bytes a client sent, in any letter case. The last spelling is
   * compared byte for byte and others come from a cache, so a command name costs no string.
   */
  lookup(name: Uint8Array, start = 0, end = name.length): CommandEntry | undefined {
    const last = this.lastEntry
    if (last !== undefined && this.lastSpelling.matches(name, start, end)) return last
    const spelled = Buffer.from(name.buffer, name.byteOffset, name.byteLength).toString('latin1', start, end)
    let entry = this.spellings.get(spelled)
    if (entry === undefined) {
      entry = this.entries.get(spelled.toLowerCase())
      if (entry === undefined) return undefined
      if (this.spellings.size >= MAX_SPELLINGS) this.spellings.clear()
      this.spellings.set(spelled, entry)
    }
    this.lastSpelling.remember(name, start, end) // a copy: the name is in the read buffer
    this.lastEntry = entry
    return entry
  }

  /** A renamed or removed command must not answer to an old spelling. */
  private forgetSpellings(): void {
    this.spellings.clear()
    this.lastEntry = undefined
  }

  /** Looks a command up by its lower-case name. */
  get(lowerName: string): CommandEntry | undefined {
    return this.entries.get(lowerName)
  }

  /** Renames or disables (newName '') a command, as redis.conf's rename-command does. */
  rename(lowerName: string, newName: string): boolean {
    const entry = this.entries.get(lowerName)
    if (!entry) return false
    this.entries.delete(lowerName)
    this.forgetSpellings()
    if (newName !== '') {
      const renamed: CommandEntry = { ...entry, lowerName: newName.toLowerCase() }
      this.entries.set(renamed.lowerName, renamed)
      this.originals.set(entry.spec.name.toLowerCase(), renamed)
    }
    return true
  }

  /**
   * The table under the names the commands were added with, renames and removals ignored: what
   * the append-only log's records name (bfs writes them so). A name only a rename gave (a log
   * written before records were named so) is looked up as renamed.
   */
  withOriginalNames(): CommandTable {
    const table = new CommandTable()
    for (const [name, entry] of this.entries) table.entries.set(name, entry)
    for (const [name, entry] of this.originals) table.entries.set(name, entry)
    return table
  }

  /** The original name of the command a client spelled so, when that spelling is a rename of it. */
  originalName(name: Uint8Array, start: number, end: number): string | undefined {
    const entry = this.lookup(name, start, end)
    return entry === undefined || entry.lowerName === entry.spec.name.toLowerCase() ? undefined : entry.spec.name
  }

  get size(): number {
    return this.entries.size
  }

  /** A command by the name it was added with, renamed or disabled too (what a permission check names: ACL rules name these). */
  original(lowerName: string): CommandEntry | undefined {
    return this.originals.get(lowerName)
  }

  /** Every command under the name it was added with, renamed or disabled ones too (ACL rules name these, as redis's orig_commands). */
  originalEntries(): IterableIterator<CommandEntry> {
    return this.originals.values()
  }

  [Symbol.iterator](): IterableIterator<CommandEntry> {
    return this.entries.values()
  }
}

/** Builds a table from specs; throws at startup on a duplicate or malformed row. */
export function defineTable(specs: readonly CommandSpec[]): CommandTable {
  const table = new CommandTable()
  for (const spec of specs) table.add(spec)
  return table
}

/** Whether argc (argument count, the name included) fits an arity: N exactly, -N at least N. */
export function arityFits(arity: number, argc: number): boolean {
  return arity > 0 ? argc === arity : argc >= -arity
}

/** Whether argc fits a row's arity and its upper bound, as checked before its handler runs. */
export function arityAccepts(spec: RowSpec, argc: number): boolean {
  return arityFits(spec.arity, argc) && (spec.maxArgs === undefined || argc <= spec.maxArgs)
}

/**
 * The row that checks and runs a command: a container's subcommand row when it has a second
 * argument (undefined when the container has no such subcommand), else the command's own.
 */
export function rowOf(entry: CommandEntry, argv: CommandArgs): CommandRow | undefined {
  const subcommands = entry.subcommands
  if (subcommands === undefined || argv.length < 2) return entry.row
  return subcommands.get(argv.get(1).toString('latin1').toLowerCase())
}

/** A container's HELP reply, generated from its rows (redis addReplyHelp's header). */
export function helpLines(spec: CommandSpec): string[] {
  const lines = [`${spec.name} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:`, ...(spec.help ?? [])]
  for (const sub of spec.subcommands ?? []) lines.push(...(sub.help ?? []))
  return lines
}

/** The handler of a container that needs a subcommand (arity -2): never called, as every subcommand has its row. */
export const containerOnly: CommandHandler = () => {
  throw new Error('a container command ran without a subcommand')
}

/** A container's HELP row: its reply is generated from the container's rows ({@link helpLines}). */
export function helpSubcommand(help: readonly string[]): SubcommandSpec {
  return {
    name: 'HELP',
    arity: -2,
    help,
    handler: (ctx, argv) => {
      const container = ctx.server.commands.lookup(argv.bytes(0), argv.start(0), argv.end(0))!
      const lines = helpLines(container.spec)
      const reply = ctx.client.reply
      reply.array(lines.length)
      for (const line of lines) reply.simple(line)
    },
  }
}
