import { describe, expect, it } from 'vitest'
import { importsOf, sourceFiles } from '../helpers/source-tree.js'

/**
 * The folders of src/ form a DAG: each may import only the folders listed for it (its own
 * included), `import type` and dynamic imports counted like any other. From the bottom:
 * core ← format ← protocol ← runtime ← store ← replication ← cluster ← commands ← http ← server ← main.ts / index.ts.
 * library/ and tools/ sit on core, format and protocol; library may also use server for
 * createServer. Nothing imports main.ts.
 */
const BELOW: Record<string, readonly string[]> = {
  core: [],
  format: ['core'],
  protocol: ['core', 'format'],
  runtime: ['core', 'format', 'protocol'],
  store: ['core', 'format', 'protocol', 'runtime'],
  replication: ['core', 'format', 'protocol', 'runtime', 'store'],
  cluster: ['core', 'format', 'protocol', 'runtime', 'store', 'replication'],
  commands: ['core', 'format', 'protocol', 'runtime', 'store', 'replication', 'cluster'],
  http: ['core', 'format', 'protocol', 'runtime', 'store', 'replication', 'cluster', 'commands'],
  server: ['core', 'format', 'protocol', 'runtime', 'store', 'replication', 'cluster', 'commands', 'http'],
  library: ['core', 'format', 'protocol', 'server'],
  tools: ['core', 'format', 'protocol'],
}

/** The top-level modules: they may import every folder, and nothing imports them but index → not main. */
const ENTRY_POINTS = ['main.ts', 'index.ts']

function folderOf(file: string): string {
  const slash = file.indexOf('/')
  return slash < 0 ? file : file.slice(0, slash)
}

/** Why `file` may not import `target` (both relative to src/), or undefined when it may. */
export function layeringProblem(file: string, target: string): string | undefined {
  if (target === 'main.ts') return `${file} imports main.ts, which nothing may import`
  const from = folderOf(file)
  const to = folderOf(target)
  if (ENTRY_POINTS.includes(from)) return undefined
  if (ENTRY_POINTS.includes(to)) return `${file} imports ${target}: only main.ts and index.ts sit above every folder`
  const allowed = BELOW[from]
  if (allowed === undefined) return `${file} is in src/${from}/, a folder the layering does not know`
  if (to === from || allowed.includes(to)) return undefined
  return `${file} (src/${from}/) imports ${target} (src/${to}/): src/${from}/ may import only ${[from, ...allowed].join(', ')}`
}

/**
 * Inside src/commands/: `kernel/` (the table, the context, dispatch and what dispatch needs),
 * `state/` (the server's state classes) and `data/` (tables: command docs, ACL categories) are the
 * base; every other folder is one family of commands. A family imports the base (and the
 * folders below commands/), never another family; the base never imports a family. The one
 * exception is ASSEMBLY, which builds the table from every family, and which nothing in commands/
 * imports. The state imports no handler and no context (the context imports the state's types):
 * of the kernel, only its leaf helpers, which import nothing in commands/. The data imports
 * nothing but itself.
 */
const COMMANDS_BASE = ['kernel', 'state', 'data']
const ASSEMBLY = 'commands/builtin.ts'

/** The part of commands/ a file is in: 'kernel', 'state', 'data', a family's folder, or the file itself. */
function commandsPart(file: string): string {
  const rest = file.slice('commands/'.length)
  const slash = rest.indexOf('/')
  return slash < 0 ? rest : rest.slice(0, slash)
}

/** Whether a file of src/ imports nothing inside commands/. */
function importsNoCommands(file: string): boolean {
  return importsOf(file).every((edge) => edge.target === undefined || !edge.target.startsWith('commands/'))
}

/**
 * Why `file` may not import `target` under the rules of commands/ above (both relative to src/),
 * or undefined when it may. `isLeaf` says whether a kernel file imports nothing in commands/.
 */
export function familyProblem(
  file: string,
  target: string,
  isLeaf: (file: string) => boolean = importsNoCommands,
): string | undefined {
  if (!file.startsWith('commands/') || !target.startsWith('commands/')) return undefined
  if (target === ASSEMBLY && file !== ASSEMBLY)
    return `${file} imports ${ASSEMBLY}, the table's assembly, which nothing in commands/ imports`
  const from = commandsPart(file)
  const to = commandsPart(target)
  if (from === to || file === ASSEMBLY) return undefined
  const family = (part: string): boolean => !COMMANDS_BASE.includes(part)
  if (from === 'data') return `${file} (data) imports ${target}: commands/data/ imports nothing else of commands/`
  if (family(from) && family(to))
    return `${file} (family ${from}) imports ${target} (family ${to}): a family imports only the kernel, the state and the data`
  if (family(to))
    return `${file} (commands/${from}/) imports ${target} (family ${to}): only ${ASSEMBLY} imports the families`
  if (from === 'state' && to === 'kernel' && !isLeaf(target)) {
    return `${file} (commands/state/) imports ${target}: the state imports no context and no handler, of the kernel only its leaf helpers`
  }
  return undefined
}

describe('src/ folders only point down', () => {
  const files = sourceFiles()

  it('knows every folder and file of src/', () => {
    const unknown = files.filter((file) => !ENTRY_POINTS.includes(file) && BELOW[folderOf(file)] === undefined)
    expect(unknown).toEqual([])
    expect(files.length).toBeGreaterThan(50)
  })

  it('has no import against the allowed direction, import type included', () => {
    const problems: string[] = []
    for (const file of files) {
      for (const edge of importsOf(file)) {
        if (edge.target === undefined) continue
        const problem = layeringProblem(file, edge.target)
        if (problem !== undefined) problems.push(`${problem} (line ${edge.line})`)
      }
    }
    expect(problems).toEqual([])
  })

  it('catches an upward import, a type-only one and a dynamic one', () => {
    expect(layeringProblem('store/registry.ts', 'commands/kernel/context.ts')).toMatch(/may import only/)
    expect(layeringProblem('core/bitmap.ts', 'format/codec.ts')).toMatch(/may import only/)
    expect(layeringProblem('tools/bfs-copy.ts', 'server/server.ts')).toMatch(/may import only/)
    expect(layeringProblem('server/server.ts', 'main.ts')).toMatch(/nothing may import/)
    expect(layeringProblem('library/bloom-filter.ts', 'server/server.ts')).toBeUndefined()
    expect(layeringProblem('server/server.ts', 'http/http-server.ts')).toBeUndefined()
  })
})

describe('src/commands/: families on a kernel and the state', () => {
  const files = sourceFiles().filter((file) => file.startsWith('commands/'))

  it('has no family importing another, and no kernel, state or data file importing a family', () => {
    const problems: string[] = []
    for (const file of files) {
      for (const edge of importsOf(file)) {
        if (edge.target === undefined) continue
        const problem = familyProblem(file, edge.target)
        if (problem !== undefined) problems.push(`${problem} (line ${edge.line})`)
      }
    }
    expect(problems).toEqual([])
    expect(files.filter((file) => commandsPart(file) === 'kernel').length).toBeGreaterThan(5)
    expect(files.filter((file) => commandsPart(file) === 'state').length).toBeGreaterThan(5)
  })

  it('catches a family importing another, the base importing a family, and the state importing the context', () => {
    expect(familyProblem('commands/filters/bloom.ts', 'commands/keyspace/keyspace.ts')).toMatch(/a family imports only/)
    expect(familyProblem('commands/kernel/dispatch.ts', 'commands/connection/pubsub.ts')).toMatch(
      /only commands\/builtin.ts imports the families/,
    )
    expect(familyProblem('commands/state/slowlog.ts', 'commands/admin/slowlog-commands.ts')).toMatch(
      /only commands\/builtin.ts imports the families/,
    )
    expect(familyProblem('commands/state/monitor-hub.ts', 'commands/kernel/context.ts', () => false)).toMatch(
      /no context/,
    )
    expect(familyProblem('commands/data/acl-categories-data.ts', 'commands/kernel/table.ts')).toMatch(
      /commands\/data\/ imports nothing/,
    )
    expect(familyProblem('commands/admin/info.ts', 'commands/builtin.ts')).toMatch(/nothing in commands\/ imports/)
    expect(familyProblem('commands/builtin.ts', 'commands/filters/bloom.ts')).toBeUndefined()
    expect(familyProblem('commands/filters/bloom.ts', 'commands/kernel/dispatch.ts')).toBeUndefined()
    expect(familyProblem('commands/state/slowlog.ts', 'commands/kernel/args.ts', () => true)).toBeUndefined()
    expect(familyProblem('commands/filters/bloom.ts', 'store/registry.ts')).toBeUndefined()
  })
})
