/**
 * COMMAND DOCS, generated from the command table's rows joined to the documentation in
 * data/command-docs/ by name: redis 7.0.15's own for its commands (generated from a real redis-server's
 * reply by scripts/command-docs.mjs, so the reply is redis's byte for byte), RedisBloom's command
 * docs for BF.* (RedisBloom 2.4 registers none, so redis-cli could show no hints for them), and
 * the row's summary, since and group for a command without an entry (an extension's). A
 * container's subcommands are its rows, each with its `container|sub` entry. COMMAND INFO's tips
 * and key specs come from the same entries.
 */
import type { ReplySink } from '../../protocol/reply-sink.js'
import type { CommandEntry, CommandTableView } from '../kernel/context.js'
import type { ArgumentDoc, CommandDoc, KeySpec, KeySpecPart } from '../data/command-docs/doc-types.js'
import { COMMAND_DOCS } from '../data/command-docs/by-name.js'

/** The rows COMMAND DOCS reports as a module's, as redis does RedisBloom's: group `module`, module `bf`. */
const MODULE_GROUP = 'bf'

/** One command's reply fields, in redis 7.0 addReplyCommandDocs's order; undefined ones are not sent. */
type Field = readonly [string, ((reply: ReplySink) => void) | undefined]

const text = (value: string | undefined) => (value === undefined ? undefined : (reply: ReplySink) => reply.bulk(value))

function flags(values: readonly string[] | undefined) {
  if (values === undefined) return undefined
  return (reply: ReplySink) => {
    reply.set(values.length)
    for (const value of values) reply.simple(value)
  }
}

function history(entries: CommandDoc['history']) {
  if (entries === undefined) return undefined
  return (reply: ReplySink) => {
    reply.set(entries.length)
    for (const [version, change] of entries) {
      reply.array(2)
      reply.bulk(version)
      reply.bulk(change)
    }
  }
}

function writeFields(reply: ReplySink, fields: readonly Field[]): void {
  const present = fields.filter((field) => field[1] !== undefined)
  reply.map(present.length)
  for (const [name, write] of present) {
    reply.bulk(name)
    write!(reply)
  }
}

function writeArguments(reply: ReplySink, args: readonly ArgumentDoc[]): void {
  reply.array(args.length)
  for (const arg of args) {
    const index = arg.key_spec_index
    writeFields(reply, [
      ['name', text(arg.name)],
      ['type', text(arg.type)],
      ['key_spec_index', index === undefined ? undefined : (r) => r.integer(index)],
      ['token', text(arg.token)],
      ['summary', text(arg.summary)],
      ['since', text(arg.since)],
      ['deprecated_since', text(arg.deprecated_since)],
      ['flags', flags(arg.flags)],
      ['arguments', arg.arguments === undefined ? undefined : (r) => writeArguments(r, arg.arguments!)],
    ])
  }
}

/** What a command's reply says of it beyond its documentation: from its table row. */
interface RowFields {
  readonly summary?: string
  readonly since?: string
  readonly group: string
  /** A container's subcommands: each one's full name and documentation. */
  readonly subcommands?: readonly (readonly [string, CommandDoc])[]
}

function writeDoc(reply: ReplySink, row: RowFields, doc: CommandDoc): void {
  const group = doc.group ?? row.group
  const subcommands = row.subcommands
  writeFields(reply, [
    ['summary', text(doc.summary ?? row.summary)],
    ['since', text(doc.since ?? row.since)],
    ['group', text(group === MODULE_GROUP ? 'module' : group)],
    ['complexity', text(doc.complexity)],
    ['module', text(group === MODULE_GROUP ? MODULE_GROUP : undefined)],
    ['doc_flags', flags(doc.doc_flags)],
    ['deprecated_since', text(doc.deprecated_since)],
    ['replaced_by', text(doc.replaced_by)],
    ['history', history(doc.history)],
    ['arguments', doc.arguments === undefined ? undefined : (r) => writeArguments(r, doc.arguments!)],
    ['subcommands', subcommands === undefined ? undefined : (r) => writeSubcommands(r, row.group, subcommands)],
  ])
}

function writeSubcommands(
  reply: ReplySink,
  group: string,
  subcommands: readonly (readonly [string, CommandDoc])[],
): void {
  reply.map(subcommands.length)
  for (const [fullName, doc] of subcommands) {
    reply.bulk(fullName)
    writeDoc(reply, { group }, doc)
  }
}

/** A subcommand's documentation; one redis 7.0 lacks (CLIENT SETINFO is 7.2's) has only its group. */
function subcommandDoc(fullName: string): CommandDoc {
  return COMMAND_DOCS.get(fullName) ?? {}
}

/** One command's COMMAND DOCS map, its subcommands included. */
export function writeCommandDocs(reply: ReplySink, entry: CommandEntry): void {
  const spec = entry.spec
  const subcommands =
    entry.subcommands === undefined
      ? undefined
      : [...entry.subcommands.values()].map((row) => [row.fullName, subcommandDoc(row.fullName)] as const)
  const doc = COMMAND_DOCS.get(spec.name.toLowerCase()) ?? {}
  writeDoc(reply, { summary: spec.summary, since: spec.since, group: spec.group, subcommands }, doc)
}

/**
 * What a name given to COMMAND DOCS names: a command, or `container|sub` one subcommand (redis 7.0
 * lookupCommandBySds); undefined for none. `name` is the one the reply gives it.
 */
export function lookupDocumented(
  table: CommandTableView,
  name: string,
): { readonly name: string; write(reply: ReplySink): void } | undefined {
  const parts = name.split('|')
  const entry = table.get(parts[0]!)
  if (entry === undefined || parts.length > 2) return undefined
  if (parts.length === 1) return { name: entry.lowerName, write: (reply) => writeCommandDocs(reply, entry) }
  const row = entry.subcommands?.get(parts[1]!)
  if (row === undefined) return undefined
  return {
    name: row.fullName,
    write: (reply) => writeDoc(reply, { group: entry.spec.group }, subcommandDoc(row.fullName)),
  }
}

/**
 * The key spec redis 7.0 derives for a module command from its key positions
 * (moduleCreateCommandProxy in src/module.c: full access, begin at the first key, a range to the
 * last): what RedisBloom 2.4's commands report.
 */
function moduleKeySpec(keys: readonly [number, number, number]): KeySpec {
  const [first, last, step] = keys
  return {
    flags: ['RW', 'access', 'update'],
    begin_search: { type: 'index', spec: { index: first } },
    find_keys: { type: 'range', spec: { lastkey: last < 0 ? last : last - first, keystep: step, limit: 0 } },
  }
}

function writeKeySpecPart(reply: ReplySink, part: KeySpecPart): void {
  reply.map(2)
  reply.bulk('type')
  reply.bulk(part.type)
  reply.bulk('spec')
  const fields = Object.entries(part.spec)
  reply.map(fields.length)
  for (const [name, value] of fields) {
    reply.bulk(name)
    if (typeof value === 'number') reply.integer(value)
    else reply.bulk(value)
  }
}

/**
 * COMMAND INFO's tips and key specs for a command, as redis 7.0 addReplyCommandTips and
 * addReplyCommandKeySpecs write them: redis's own for its commands; for a module command the key
 * spec redis derives from its key positions; none for others (an extension's, bfs's BF.MERGE).
 */
export function writeTipsAndKeySpecs(reply: ReplySink, entry: CommandEntry): void {
  const spec = entry.spec
  // A command with keys and no documented key specs (a module's, an extension's) shows the one its
  // row derives, the spec COMMAND GETKEYS and the cluster's routing use (key-positions.ts).
  const derived = spec.keys[0] !== 0 ? [moduleKeySpec(spec.keys)] : []
  writeDocTipsAndKeySpecs(reply, COMMAND_DOCS.get(spec.name.toLowerCase()), derived)
}

/** The tips and key specs of a command's or a subcommand's docs (`derived` when they give no key specs). */
export function writeDocTipsAndKeySpecs(
  reply: ReplySink,
  doc: CommandDoc | undefined,
  derived: readonly KeySpec[] = [],
): void {
  const tips = doc?.tips ?? []
  reply.set(tips.length)
  for (const tip of tips) reply.bulk(tip)
  const keySpecs = doc?.key_specs ?? derived
  reply.set(keySpecs.length)
  for (const keySpec of keySpecs) {
    writeFields(reply, [
      ['notes', text(keySpec.notes)],
      ['flags', flags(keySpec.flags)],
      ['begin_search', (r) => writeKeySpecPart(r, keySpec.begin_search)],
      ['find_keys', (r) => writeKeySpecPart(r, keySpec.find_keys)],
    ])
  }
}
