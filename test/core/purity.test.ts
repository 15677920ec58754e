import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

// core/ is pure: no node:* modules, no packages, no I/O, clocks, logging or process globals.
const coreDir = new URL('../../src/core/', import.meta.url)
const files = readdirSync(coreDir).filter((f) => f.endsWith('.ts'))

function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1')
}

describe('src/core purity', () => {
  it('has source files to check', () => {
    expect(files.length).toBeGreaterThanOrEqual(7)
  })

  it.each(files)('%s imports only relative .js modules', (file) => {
    const source = withoutComments(readFileSync(new URL(file, coreDir), 'utf8'))
    const specifiers = [
      ...source.matchAll(/\b(?:import|export)\s[^'"]*?\bfrom\s*['"]([^'"]+)['"]/g),
      ...source.matchAll(/\bimport\s*['"]([^'"]+)['"]/g),
      ...source.matchAll(/\bimport\s*\(\s*['"]([^'"]*)['"]/g),
      ...source.matchAll(/\brequire\s*\(\s*['"]([^'"]*)['"]/g),
    ].map((m) => m[1])
    for (const specifier of specifiers) {
      expect(specifier, `${file} imports ${specifier}`).toMatch(/^\.\.?\/[\w./-]+\.js$/)
      expect(specifier).not.toMatch(/^node:/)
    }
    expect(source, `${file} uses a dynamic import`).not.toMatch(/\bimport\s*\(/)
  })

  it.each(files)('%s touches no I/O, clock, logging or process globals', (file) => {
    const source = withoutComments(readFileSync(new URL(file, coreDir), 'utf8'))
    for (const name of [
      'Buffer',
      'process',
      'console',
      'Date',
      'performance',
      'setTimeout',
      'setInterval',
      'setImmediate',
      'require',
      'globalThis',
      'fetch',
      'crypto',
    ]) {
      expect(source, `${file} uses ${name}`).not.toMatch(new RegExp(`\\b${name}\\b`))
    }
    expect(source, `${file} contains a machine path`).not.toMatch(/\/work\/|\/tmp\//)
  })
})
