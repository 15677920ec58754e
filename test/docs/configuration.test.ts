/**
 * The configuration reference (docs/reference/configuration.md) documents every config key, as its
 * row of the code's table says it, and the README gives the two set-up commands and the install.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { CONFIG_ROWS, DEFAULT_CONFIG, formatConfigValue, type ConfigKeySpec } from '../../src/runtime/config.js'
import { docBlock } from '../helpers/doc-blocks.js'

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
const reference = readFileSync(new URL('../../docs/reference/configuration.md', import.meta.url), 'utf8')

/** The rows of the table under "## Every key" (`| key | default | live | what it does |`), as cells. */
function configTable(): string[][] {
  const section = reference.split(/^## /m).find((part) => part.startsWith('Every key\n'))
  expect(section, 'no "## Every key" section').toBeDefined()
  const lines = section!.split('\n')
  const head = lines.findIndex((line) => line.startsWith('| key | default | live |'))
  expect(head, 'no configuration table').toBeGreaterThan(0)
  const rows: string[][] = []
  for (const line of lines.slice(head + 2)) {
    if (!line.startsWith('|')) break
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    )
  }
  return rows
}

/** The default column as the reference writes it: CONFIG GET's text in backticks (`""` for none). */
function documentedDefault(row: ConfigKeySpec): string {
  // rename-command is no CONFIG GET key: its default is no rules at all.
  if (row.name === 'rename-command' || row.name === 'user') return 'none'
  const value = formatConfigValue(DEFAULT_CONFIG, row.name)
  return `\`${value === '' ? '""' : value}\``
}

describe('README', () => {
  it('gives the two set-up commands', () => {
    expect(readme).toContain('npm install && npm start')
    expect(readme).toContain('npm test')
  })

  it('installs the package npm pack writes, as test/deploy/package.test.ts does', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      name: string
      version: string
    }
    const install = docBlock('install').body
    expect(install).toContain('npm pack')
    expect(install).toContain(`npm install -g ./${pkg.name}-${pkg.version}.tgz`)
    const mirror = readFileSync(new URL('../deploy/package.test.ts', import.meta.url), 'utf8')
    expect(mirror).toContain("'pack'")
    expect(mirror).toContain("'--version'")
  })

  it('links the configuration reference', () => {
    expect(readme).toContain('(docs/reference/configuration.md)')
  })
})

describe('docs/reference/configuration.md', () => {
  it.each(CONFIG_ROWS.map((row) => [row.name, row] as const))(
    'documents %s as its row: default, live, doc line',
    (name, row) => {
      const cells = configTable().find((cells) => cells[0] === `\`${name}\``)
      expect(cells, `no configuration row for ${name}`).toBeDefined()
      expect(cells).toEqual([`\`${name}\``, documentedDefault(row), row.mutable ? 'yes' : '', row.description])
    },
  )

  it('the table has the rows of the code, no other, in their order', () => {
    expect(configTable().map((cells) => cells[0])).toEqual(CONFIG_ROWS.map((row) => `\`${row.name}\``))
  })

  it('documents rename-command', () => {
    expect(reference).toMatch(/^\| `rename-command` \|/m)
  })
})
