import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
// @ts-expect-error: a plain .mjs build script, without type declarations
import { compileWat, moduleSource } from '../../scripts/build-wasm.mjs'

describe('src/core/murmur-wasm-module.ts', () => {
  it('is what `npm run build:wasm` makes of murmur-hash.wat today', async () => {
    const wat = readFileSync(new URL('../../src/core/murmur-hash.wat', import.meta.url), 'utf8')
    const generated = readFileSync(new URL('../../src/core/murmur-wasm-module.ts', import.meta.url), 'utf8')
    const bytes: Uint8Array = await compileWat(wat)
    expect(bytes.subarray(0, 4)).toEqual(new Uint8Array([0x00, 0x61, 0x73, 0x6d]))
    expect(generated).toBe(moduleSource(bytes))
  })

  it('the comparison would catch an edit to the .wat', async () => {
    const wat = readFileSync(new URL('../../src/core/murmur-hash.wat', import.meta.url), 'utf8')
    const generated = readFileSync(new URL('../../src/core/murmur-wasm-module.ts', import.meta.url), 'utf8')
    const edited = wat.replace('(i64.const 47))))', '(i64.const 46))))')
    expect(edited).not.toBe(wat)
    expect(moduleSource(await compileWat(edited))).not.toBe(generated)
  })
})
