// Writes src/commands/command-docs/<group>.ts from a running redis-server 7.0.15's COMMAND DOCS
// (and COMMAND INFO's tips and key specs):
// node scripts/command-docs.mjs <port>   (a redis-server listening on 127.0.0.1:<port>)
// Only the groups bfs has commands of, or may have (GROUPS: cluster mode's too; a command bfs lacks
// is simply not served). The files are generated: do not edit them;
// test/server/command-docs.test.ts compares what bfs serves with a real redis-server.
import net from 'node:net'
import { writeFileSync } from 'node:fs'

const GROUPS = ['cluster', 'connection', 'generic', 'pubsub', 'server', 'transactions']
const COMMAND_KEYS = ['summary', 'since', 'group', 'complexity', 'doc_flags', 'deprecated_since', 'replaced_by', 'history', 'arguments', 'subcommands']
const MAX_LINES = 440
const ARGUMENT_KEYS = ['name', 'type', 'key_spec_index', 'token', 'summary', 'since', 'deprecated_since', 'flags', 'arguments']

/** One RESP3 value from buf at pos: [value, next]; sets and arrays are arrays, maps are [key, value][]. */
function parse(buf, pos) {
  const eol = buf.indexOf('\r\n', pos)
  const head = buf.toString('latin1', pos + 1, eol)
  const type = String.fromCharCode(buf[pos])
  let next = eol + 2
  if (type === '$') {
    const length = Number(head)
    return [buf.toString('utf8', next, next + length), next + length + 2]
  }
  if (type === '+') return [head, next]
  if (type === ':') return [Number(head), next]
  if (type === '*' || type === '~' || type === '%') {
    const count = Number(head) * (type === '%' ? 2 : 1)
    const items = []
    for (let i = 0; i < count; i++) {
      const [item, after] = parse(buf, next)
      items.push(item)
      next = after
    }
    if (type !== '%') return [items, next]
    const pairs = []
    for (let i = 0; i < items.length; i += 2) pairs.push([items[i], items[i + 1]])
    return [pairs, next]
  }
  throw new Error(`unexpected reply type ${type}`)
}

function ask(port, ...commands) {
  const encode = (args) => `*${args.length}\r\n` + args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let buf = Buffer.alloc(0)
    socket.on('error', reject)
    socket.on('data', (data) => {
      buf = Buffer.concat([buf, data])
      try {
        const replies = []
        let pos = 0
        for (let i = 0; i < commands.length; i++) {
          const [value, next] = parse(buf, pos)
          replies.push(value)
          pos = next
        }
        socket.end()
        resolve(replies)
      } catch {
        // incomplete: wait for more
      }
    })
    socket.write(commands.map(encode).join(''))
  })
}

function checkKeys(pairs, allowed, what) {
  let last = -1
  for (const [key] of pairs) {
    const index = allowed.indexOf(key)
    if (index <= last) throw new Error(`${what}: unexpected field ${key}`)
    last = index
  }
}

function argumentDoc(pairs, what) {
  checkKeys(pairs, ARGUMENT_KEYS, what)
  const doc = {}
  for (const [key, value] of pairs) doc[key] = key === 'arguments' ? value.map((arg) => argumentDoc(arg, what)) : value
  return doc
}

/** A command's doc without its subcommands (bfs lists its own), and its subcommands' docs by full name. */
function commandDocs(name, pairs, out) {
  checkKeys(pairs, COMMAND_KEYS, name)
  const doc = {}
  for (const [key, value] of pairs) {
    if (key === 'arguments') doc.arguments = value.map((arg) => argumentDoc(arg, name))
    else if (key === 'subcommands') for (const [subname, sub] of value) commandDocs(subname, sub, out)
    else doc[key] = value
  }
  out.set(name, doc)
}

/** COMMAND INFO's tips and key specs (bfs generates the other fields from its rows), subcommands' too. */
function addInfo(info, all) {
  const [name, , , , , , , tips, keySpecs, subcommands] = info
  const doc = all.get(name)
  if (tips.length > 0) doc.tips = tips
  if (keySpecs.length > 0) doc.key_specs = keySpecs.map((pairs) => Object.fromEntries(pairs.map(([key, value]) => [key, key === 'begin_search' || key === 'find_keys' ? keySpecPart(value) : value])))
  for (const sub of subcommands) addInfo(sub, all)
}

/** { type, spec } from a key spec's begin_search or find_keys map. */
function keySpecPart(pairs) {
  const part = new Map(pairs)
  return { type: part.get('type'), spec: Object.fromEntries(part.get('spec')) }
}

const quote = (text) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
const identifier = (key) => (/^[a-z_]+$/.test(key) ? key : quote(key))

function literal(value) {
  if (typeof value === 'string') return quote(value)
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`
  if (Object.keys(value).length === 0) return '{}'
  return `{ ${Object.entries(value).map(([key, item]) => `${identifier(key)}: ${literal(item)}`).join(', ')} }`
}

function commandSource(name, doc) {
  const { summary, since, group, ...rest } = doc
  const lines = [`  ${identifier(name)}: {`, `    summary: ${literal(summary)}, since: ${literal(since)}, group: ${literal(group)},`]
  for (const [key, value] of Object.entries(rest)) {
    if (key === 'arguments') {
      lines.push('    arguments: [')
      for (const arg of value) lines.push(`      ${literal(arg)},`)
      lines.push('    ],')
    } else {
      lines.push(`    ${key}: ${literal(value)},`)
    }
  }
  lines.push('  },')
  return lines
}

/** A group's commands in as few files of at most MAX_LINES lines of commands as can be, of like sizes. */
function chunks(names, all) {
  const sources = names.map((name) => commandSource(name, all.get(name)))
  const total = sources.reduce((sum, source) => sum + source.length, 0)
  const count = Math.ceil(total / MAX_LINES)
  const size = Math.ceil(total / count)
  const files = [[]]
  for (const source of sources) {
    if (files.at(-1).length + source.length > size && files.length < count) files.push([])
    files.at(-1).push(...source)
  }
  return files
}

const port = Number(process.argv[2])
const [hello, docs, infos] = await ask(port, ['HELLO', '3'], ['COMMAND', 'DOCS'], ['COMMAND', 'INFO'])
const version = new Map(hello).get('version')
const all = new Map()
for (const [name, pairs] of docs) commandDocs(name, pairs, all)
for (const info of infos) addInfo(info, all)
for (const group of GROUPS) {
  const names = [...all.keys()].filter((name) => all.get(name).group === group).sort()
  chunks(names, all).forEach((lines, index) => {
    const file = index === 0 ? group : `${group}-${index + 1}`
    const constant = `${file.toUpperCase().replace('-', '_')}_DOCS`
    const source = [
      `// Generated by scripts/command-docs.mjs from redis-server ${version}'s COMMAND DOCS and COMMAND INFO (group ${group}); do not edit.`,
      `import type { CommandDoc } from './doc-types.js'`,
      '',
      `export const ${constant}: Readonly<Record<string, CommandDoc>> = {`,
      ...lines,
      '}',
      '',
    ]
    writeFileSync(new URL(`../src/commands/command-docs/${file}.ts`, import.meta.url), source.join('\n'))
    console.log(`${file}.ts: ${source.length} lines`)
  })
}
