// Compiles the WebAssembly sources of src/core into TypeScript modules (the bytes as a literal,
// so the core needs no file reads). Run after editing a .wat: npm run build:wasm
// test/core/murmur-wasm-module.test.ts fails when a source and its module disagree.
import { readFileSync, writeFileSync } from 'node:fs'
import wabt from 'wabt'

/** Each .wat of src/core, the module it becomes and the name of its exported bytes. */
export const WASM_SOURCES = [
  { wat: 'murmur-hash.wat', module: 'murmur-wasm-module.ts', constant: 'MURMUR_WASM_MODULE' },
  { wat: 'bloom-kernel.wat', module: 'bloom-kernel-module.ts', constant: 'BLOOM_KERNEL_MODULE' },
  { wat: 'bitmap-ops.wat', module: 'bitmap-ops-module.ts', constant: 'BITMAP_OPS_MODULE' },
  { wat: 'cuckoo-kernel.wat', module: 'cuckoo-kernel-module.ts', constant: 'CUCKOO_KERNEL_MODULE' },
]

/** @returns the module bytes of the .wat source */
export async function compileWat(source, name = 'murmur-hash.wat') {
  const toolkit = await wabt()
  const features = { threads: true } // shared memories and atomics (the WebAssembly threads proposal)
  const module = toolkit.parseWat(name, source, features)
  try {
    module.validate(features)
    return Uint8Array.from(module.toBinary({}).buffer)
  } finally {
    module.destroy()
  }
}

/** @returns the TypeScript source of a generated module for these bytes */
export function moduleSource(bytes, wat = 'murmur-hash.wat', constant = 'MURMUR_WASM_MODULE') {
  const lines = []
  for (let i = 0; i < bytes.length; i += 16) {
    lines.push(
      '  ' + Array.from(bytes.subarray(i, i + 16), (b) => '0x' + b.toString(16).padStart(2, '0')).join(', ') + ',',
    )
  }
  return [
    `// Generated from ${wat} by \`npm run build:wasm\`; do not edit.`,
    '',
    `/** The WebAssembly module of ${wat}. */`,
    `export const ${constant} = new Uint8Array([`,
    ...lines,
    '])',
    '',
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const { wat, module, constant } of WASM_SOURCES) {
    const bytes = await compileWat(readFileSync(new URL(`../src/core/${wat}`, import.meta.url), 'utf8'), wat)
    writeFileSync(new URL(`../src/core/${module}`, import.meta.url), moduleSource(bytes, wat, constant))
    console.log(`src/core/${module}: ${bytes.length} bytes`)
  }
}
