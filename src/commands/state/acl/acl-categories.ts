/**
 * ACL categories: which `@category` each command and subcommand belongs to. Redis's own commands
 * have the categories redis-server 7.0.15 gives them (acl-categories-data.ts, generated from its
 * COMMAND INFO by scripts/acl-categories.mjs); BF.* and APBF.* (and the module group's, `bf`) are in `@bloom`, CF.* in
 * `@cuckoo` (RedisBloom 8's category), and in `@read`/`@write`/`@fast`/`@slow` by their flags
 * (RedisBloom 2.4 puts them in none: docs/reference/compatibility.md); an extension's commands are in
 * the categories their flags give.
 */
import { REDIS_ACL_CATEGORIES } from '../../data/acl-categories-data.js'

/** What a command's categories are read from (kernel/context.ts CommandEntry): its name, group and flags. */
export interface CategorizedCommand {
  readonly spec: { readonly name: string; readonly group: string; readonly flags: readonly string[] }
}

/** redis 7.0 acl.c ACLCommandCategories, in its order (ACL CAT, COMMAND INFO), then bfs's `bloom` and `cuckoo`. */
export const ACL_CATEGORIES: readonly string[] = [
  'keyspace',
  'read',
  'write',
  'set',
  'sortedset',
  'list',
  'hash',
  'string',
  'bitmap',
  'hyperloglog',
  'geo',
  'stream',
  'pubsub',
  'admin',
  'fast',
  'slow',
  'blocking',
  'dangerous',
  'connection',
  'transaction',
  'scripting',
  'bloom',
  'cuckoo',
]

const RANK = new Map(ACL_CATEGORIES.map((name, index) => [name, index]))

/** Whether `name` (any case) is a category; returns its canonical lower-case name. */
export function categoryName(name: string): string | undefined {
  const lower = name.toLowerCase()
  return RANK.has(lower) ? lower : undefined
}

/** Whether a command is one of the Bloom family's (BF.*, and APBF.* the sliding-window filters). */
export function isBloomCommand(name: string): boolean {
  const upper = name.toUpperCase()
  return upper.startsWith('BF.') || upper.startsWith('APBF.')
}

/** Whether a command is one of the Cuckoo family's (CF.*). */
export function isCuckooCommand(name: string): boolean {
  return name.toUpperCase().startsWith('CF.')
}

/** The categories a command's flags give it (bfs's own commands and extensions'). */
export function categoriesFromFlags(flags: readonly string[]): string[] {
  const categories: string[] = []
  if (flags.includes('write')) categories.push('write')
  if (flags.includes('readonly')) categories.push('read')
  if (flags.includes('admin')) categories.push('admin', 'dangerous')
  categories.push(flags.includes('fast') ? 'fast' : 'slow')
  if (flags.includes('pubsub')) categories.push('pubsub')
  return categories
}

/**
 * A command's or subcommand's categories in ACL_CATEGORIES's order: `fullName` is the row's
 * ('config|get'); `entry` is the command (its container, for a subcommand).
 */
export function categoriesOf(entry: CategorizedCommand, fullName: string): readonly string[] {
  // RedisBloom's module group ('bf': BFS.HEALTH, an extension declared in it) is in @bloom too.
  const cuckoo = isCuckooCommand(entry.spec.name)
  const bloom = isBloomCommand(entry.spec.name) || (entry.spec.group === 'bf' && !cuckoo)
  const redis = bloom || cuckoo ? undefined : REDIS_ACL_CATEGORIES[fullName]
  const categories = redis !== undefined ? [...redis] : categoriesFromFlags(entry.spec.flags)
  if (bloom) categories.push('bloom')
  if (cuckoo) categories.push('cuckoo')
  return categories.sort((a, b) => (RANK.get(a) ?? RANK.size) - (RANK.get(b) ?? RANK.size))
}
