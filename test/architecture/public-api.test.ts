/**
 * The package's public API is what src/index.ts exports: these names, values and types, stay as
 * they are (the extension hook of docs/reference/library.md is type-checked and run against the
 * build by test/docs/node-examples.test.ts). A change here is a change for every user: make it on
 * purpose, with the docs.
 */
import { readFileSync } from 'node:fs'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import * as api from '../../src/index.js'

const VALUES = [
  'BFS_VERSION',
  'BLOOM_CLUSTER_COMMANDS',
  'BfsServer',
  'BloomFilter',
  'COMMAND_FLAGS',
  'CONFIG_KEYS',
  'ConfigError',
  'CuckooFilter',
  'CuckooFilterFullError',
  'DEFAULT_CONFIG',
  'DEFAULT_EXPANSION',
  'DecodeError',
  'PiecedBitmap',
  'ERR',
  'FILTER_ERROR_TEXT',
  'FilterFullError',
  'FilterRegistry',
  'REDIS_VERSION',
  'ReplyError',
  'ScalableBloomFilter',
  'SlidingWindowFilter',
  'WindowFilter',
  'bloomCluster',
  'clusterSlotOf',
  'createServer',
  'decodeFilter',
  'defineCommand',
  'encodeFilter',
  'encodedLength',
  'isFilterError',
  'isKeyword',
  'itemBytes',
  'keyspace',
  'loadConfig',
  'parseDouble',
  'parseInteger',
]

const TYPES = [
  'AddOutcome',
  'Bitmap',
  'BloomCluster',
  'BloomClusterCommandName',
  'BloomClusterOptions',
  'BloomEntry',
  'BloomFilterOptions',
  'BloomLayer',
  'ClientSession',
  'ClusterArgument',
  'ClusterCommandClass',
  'ClusterCommandLike',
  'ClusterLike',
  'CommandArgs',
  'CommandContext',
  'CommandDefinition',
  'CommandEntry',
  'CommandFlag',
  'CommandHandler',
  'CommandSpec',
  'CuckooFilterInfo',
  'CuckooFilterOptions',
  'FilterHealth',
  'HealthVerdict',
  'CommandTable',
  'Config',
  'ConfigKey',
  'Databases',
  'DecodeErrorCode',
  'ExtensionHandler',
  'FilterEntry',
  'FilterError',
  'FilterErrorCode',
  'FilterInfo',
  'FilterOptions',
  'FilterParts',
  'FilterRecord',
  'Hashing',
  'Item',
  'LayerParts',
  'Logger',
  'Protocol',
  'ReplyWriter',
  'ServerContext',
  'ServerOptions',
  'ShutdownOptions',
  'SlidingWindowOptions',
  'Stats',
  'StoredFilter',
  'WindowEntry',
  'WindowInfo',
  'WindowKind',
  'WindowOptions',
  'WindowParts',
]

/** The names src/index.ts exports, split into values and type-only exports. */
function exportedNames(): { values: string[]; types: string[] } {
  const source = ts.createSourceFile(
    'index.ts',
    readFileSync(new URL('../../src/index.ts', import.meta.url), 'utf8'),
    ts.ScriptTarget.ES2022,
  )
  const values: string[] = []
  const types: string[] = []
  for (const statement of source.statements) {
    const exported =
      ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
    expect(exported === true && !ts.isExportDeclaration(statement), 'index.ts only re-exports').toBe(false)
    if (!ts.isExportDeclaration(statement)) continue
    expect(statement.exportClause !== undefined && ts.isNamedExports(statement.exportClause), 'no export *').toBe(true)
    for (const element of (statement.exportClause as ts.NamedExports).elements) {
      ;(statement.isTypeOnly || element.isTypeOnly ? types : values).push(element.name.text)
    }
  }
  return { values: values.sort(), types: types.sort() }
}

describe('the public API (src/index.ts)', () => {
  it('exports these values and types, no more, no fewer', () => {
    expect(exportedNames()).toEqual({ values: [...VALUES].sort(), types: [...TYPES].sort() })
  })

  it('the module has exactly those values at run time', () => {
    expect(Object.keys(api).sort()).toEqual([...VALUES].sort())
  })
})
