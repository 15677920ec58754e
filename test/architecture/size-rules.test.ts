import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { functionsOf, parse, SRC_DIR, sourceFiles } from '../helpers/source-tree.js'

/**
 * A standing rule: no file in src/ over 500 lines and no function over 80, so that features
 * split their code by concept as they grow. The generated WebAssembly module is data, not code.
 */
const MAX_FILE_LINES = 500
const MAX_FUNCTION_LINES = 80
const GENERATED = ['core/murmur-wasm-module.ts', 'core/bloom-kernel-module.ts']

function lineCount(text: string): number {
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length
}

/** Functions of `file` (text given for the self-check) longer than MAX_FUNCTION_LINES. */
function longFunctions(file: string, text?: string): string[] {
  return functionsOf(file, parse(file, text))
    .filter((fn) => fn.lines > MAX_FUNCTION_LINES)
    .map((fn) => `${file}:${fn.line} ${fn.name} has ${fn.lines} lines`)
}

describe('size rules of src/', () => {
  const files = sourceFiles().filter((file) => !GENERATED.includes(file))

  it(`has no file over ${MAX_FILE_LINES} lines`, () => {
    const long = files
      .map((file) => ({ file, lines: lineCount(readFileSync(join(SRC_DIR, file), 'utf8')) }))
      .filter(({ lines }) => lines > MAX_FILE_LINES)
      .map(({ file, lines }) => `${file} has ${lines} lines`)
    expect(long).toEqual([])
  })

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    expect(files.flatMap((file) => longFunctions(file))).toEqual([])
  })

  it('measures methods, arrows and nested functions', () => {
    const body = Array.from({ length: MAX_FUNCTION_LINES }, (_, i) => `    x += ${i}`).join('\n')
    const text = `class A {\n  m(x: number) {\n${body}\n  }\n}\nconst f = () => {\n${body}\n}\n`
    expect(longFunctions('self-check.ts', text)).toEqual([
      `self-check.ts:2 m has ${MAX_FUNCTION_LINES + 2} lines`,
      `self-check.ts:${MAX_FUNCTION_LINES + 5} f has ${MAX_FUNCTION_LINES + 2} lines`,
    ])
    expect(longFunctions('short.ts', 'function g() {\n  return 1\n}\n')).toEqual([])
  })
})
