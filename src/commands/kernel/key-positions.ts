/**
 * The key arguments of a command line, as redis 7.0 finds them (db.c getKeysFromCommandWithSpecs):
 * from the command's key specs (command-docs/, redis 7.0's own) or, for a command without any
 * (BF.*, an extension's), from its row's [first, last, step] with a module's flags (RW access
 * update), as redis derives a module command's spec. {@link commandKeyPositions} is the search for
 * one line (cluster, CLIENT PAUSE's hold), {@link keyedRowOf} with {@link positionsOf} the same for
 * COMMAND GETKEYS (admin/server.ts), and {@link keyPlanOf} / {@link planKeyPositions} the same per
 * row, worked out once, for dispatch's ACL check (redis ACLSelectorCheckCmd takes its keys from
 * getKeysFromCommandWithSpecs too).
 */
import type { CommandEntry, CommandRow, CommandTableView } from './context.js'
import type { KeySpec } from '../data/command-docs/doc-types.js'
import { COMMAND_DOCS } from '../data/command-docs/by-name.js'

/** Key positions of subcommands (redis commands.def); bfs's rows give them for whole commands only. */
const SUBCOMMAND_KEYS: Readonly<Record<string, readonly [number, number, number]>> = { 'memory|usage': [2, 2, 1] }
/** What redis derives for a module command's keys (and bfs for an undocumented one). */
const MODULE_KEY_FLAGS = ['RW', 'access', 'update'] as const

/** A command line's resolved row: its full name, arity, flags and key specs. */
export interface KeyedRow {
  readonly fullName: string
  readonly arity: number
  readonly noMandatoryKeys: boolean
  readonly keySpecs: readonly KeySpec[]
}

/** One key argument: its position in the command line and its key spec's flags. */
export interface KeyPosition {
  readonly pos: number
  readonly flags: readonly string[]
}

/** The key specs of a row: its documented ones, else derived from [first, last, step]. */
function keySpecsOf(fullName: string, keys: readonly [number, number, number] | undefined): readonly KeySpec[] {
  const documented = COMMAND_DOCS.get(fullName)?.key_specs
  if (documented !== undefined && documented.length > 0) return documented
  if (keys === undefined || keys[0] === 0) return []
  const [first, last, step] = keys
  return [
    {
      flags: MODULE_KEY_FLAGS,
      begin_search: { type: 'index', spec: { index: first } },
      find_keys: { type: 'range', spec: { lastkey: last < 0 ? last : last - first, keystep: step, limit: 0 } },
    },
  ]
}

/** redis lookupCommand over argv: a container's subcommand when it has one; undefined when unknown. */
export function keyedRowOf(table: CommandTableView, args: readonly Buffer[]): KeyedRow | undefined {
  const entry = table.get(args[0]!.toString('latin1').toLowerCase())
  if (entry === undefined) return undefined
  if (entry.subcommands !== undefined && args.length >= 2) {
    const row = entry.subcommands.get(args[1]!.toString('latin1').toLowerCase())
    return row === undefined ? undefined : keyedRow(entry, row)
  }
  return keyedRow(entry, entry.row)
}

/** A row's key specs under its own name (`migrate`, `memory|usage`), whatever rename-command called it. */
function keyedRow(entry: CommandEntry, row: CommandRow): KeyedRow {
  if (row !== entry.row) {
    return {
      fullName: row.fullName,
      arity: row.spec.reportedArity ?? row.spec.arity,
      noMandatoryKeys: false,
      keySpecs: keySpecsOf(row.fullName, SUBCOMMAND_KEYS[row.fullName]),
    }
  }
  const spec = entry.spec
  const arity = spec.flags.includes('module') ? -1 : (spec.reportedArity ?? spec.arity)
  return {
    fullName: row.fullName,
    arity,
    noMandatoryKeys: spec.flags.includes('no_mandatory_keys'),
    keySpecs: keySpecsOf(row.fullName, spec.keys),
  }
}

/** redis doesCommandHaveKeys: a key spec that is not all `not_key`. */
export function hasKeys(row: KeyedRow): boolean {
  return row.keySpecs.some((keySpec) => !keySpec.flags.includes('not_key'))
}

/** redis getKeysUsingKeySpecs for the begin_search / find_keys kinds redis 7.0's specs use. */
export function keyPositions(keySpecs: readonly KeySpec[], args: readonly Buffer[]): KeyPosition[] {
  const found: KeyPosition[] = []
  const argc = args.length
  for (const keySpec of keySpecs) {
    if (keySpec.flags.includes('not_key')) continue
    const begin = beginOf(keySpec, args)
    if (begin === undefined || begin >= argc) continue
    const find = keySpec.find_keys
    let first = begin
    let last: number
    let step: number
    if (find.type === 'range') {
      const lastkey = Number(find.spec.lastkey)
      step = Number(find.spec.keystep)
      const limit = Number(find.spec.limit)
      if (lastkey >= 0) last = begin + lastkey
      else if (limit <= 1) last = argc + lastkey
      else last = begin + Math.floor((argc - 1 - begin) / limit)
    } else if (find.type === 'keynum') {
      const count = Number(args[begin + Number(find.spec.keynumidx)]?.toString('latin1'))
      if (!Number.isInteger(count) || count < 0) continue
      first = begin + Number(find.spec.firstkey)
      step = Number(find.spec.keystep)
      last = first + (count - 1) * step
    } else continue
    for (let pos = first; pos <= last && pos < argc; pos += Math.max(step, 1)) found.push({ pos, flags: keySpec.flags })
  }
  return found
}

function beginOf(keySpec: KeySpec, args: readonly Buffer[]): number | undefined {
  const begin = keySpec.begin_search
  if (begin.type === 'index') return Number(begin.spec.index)
  if (begin.type !== 'keyword') return undefined
  const keyword = String(begin.spec.keyword).toLowerCase()
  const start = Number(begin.spec.startfrom)
  const from = start >= 0 ? start : args.length + start
  for (let i = from; i > 0 && i < args.length; i += start >= 0 ? 1 : -1)
    if (args[i]!.toString('latin1').toLowerCase() === keyword) return i + 1
  return undefined
}

/** The key positions of a command line (cluster slots, ACL key patterns); undefined for an unknown command. */
export function commandKeyPositions(table: CommandTableView, args: readonly Buffer[]): KeyPosition[] | undefined {
  const row = keyedRowOf(table, args)
  return row === undefined ? undefined : positionsOf(row, args)
}

/**
 * How a row's keys are found, worked out once per row: none; one key spec that is a plain range
 * (most commands: its [first, last, step], a negative last counting from the end, and its flags;
 * `derived` when no key spec documents the row, as for BF.* and an extension's commands); or the
 * key specs in full, searched over each line ({@link planKeyPositions}).
 */
export type KeyPlan =
  | { readonly kind: 'none' }
  | {
      readonly kind: 'range'
      readonly first: number
      readonly last: number
      readonly step: number
      readonly flags: readonly string[]
      readonly derived: boolean
    }
  | { readonly kind: 'specs'; readonly row: KeyedRow }

const NO_KEY_PLAN: KeyPlan = { kind: 'none' }
const plans = new WeakMap<CommandRow, KeyPlan>()

/** The key plan of a command's row (its own, or one of its subcommands'). */
export function keyPlanOf(entry: CommandEntry, row: CommandRow): KeyPlan {
  let plan = plans.get(row)
  if (plan === undefined) {
    plan = makePlan(keyedRow(entry, row))
    plans.set(row, plan)
  }
  return plan
}

function makePlan(row: KeyedRow): KeyPlan {
  const specs = row.keySpecs.filter((keySpec) => !keySpec.flags.includes('not_key'))
  if (specs.length === 0) return NO_KEY_PLAN
  const only = specs[0]!
  if (
    specs.length > 1 ||
    row.fullName === 'migrate' ||
    only.begin_search.type !== 'index' ||
    only.find_keys.type !== 'range' ||
    Number(only.find_keys.spec.limit) > 1
  ) {
    return { kind: 'specs', row }
  }
  const first = Number(only.begin_search.spec.index)
  const lastkey = Number(only.find_keys.spec.lastkey)
  const derived = !(COMMAND_DOCS.get(row.fullName)?.key_specs?.length ?? 0)
  return {
    kind: 'range',
    first,
    last: lastkey < 0 ? lastkey : first + lastkey,
    step: Math.max(Number(only.find_keys.spec.keystep), 1),
    flags: only.flags,
    derived,
  }
}

/** The key positions of a line under a `specs` plan. */
export function planKeyPositions(plan: Extract<KeyPlan, { kind: 'specs' }>, args: readonly Buffer[]): KeyPosition[] {
  return positionsOf(plan.row, args)
}

/** The key positions of a resolved row: its key specs', or its getkeys_proc's where redis uses one (MIGRATE). */
export function positionsOf(row: KeyedRow, args: readonly Buffer[]): KeyPosition[] {
  return row.fullName === 'migrate' ? migrateKeyPositions(row, args) : keyPositions(row.keySpecs, args)
}

/**
 * redis 7.0 db.c migrateGetKeys (MIGRATE's key specs are "incomplete", so redis asks it): the key
 * argument, or with KEYS (found past AUTH's and AUTH2's arguments) the keys after it, none when
 * the key argument is not empty. So `MIGRATE h p "" 0 t KEYS a b` has the keys a and b only.
 */
function migrateKeyPositions(row: KeyedRow, args: readonly Buffer[]): KeyPosition[] {
  const flags = row.keySpecs[0]?.flags ?? MODULE_KEY_FLAGS
  let first = 3
  let count = 1
  for (let i = 6; i < args.length; i++) {
    const word = args[i]!.toString('latin1').toLowerCase()
    if (word === 'auth') i++
    else if (word === 'auth2') i += 2
    else if (word === 'keys') {
      if (args[3]!.length > 0) return []
      first = i + 1
      count = args.length - first
      break
    }
  }
  const found: KeyPosition[] = []
  for (let pos = first; pos < first + count && pos < args.length; pos++) found.push({ pos, flags })
  return found
}
