/**
 * What one configuration key's row is: how its value is parsed and checked, its default and unit,
 * whether CONFIG SET may change it, its doc line. config.ts's table and the rows spread into it
 * (config-cluster.ts, config-process.ts, config-tls.ts) are written in these terms; this file
 * imports none of them.
 */

/** How a key's value is parsed and checked (config.ts parseConfigValue). */
export type ConfigKind =
  /** `auto`: the word `auto` is taken too, kept as 0 and shown as `auto` (io-threads). */
  | { type: 'integer'; min: number; max: number; auto?: true }
  | { type: 'float'; min: number; max: number; exclusiveMin?: boolean; exclusiveMax?: boolean }
  | { type: 'bytes'; min: number; max: number }
  /** `emptyIsNone`: '' means "not set", as redis EMPTY_STRING_IS_NULL (CONFIG REWRITE then writes no line); `words`: several values joined by spaces (`bind 127.0.0.1 -::1`). */
  | { type: 'string'; emptyIsNone?: true; words?: true }
  /** Permission bits, written in octal (redis OCTAL_CONFIG). */
  | { type: 'octal'; max: number }
  | { type: 'enum'; values: readonly string[] }
  | { type: 'boolean' }
  | { type: 'save' }
  | { type: 'output-buffer-limit' }
  | { type: 'rename' }
  | { type: 'replicaof' }
  /** `user name rules...`: repeatable, file only (not a CONFIG GET key, as in redis). */
  | { type: 'user' }

/** The unit a key's number counts, named in its doc line. */
export type ConfigUnit = 'seconds' | 'milliseconds' | 'bytes' | 'percent' | 'items'

/** One key's row as a table writes it, its name being its property's; `V` is the key's value type. */
export interface ConfigRow<V> {
  /** How a value is parsed and checked (parseConfigValue). */
  readonly kind: ConfigKind
  readonly default: V
  readonly unit?: ConfigUnit
  /** Whether CONFIG SET may change it at run time (the "live" column of docs/reference/configuration.md). */
  readonly mutable: boolean
  /** The doc line: docs/reference/configuration.md's table shows it as is. */
  readonly description: string
}
