/**
 * Reading a configuration as redis-server does (config.c loadServerConfigFromString): bfs.conf or
 * a stock redis.conf, then `--key value` flags. Later values win; `save` lines accumulate and
 * `save ""` clears them; `include` reads other files where it stands; redis 7.0 directives bfs
 * has no use for are accepted and listed (config-ignored.ts).
 */
import { readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { splitConfigLine } from './config-line.js'
import { acceptIgnored } from './config-ignored.js'
import { ConfigError, parseSaveRules } from './config-values.js'
import { DEFAULT_CONFIG, configFileName, configKeySpec, parseConfigValue, type Config } from './config.js'

/** A configuration and the redis.conf directives in it that bfs ignores, in the order met. */
export interface LoadedConfig {
  config: Config
  ignored: string[]
}

/** Includes within includes past this depth are an error (a file that includes itself). */
const MAX_INCLUDE_DEPTH = 16

/** The files an `include` names: the path itself, or those its wildcards in the last part match, sorted (redis: glob). */
function includedFiles(pattern: string): string[] {
  const base = path.basename(pattern)
  if (!/[*?[]/.test(base)) return [pattern]
  const dir = path.dirname(pattern)
  const source = base
    .replace(/[.+^${}()|\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.')
  const matcher = new RegExp(`^${source}$`)
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    // redis: a wildcard that matches nothing is no error.
    return []
  }
  return names
    .filter((name) => matcher.test(name))
    .sort()
    .map((name) => path.join(dir, name))
}

/**
 * Builds a configuration from bfs.conf text (optional) and command-line flags. Throws ConfigError
 * naming the key (and line) on any problem.
 */
export function readConfig(fileText: string | undefined, flags: readonly string[] = []): LoadedConfig {
  const config: Config = { ...DEFAULT_CONFIG }
  const ignored: string[] = []
  const saveLines: string[] = []
  let depth = 0
  const apply = (key: string, args: string[], where: string): void => {
    const spec = configFileName(key)?.spec
    try {
      if (spec === undefined) {
        if (key.toLowerCase() === 'include' && args.length === 1) return include(args[0]!)
        if (!acceptIgnored(key.toLowerCase(), args)) throw new ConfigError(`unknown config key '${key}'`)
        ignored.push(key.toLowerCase())
        return
      }
      if (spec.name === 'save') {
        // redis.conf: each save line adds rules; `save ""` clears them.
        const rules = parseSaveRules(args)
        if (rules === '') saveLines.length = 0
        else saveLines.push(rules)
        ;(config as unknown as Record<string, unknown>).save = saveLines.join(' ')
        return
      }
      ;(config as unknown as Record<string, unknown>)[spec.name] = parseConfigValue(spec, args, config)
    } catch (error) {
      if (error instanceof ConfigError) throw new ConfigError(`${where}: ${error.message}`)
      throw error
    }
  }
  const applyText = (text: string, file: string): void => {
    text.split(/\r?\n/).forEach((line, index) => {
      const trimmed = line.trim()
      if (trimmed === '' || trimmed.startsWith('#')) return
      const words = splitConfigLine(trimmed)
      if (words === undefined) throw new ConfigError(`config line ${index + 1}${file}: unbalanced quotes`)
      apply(words[0]!, words.slice(1), `config line ${index + 1}${file} (${words[0]})`)
    })
  }
  const include = (pattern: string): void => {
    if (++depth > MAX_INCLUDE_DEPTH) throw new ConfigError(`includes nested more than ${MAX_INCLUDE_DEPTH} deep`)
    for (const file of includedFiles(pattern)) {
      let text: string
      try {
        text = readFileSync(file, 'utf8')
      } catch (error) {
        throw new ConfigError(`cannot read included file '${file}': ${(error as Error).message}`)
      }
      applyText(text, ` of ${file}`)
    }
    depth--
  }
  if (fileText !== undefined) applyText(fileText, '')
  let saveFromFlags = false
  for (let i = 0; i < flags.length;) {
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
  return { config, ignored }
}

/** readConfig's configuration alone. */
export function loadConfig(fileText: string | undefined, flags: readonly string[] = []): Config {
  return readConfig(fileText, flags).config
}
