import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
// @ts-expect-error: a plain .mjs build script, without type declarations
import { compileWat, moduleSource, WASM_SOURCES } from '../../scripts/build-wasm.mjs'

interface WasmSource {
  wat: string
  module: string
  constant: string
}
const sources = WASM_SOURCES as WasmSource[]

const read = (file: string): string => readFileSync(new URL(`../../src/core/${file}`, import.meta.url), 'utf8')

describe('the generated WebAssembly modules of src/core', () => {
  it('covers every source: the MurmurHash module, the Bloom kernel, the other bitmap operations and the Cuckoo kernel', () => {
    expect(sources.map((source) => source.wat)).toEqual([
      'murmur-hash.wat',
      'bloom-kernel.wat',
      'bitmap-ops.wat',
      'cuckoo-kernel.wat',
    ])
  })

  it.each(sources)('$module is what `npm run build:wasm` makes of $wat today', async ({ wat, module, constant }) => {
    const bytes: Uint8Array = await compileWat(read(wat), wat)
    expect(bytes.subarray(0, 4)).toEqual(new Uint8Array([0x00, 0x61, 0x73, 0x6d]))
    expect(read(module)).toBe(moduleSource(bytes, wat, constant))
  })

  it.each([
    { wat: 'murmur-hash.wat', from: '(i64.const 47))))', to: '(i64.const 46))))' },
    { wat: 'bloom-kernel.wat', from: '(i32.const 2))', to: '(i32.const 3))' },
    { wat: 'bitmap-ops.wat', from: '(i32.const 16)))', to: '(i32.const 15)))' },
    { wat: 'cuckoo-kernel.wat', from: '(i64.const 255)', to: '(i64.const 254)' },
  ])('the comparison would catch an edit to $wat', async ({ wat, from, to }) => {
    const source = sources.find((entry) => entry.wat === wat)!
    const edited = read(wat).replace(from, to)
    expect(edited).not.toBe(read(wat))
    expect(moduleSource(await compileWat(edited, wat), wat, source.constant)).not.toBe(read(source.module))
  })

  it.each(['bloom-kernel.wat', 'bitmap-ops.wat', 'cuckoo-kernel.wat'])(
    '%s imports the arena as a shared memory and never grows it (views of an arena are never detached)',
    (wat) => {
      const code = read(wat).replace(/;;.*$/gm, '')
      expect(code).toMatch(/\(import "env" "memory" \(memory 1 65536 shared\)\)/)
      expect(code).not.toMatch(/memory\.grow/)
    },
  )
})
