/**
 * Import graphs of files for the architecture tests: their strongly connected components and
 * cycles, and a cycle written as a reader follows it.
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
