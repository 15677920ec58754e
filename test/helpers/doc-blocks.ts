/**
 * The fenced code blocks of the documentation (README.md, docs/**\/*.md, bench/README.md,
 * deploy/README.md), so that tests can run or check every example. A block's info string says what it is and who tests it:
 *
 * - ```console [http]: a session, run by test/docs/console-examples.test.ts against a fresh bfs:
 *   `$ command` lines run in bash, `127.0.0.1:6381> COMMAND` lines through redis-cli, and the lines
 *   under each are its expected output (`...` stands for any lines). `http` opens the HTTP listener.
 * - ```sh [id]: shell commands. Every one is parsed (bash -n) and its `npm run` scripts and
 *   repository paths checked (test/docs/doc-blocks.test.ts); one with an id is run or mirrored
 *   by the test that calls `docBlock('<id>')`.
 * - ```ts id: a Node example, type-checked against the built package and run (or mirrored) by
 *   the test that calls `docBlock('<id>')`. ```ts from=<file>: an excerpt the file holds verbatim.
 * - ```python: parsed. ```conf: a config file, loaded. ```text: output, diagrams, layouts.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

export interface DocBlock {
  /** The file, relative to the repository root. */
  file: string
  /** The line of the opening fence (1-based). */
  line: number
  /** The first word of the info string ('' for a bare fence). */
  lang: string
  /** The other words of the info string. */
  words: string[]
  body: string
}

/** README.md, bench/README.md, deploy/README.md and every Markdown file under docs/, relative to the root. */
export function docFiles(): string[] {
  const files = ['README.md', 'bench/README.md', 'deploy/README.md']
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true })) {
      const relative = `${dir}/${entry.name}`
      if (entry.isDirectory()) walk(relative)
      else if (entry.name.endsWith('.md')) files.push(relative)
    }
  }
  walk('docs')
  return files.sort()
}

/** The fenced blocks of one file (fences at the start of a line, ``` only). */
export function blocksOf(file: string): DocBlock[] {
  const lines = readFileSync(path.join(REPO_ROOT, file), 'utf8').split('\n')
  const blocks: DocBlock[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i]!)
    if (open === null) continue
    const [lang = '', ...words] = open[1]!
      .trim()
      .split(/\s+/)
      .filter((word) => word !== '')
    const end = lines.findIndex((line, j) => j > i && line === '```')
    if (end < 0) throw new Error(`${file}:${i + 1}: unclosed fence`)
    blocks.push({ file, line: i + 1, lang, words, body: lines.slice(i + 1, end).join('\n') + '\n' })
    i = end
  }
  return blocks
}

export function allDocBlocks(): DocBlock[] {
  return docFiles().flatMap(blocksOf)
}

/** A block's id: the word after `sh` or `ts` in its info string (`from=...` names a source, not an id). */
export function idOf(block: DocBlock): string | undefined {
  const word = block.words[0]
  return (block.lang === 'sh' || block.lang === 'ts') && word !== undefined && !word.startsWith('from=')
    ? word
    : undefined
}

/** The one block whose info string is `<lang> <id>` (a test that runs or mirrors it calls this). */
export function docBlock(id: string): DocBlock {
  const found = allDocBlocks().filter((block) => idOf(block) === id)
  if (found.length !== 1) throw new Error(`${found.length} doc blocks have the id ${id}`)
  return found[0]!
}

/** Every id a test under test/ asks for with `docBlock('<id>')`. */
export function idsUsedByTests(): Set<string> {
  const ids = new Set<string>()
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true })) {
      const relative = `${dir}/${entry.name}`
      if (entry.isDirectory()) walk(relative)
      else if (entry.name.endsWith('.ts')) {
        for (const match of readFileSync(path.join(REPO_ROOT, relative), 'utf8').matchAll(/docBlock\('([^']+)'\)/g))
          ids.add(match[1]!)
      }
    }
  }
  walk('test')
  return ids
}

/** One step of a console session: a command and the output it should print. */
export interface ConsoleStep {
  kind: 'shell' | 'redis-cli'
  command: string
  expected: string[]
}

/**
 * A console block as steps. `$ redis-cli -p <port>` alone opens an interactive session: the
 * `127.0.0.1:<port>> ...` lines after it are its commands, each with its output.
 */
export function consoleSteps(block: DocBlock): ConsoleStep[] {
  const steps: ConsoleStep[] = []
  for (const line of block.body.replace(/\n$/, '').split('\n')) {
    const prompt = /^127\.0\.0\.1:\d+> (.*)$/.exec(line)
    if (line.startsWith('$ ')) {
      const command = line.slice(2)
      if (/^redis-cli(\s+-p\s+\d+)?$/.test(command)) continue // the interactive session's start
      steps.push({ kind: 'shell', command, expected: [] })
    } else if (prompt !== null) {
      steps.push({ kind: 'redis-cli', command: prompt[1]!, expected: [] })
    } else {
      const step = steps.at(-1)
      if (step === undefined) throw new Error(`${block.file}:${block.line}: output before any command: ${line}`)
      step.expected.push(line)
    }
  }
  return steps
}

/**
 * The lines an interactive redis-cli printed for one command, as a reader of the docs sees them:
 * trailing empty lines dropped (redis-cli ends an error reply with one), and so is the elapsed time
 * redis-cli's REPL adds after a command that took 500 ms or more (redis-cli.c, repl(): `elapsed >=
 * 500 && config.output == OUTPUT_STANDARD` prints `(%.2fs)`), which depends on the machine's load,
 * not on the reply. Only that exact shape, and only as the last line: in this (--no-raw) form no
 * reply prints a bare `(0.56s)` (a string would be quoted, a number marked `(integer)`).
 */
export function redisCliLines(stdout: string): string[] {
  const text = stdout
    .replace(/\n+$/, '')
    .replace(/(^|\n)\(\d+\.\d\ds\)$/, '')
    .replace(/\n+$/, '')
  return text === '' ? [] : text.split('\n')
}

/** Whether `actual` lines are the `expected` ones, where an expected `...` stands for any lines. */
export function outputMatches(expected: readonly string[], actual: readonly string[]): boolean {
  const [first, ...rest] = expected
  if (first === undefined) return actual.length === 0
  if (first === '...') {
    for (let skip = 0; skip <= actual.length; skip++) if (outputMatches(rest, actual.slice(skip))) return true
    return false
  }
  return actual[0] === first && outputMatches(rest, actual.slice(1))
}
