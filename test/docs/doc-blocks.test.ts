/**
 * Every fenced block of README.md, bench/README.md and docs/ says what it is (test/helpers/doc-blocks.ts),
 * and none can drift unnoticed: shell blocks parse (bash -n) and name only npm scripts and
 * repository files that exist, an example with an id is asked for by a test, Python parses,
 * config files load. Every relative link of the docs reaches a file, and its #anchor a heading.
 * bench/README.md names every bench script. The console sessions run in console-examples.test.ts,
 * the Node examples in node-examples.test.ts.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/runtime/config-load.js'
import {
  allDocBlocks,
  consoleSteps,
  docFiles,
  idOf,
  idsUsedByTests,
  REPO_ROOT,
  type DocBlock,
} from '../helpers/doc-blocks.js'
import { hasTool } from '../helpers/tools.js'

const BLOCKS = allDocBlocks()
const where = (block: DocBlock): string => `${block.file}:${block.line}`
const byLang = (lang: string) =>
  BLOCKS.filter((block) => block.lang === lang).map((block) => [where(block), block] as const)
const scripts = Object.keys(
  (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts,
)

/** What a bare fence may not hold: it looks like a command someone would paste. */
const RUNNABLE = /^(\$ |127\.0\.0\.1:\d+> |redis-cli |npm |node |curl |bfs |bfs-copy |bfs-import )/m

describe('the docs fenced blocks', () => {
  it('finds the docs and their blocks', () => {
    expect(docFiles()).toEqual(
      expect.arrayContaining(['README.md', 'bench/README.md', 'docs/LAYOUT.md', 'docs/reference/configuration.md']),
    )
    expect(BLOCKS.length).toBeGreaterThan(30)
  })

  it('each says what it is: console, sh, ts, python, conf or text (a bare fence holds no command)', () => {
    const unknown = BLOCKS.filter(
      (block) => !['console', 'sh', 'ts', 'python', 'conf', 'text', ''].includes(block.lang),
    ).map(where)
    expect(unknown).toEqual([])
    const bareCommands = BLOCKS.filter((block) => block.lang === '' && RUNNABLE.test(block.body)).map(where)
    expect(bareCommands, 'give these an info string').toEqual([])
  })

  it('every id is unique and asked for by a test (docBlock)', () => {
    const ids = BLOCKS.map(idOf).filter((id) => id !== undefined)
    expect(new Set(ids).size).toBe(ids.length)
    const used = idsUsedByTests()
    expect(ids.filter((id) => !used.has(id))).toEqual([])
  })

  it('every Node example has an id (a test runs or mirrors it) or is an excerpt of a source file', () => {
    expect(BLOCKS.filter((block) => block.lang === 'ts' && block.words.length === 0).map(where)).toEqual([])
  })

  it.each(BLOCKS.filter((block) => block.words[0]?.startsWith('from=')).map((block) => [where(block), block] as const))(
    '%s is an excerpt its source file holds verbatim',
    (_, block) => {
      const source = readFileSync(path.join(REPO_ROOT, block.words[0]!.slice('from='.length)), 'utf8')
      const excerpt = block.body
        .split('\n')
        .map((line) => line.trim())
        .join('\n')
        .trim()
      expect(
        source
          .split('\n')
          .map((line) => line.trim())
          .join('\n'),
      ).toContain(excerpt)
    },
  )

  it.each(byLang('console'))('%s is a session of commands', (_, block) => {
    expect(consoleSteps(block).length).toBeGreaterThan(0)
  })

  it.each(byLang('sh'))('%s parses (bash -n) and names existing npm scripts and files', (_, block) => {
    const parsed = spawnSync('bash', ['-n'], { input: block.body, encoding: 'utf8' })
    expect(parsed.stderr).toBe('')
    expect(parsed.status).toBe(0)
    for (const [, script] of block.body.matchAll(/\bnpm run ([\w:-]+)/g))
      expect(scripts, `npm run ${script}`).toContain(script)
    for (const [, script] of block.body.matchAll(/\bnpm (start|test)\b/g)) expect(scripts).toContain(script)
    for (const [, file] of block.body.matchAll(/(?<![\w/.$-])((?:bench|scripts|test|examples|src)\/[\w./-]*\w)/g)) {
      expect(existsSync(path.join(REPO_ROOT, file!)), `${file} exists`).toBe(true)
    }
  })

  it.skipIf(!hasTool('python3')).each(byLang('python'))('%s parses (python3 ast)', (_, block) => {
    const parsed = spawnSync('python3', ['-c', 'import ast, sys; ast.parse(sys.stdin.read())'], {
      input: block.body,
      encoding: 'utf8',
    })
    expect(parsed.stderr).toBe('')
    expect(parsed.status).toBe(0)
  })

  it.each(byLang('conf'))('%s loads as a config file', (_, block) => {
    expect(() => loadConfig(block.body)).not.toThrow()
  })
})

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-')
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(path.join(REPO_ROOT, file), 'utf8').replace(/^```[\s\S]*?^```$/gm, '')
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => slug(match[1]!.trim())))
}

describe('the docs links', () => {
  it.each(docFiles())('%s: every relative link reaches a file, and its anchor a heading', (file) => {
    const text = readFileSync(path.join(REPO_ROOT, file), 'utf8').replace(/^```[\s\S]*?^```$/gm, '')
    const broken: string[] = []
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue
      const [relative, anchor] = target!.split('#') as [string, string | undefined]
      const resolved =
        relative === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), relative))
      if (!existsSync(path.join(REPO_ROOT, resolved))) broken.push(`${target} (no ${resolved})`)
      else if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor))
        broken.push(`${target} (no heading #${anchor})`)
    }
    expect(broken).toEqual([])
  })
})

describe('bench/README.md', () => {
  it('names every bench script and helper of bench/', () => {
    const text = readFileSync(path.join(REPO_ROOT, 'bench', 'README.md'), 'utf8')
    const files = readdirSync(path.join(REPO_ROOT, 'bench'), { withFileTypes: true }).filter(
      (entry) => entry.isFile() && entry.name !== 'README.md',
    )
    expect(files.map((entry) => entry.name).filter((name) => !text.includes(name))).toEqual([])
  })
})
