/**
 * BFS.HEALTH and BF.DEBUG over real sockets, the live set-bit counts behind them after every
 * server path that sets bits (adds, BF.LOADCHUNK, BF.LOAD, a snapshot and the append-only log
 * loaded at start), the once-per-filter warning and the /metrics gauges.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../../helpers/start-server.js'
import { makeTempDir } from '../../helpers/temp-dir.js'
import { RawClient, encodeCommand } from '../../helpers/resp.js'
import { countSetBits } from '../../../src/core/bitmap.js'
import { filterHealth } from '../../../src/core/filter-health.js'
import { ScalableBloomFilter } from '../../../src/core/scalable-filter.js'
import { encodeFilter } from '../../../src/format/codec.js'
import { formatDouble } from '../../../src/protocol/format-double.js'
import { bloomOf } from '../../helpers/bloom-of.js'

const started: RunningServer[] = []
const clients: Redis[] = []

async function boot(config: Parameters<typeof startServer>[0] = {}): Promise<{ running: RunningServer; redis: Redis }> {
  const running = await startServer(config)
  started.push(running)
  const redis = new Redis({ port: running.port, host: '127.0.0.1', lazyConnect: false })
  clients.push(redis)
  return { running, redis }
}

afterEach(async () => {
  for (const redis of clients.splice(0)) redis.disconnect()
  for (const running of started.splice(0)) await running.stop()
})

afterAll(async () => {
  for (const running of started.splice(0)) await running.stop()
})

/** Every layer of every filter: the live count equals a fresh popcount. */
function expectCounted(running: RunningServer, names: string[]): void {
  for (const name of names) {
    const entry = running.server.registry.get(name)
    expect(entry, name).toBeDefined()
    for (const layer of bloomOf(entry).layers) expect(layer.setBits, name).toBe(countSetBits(layer.bitmap))
  }
}

/** BF.SCANDUMP's chunks of a filter, header first: [iterator, data] as BF.LOADCHUNK takes them. */
async function scandump(redis: Redis, key: string): Promise<[number, Buffer][]> {
  const chunks: [number, Buffer][] = []
  for (let iterator = 0; ;) {
    const [next, data] = (await redis.callBuffer('BF.SCANDUMP', key, iterator)) as [number, Buffer]
    if (next === 0) return chunks
    chunks.push([next, data])
    iterator = next
  }
}

const items = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}${i}`)

describe('BFS.HEALTH', () => {
  it('answers BF.INFO-shaped: a flat array in RESP2, a map with doubles in RESP3', async () => {
    const { running, redis } = await boot()
    await redis.call('BF.RESERVE', 'h', '0.01', '100', 'NONSCALING')
    await redis.call('BF.MADD', 'h', ...items('h', 95))
    const health = filterHealth(bloomOf(running.server.registry.get('h')))
    const fill = formatDouble(health.fillRatio)
    const estimate = formatDouble(health.estimatedErrorRate)
    const bulk = (text: string): string => `$${text.length}\r\n${text}\r\n`
    const client = await RawClient.connect(running.port)
    try {
      client.write(encodeCommand(['BFS.HEALTH', 'h']))
      const resp2 =
        `*14\r\n+Fill ratio\r\n${bulk(fill)}+Estimated error rate\r\n${bulk(estimate)}+Error rate\r\n$4\r\n0.01\r\n` +
        `+Items\r\n:${health.items}\r\n+Capacity\r\n:100\r\n+Items left\r\n:${100 - health.items}\r\n+Verdict\r\n+near full\r\n`
      expect((await client.read(resp2.length)).toString('latin1')).toBe(resp2)
      client.write(encodeCommand(['HELLO', '3']))
      await client.readUntil((bytes) => bytes.includes('modules'))
      client.write(encodeCommand(['BFS.HEALTH', 'h']))
      const resp3 =
        `%7\r\n+Fill ratio\r\n,${fill}\r\n+Estimated error rate\r\n,${estimate}\r\n+Error rate\r\n,0.01\r\n` +
        `+Items\r\n:${health.items}\r\n+Capacity\r\n:100\r\n+Items left\r\n:${100 - health.items}\r\n+Verdict\r\n+near full\r\n`
      expect((await client.read(resp3.length)).toString('latin1')).toBe(resp3)
    } finally {
      client.socket.destroy()
    }
    expect(health.fillRatio).toBeGreaterThan(0.4)
    expect(health.estimatedErrorRate).toBeGreaterThan(0.001)
  })

  it('reports a scalable filter against the rate it was reserved with, -1 items left; errors as BF.INFO', async () => {
    const { redis } = await boot()
    await redis.call('BF.RESERVE', 's', '0.01', '100')
    await redis.call('BF.MADD', 's', ...items('s', 150))
    const reply = (await redis.call('BFS.HEALTH', 's')) as (string | number)[]
    expect(reply.filter((_, i) => i % 2 === 0)).toEqual([
      'Fill ratio',
      'Estimated error rate',
      'Error rate',
      'Items',
      'Capacity',
      'Items left',
      'Verdict',
    ])
    expect(reply.slice(4)).toEqual([
      'Error rate',
      '0.01',
      'Items',
      150,
      'Capacity',
      300,
      'Items left',
      -1,
      'Verdict',
      'ok',
    ])
    expect(Number(reply[3])).toBeLessThan(0.01)
    await expect(redis.call('BFS.HEALTH', 'missing')).rejects.toThrow(/^ERR not found$/)
    await expect(redis.call('BFS.HEALTH')).rejects.toThrow("ERR wrong number of arguments for 'bfs.health' command")
    await expect(redis.call('BFS.HEALTH', 's', 'x')).rejects.toThrow(
      "ERR wrong number of arguments for 'bfs.health' command",
    )
  })
})

describe('the live count of set bits', () => {
  it('equals a popcount after adds, LOADCHUNK and BF.LOAD', async () => {
    const { running, redis } = await boot()
    await redis.call('BF.RESERVE', 'src', '0.01', '100', 'EXPANSION', '2')
    await redis.call('BF.MADD', 'src', ...items('a', 400))
    await redis.call('BF.INSERT', 'ins', 'ITEMS', ...items('b', 120))
    await redis.call('BF.ADD', 'one', 'x')
    // SCANDUMP → LOADCHUNK into a new key, then chunks again over an existing filter.
    const chunks = await scandump(redis, 'src')
    for (const [at, data] of chunks) await redis.call('BF.LOADCHUNK', 'copy', at, data)
    await redis.call('BF.MADD', 'copy', ...items('c', 50))
    for (const [at, data] of chunks.slice(1)) await redis.call('BF.LOADCHUNK', 'copy', at, data) // overwrite
    expect(await redis.call('BF.SAVE', 'src', 'src.bf')).toBe('OK')
    expect(await redis.call('BF.LOAD', 'loaded', 'src.bf')).toBe('OK')
    expectCounted(running, ['src', 'ins', 'one', 'copy', 'loaded'])
    expect(await redis.call('BFS.HEALTH', 'loaded')).toEqual(await redis.call('BFS.HEALTH', 'src'))
  })

  it('equals a popcount after a restart from the snapshot and from the append-only log', async () => {
    const dir = makeTempDir('bfs-health-')
    const first = await boot({ dir, appendonly: true })
    await first.redis.call('BF.RESERVE', 'snap', '0.01', '100')
    await first.redis.call('BF.MADD', 'snap', ...items('s', 300))
    expect(await first.redis.call('SAVE')).toBe('OK')
    await first.redis.call('BF.MADD', 'snap', ...items('t', 100)) // only in the log
    await first.redis.call('BF.MADD', 'logged', ...items('l', 250))
    for (const [at, data] of await scandump(first.redis, 'logged'))
      await first.redis.call('BF.LOADCHUNK', 'chunked', at, data)
    const before = [await first.redis.call('BFS.HEALTH', 'snap'), await first.redis.call('BFS.HEALTH', 'logged')]
    first.redis.disconnect()
    clients.splice(0)
    await first.running.stop() // no save at close: 'snap' is restored from the snapshot plus the log
    started.splice(0)
    const second = await boot({ dir, appendonly: true })
    expectCounted(second.running, ['snap', 'logged', 'chunked'])
    expect(await second.redis.call('BFS.HEALTH', 'chunked')).toEqual(before[1])
    expect([await second.redis.call('BFS.HEALTH', 'snap'), await second.redis.call('BFS.HEALTH', 'logged')]).toEqual(
      before,
    )
  })
})

describe('BF.DEBUG', () => {
  it('answers for a filter of the original library in the same shape, with its own figures', async () => {
    const dir = makeTempDir('bfs-debug-')
    const seeded = new ScalableBloomFilter({
      capacity: 1000,
      errorRate: 0.02,
      expansion: 0,
      nonScaling: true,
      hashing: { kind: 'seeded', seed: 7 },
    })
    for (const item of items('o', 300)) seeded.add(Buffer.from(item))
    writeFileSync(
      path.join(dir, 'old.blf'),
      Buffer.concat(encodeFilter({ name: new Uint8Array(0), parts: seeded.toParts() })),
    )
    const { running, redis } = await boot({ dir })
    expect(await redis.call('BF.LOAD', 'old', 'old.blf')).toBe('OK')
    const layer = seeded.layers[0]!
    expect(await redis.call('BF.DEBUG', 'old')).toEqual([
      'size:300',
      `bytes:${layer.bitmap.length} bits:${layer.bitCount} hashes:${layer.hashCount} hashwidth:64 capacity:1000 size:300 ratio:0.02`,
    ])
    expectCounted(running, ['old'])
  })
})

describe('the over-target warning', () => {
  it('is logged once, when an add takes the estimate past the target', async () => {
    const { running, redis } = await boot()
    await redis.call('BF.RESERVE', 'w', '0.01', '100', 'NONSCALING')
    const layer = bloomOf(running.server.registry.get('w')).layers[0]!
    // Bits set up to just below the threshold (X^k = 0.01), loaded as a chunk with no items.
    const below = Math.floor(layer.bitCount * 0.01 ** (1 / layer.hashCount)) - 3 * layer.hashCount
    const bytes = Buffer.alloc(layer.bitmap.length)
    for (let i = 0; i < below; i++) bytes[i >> 3]! |= 1 << (i & 7)
    await redis.call('BF.LOADCHUNK', 'w', 1 + bytes.length, bytes)
    expect(((await redis.call('BFS.HEALTH', 'w')) as string[])[13]).toBe('ok')
    const warnings = (): string[] => running.logs.filter((line) => line.includes('over its target'))
    expect(warnings()).toEqual([])
    let added = 0
    while (((await redis.call('BFS.HEALTH', 'w')) as string[])[13] !== 'over target') {
      await redis.call('BF.ADD', 'w', `more-${added++}`)
      expect(added).toBeLessThan(60)
    }
    expect(warnings()).toHaveLength(1)
    expect(warnings()[0]).toMatch(
      /# Filter "w" is over its target false-positive rate: estimated 0\.01\d* for 0\.01 \(/,
    )
    await redis.call('BF.MADD', 'w', ...items('m', 10))
    expect(warnings()).toHaveLength(1)
  })
})

describe('/metrics', () => {
  it('shows fill, estimate, target and over-target per listed filter, and the count over target', async () => {
    const { running, redis } = await boot({ 'http-port': -1, 'metrics-top-filters': 1 })
    await redis.call('BF.RESERVE', 'big', '0.01', '1000')
    await redis.call('BF.MADD', 'big', ...items('b', 500))
    await redis.call('BF.RESERVE', 'bad', '0.01', '100', 'NONSCALING')
    const layer = bloomOf(running.server.registry.get('bad')).layers[0]!
    await redis.call('BF.LOADCHUNK', 'bad', 1 + layer.bitmap.length, Buffer.alloc(layer.bitmap.length, 0xff))
    await redis.call('BF.ADD', 'small', 'x')
    const text = await (await fetch(`http://127.0.0.1:${running.server.httpPort}/metrics`)).text()
    const value = (name: string, filter?: string): number | undefined => {
      const prefix = filter === undefined ? `${name} ` : `${name}{filter="${filter}"} `
      const line = text.split('\n').find((l) => l.startsWith(prefix))
      return line === undefined ? undefined : Number(line.slice(prefix.length))
    }
    const big = filterHealth(bloomOf(running.server.registry.get('big')))
    expect(value('bfs_filter_fill_ratio', 'big')).toBeCloseTo(big.fillRatio, 12)
    expect(value('bfs_filter_estimated_error_rate', 'big')).toBeCloseTo(big.estimatedErrorRate, 12)
    expect(value('bfs_filter_target_error_rate', 'big')).toBe(0.01)
    expect(value('bfs_filter_over_target', 'big')).toBe(0)
    expect(value('bfs_filter_fill_ratio', 'bad')).toBe(1)
    expect(value('bfs_filter_estimated_error_rate', 'bad')).toBe(1)
    expect(value('bfs_filter_over_target', 'bad')).toBe(1)
    expect(value('bfs_filter_fill_ratio', 'small')).toBeUndefined() // neither among the largest nor the worst
    expect(value('bfs_filters_over_target')).toBe(1)
  })
})

describe('BFS.HEALTH of a Cuckoo filter', () => {
  it('answers its fill, its live estimate from each sub-filter, the rate of one full sub-filter, items and slots', async () => {
    const { running, redis } = await boot()
    await redis.call('CF.RESERVE', 'c', '1000', 'BUCKETSIZE', '4', 'EXPANSION', '0')
    await redis.call('CF.INSERT', 'c', 'ITEMS', ...items('c', 300))
    await redis.call('CF.DEL', 'c', 'c0')
    const reply = (await redis.call('BFS.HEALTH', 'c')) as (string | number)[]
    expect(reply.filter((_, i) => i % 2 === 0)).toEqual([
      'Fill ratio',
      'Estimated error rate',
      'Error rate',
      'Items',
      'Capacity',
      'Items left',
      'Verdict',
    ])
    const load = 299 / 1024
    expect(Number(reply[1])).toBeCloseTo(load, 12)
    expect(Number(reply[3])).toBeCloseTo(1 - (1 - load / 255) ** 8, 12)
    expect(Number(reply[5])).toBeCloseTo(1 - (254 / 255) ** 8, 12)
    expect(reply.slice(6)).toEqual(['Items', 299, 'Capacity', 1024, 'Items left', 1024 - 299, 'Verdict', 'ok'])
    // The same health after a copy through CF.SCANDUMP / CF.LOADCHUNK (counted from the loaded buckets).
    for (let cursor = 0; ;) {
      const [next, data] = (await redis.callBuffer('CF.SCANDUMP', 'c', cursor)) as [number, Buffer | null]
      if (next === 0) break
      await redis.call('CF.LOADCHUNK', 'copy', next, data!)
      cursor = next
    }
    expect(await redis.call('BFS.HEALTH', 'copy')).toEqual(reply)
    const entry = running.server.registry.get('c')!
    expect(entry.kind).toBe('cuckoo')
  })

  it('a filter that grew past one full sub-filter is over target; a window filter is the wrong type', async () => {
    const { redis } = await boot()
    await redis.call('CF.RESERVE', 'g', '64')
    for (let i = 0; Number(((await redis.call('CF.INFO', 'g')) as (string | number)[])[5]) < 3; i += 50) {
      await redis.call('CF.INSERT', 'g', 'ITEMS', ...items(`g${i}-`, 50))
    }
    const reply = (await redis.call('BFS.HEALTH', 'g')) as (string | number)[]
    expect(Number(reply[3])).toBeGreaterThan(Number(reply[5]))
    expect(reply[13]).toBe('over target')
    expect(reply[11]).toBe(-1)
    await redis.call('APBF.RESERVE', 'w', 'COUNT', '0.01', '100')
    await expect(redis.call('BFS.HEALTH', 'w')).rejects.toThrow(/^WRONGTYPE/)
  })
})
