/** The README is the newcomer's manual: it must document every config key and the set-up commands. */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { CONFIG_KEYS, DEFAULT_CONFIG, formatConfigValue } from '../../src/runtime/config.js'

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')

describe('README', () => {
  it('gives the two set-up commands', () => {
    expect(readme).toContain('npm install && npm start')
    expect(readme).toContain('npm test')
  })

  it.each(CONFIG_KEYS.map((spec) => [spec.name, spec] as const))('documents %s with its default', (name, spec) => {
    const row = readme.split('\n').find((line) => line.startsWith(`| \`${name}\` |`))
    expect(row, `no configuration row for ${name}`).toBeDefined()
    const value = formatConfigValue(DEFAULT_CONFIG, spec.name)
    expect(row).toContain(`\`${value === '' ? '""' : value}\``)
  })

  it('documents rename-command', () => {
    expect(readme).toMatch(/^\| `rename-command` \|/m)
  })
})
