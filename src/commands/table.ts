/**
 * The declarative command table: every command's name, arity, flags and key positions in one
 * place. Dispatch checks arity, authentication and loading from here, once, before any handler;
 * COMMAND, COMMAND INFO/DOCS/COUNT/LIST and INFO commandstats are generated from it.
 */
import type { CommandContext } from './context.js'
import { RememberedBytes } from '../protocol/same-bytes.js'
import type { CommandArgs } from '../protocol/command-args.js'

/** Redis 7.0 command flags (the subset bfs uses), as COMMAND INFO prints them. */
export const COMMAND_FLAGS = [
  'write', 'readonly', 'denyoom', 'admin', 'noscript', 'loading', 'stale', 'fast', 'noauth',
  'allow_busy', 'no_auth', 'module', 'no_mandatory_keys', 'skip_monitor', 'skip_slowlog', 'no_multi',
] as const
/** One of {@link COMMAND_FLAGS}. */
export type CommandFlag = (typeof COMMAND_FLAGS)[number]

/**
 * A handler writes its reply to ctx.client.reply, or throws ReplyError before writing anything.
 * `argv` is valid only until it returns (see {@link CommandArgs}): what outlives the command is copied.
 */
export type CommandHandler = (ctx: CommandContext, argv: CommandArgs) => void

/**
 * An extension's handler: as {@link CommandHandler}, with the arguments as an array of Buffers made
 * for each call (views of the read buffer: copy what you keep beyond the command).
 */
export type ExtensionHandler = (ctx: CommandContext, argv: Buffer[]) => void

/** One row of the command table: everything dispatch, COMMAND and INFO need about a command. */
export interface CommandSpec {
  /** The wire name, upper case: 'BF.ADD'. */
  readonly name: string
  /** N: exactly N arguments counting the name; -N: at least N. */
  readonly arity: number
  /** An upper bound some RedisBloom commands check on top of arity (BF.RESERVE: 7). */
  readonly maxArgs?: number
  readonly flags: readonly CommandFlag[]
  /** [firstKey, lastKey, step] as COMMAND INFO reports them; lastKey -1 means "to the end". */
  readonly keys: readonly [number, number, number]
  /** COMMAND DOCS group: 'bf', 'server', 'connection', 'generic', or an extension's own. */
  readonly group: string
  readonly summary: string
  readonly since: string
  readonly handler: CommandHandler
}

/**
 * A command as an embedding program declares it: a {@link CommandSpec} whose descriptive fields
 * may be left out. {@link defineCommand} fills them in.
 */
export interface CommandDefinition extends Omit<CommandSpec, 'keys' | 'group' | 'summary' | 'since' | 'handler'> {
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

/** A table row with its run-time counters (INFO commandstats). */
export interface CommandEntry {
  readonly spec: CommandSpec
  readonly lowerName: string
  /** Refused while filter memory is over `maxmemory` (the `denyoom` flag), as redis does. */
  readonly deniedOverMaxmemory: boolean
  /** Refused while persistence fails (the `write` flag, and PING), as redis does. */
  readonly deniedOnDiskError: boolean
  readonly allowedWhileLoading: boolean
  readonly allowedWithoutAuth: boolean
  /** The `write` flag: a write touches WATCHed keys. */
  readonly writes: boolean
  /** EXEC itself (kept through rename-command, as redis keys its checks on execCommand). */
  readonly isExec: boolean
  /** Runs at once inside MULTI instead of being queued: EXEC, DISCARD, MULTI, WATCH, QUIT, RESET. */
  readonly runsInsideTransaction: boolean
  /** Refused inside MULTI while over maxmemory: all but EXEC, DISCARD, QUIT, RESET (redis reject_cmd_on_oom). */
  readonly refusedOverMaxmemoryInTransaction: boolean
  /** The `no_multi` flag: refused inside MULTI. */
  readonly refusedInTransaction: boolean
  /** Argument counts that redis checks only when the command runs, not before queueing it. */
  readonly arityCheckedWhenRun: (argc: number) => boolean
  calls: number
  failedCalls: number
  rejectedCalls: number
}

/** Spellings remembered by {@link CommandTable.lookup} before the cache starts afresh. */
const MAX_SPELLINGS = 1024

/** Commands by lower-case wire name. */
export class CommandTable {
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
    const lowerName = spec.name.toLowerCase()
    if (this.entries.has(lowerName)) throw new Error(`duplicate command ${spec.name}`)
    if (!Number.isInteger(spec.arity) || spec.arity === 0) throw new Error(`bad arity for ${spec.name}`)
    for (const flag of spec.flags) {
      if (!(COMMAND_FLAGS as readonly string[]).includes(flag)) {
        throw new Error(`unknown flag ${flag} for ${spec.name}`)
      }
    }
    const entry: CommandEntry = {
      spec,
      lowerName,
      deniedOverMaxmemory: spec.flags.includes('denyoom'),
      deniedOnDiskError: spec.flags.includes('write') || lowerName === 'ping',
      allowedWhileLoading: spec.flags.includes('loading'),
      allowedWithoutAuth: spec.flags.includes('no_auth'),
      writes: spec.flags.includes('write'),
      isExec: lowerName === 'exec',
      runsInsideTransaction: ['exec', 'discard', 'multi', 'watch', 'quit', 'reset'].includes(lowerName),
      refusedOverMaxmemoryInTransaction: !['exec', 'discard', 'quit', 'reset'].includes(lowerName),
      refusedInTransaction: spec.flags.includes('no_multi'),
      arityCheckedWhenRun: (argc) =>
        // RedisBloom registers every command with arity -1 and checks in its handlers; an upper
        // bound (maxArgs) is checked by the handler in redis too.
        spec.flags.includes('module') || (spec.maxArgs !== undefined && (spec.arity > 0 ? argc >= spec.arity : argc >= -spec.arity)),
      calls: 0,
      failedCalls: 0,
      rejectedCalls: 0,
    }
    this.entries.set(lowerName, entry)
    this.originals.set(lowerName, entry)
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

/** Whether argc (argument count, the name included) fits the command's arity. */
export function arityAccepts(spec: CommandSpec, argc: number): boolean {
  if (spec.arity > 0 ? argc !== spec.arity : argc < -spec.arity) return false
  return spec.maxArgs === undefined || argc <= spec.maxArgs
}
