/**
 * Configuration: every key with its default, unit and bounds in one table. bfs.conf is parsed
 * redis.conf style (`key value`, # comments, quoted values), then `--key value` flags override it.
 * CONFIG GET/SET read and write the same table.
 */
import { splitConfigLine } from './config-line.js'

export type LogLevel = 'debug' | 'verbose' | 'notice' | 'warning'

/** The whole configuration, keyed by the names bfs.conf and CONFIG GET use. */
export interface Config {
  port: number
  bind: string
  dir: string
  maxclients: number
  'default-error-rate': number
  'default-capacity': number
  'default-expansion': number
  /** Largest single filter in bytes (all layers); 0 = no limit. */
  'max-filter-bytes': number
  loglevel: LogLevel
  /** Log file path; '' logs to standard output. */
  logfile: string
  requirepass: string
  /** Snapshot rules as redis.conf writes them: "3600 1 300 100 60 10000", or "" for none. */
  save: string
  appendonly: boolean
  appendfsync: 'always' | 'everysec' | 'no'
}

export type ConfigKey = keyof Config

type Kind =
  | { type: 'integer'; min: number; max: number }
  | { type: 'float'; min: number; max: number; exclusiveMin?: boolean; exclusiveMax?: boolean }
  | { type: 'bytes'; min: number; max: number }
  | { type: 'string' }
  | { type: 'enum'; values: readonly string[] }
  | { type: 'boolean' }
  | { type: 'save' }

export interface ConfigKeySpec {
  readonly name: ConfigKey
  readonly kind: Kind
  /** Whether CONFIG SET may change it at run time. */
  readonly mutable: boolean
  readonly description: string
}

export const MIN_PORT = 0
export const MAX_PORT = 65535
export const DEFAULT_MAXCLIENTS = 10_000
export const MAX_MAXCLIENTS = 1_000_000

/** Every default, with its unit in the key's description below. */
export const DEFAULT_CONFIG: Readonly<Config> = Object.freeze({
  port: 6381,
  bind: '127.0.0.1',
  dir: './data',
  maxclients: DEFAULT_MAXCLIENTS,
  'default-error-rate': 0.01,
  'default-capacity': 100,
  'default-expansion': 2,
  'max-filter-bytes': 4 * 1024 * 1024 * 1024,
  loglevel: 'notice',
  logfile: '',
  requirepass: '',
  save: '3600 1 300 100 60 10000',
  appendonly: true,
  appendfsync: 'everysec',
})

/** The keys in the order bfs.conf.example lists them. */
export const CONFIG_KEYS: readonly ConfigKeySpec[] = [
  { name: 'port', kind: { type: 'integer', min: MIN_PORT, max: MAX_PORT }, mutable: false, description: 'TCP port (0 = any free port)' },
  { name: 'bind', kind: { type: 'string' }, mutable: false, description: 'address(es) to listen on, space separated' },
  { name: 'dir', kind: { type: 'string' }, mutable: false, description: 'data directory, created if missing' },
  { name: 'maxclients', kind: { type: 'integer', min: 1, max: MAX_MAXCLIENTS }, mutable: true, description: 'most simultaneous clients' },
  { name: 'default-error-rate', kind: { type: 'float', min: 0, max: 1, exclusiveMin: true, exclusiveMax: true }, mutable: true, description: 'error rate of auto-created filters' },
  { name: 'default-capacity', kind: { type: 'integer', min: 1, max: Number.MAX_SAFE_INTEGER }, mutable: true, description: 'capacity (items) of auto-created filters' },
  { name: 'default-expansion', kind: { type: 'integer', min: 1, max: 0xffffffff }, mutable: true, description: 'growth factor of auto-created filters' },
  { name: 'max-filter-bytes', kind: { type: 'bytes', min: 0, max: Number.MAX_SAFE_INTEGER }, mutable: true, description: 'largest filter in bytes, 0 = no limit' },
  { name: 'loglevel', kind: { type: 'enum', values: ['debug', 'verbose', 'notice', 'warning'] }, mutable: true, description: 'log verbosity' },
  { name: 'logfile', kind: { type: 'string' }, mutable: false, description: 'log file, "" for standard output' },
  { name: 'requirepass', kind: { type: 'string' }, mutable: true, description: 'password clients must AUTH with, "" for none' },
  { name: 'save', kind: { type: 'save' }, mutable: true, description: 'snapshot rules: <seconds> <changes> pairs, "" disables' },
  { name: 'appendonly', kind: { type: 'boolean' }, mutable: true, description: 'append-only log of writes' },
  { name: 'appendfsync', kind: { type: 'enum', values: ['always', 'everysec', 'no'] }, mutable: true, description: 'fsync policy of the append-only log' },
]

const SPECS = new Map<string, ConfigKeySpec>(CONFIG_KEYS.map((spec) => [spec.name, spec]))

/** A configuration problem, worded to name the key. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

export function configKeySpec(name: string): ConfigKeySpec | undefined {
  return SPECS.get(name.toLowerCase())
}

/** Parses one key's value(s) into its typed form; throws ConfigError naming the key. */
export function parseConfigValue(spec: ConfigKeySpec, args: readonly string[]): Config[ConfigKey] {
  const kind = spec.kind
  const name = spec.name
  if (kind.type === 'save') return parseSaveRules(name, args)
  if (args.length !== 1) throw new ConfigError(`'${name}' takes one value, got ${args.length}`)
  const raw = args[0]!
  switch (kind.type) {
    case 'integer': {
      if (!/^-?\d+$/.test(raw)) throw new ConfigError(`'${name}' must be an integer, got '${raw}'`)
      return checkRange(name, Number(raw), kind.min, kind.max)
    }
    case 'bytes':
      return checkRange(name, parseMemory(name, raw), kind.min, kind.max)
    case 'float': {
      const value = Number(raw)
      if (raw.trim() === '' || !Number.isFinite(value)) throw new ConfigError(`'${name}' must be a number, got '${raw}'`)
      const low = kind.exclusiveMin ? value <= kind.min : value < kind.min
      const high = kind.exclusiveMax ? value >= kind.max : value > kind.max
      if (low || high) {
        const open = kind.exclusiveMin ? '(' : '['
        const close = kind.exclusiveMax ? ')' : ']'
        throw new ConfigError(`'${name}' must be in ${open}${kind.min}, ${kind.max}${close}, got '${raw}'`)
      }
      return value
    }
    case 'string':
      return raw
    case 'enum': {
      const value = raw.toLowerCase()
      if (!kind.values.includes(value)) throw new ConfigError(`'${name}' must be one of ${kind.values.join(', ')}, got '${raw}'`)
      return value as Config[ConfigKey]
    }
    case 'boolean': {
      const value = raw.toLowerCase()
      if (value !== 'yes' && value !== 'no') throw new ConfigError(`'${name}' must be yes or no, got '${raw}'`)
      return value === 'yes'
    }
  }
}

function checkRange(name: string, value: number, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`'${name}' must be between ${min} and ${max}, got '${value}'`)
  }
  return value
}

/** redis util.c memtoull: 1k = 1000, 1kb = 1024, likewise m/mb and g/gb. */
export function parseMemory(name: string, raw: string): number {
  const match = /^(\d+)(k|kb|m|mb|g|gb|b)?$/i.exec(raw.trim())
  if (!match) throw new ConfigError(`'${name}' must be a size like 100mb, got '${raw}'`)
  const units: Record<string, number> = { b: 1, k: 1e3, kb: 1024, m: 1e6, mb: 1024 ** 2, g: 1e9, gb: 1024 ** 3 }
  return Number(match[1]) * units[(match[2] ?? 'b').toLowerCase()]!
}

/** `save <seconds> <changes> [...]` or `save ""`: normalised to "s c s c" or "". */
function parseSaveRules(name: string, args: readonly string[]): string {
  const words = args.flatMap((arg) => arg.split(/\s+/)).filter((word) => word !== '')
  if (words.length % 2 !== 0) throw new ConfigError(`'${name}' takes <seconds> <changes> pairs, got '${args.join(' ')}'`)
  for (const word of words) {
    if (!/^\d+$/.test(word)) throw new ConfigError(`'${name}' takes whole numbers, got '${word}'`)
  }
  return words.map(Number).join(' ')
}

/** The value as CONFIG GET and a rewritten bfs.conf show it. */
export function formatConfigValue(config: Config, name: ConfigKey): string {
  const value = config[name]
  if (typeof value === 'boolean') return value ? 'yes' : 'no'
  return String(value)
}

/**
 * Builds a configuration from bfs.conf text (optional) and command-line flags. Later values win;
 * `save` lines accumulate as in redis.conf. Throws ConfigError naming the key on any problem.
 */
export function loadConfig(fileText: string | undefined, flags: readonly string[] = []): Config {
  const config: Config = { ...DEFAULT_CONFIG }
  const saveLines: string[] = []
  const apply = (key: string, args: string[], where: string): void => {
    const spec = configKeySpec(key)
    if (!spec) throw new ConfigError(`${where}: unknown config key '${key}'`)
    try {
      if (spec.name === 'save') {
        // redis.conf: each save line adds rules; `save ""` clears them.
        const rules = parseSaveRules('save', args)
        if (rules === '') saveLines.length = 0
        else saveLines.push(rules)
        ;(config as unknown as Record<string, unknown>).save = saveLines.join(' ')
        return
      }
      ;(config as unknown as Record<string, unknown>)[spec.name] = parseConfigValue(spec, args)
    } catch (error) {
      if (error instanceof ConfigError) throw new ConfigError(`${where}: ${error.message}`)
      throw error
    }
  }
  if (fileText !== undefined) {
    const lines = fileText.split(/\r?\n/)
    lines.forEach((line, index) => {
      const trimmed = line.trim()
      if (trimmed === '' || trimmed.startsWith('#')) return
      const words = splitConfigLine(trimmed)
      if (words === undefined) throw new ConfigError(`config line ${index + 1}: unbalanced quotes`)
      apply(words[0]!, words.slice(1), `config line ${index + 1}`)
    })
  }
  let saveFromFlags = false
  for (let i = 0; i < flags.length; ) {
    const flag = flags[i]!
    if (!flag.startsWith('--')) throw new ConfigError(`unexpected argument '${flag}' (flags are --key value)`)
    const args: string[] = []
    i++
    while (i < flags.length && !flags[i]!.startsWith('--')) args.push(flags[i++]!)
    const key = flag.slice(2)
    // A flag replaces the file's save rules instead of adding to them.
    if (configKeySpec(key)?.name === 'save' && !saveFromFlags) {
      saveLines.length = 0
      saveFromFlags = true
    }
    apply(key, args, `--${key}`)
  }
  return config
}
