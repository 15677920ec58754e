import { describe, expect, it } from 'vitest'
import { importsOf, parse, sourceFiles } from '../helpers/source-tree.js'

/**
 * No file of src/ reaches itself through its imports, `import type`, re-exports and dynamic
 * imports included (importsOf counts them all, as the layering test does). The layering test keeps
 * the folders a DAG; this keeps the files one, inside each folder too: every cycle found is a
 * strongly connected component of more than one file, or a file that imports itself.
 */

/** A graph of files: each file and the files it imports (files outside the map are ignored). */
export type ImportGraph = ReadonlyMap<string, readonly string[]>

/**
 * The strongly connected components of `graph` (Tarjan's algorithm, iterative so that a long
 * chain of imports cannot overflow the stack): every file is in exactly one; a component of more
 * than one file is a cycle. Each component's files are sorted, and the components by their first.
 */
export function stronglyConnectedComponents(graph: ImportGraph): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const targetsOf = (file: string): string[] => (graph.get(file) ?? []).filter((target) => graph.has(target))
  for (const root of graph.keys()) {
    if (index.has(root)) continue
    // Each frame: a file and how many of its targets have been looked at.
    const frames: { file: string; targets: string[]; next: number }[] = []
    const enter = (file: string): void => {
      index.set(file, index.size)
      low.set(file, index.get(file)!)
      stack.push(file)
      onStack.add(file)
      frames.push({ file, targets: targetsOf(file), next: 0 })
    }
    enter(root)
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!
      if (frame.next < frame.targets.length) {
        const target = frame.targets[frame.next++]!
        if (!index.has(target)) enter(target)
        else if (onStack.has(target)) low.set(frame.file, Math.min(low.get(frame.file)!, index.get(target)!))
        continue
      }
      frames.pop()
      const parent = frames[frames.length - 1]
      if (parent !== undefined) low.set(parent.file, Math.min(low.get(parent.file)!, low.get(frame.file)!))
      if (low.get(frame.file) !== index.get(frame.file)) continue
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== frame.file)
      components.push(component.sort())
    }
  }
  return components.sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0))
}

/** The cycles of `graph`: its components of more than one file, and each file that imports itself. */
export function importCycles(graph: ImportGraph): string[][] {
  return stronglyConnectedComponents(graph).filter(
    (component) => component.length > 1 || (graph.get(component[0]!) ?? []).includes(component[0]!),
  )
}

/** One cycle as a reader follows it: its size, then each file with the files of the cycle it imports. */
export function describeCycle(cycle: readonly string[], graph: ImportGraph): string {
  const members = new Set(cycle)
  const lines = cycle.map((file) => {
    const targets = [...new Set((graph.get(file) ?? []).filter((target) => members.has(target)))].sort()
    return `  ${file} → ${targets.join(', ')}`
  })
  return [`a cycle of ${cycle.length} file${cycle.length === 1 ? '' : 's'}:`, ...lines].join('\n')
}

let parsed: Map<string, string[]> | undefined

/** Every file of src/ and the files of src/ it imports (parsed once for the tests below). */
function sourceGraph(): Map<string, string[]> {
  if (parsed !== undefined) return parsed
  parsed = new Map<string, string[]>()
  for (const file of sourceFiles()) {
    parsed.set(file, importsOf(file).flatMap((edge) => (edge.target === undefined ? [] : [edge.target])))
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
    expect(cycles.map((cycle) => describeCycle(cycle, graph)).join('\n\n'), `${cycles.length} import cycle(s) in src/`).toBe('')
  })

  it('has no cycle between folders either (the layering test orders them; this checks the code, not its table)', () => {
    const graph = folderGraph(sourceGraph())
    expect(graph.size).toBeGreaterThan(10)
    expect(importCycles(graph).map((cycle) => describeCycle(cycle, graph)).join('\n\n')).toBe('')
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
    expect(describeCycle(['a.ts', 'b.ts', 'c.ts'], graph)).toBe('a cycle of 3 files:\n  a.ts → b.ts\n  b.ts → c.ts\n  c.ts → a.ts')
  })

  it('counts a type-only import, a re-export and a dynamic import as edges of a cycle', () => {
    const texts: Record<string, string> = {
      'x/one.ts': "import type { Two } from './two.js'\nexport const one = 1\n",
      'x/two.ts': "export { three } from './three.js'\nexport type Two = number\n",
      'x/three.ts': "export const three = async () => (await import('./one.js')).one\n",
      'x/four.ts': "import { one } from './one.js'\n",
    }
    const graph = new Map(
      Object.entries(texts).map(([file, text]) => [file, importsOf(file, parse(file, text)).map((edge) => edge.target!)]),
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
