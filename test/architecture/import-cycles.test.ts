import { describe, expect, it } from 'vitest'
import { importsOf, parse, sourceFiles } from '../helpers/source-tree.js'
import { describeCycle, importCycles, stronglyConnectedComponents, type ImportGraph } from '../helpers/import-graph.js'

/**
 * No file of src/ reaches itself through its imports, `import type`, re-exports and dynamic
 * imports included (importsOf counts them all, as the layering test does). The layering test keeps
 * the folders a DAG; this keeps the files one, inside each folder too: every cycle found is a
 * strongly connected component of more than one file, or a file that imports itself.
 */

let parsed: Map<string, string[]> | undefined

/** Every file of src/ and the files of src/ it imports (parsed once for the tests below). */
function sourceGraph(): Map<string, string[]> {
  if (parsed !== undefined) return parsed
  parsed = new Map<string, string[]>()
  for (const file of sourceFiles()) {
    parsed.set(
      file,
      importsOf(file).flatMap((edge) => (edge.target === undefined ? [] : [edge.target])),
    )
  }
  return parsed
}

/** The folders of src/ (and its top-level files) and the others each imports: a file's imports are its folder's. */
function folderGraph(files: ImportGraph): Map<string, string[]> {
  const unitOf = (file: string): string => (file.includes('/') ? file.slice(0, file.indexOf('/')) : file)
  const graph = new Map<string, string[]>()
  for (const [file, targets] of files) {
    const from = unitOf(file)
    const others = targets.map(unitOf).filter((to) => to !== from)
    graph.set(from, [...new Set([...(graph.get(from) ?? []), ...others])])
  }
  return graph
}

describe('src/ files import no cycle', () => {
  it('has no strongly connected component of more than one file, and no file that imports itself', () => {
    const graph = sourceGraph()
    expect(graph.size).toBeGreaterThan(50)
    const cycles = importCycles(graph)
    expect(
      cycles.map((cycle) => describeCycle(cycle, graph)).join('\n\n'),
      `${cycles.length} import cycle(s) in src/`,
    ).toBe('')
  })

  it('has no cycle between folders either (the layering test orders them; this checks the code, not its table)', () => {
    const graph = folderGraph(sourceGraph())
    expect(graph.size).toBeGreaterThan(10)
    expect(
      importCycles(graph)
        .map((cycle) => describeCycle(cycle, graph))
        .join('\n\n'),
    ).toBe('')
  })

  it('finds the cycles of a small graph, a self-import among them', () => {
    const graph: ImportGraph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts', 'node:fs']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts', 'e.ts']],
      ['e.ts', ['e.ts']],
      ['f.ts', []],
    ])
    expect(stronglyConnectedComponents(graph)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['d.ts'], ['e.ts'], ['f.ts']])
    expect(importCycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['e.ts']])
    expect(describeCycle(['a.ts', 'b.ts', 'c.ts'], graph)).toBe(
      'a cycle of 3 files:\n  a.ts → b.ts\n  b.ts → c.ts\n  c.ts → a.ts',
    )
  })

  it('counts a type-only import, a re-export and a dynamic import as edges of a cycle', () => {
    const texts: Record<string, string> = {
      'x/one.ts': "import type { Two } from './two.js'\nexport const one = 1\n",
      'x/two.ts': "export { three } from './three.js'\nexport type Two = number\n",
      'x/three.ts': "export const three = async () => (await import('./one.js')).one\n",
      'x/four.ts': "import { one } from './one.js'\n",
    }
    const graph = new Map(
      Object.entries(texts).map(([file, text]) => [
        file,
        importsOf(file, parse(file, text)).map((edge) => edge.target!),
      ]),
    )
    expect(importCycles(graph)).toEqual([['x/one.ts', 'x/three.ts', 'x/two.ts']])
  })

  it('finds no cycle in a DAG, and one across a long chain closed at its end', () => {
    const chain = new Map<string, string[]>()
    for (let i = 0; i < 10_000; i++) chain.set(`f${i}.ts`, i + 1 < 10_000 ? [`f${i + 1}.ts`] : [])
    expect(importCycles(chain)).toEqual([])
    chain.set('f9999.ts', ['f0.ts'])
    const cycles = importCycles(chain)
    expect(cycles).toHaveLength(1)
    expect(cycles[0]).toHaveLength(10_000)
  })
})
