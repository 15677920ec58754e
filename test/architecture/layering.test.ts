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
    expect(layeringProblem('store/registry.ts', 'commands/context.ts')).toMatch(/may import only/)
    expect(layeringProblem('core/bitmap.ts', 'format/codec.ts')).toMatch(/may import only/)
    expect(layeringProblem('tools/bfs-copy.ts', 'server/server.ts')).toMatch(/may import only/)
    expect(layeringProblem('server/server.ts', 'main.ts')).toMatch(/nothing may import/)
    expect(layeringProblem('library/bloom-filter.ts', 'server/server.ts')).toBeUndefined()
    expect(layeringProblem('server/server.ts', 'http/http-server.ts')).toBeUndefined()
  })
})
