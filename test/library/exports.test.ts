/**
 * bfs as a library, imported the way a user imports it: through the package name, which resolves
 * (package.json `exports`) to the BUILT entry dist/index.js and its declarations dist/index.d.ts.
 * `npm test` builds first (pretest).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import {
  BloomFilter,
  createServer,
  decodeFilter,
  DecodeError,
  encodeFilter,
  FilterFullError,
  FilterRegistry,
  ScalableBloomFilter,
  type FilterInfo,
} from 'bloom-filter-server'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

describe('the package entry', () => {
  it('resolves to the built files, declarations included', () => {
    const resolved = createRequire(import.meta.url).resolve('bloom-filter-server')
    expect(path.relative(root, resolved)).toBe(path.join('dist', 'index.js'))
    const declarations = readFileSync(path.join(root, 'dist', 'index.d.ts'), 'utf8')
    for (const name of ['BloomFilter', 'ScalableBloomFilter', 'createServer', 'encodeFilter', 'decodeFilter', 'CommandDefinition']) {
      expect(declarations).toContain(name)
    }
    expect(existsSync(path.join(root, 'dist', 'library', 'bloom-filter.d.ts'))).toBe(true)
  })

  it('documents every export (TSDoc at its definition)', () => {
    const program = ts.createProgram([path.join(root, 'src', 'index.ts')], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
    })
    const checker = program.getTypeChecker()
    const entry = program.getSourceFile(path.join(root, 'src', 'index.ts'))!
    const exported = checker.getExportsOfModule(checker.getSymbolAtLocation(entry)!)
    expect(exported.length).toBeGreaterThan(30)
    const undocumented = exported
      .filter((symbol) => {
        const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
        return ts.displayPartsToString(target.getDocumentationComment(checker)).trim() === ''
      })
      .map((symbol) => symbol.name)
    expect(undocumented).toEqual([])
  })
})

describe('BloomFilter in process', () => {
  it('adds and tests strings and bytes alike, with no false negatives', () => {
    const filter = new BloomFilter({ capacity: 1000, errorRate: 0.01 })
    expect(filter.add('https://example.com/')).toBe(true)
    expect(filter.add(new TextEncoder().encode('https://example.com/'))).toBe(false)
    expect(filter.has('https://example.com/')).toBe(true)
    expect(filter.has('https://example.org/')).toBe(false)
    const urls = Array.from({ length: 5000 }, (_, i) => `https://example.com/page/${i}`)
    const added = filter.addAll(urls)
    expect(added).toBeGreaterThan(4900) // a few may collide with earlier items (false positives)
    expect(urls.every((url) => filter.has(url))).toBe(true)
    expect(filter.size).toBe(added + 1)
    const info: FilterInfo = filter.info()
    expect(info.layerCount).toBeGreaterThan(1) // 5001 items in a filter of capacity 1000 scaled up
    expect(info.expansion).toBe(2)
  })

  it('stays within its error rate at capacity', () => {
    const filter = new BloomFilter({ capacity: 20_000, errorRate: 0.01, nonScaling: true })
    for (let i = 0; i < 20_000; i++) filter.add(`in:${i}`)
    let positives = 0
    for (let i = 0; i < 20_000; i++) if (filter.has(`out:${i}`)) positives++
    expect(positives / 20_000).toBeLessThan(0.015)
    expect(positives).toBeGreaterThan(0)
  })

  it('throws FilterFullError when a non-scaling filter is full, and changes nothing', () => {
    const filter = new BloomFilter({ capacity: 2, errorRate: 0.01, nonScaling: true })
    filter.add('a')
    filter.add('b')
    expect(() => filter.add('c')).toThrow(FilterFullError)
    try {
      filter.add('c')
    } catch (error) {
      expect((error as FilterFullError).code).toBe('non-scaling-full')
    }
    expect(filter.size).toBe(2)
  })

  it('rejects impossible options with RangeError', () => {
    expect(() => new BloomFilter({ capacity: 0, errorRate: 0.01 })).toThrow(RangeError)
    expect(() => new BloomFilter({ capacity: 10, errorRate: 1 })).toThrow(RangeError)
  })

  it('round-trips through toBytes/fromBytes and encodeFilter/decodeFilter', () => {
    const filter = new BloomFilter({ capacity: 100, errorRate: 0.001 })
    for (let i = 0; i < 300; i++) filter.add(`item ${i}`)
    const bytes = filter.toBytes('urls')
    const copy = BloomFilter.fromBytes(bytes.slice())
    expect(copy.info()).toEqual(filter.info())
    expect(copy.has('item 299')).toBe(true)

    const record = decodeFilter(bytes.slice())
    expect(new TextDecoder().decode(record.name)).toBe('urls')
    const pieces = encodeFilter(record)
    expect(Buffer.concat(pieces)).toEqual(Buffer.from(bytes))
    expect(() => decodeFilter(new Uint8Array(10))).toThrow(DecodeError)
  })
})

describe('a server started from the library', () => {
  it('serves a filter built in process, and its filters read back in process, bit for bit', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'bfs-library-'))
    const server = createServer({ config: { port: 0, dir, save: '', appendonly: false }, logSink: () => {} })
    await server.start()
    const redis = new Redis({ port: server.port, host: '127.0.0.1', lazyConnect: true })
    try {
      await redis.connect()
      const built = new BloomFilter({ capacity: 1000, errorRate: 0.01 })
      built.addAll(['alpha', 'beta'])
      server.registry.set('built', built.scalable)
      expect(await redis.call('BF.MEXISTS', 'built', 'alpha', 'beta', 'gamma')).toEqual([1, 1, 0])
      expect(await redis.call('BF.CARD', 'built')).toBe(2)

      // The same adds over the wire and in process give the same bytes: one filter, two doors.
      const items = Array.from({ length: 2500 }, (_, i) => `https://example.com/${i}`)
      expect(await redis.call('BF.RESERVE', 'wire', '0.01', '1000')).toBe('OK')
      await redis.call('BF.MADD', 'wire', ...items)
      const local = new BloomFilter({ capacity: 1000, errorRate: 0.01 })
      local.addAll(items)
      const served = server.registry.get('wire')!.filter
      expect(served).toBeInstanceOf(ScalableBloomFilter)
      expect(Buffer.from(BloomFilter.wrap(served as ScalableBloomFilter).toBytes())).toEqual(Buffer.from(local.toBytes()))
      expect(FilterRegistry.nameOf(Buffer.from('wire'))).toBe('wire')
    } finally {
      redis.disconnect()
      await server.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
