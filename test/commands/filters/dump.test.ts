/**
 * BF.SCANDUMP / BF.LOADCHUNK against real servers: RedisBloom's reference bytes, bfs → bfs round
 * trips that answer identically, and hostile chunks that get RedisBloom's error replies while the
 * server stays healthy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../../helpers/start-server.js'
import { RawClient, encodeCommand } from '../../helpers/resp.js'
import { loadReferenceCases } from '../../helpers/reference-replies.js'
import { serverPerSuite } from '../../helpers/server-hooks.js'

const MAX_CHUNK = 16 * 1024 * 1024
const QUERIES = 100_000

type Chunk = [iterator: number, data: Buffer]

/** Every SCANDUMP reply for a key, header first, until [0, ""]. */
async function scanDump(redis: Redis, key: string): Promise<Chunk[]> {
  const chunks: Chunk[] = []
  let iterator = 0
  for (;;) {
    const [next, data] = (await redis.callBuffer('BF.SCANDUMP', key, iterator)) as [number, Buffer]
    if (next === 0) {
      expect(data.length).toBe(0)
      return chunks
    }
    chunks.push([next, data])
    iterator = next
  }
}

async function loadChunks(redis: Redis, key: string, chunks: readonly Chunk[]): Promise<void> {
  for (const [iterator, data] of chunks) {
    expect(await redis.call('BF.LOADCHUNK', key, iterator, data)).toBe('OK')
  }
}

/**
 * Answers of BF.EXISTS for `count` items as a string of 0/1: all commands pipelined in one write
 * over a raw socket, every reply exactly `:0\r\n` or `:1\r\n`.
 */
async function existsAnswers(port: number, key: string, count: number): Promise<string> {
  const commands: Buffer[] = []
  for (let i = 0; i < count; i++) commands.push(encodeCommand(['BF.EXISTS', key, `q${i}`]))
  const client = await RawClient.connect(port)
  try {
    client.write(Buffer.concat(commands))
    const replies = (await client.read(4 * count, 30_000)).toString('latin1')
    expect(replies).toMatch(/^(?::[01]\r\n)*$/)
    return replies.replace(/[:\r\n]/g, '')
  } finally {
    client.close()
  }
}

async function addItems(redis: Redis, key: string, count: number): Promise<void> {
  for (let start = 0; start < count; start += 5_000) {
    const items: string[] = []
    // Half of the queries of existsAnswers are items, half are not.
    for (let i = start; i < Math.min(count, start + 5_000); i++) items.push(`q${i * 2}`)
    await redis.call('BF.MADD', key, ...items)
  }
}

/** A RedisBloom SCANDUMP header, field by field (20 + 53 bytes per layer). */
interface HeaderLayer {
  bytes: bigint
  bits: bigint
  size: bigint
  error: number
  bpe: number
  hashes: number
  entries: bigint
  n2: number
}

function buildHeader(options: {
  size?: bigint
  nfilters?: number
  options?: number
  growth?: number
  layers: HeaderLayer[]
}): Buffer {
  const out = Buffer.alloc(20 + 53 * options.layers.length)
  out.writeBigUInt64LE(options.size ?? options.layers.reduce((sum, layer) => sum + layer.size, 0n), 0)
  out.writeUInt32LE(options.nfilters ?? options.layers.length, 8)
  out.writeUInt32LE(options.options ?? 5, 12)
  out.writeUInt32LE(options.growth ?? 2, 16)
  options.layers.forEach((layer, i) => {
    const at = 20 + 53 * i
    out.writeBigUInt64LE(layer.bytes, at)
    out.writeBigUInt64LE(layer.bits, at + 8)
    out.writeBigUInt64LE(layer.size, at + 16)
    out.writeDoubleLE(layer.error, at + 24)
    out.writeDoubleLE(layer.bpe, at + 32)
    out.writeUInt32LE(layer.hashes, at + 40)
    out.writeBigUInt64LE(layer.entries, at + 44)
    out.writeUInt8(layer.n2, at + 52)
  })
  return out
}

/** The layer of `BF.RESERVE t10 0.01 10`, as the reference header has it. */
const T10_LAYER: HeaderLayer = {
  bytes: 16n,
  bits: 128n,
  size: 0n,
  error: 0.005,
  bpe: 11.027753418256411,
  hashes: 8,
  entries: 10n,
  n2: 0,
}

describe('BF.SCANDUMP reference bytes', () => {
  const suite = serverPerSuite()

  it('reproduces every SCANDUMP reply of the RedisBloom 2.4.23 reference file byte for byte', async () => {
    const cases = loadReferenceCases().filter((reference) => reference.command[0] === 'BF.SCANDUMP')
    expect(cases.length).toBeGreaterThanOrEqual(4)
    suite.client.write(encodeCommand(['BF.RESERVE', 't10', '0.01', '10']))
    expect((await suite.client.read(5)).toString()).toBe('+OK\r\n')
    for (const reference of cases) {
      suite.client.write(encodeCommand(reference.command))
      expect(await suite.client.read(reference.resp2.length), reference.command.join(' ')).toEqual(reference.resp2)
    }
  })

  it('the header is the one a RedisBloom header for the same filter holds, field by field', async () => {
    suite.client.write(encodeCommand(['BF.RESERVE', 'fields', '0.01', '10']))
    expect((await suite.client.read(5)).toString()).toBe('+OK\r\n')
    const expected = buildHeader({ layers: [T10_LAYER] })
    suite.client.write(encodeCommand(['BF.SCANDUMP', 'fields', '0']))
    const reply = await suite.client.read(13 + expected.length + 2)
    expect(reply.subarray(0, 13).toString('latin1')).toBe('*2\r\n:1\r\n$73\r\n')
    expect(reply.subarray(13, 13 + expected.length)).toEqual(expected)
  })
})

describe('bfs → bfs with BF.SCANDUMP / BF.LOADCHUNK', () => {
  let source: RunningServer
  let target: RunningServer
  let from: Redis
  let to: Redis

  beforeAll(async () => {
    source = await startServer()
    target = await startServer()
    from = new Redis(source.port, '127.0.0.1', { lazyConnect: false })
    to = new Redis(target.port, '127.0.0.1', { lazyConnect: false })
  })

  afterAll(async () => {
    from.disconnect()
    to.disconnect()
    await source.stop()
    await target.stop()
  })

  /** Copies `key`, then checks the copy dumps, reports and answers exactly as the original. */
  async function roundTrip(key: string): Promise<Chunk[]> {
    const chunks = await scanDump(from, key)
    await loadChunks(to, key, chunks)
    expect(await to.call('BF.INFO', key)).toEqual(await from.call('BF.INFO', key))
    expect(await to.call('BF.CARD', key)).toEqual(await from.call('BF.CARD', key))
    const expected = await existsAnswers(source.port, key, QUERIES)
    expect(expected).toContain('0')
    expect(expected).toContain('1')
    expect(expected.length).toBe(QUERIES)
    expect(await existsAnswers(target.port, key, QUERIES)).toBe(expected)
    const copied = await scanDump(to, key)
    expect(copied.length).toBe(chunks.length)
    copied.forEach(([iterator, data], i) => {
      expect(iterator).toBe(chunks[i]![0])
      expect(data.equals(chunks[i]![1])).toBe(true)
    })
    return chunks
  }

  it('a scalable filter of several layers', async () => {
    await from.call('BF.RESERVE', 'scalable', '0.01', '1000', 'EXPANSION', '2')
    await addItems(from, 'scalable', 12_000)
    expect(await from.call('BF.INFO', 'scalable', 'FILTERS')).toEqual([4])
    const chunks = await roundTrip('scalable')
    // The header, then one chunk per layer (each under 16 MiB).
    expect(chunks.length).toBe(5)
    // The copy keeps scaling as the original does.
    await addItems(to, 'scalable', 20_000)
    await addItems(from, 'scalable', 20_000)
    expect(await to.call('BF.INFO', 'scalable')).toEqual(await from.call('BF.INFO', 'scalable'))
  })

  it('a non-scaling filter, full, refuses items on both sides alike', async () => {
    await from.call('BF.RESERVE', 'fixed', '0.001', '3000', 'NONSCALING')
    await addItems(from, 'fixed', 2_990)
    await roundTrip('fixed')
    const info = (await to.call('BF.INFO', 'fixed')) as unknown[]
    expect(info[info.length - 1]).toBeNull() // Expansion rate: nil for NONSCALING
    const items = Array.from({ length: 200 }, (_, i) => `extra${i}`)
    const texts = (reply: unknown): unknown[] =>
      (reply as unknown[]).map((value) => (value instanceof Error ? value.message : value))
    const original = texts(await from.call('BF.MADD', 'fixed', ...items))
    const copy = texts(await to.call('BF.MADD', 'fixed', ...items))
    expect(copy).toEqual(original)
    expect(copy[copy.length - 1]).toBe('ERR non scaling filter is full')
  })

  it('a filter over 16 MiB moves in several chunks, none over 16 MiB', async () => {
    await from.call('BF.RESERVE', 'large', '0.01', '20000000')
    await addItems(from, 'large', 50_000)
    const chunks = await roundTrip('large')
    const bitmapChunks = chunks.slice(1)
    expect(bitmapChunks.length).toBeGreaterThanOrEqual(2)
    for (const [, data] of bitmapChunks) expect(data.length).toBeLessThanOrEqual(MAX_CHUNK)
    expect(bitmapChunks[0]![1].length).toBe(MAX_CHUNK)
    const total = bitmapChunks.reduce((sum, [, data]) => sum + data.length, 0)
    expect(total).toBeGreaterThan(MAX_CHUNK)
    // Iterators are positions just past each chunk, plus one.
    expect(bitmapChunks[bitmapChunks.length - 1]![0]).toBe(total + 1)
  })

  it('EXPANSION 0 (accepted by RedisBloom) dumps growth 0 and loads back', async () => {
    await from.call('BF.RESERVE', 'e0', '0.01', '10', 'EXPANSION', '0')
    await from.call('BF.MADD', 'e0', 'a', 'b', 'c')
    const chunks = await scanDump(from, 'e0')
    expect(chunks[0]![1].readUInt32LE(16)).toBe(0)
    expect(chunks[0]![1].readUInt32LE(12) & 8).toBe(0) // a scaling filter
    await loadChunks(to, 'e0', chunks)
    expect(await to.call('BF.INFO', 'e0')).toEqual(await from.call('BF.INFO', 'e0'))
    expect(await to.call('BF.INFO', 'e0', 'EXPANSION')).toEqual([0])
    expect(await to.call('BF.MEXISTS', 'e0', 'a', 'b', 'c', 'd')).toEqual(
      await from.call('BF.MEXISTS', 'e0', 'a', 'b', 'c', 'd'),
    )
  })

  it('SCANDUMP past the end, or at a negative iterator, is [0, ""]', async () => {
    await from.call('BF.RESERVE', 'tiny', '0.01', '10')
    expect(await from.callBuffer('BF.SCANDUMP', 'tiny', 17)).toEqual([0, Buffer.alloc(0)])
    expect(await from.callBuffer('BF.SCANDUMP', 'tiny', -5)).toEqual([0, Buffer.alloc(0)])
    expect(await from.callBuffer('BF.SCANDUMP', 'tiny', '999999999999')).toEqual([0, Buffer.alloc(0)])
  })
})

describe('hostile BF.LOADCHUNK input', () => {
  let running: RunningServer
  let redis: Redis
  let keepDump: Chunk[]
  let header: Buffer
  const propagated: string[][] = []

  beforeAll(async () => {
    running = await startServer({ 'max-filter-bytes': 64 * 1024 * 1024 })
    running.server.propagate = (argv) => {
      propagated.push(Array.from(argv, (arg) => Buffer.from(arg).toString('latin1')))
    }
    redis = new Redis(running.port, '127.0.0.1')
    await redis.call('BF.RESERVE', 'keep', '0.01', '100', 'EXPANSION', '2')
    await addItems(redis, 'keep', 400)
    keepDump = await scanDump(redis, 'keep')
    await redis.call('BF.RESERVE', 't10', '0.01', '10')
    header = (await scanDump(redis, 't10'))[0]![1]
  })

  afterAll(async () => {
    redis.disconnect()
    await running.stop()
  })

  /** The server answers, and the existing filter is untouched. */
  async function expectHealthy(): Promise<void> {
    expect(await redis.ping()).toBe('PONG')
    const now = await scanDump(redis, 'keep')
    expect(now.length).toBe(keepDump.length)
    now.forEach(([iterator, data], i) => {
      expect(iterator).toBe(keepDump[i]![0])
      expect(data.equals(keepDump[i]![1])).toBe(true)
    })
  }

  async function loadError(key: string, iterator: number | string, data: Buffer): Promise<string> {
    const before = propagated.length
    const error = await redis.call('BF.LOADCHUNK', key, iterator, data).then(
      (reply) => `unexpected reply ${String(reply)}`,
      (err: Error) => err.message,
    )
    expect(propagated.length).toBe(before) // a refused chunk is not logged
    return error
  }

  const badHeaders: [string, () => Buffer, string][] = [
    ['under 20 bytes', () => header.subarray(0, 12), 'ERR received bad data'],
    ['truncated in a layer', () => header.subarray(0, 50), 'ERR received bad data'],
    ['one byte too long', () => Buffer.concat([header, Buffer.from([0])]), 'ERR received bad data'],
    ['nfilters 0', () => buildHeader({ nfilters: 0, layers: [] }), 'ERR received bad data'],
    ['nfilters 2 with one layer', () => buildHeader({ nfilters: 2, layers: [T10_LAYER] }), 'ERR received bad data'],
    ['nfilters 2^32-1', () => buildHeader({ nfilters: 0xffffffff, layers: [T10_LAYER] }), 'ERR received bad data'],
    [
      'size not the sum of the layer sizes',
      () => buildHeader({ size: 7n, layers: [T10_LAYER] }),
      'ERR received bad data',
    ],
    ['bits != bytes * 8', () => buildHeader({ layers: [{ ...T10_LAYER, bits: 100n }] }), 'ERR received bad data'],
    ['bits 0', () => buildHeader({ layers: [{ ...T10_LAYER, bits: 0n, bytes: 0n }] }), 'ERR received bad data'],
    [
      'hashes not ceil(ln2 * bpe)',
      () => buildHeader({ layers: [{ ...T10_LAYER, hashes: 9 }] }),
      'ERR received bad data',
    ],
    ['error rate 0', () => buildHeader({ layers: [{ ...T10_LAYER, error: 0 }] }), 'ERR received bad data'],
    ['error rate NaN', () => buildHeader({ layers: [{ ...T10_LAYER, error: NaN }] }), 'ERR received bad data'],
    ['n2 64', () => buildHeader({ layers: [{ ...T10_LAYER, n2: 64 }] }), 'ERR received bad data'],
    ['unknown options', () => buildHeader({ options: 5 | 0x100, layers: [T10_LAYER] }), 'ERR received bad data'],
    [
      'non-scaling with two layers',
      () => buildHeader({ options: 5 | 8, layers: [T10_LAYER, T10_LAYER] }),
      'ERR received bad data',
    ],
    [
      'a layer of 2^40 bytes (over max-filter-bytes)',
      () => buildHeader({ layers: [{ ...T10_LAYER, bytes: 2n ** 40n, bits: 2n ** 43n }] }),
      'ERR filter would exceed the maximum filter size',
    ],
    [
      'a layer of 2^61 bytes (past 2^53)',
      () => buildHeader({ layers: [{ ...T10_LAYER, bytes: 2n ** 61n, bits: 2n ** 64n - 8n }] }),
      'ERR filter would exceed the maximum filter size',
    ],
    [
      'layers that add up past max-filter-bytes',
      () =>
        buildHeader({
          layers: Array.from({ length: 3 }, () => ({
            ...T10_LAYER,
            bytes: 32n * 1024n * 1024n,
            bits: 256n * 1024n * 1024n,
          })),
        }),
      'ERR filter would exceed the maximum filter size',
    ],
  ]

  for (const [what, make, expected] of badHeaders) {
    it(`a header with ${what} → ${expected}`, async () => {
      expect(await loadError('hostile', 1, make())).toBe(expected)
      expect(await redis.exists('hostile')).toBe(0)
      await expectHealthy()
    })
  }

  it('chunks at wrong offsets, too big or with bad iterators get RedisBloom errors and change nothing', async () => {
    expect(await redis.call('BF.LOADCHUNK', 'victim', 1, header)).toBe('OK')
    expect(await redis.call('BF.LOADCHUNK', 'victim', 17, Buffer.alloc(16, 0x5a))).toBe('OK')
    const before = await scanDump(redis, 'victim')
    const ones = Buffer.alloc(16, 0xff)
    // src/sb.c SBChain_LoadEncodedChunk
    expect(await loadError('victim', 100, ones)).toBe('ERR invalid offset - no link found')
    expect(await loadError('victim', 18, ones)).toBe('ERR invalid chunk - Too big for current filter')
    expect(await loadError('victim', 18, Buffer.alloc(17, 0xff))).toBe('ERR invalid chunk - Too big for current filter')
    // The chunk's start is iterator - length - 1: 17 - 17 - 1 is before the first byte.
    expect(await loadError('victim', 17, Buffer.alloc(17, 0xff))).toBe('ERR invalid offset - no link found')
    expect(await loadError('victim', 5, ones)).toBe('ERR received bad data')
    expect(await loadError('victim', 0, ones)).toBe('ERR received bad data')
    expect(await loadError('victim', -17, ones)).toBe('ERR received bad data')
    // A second header on an existing filter is a chunk at iterator 1: shorter than the header.
    expect(await loadError('victim', 1, header)).toBe('ERR received bad data')
    expect(await loadError('victim', '999999999999', ones)).toBe('ERR invalid offset - no link found')
    expect(await loadError('victim', 'abc', ones)).toBe('ERR Second argument must be numeric')
    expect(await loadError('victim', '1.5', ones)).toBe('ERR Second argument must be numeric')
    const after = await scanDump(redis, 'victim')
    expect(after.map(([, data]) => data.toString('hex'))).toEqual(before.map(([, data]) => data.toString('hex')))
    await expectHealthy()
  })

  it('a chunk for a missing key other than the header → ERR not found; arity is checked', async () => {
    expect(await loadError('nobody', 17, Buffer.alloc(16))).toBe('ERR not found')
    expect(await loadError('nobody', 'x', Buffer.alloc(16))).toBe('ERR Second argument must be numeric')
    await expect(redis.call('BF.LOADCHUNK', 'nobody', '1')).rejects.toThrow(
      "ERR wrong number of arguments for 'bf.loadchunk' command",
    )
    await expect(redis.call('BF.SCANDUMP', 'keep')).rejects.toThrow(
      "ERR wrong number of arguments for 'bf.scandump' command",
    )
    // SCANDUMP looks the key up before it parses the iterator; LOADCHUNK the other way round.
    await expect(redis.call('BF.SCANDUMP', 'nobody', 'x')).rejects.toThrow('ERR not found')
    await expect(redis.call('BF.SCANDUMP', 'keep', 'x')).rejects.toThrow('Second argument must be numeric')
    expect(await redis.exists('nobody')).toBe(0)
    await expectHealthy()
  })

  it('a successful LOADCHUNK is handed to the append-only log verbatim', async () => {
    const before = propagated.length
    expect(await redis.call('BF.LOADCHUNK', 'logged', 1, header)).toBe('OK')
    expect(await redis.call('BF.LOADCHUNK', 'logged', 17, Buffer.alloc(16, 1))).toBe('OK')
    expect(propagated.slice(before)).toEqual([
      ['BF.LOADCHUNK', 'logged', '1', header.toString('latin1')],
      ['BF.LOADCHUNK', 'logged', '17', Buffer.alloc(16, 1).toString('latin1')],
    ])
  })

  it('COMMAND INFO shows the arity (-1) and flags RedisBloom registers', async () => {
    const info = (await redis.call('COMMAND', 'INFO', 'BF.SCANDUMP', 'BF.LOADCHUNK')) as [string, number, string[]][]
    expect(info[0]!.slice(0, 2)).toEqual(['bf.scandump', -1])
    expect(info[0]![2]).toEqual(expect.arrayContaining(['readonly', 'fast']))
    expect(info[1]!.slice(0, 2)).toEqual(['bf.loadchunk', -1])
    expect(info[1]![2]).toEqual(expect.arrayContaining(['write', 'denyoom']))
  })
})
