/**
 * bfs as a library, imported the way a user imports it: through the package name, which resolves
 * (package.json `exports`) to the BUILT entry dist/index.js and its declarations dist/index.d.ts.
 * `npm test` builds first (pretest).
 */
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import {
  BloomFilter,
  createServer,
  CuckooFilter,
  CuckooFilterFullError,
  decodeFilter,
  DecodeError,
  encodeFilter,
  FilterFullError,
  FilterRegistry,
  ScalableBloomFilter,
  type FilterInfo,
} from 'bloom-filter-server'
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.js'
import { testIoThreads } from '../helpers/start-server.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

describe('the package entry', () => {
  it('resolves to the built files, declarations included', () => {
    const resolved = createRequire(import.meta.url).resolve('bloom-filter-server')
    expect(path.relative(root, resolved)).toBe(path.join('dist', 'index.js'))
    const declarations = readFileSync(path.join(root, 'dist', 'index.d.ts'), 'utf8')
    for (const name of [
      'BloomFilter',
      'CuckooFilter',
      'ScalableBloomFilter',
      'createServer',
      'encodeFilter',
      'decodeFilter',
      'CommandDefinition',
    ]) {
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
    const dir = makeTempDir('bfs-library-')
    const server = createServer({
      config: { ...testIoThreads(), port: 0, dir, save: '', appendonly: false },
      logSink: () => {},
    })
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
      expect(Buffer.from(BloomFilter.wrap(served as ScalableBloomFilter).toBytes())).toEqual(
        Buffer.from(local.toBytes()),
      )
      expect(FilterRegistry.nameOf(Buffer.from('wire'))).toBe('wire')
    } finally {
      redis.disconnect()
      await server.close()
      removeTempDir(dir)
    }
  })
})

describe('CuckooFilter in process', () => {
  it('adds, counts, deletes and tests strings and bytes alike', () => {
    const filter = new CuckooFilter({ capacity: 1000 })
    filter.add('s-1')
    filter.add(new TextEncoder().encode('s-1'))
    expect(filter.count('s-1')).toBe(2)
    expect(filter.addIfAbsent('s-1')).toBe(false)
    expect(filter.addIfAbsent('s-2')).toBe(true)
    expect(filter.delete('s-1')).toBe(true)
    expect(filter.has('s-1')).toBe(true) // added twice, deleted once
    expect(filter.delete('s-1')).toBe(true)
    expect(filter.has('s-1')).toBe(false)
    expect(filter.size).toBe(1)
    expect(filter.info()).toEqual({
      sizeBytes: 40 + 16 + 1024,
      numBuckets: 512,
      numFilters: 1,
      items: 1,
      deletes: 2,
      bucketSize: 2,
      expansion: 1,
      maxIterations: 20,
    })
    expect(filter.health()).toMatchObject({ items: 1, capacity: 1024, verdict: 'ok' })
  })

  it('throws CuckooFilterFullError when a filter that cannot grow is full, and changes nothing', () => {
    const filter = new CuckooFilter({ capacity: 8, bucketSize: 2, expansion: 0 })
    let error: unknown
    try {
      for (let i = 0; i < 100; i++) filter.add(`x${i}`)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(CuckooFilterFullError)
    expect((error as CuckooFilterFullError).code).toBe('full')
    const before = Buffer.from(filter.toBytes())
    expect(() => filter.add('one more')).toThrow(CuckooFilterFullError)
    expect(Buffer.from(filter.toBytes())).toEqual(before)
  })

  it('rejects options out of CF.RESERVE bounds with RangeError, and round-trips through toBytes/fromBytes', () => {
    expect(() => new CuckooFilter({ capacity: 3 })).toThrow(RangeError)
    expect(() => new CuckooFilter({ capacity: 100, bucketSize: 256 })).toThrow(RangeError)
    expect(() => new CuckooFilter({ capacity: 100, maxIterations: 0 })).toThrow(RangeError)
    expect(() => new CuckooFilter({ capacity: 100, expansion: 32769 })).toThrow(RangeError)
    const filter = new CuckooFilter({ capacity: 100, bucketSize: 4, expansion: 2 })
    for (let i = 0; i < 500; i++) filter.add(`i${i}`)
    const copy = CuckooFilter.fromBytes(filter.toBytes('name'))
    expect(copy.info()).toEqual(filter.info())
    expect(Buffer.from(copy.toBytes('name'))).toEqual(Buffer.from(filter.toBytes('name')))
    expect(() => CuckooFilter.fromBytes(new Uint8Array(10))).toThrow(DecodeError)
  })

  it('leaves the buckets CF.ADD leaves on a server, and serves a filter built in process', async () => {
    const dir = makeTempDir('bfs-library-')
    const server = createServer({
      config: { ...testIoThreads(), port: 0, dir, save: '', appendonly: false },
      logSink: () => {},
    })
    await server.start()
    const redis = new Redis({ port: server.port, host: '127.0.0.1', lazyConnect: true })
    try {
      await redis.connect()
      const items = Array.from({ length: 3000 }, (_, i) => `session-${i}`)
      await redis.call('CF.RESERVE', 'wire', '1000', 'BUCKETSIZE', '4')
      await redis.call('CF.INSERT', 'wire', 'ITEMS', ...items)
      await redis.call('CF.DEL', 'wire', 'session-7')
      const local = new CuckooFilter({ capacity: 1000, bucketSize: 4 })
      for (const item of items) local.add(item)
      local.delete('session-7')
      const served = server.registry.get('wire')!
      expect(served.kind).toBe('cuckoo')
      expect(Buffer.from(CuckooFilter.wrap(served.filter as CuckooFilter['core']).toBytes())).toEqual(
        Buffer.from(local.toBytes()),
      )
      server.registry.set('built', local.core)
      const queries = ['session-1', 'session-7', ...Array.from({ length: 200 }, (_, i) => `other-${i}`)]
      expect(await redis.call('CF.MEXISTS', 'built', ...queries)).toEqual(
        queries.map((item) => (local.has(item) ? 1 : 0)),
      )
      expect(await redis.call('CF.EXISTS', 'built', 'session-1')).toBe(1)
      expect(await redis.type('built')).toBe('MBbloomCF')
    } finally {
      redis.disconnect()
      await server.close()
      removeTempDir(dir)
    }
  })
})
