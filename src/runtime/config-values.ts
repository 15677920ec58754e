/**
 * The value parsers of the config rows that are more than a number or a word (config.ts): sizes
 * with units, `save` rules, `client-output-buffer-limit`, `replicaof`, with redis config.c's words
 * for their errors (numericParseString, numericBoundaryCheck), and the value types they make.
 * Imports nothing of the configuration: config.ts's table is built on them.
 */

/** The bounds of a port, which rows and parsers share. */
export const MIN_PORT = 0
export const MAX_PORT = 65535
/** redis config.c: timeout and tcp-keepalive are 0..INT_MAX seconds. */
export const MAX_SECONDS = 2_147_483_647

/** One class's output limits: closed at once past `hard`, or after `softSeconds` past `soft`. */
export interface OutputBufferLimit {
  readonly hard: number
  readonly soft: number
  readonly softSeconds: number
}

/** redis's three client classes (CONFIG GET names replica `slave`, as redis 7.0 does). */
export interface OutputBufferLimits {
  readonly normal: OutputBufferLimit
  readonly replica: OutputBufferLimit
  readonly pubsub: OutputBufferLimit
}

/** One `rename-command` line. Not a CONFIG GET key, as in redis. */
export interface RenameRule {
  readonly from: string
  /** '' disables the command. */
  readonly to: string
}

/** A configuration problem (a bad key or value in bfs.conf, a flag or CONFIG SET), worded to name the key. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

/**
 * `replicaof <host> <port>`, or `no one` (and "") for none: kept as "host port" or '' (redis
 * config.c's replicaof, where CONFIG GET shows the same).
 */
export function parseReplicaof(args: readonly string[]): string {
  if (args.length === 1 && args[0] === '') return ''
  if (args.length !== 2) throw new ConfigError("'replicaof' takes <host> <port> or no one")
  if (args[0]!.toLowerCase() === 'no' && args[1]!.toLowerCase() === 'one') return ''
  const port = INTEGER.test(args[1]!) ? Number(args[1]) : NaN
  if (!(port >= 1 && port <= MAX_PORT) || args[0] === '')
    throw new ConfigError("'replicaof' takes <host> <port> or no one")
  return `${args[0]} ${port}`
}

export const INTEGER = /^(?:0|-?[1-9]\d*)$/
export const INT64_MAX = 2n ** 63n - 1n

export function checkRange(value: number, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`argument must be between ${min} and ${max} inclusive`)
  }
  return value
}

/** Memory units as redis util.c memtoull reads them. */
const MEMORY_UNITS: Readonly<Record<string, number>> = {
  b: 1,
  k: 1e3,
  kb: 1024,
  m: 1e6,
  mb: 1024 ** 2,
  g: 1e9,
  gb: 1024 ** 3,
}

/**
 * redis util.c memtoull: digits (none is 0) and an optional unit, 1k = 1000, 1kb = 1024, likewise
 * m/mb and g/gb, case-insensitive; nothing else (no sign, no space). Undefined if not a size.
 */
function memoryBytes(word: string): number | undefined {
  const match = /^(\d{0,127})(k|kb|m|mb|g|gb|b)?$/i.exec(word)
  return match === null ? undefined : Number(match[1] || '0') * MEMORY_UNITS[(match[2] ?? 'b').toLowerCase()]!
}

export function parseMemory(raw: string): number {
  const bytes = memoryBytes(raw)
  if (bytes === undefined) throw new ConfigError('argument must be a memory value')
  return bytes
}

/** A number as C strtoll reads a whole word: leading white space, a sign, digits; "" is 0. */
const STRTOLL_WORD = /^[\t\n\v\f\r ]*([+-]?\d+)$/

/**
 * `save <seconds> <changes> [...]` or `save ""`, normalised to "s c s c" or "". redis 7.0 config.c
 * setConfigSaveOption: one value is split on single spaces, every word is read by strtoll (past
 * the 64-bit range it saturates), and seconds must be at least 1, changes at least 0.
 */
export function parseSaveRules(args: readonly string[]): string {
  const words = args.length !== 1 ? args : args[0] === '' ? [] : args[0]!.split(' ')
  const numbers: bigint[] = []
  for (const [j, word] of words.entries()) {
    const match = word === '' ? [word, '0'] : STRTOLL_WORD.exec(word)
    const value = match === null ? undefined : BigInt(match[1]!)
    if (value === undefined || value < (j % 2 === 0 ? 1n : 0n)) throw new ConfigError('Invalid save parameters')
    numbers.push(value > INT64_MAX ? INT64_MAX : value)
  }
  if (words.length % 2 !== 0) throw new ConfigError('Invalid save parameters')
  return numbers.join(' ')
}

const OUTPUT_LIMIT_CLASSES: Readonly<Record<string, keyof OutputBufferLimits>> = {
  normal: 'normal',
  replica: 'replica',
  slave: 'replica',
  pubsub: 'pubsub',
}

/**
 * redis config.c `client-output-buffer-limit`: groups of `<class> <hard> <soft> <soft-seconds>`,
 * sizes as memtoull reads them; classes not given keep their limits. bfs also takes one size
 * alone, the normal class's hard limit (its earlier form). Errors are redis's words.
 */
export function parseOutputBufferLimits(args: readonly string[], current: OutputBufferLimits): OutputBufferLimits {
  // redis splits the value on single spaces (sdssplitlen), so doubled spaces make empty words.
  const value = args.join(' ')
  if (value === '') return current
  const words = value.split(' ')
  // bfs's own shorter form: one size, the normal class's hard limit.
  const single = words.length === 1 ? limitNumber(value) : undefined
  if (single !== undefined) return { ...current, normal: { hard: single, soft: 0, softSeconds: 0 } }
  if (words.length % 4 !== 0) throw new ConfigError('Wrong number of arguments in buffer limit configuration.')
  // Every word is checked before any class changes: all or nothing, as in redis.
  const limits = { ...current }
  for (let i = 0; i < words.length; i += 4) {
    const kind = OUTPUT_LIMIT_CLASSES[words[i]!.toLowerCase()]
    if (kind === undefined) throw new ConfigError('Invalid client class specified in buffer limit configuration.')
    const [hard, soft, seconds] = [words[i + 1]!, words[i + 2]!, words[i + 3]!].map(limitNumber)
    if (hard === undefined || soft === undefined || seconds === undefined || seconds > MAX_SECONDS) {
      throw new ConfigError('Error in hard, soft or soft_seconds setting in buffer limit configuration.')
    }
    limits[kind] = { hard, soft, softSeconds: seconds }
  }
  return limits
}

/**
 * One number of a buffer limit as redis reads all three (memtoull: digits with an optional '+' and
 * unit; an empty word is 0); undefined for anything else, and past 2^53 (redis would wrap it).
 */
function limitNumber(word: string): number | undefined {
  if (word === '') return 0
  const value = memoryBytes(word.startsWith('+') ? word.slice(1) : word)
  return value !== undefined && Number.isSafeInteger(value) ? value : undefined
}

/**
 * `rename-command NAME NEWNAME`: repeatable, so the rule is added to `current`'s; checked against
 * the command table at start (redis.conf, where it is not a CONFIG GET key either).
 */
export function parseRenameRule(args: readonly string[], current: readonly RenameRule[]): readonly RenameRule[] {
  if (args.length !== 2) throw new ConfigError(`'rename-command' takes <name> <new-name>, got ${args.length} values`)
  return [...current, { from: args[0]!, to: args[1]! }]
}
