// Compiles src/core/murmur-hash.wat into src/core/murmur-wasm-module.ts (the bytes as a literal,
// so the core needs no file reads). Run after editing the .wat: npm run build:wasm
// test/core/murmur-wasm.test.ts fails when the two disagree.
import { readFileSync, writeFileSync } from 'node:fs'
import wabt from 'wabt'

const watUrl = new URL('../src/core/murmur-hash.wat', import.meta.url)
const outUrl = new URL('../src/core/murmur-wasm-module.ts', import.meta.url)

/** @returns the module bytes of the .wat source */
export async function compileWat(source) {
  const toolkit = await wabt()
  const module = toolkit.parseWat('murmur-hash.wat', source)
  try {
    module.validate()
    return Uint8Array.from(module.toBinary({}).buffer)
  } finally {
    module.destroy()
  }
}

/** @returns the TypeScript source of murmur-wasm-module.ts for these bytes */
export function moduleSource(bytes) {
  const lines = []
  for (let i = 0; i < bytes.length; i += 16) {
    lines.push('  ' + Array.from(bytes.subarray(i, i + 16), (b) => '0x' + b.toString(16).padStart(2, '0')).join(', ') + ',')
  }
  return [
    '// Generated from murmur-hash.wat by `npm run build:wasm`; do not edit.',
    '',
    '/** The WebAssembly module of murmur-hash.wat. */',
    'export const MURMUR_WASM_MODULE = new Uint8Array([',
    ...lines,
    '])',
    '',
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const bytes = await compileWat(readFileSync(watUrl, 'utf8'))
  writeFileSync(outUrl, moduleSource(bytes))
  console.log(`src/core/murmur-wasm-module.ts: ${bytes.length} bytes`)
}
