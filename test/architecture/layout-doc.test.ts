/**
 * docs/LAYOUT.md is true to the code: its table of what each folder imports is what the folders of
 * src/ import (`import type` included, as the layering test counts them), every folder has its
 * paragraph, and every source file it names exists (its tests' files are test/'s).
 */
import { existsSync, readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { describe, expect, it } from 'vitest'
import { importsOf, sourceFiles } from '../helpers/source-tree.js'

const layout = readFileSync(new URL('../../docs/LAYOUT.md', import.meta.url), 'utf8')
const files = sourceFiles()

/** The top-level unit of a file relative to src/: its folder, or the file itself (index.ts, main.ts). */
const unitOf = (file: string): string => (file.includes('/') ? file.slice(0, file.indexOf('/')) : file)
const folders = [...new Set(files.filter((file) => file.includes('/')).map(unitOf))].sort()

/** What each folder (and entry point) imports from the others, from the code. */
function actualImports(): Map<string, string[]> {
  const imports = new Map<string, Set<string>>()
  for (const file of files) {
    const from = unitOf(file)
    const set = imports.get(from) ?? new Set<string>()
    imports.set(from, set)
    for (const edge of importsOf(file)) {
      if (edge.target === undefined) continue
      const to = unitOf(edge.target)
      if (to !== from && edge.target.includes('/')) set.add(to)
    }
  }
  return new Map([...imports].map(([unit, set]) => [unit, [...set].sort()]))
}

/** The table `| folder | imports |` of LAYOUT.md: `core/` → [], `store/` → ['core', ...]. */
function documentedImports(): Map<string, string[]> {
  const rows = new Map<string, string[]>()
  const head = layout.indexOf('| folder | imports |')
  expect(head, 'no "| folder | imports |" table').toBeGreaterThanOrEqual(0)
  for (const line of layout.slice(head).split('\n').slice(2)) {
    if (!line.startsWith('|')) break
    const [unit, imports] = line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim()) as [string, string]
    const name = unit.replace(/`/g, '').replace(/\/$/, '')
    rows.set(
      name,
      imports === 'nothing'
        ? []
        : imports
            .split(',')
            .map((word) => word.trim())
            .sort(),
    )
  }
  return rows
}

describe('docs/LAYOUT.md', () => {
  it('names the number of folders src/ has', () => {
    const words = [
      'zero',
      'one',
      'two',
      'three',
      'four',
      'five',
      'six',
      'seven',
      'eight',
      'nine',
      'ten',
      'eleven',
      'twelve',
      'thirteen',
      'fourteen',
      'fifteen',
    ]
    expect(layout).toContain(`is ${words[folders.length] ?? folders.length} folders under \`src/\``)
  })

  it('has a paragraph for every folder', () => {
    expect(folders.filter((folder) => !layout.includes(`**\`src/${folder}/\``))).toEqual([])
  })

  it('says what each folder and entry point imports, as the code does', () => {
    expect(Object.fromEntries(documentedImports())).toEqual(Object.fromEntries(actualImports()))
  })

  it('names only source files that exist', () => {
    const names = new Set(files.map((file) => basename(file)))
    const named = [...layout.matchAll(/`(?:[\w-]+\/)*([\w.-]+\.(?:ts|wat))`/g)].map((match) => match[1]!)
    const missing = named.filter(
      (name) =>
        !name.endsWith('.test.ts') &&
        !names.has(name) &&
        !existsSync(new URL(`../../src/core/${name}`, import.meta.url)),
    )
    expect(missing).toEqual([])
  })
})
