import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// format/ is a pure codec: it may import its own files and types from core/, nothing else
// (no node:*, no packages, no Buffer), so it runs anywhere a Uint8Array does.
const FORMAT_DIR = fileURLToPath(new URL('../../src/format/', import.meta.url))
const files = readdirSync(FORMAT_DIR).filter((f) => f.endsWith('.ts'))

function importsOf(source: string): { specifier: string; typeOnly: boolean }[] {
  const found = []
  for (const m of source.matchAll(/^\s*(import|export)\s+(type\s+)?[^'";]*?from\s*['"]([^'"]+)['"]/gm)) {
    found.push({ specifier: m[3]!, typeOnly: m[2] !== undefined })
  }
  for (const m of source.matchAll(/(?:^|[^.\w])(?:import|require)\s*\(\s*['"]([^'"]+)['"]/g)) {
    found.push({ specifier: m[1]!, typeOnly: false })
  }
  for (const m of source.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) found.push({ specifier: m[1]!, typeOnly: false })
  return found
}

describe('src/format is pure', () => {
  it('has sources to check', () => {
    expect(files.length).toBeGreaterThan(0)
  })

  it.each(files)('%s imports only ./ files and core types', (file) => {
    const source = readFileSync(join(FORMAT_DIR, file), 'utf8')
    for (const { specifier, typeOnly } of importsOf(source)) {
      expect(specifier, `${file}: ${specifier}`).not.toMatch(/^node:/)
      if (specifier.startsWith('../core/')) expect(typeOnly, `${file}: ${specifier} must be import type`).toBe(true)
      else expect(specifier, `${file}: ${specifier}`).toMatch(/^\.\/[a-z0-9-]+\.js$/)
    }
    expect(source, `${file} uses Buffer`).not.toMatch(/\bBuffer\b/)
  })

  it('catches a node: import', () => {
    expect(importsOf("import { crc32 } from 'node:zlib'")[0]).toEqual({ specifier: 'node:zlib', typeOnly: false })
    expect(importsOf("import type { X } from '../core/x.js'")[0]).toEqual({ specifier: '../core/x.js', typeOnly: true })
  })
})
