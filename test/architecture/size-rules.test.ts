import { describe, expect, it } from 'vitest'
import { functionsOf, parse, sourceFiles } from '../helpers/source-tree.js'

/**
 * A standing rule: no function in src/ over 80 lines, so that a step reads as a few named steps.
 * Files have no cap: a file holds one concept, whatever its length, and is named for it. The
 * generated WebAssembly modules are data, not code.
 */
const MAX_FUNCTION_LINES = 80
const GENERATED = ['core/murmur-wasm-module.ts', 'core/bloom-kernel-module.ts']

/** Functions of `file` (text given for the self-check) longer than MAX_FUNCTION_LINES. */
function longFunctions(file: string, text?: string): string[] {
  return functionsOf(file, parse(file, text))
    .filter((fn) => fn.lines > MAX_FUNCTION_LINES)
    .map((fn) => `${file}:${fn.line} ${fn.name} has ${fn.lines} lines`)
}

describe('size rules of src/', () => {
  const files = sourceFiles().filter((file) => !GENERATED.includes(file))

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
