/**
 * ioredis 5 (RESP2) and ioredis 6 (which opens with HELLO 3) against a real bfs: every BF command
 * with its exact reply, pipelines, binary items, the error element of BF.MADD, INFO.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
// Named imports: under NodeNext the default import of these CommonJS packages is the module object.
import { Redis } from 'ioredis'
import { Redis as Redis6 } from 'ioredis6'
import { startServer, type RunningServer } from '../../helpers/start-server.js'

/** The part of both clients' API these tests use. */
interface Client {
  call(command: string, ...args: (string | Buffer | number)[]): Promise<unknown>
  callBuffer(command: string, ...args: (string | Buffer | number)[]): Promise<unknown>
  pipeline(): Pipe
  info(...sections: string[]): Promise<string>
  quit(): Promise<unknown>
  disconnect(): void
}

interface Pipe {
  call(command: string, ...args: (string | Buffer | number)[]): Pipe
  exec(): Promise<[Error | null, unknown][] | null>
}

let running: RunningServer

beforeAll(async () => {
  running = await startServer()
})

afterAll(async () => {
  await running?.stop()
})

const CLIENTS: { label: string; make: (port: number) => Client; resp: 2 | 3; major: string }[] = [
  // Only the port and host differ from the defaults: "localhost" may resolve to ::1, bfs binds 127.0.0.1.
  {
    label: 'ioredis 5',
    make: (port) => new Redis({ port, host: '127.0.0.1' }) as unknown as Client,
    resp: 2,
    major: '5',
  },
  {
    label: 'ioredis 6',
    make: (port) => new Redis6({ port, host: '127.0.0.1' }) as unknown as Client,
    resp: 3,
    major: '6',
  },
]

/** INFO text as `field → value`. */
function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>()
  for (const line of text.split('\r\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.indexOf(':')
    if (at > 0) fields.set(line.slice(0, at), line.slice(at + 1))
  }
  return fields
}

describe.each(CLIENTS)('$label', ({ label, make, resp, major }) => {
  let redis: Client
  // Each client uses its own key names so the two suites never see each other's filters.
  const k = (name: string): string => `${label.replace(' ', '')}:${name}`

  beforeAll(async () => {
    redis = make(running.port)
    await redis.call('PING')
  })

  afterAll(async () => {
    await redis?.quit()
  })

  it(`negotiates RESP${resp} and names itself with CLIENT SETINFO`, async () => {
    const line = String(await redis.call('CLIENT', 'INFO'))
    expect(line).toContain(` resp=${resp} `)
    expect(line).toContain(' lib-name=ioredis ')
    expect(line).toMatch(new RegExp(` lib-ver=${major}\\.\\d+\\.\\d+`))
  })

  it('BF.RESERVE, BF.ADD, BF.EXISTS with exact replies', async () => {
    expect(await redis.call('BF.RESERVE', k('bf'), '0.01', '1000')).toBe('OK')
    await expect(redis.call('BF.RESERVE', k('bf'), '0.01', '1000')).rejects.toThrow(/^ERR item exists$/)
    expect(await redis.call('BF.ADD', k('bf'), 'hello')).toBe(1)
    expect(await redis.call('BF.ADD', k('bf'), 'hello')).toBe(0)
    expect(await redis.call('BF.EXISTS', k('bf'), 'hello')).toBe(1)
    expect(await redis.call('BF.EXISTS', k('bf'), 'nope')).toBe(0)
    expect(await redis.call('BF.EXISTS', k('missing'), 'x')).toBe(0)
  })

  it('BF.MADD, BF.MEXISTS, BF.CARD', async () => {
    expect(await redis.call('BF.MADD', k('m'), 'a', 'b', 'a')).toEqual([1, 1, 0])
    expect(await redis.call('BF.MEXISTS', k('m'), 'a', 'zz', 'b')).toEqual([1, 0, 1])
    expect(await redis.call('BF.MEXISTS', k('missing'), 'a', 'b')).toEqual([0, 0])
    expect(await redis.call('BF.CARD', k('m'))).toBe(2)
    expect(await redis.call('BF.CARD', k('missing'))).toBe(0)
  })

  it('BF.INFO whole and by field', async () => {
    await redis.call('BF.RESERVE', k('info'), '0.01', '1000')
    await redis.call('BF.MADD', k('info'), 'a', 'b', 'c')
    expect(await redis.call('BF.INFO', k('info'))).toEqual([
      'Capacity',
      1000,
      'Size',
      1480,
      'Number of filters',
      1,
      'Number of items inserted',
      3,
      'Expansion rate',
      2,
    ])
    expect(await redis.call('BF.INFO', k('info'), 'CAPACITY')).toEqual([1000])
    expect(await redis.call('BF.INFO', k('info'), 'size')).toEqual([1480])
    expect(await redis.call('BF.INFO', k('info'), 'filters')).toEqual([1])
    expect(await redis.call('BF.INFO', k('info'), 'items')).toEqual([3])
    expect(await redis.call('BF.INFO', k('info'), 'expansion')).toEqual([2])
    await expect(redis.call('BF.INFO', k('info'), 'bogus')).rejects.toThrow(/^Invalid information value$/)
    await expect(redis.call('BF.INFO', k('missing'))).rejects.toThrow(/^ERR not found$/)
  })

  it('BF.INFO of a NONSCALING filter has a null expansion rate (RESP2 $-1, RESP3 _)', async () => {
    expect(await redis.call('BF.RESERVE', k('nsinfo'), '0.01', '2', 'NONSCALING')).toBe('OK')
    expect(await redis.call('BF.INFO', k('nsinfo'))).toEqual([
      'Capacity',
      2,
      'Size',
      104,
      'Number of filters',
      1,
      'Number of items inserted',
      0,
      'Expansion rate',
      null,
    ])
  })

  it('BF.MADD into a full NONSCALING filter ends its array with an error element', async () => {
    await redis.call('BF.RESERVE', k('ns'), '0.01', '2', 'NONSCALING')
    const reply = (await redis.call('BF.MADD', k('ns'), '1', '2', '3', '4')) as unknown[]
    expect(reply).toHaveLength(3)
    expect(reply.slice(0, 2)).toEqual([1, 1])
    expect(reply[2]).toBeInstanceOf(Error)
    expect((reply[2] as Error).message).toBe('ERR non scaling filter is full')
    await expect(redis.call('BF.ADD', k('ns'), '5')).rejects.toThrow(/^ERR non scaling filter is full$/)
    // The connection is still in step after the error element.
    expect(await redis.call('BF.CARD', k('ns'))).toBe(2)
  })

  it('BF.INSERT with options, NOCREATE and bad arguments', async () => {
    expect(await redis.call('BF.INSERT', k('ins'), 'ITEMS', 'a', 'b', 'a')).toEqual([1, 1, 0])
    expect(
      await redis.call('BF.INSERT', k('ins2'), 'CAPACITY', '50', 'ERROR', '0.001', 'EXPANSION', '4', 'ITEMS', 'q'),
    ).toEqual([1])
    expect(await redis.call('BF.INFO', k('ins2'))).toEqual([
      'Capacity',
      50,
      'Size',
      200,
      'Number of filters',
      1,
      'Number of items inserted',
      1,
      'Expansion rate',
      4,
    ])
    await expect(redis.call('BF.INSERT', k('ins3'), 'NOCREATE', 'ITEMS', 'a')).rejects.toThrow(/^ERR not found$/)
    await expect(redis.call('BF.INSERT', k('ins6'), 'BOGUS', '1', 'ITEMS', 'a')).rejects.toThrow(
      /^Unknown argument received$/,
    )
    await expect(redis.call('BF.INSERT', k('ins7'), 'ERROR', '2', 'ITEMS', 'a')).rejects.toThrow(
      /^Bad argument received$/,
    )
    const full = (await redis.call(
      'BF.INSERT',
      k('ins4'),
      'NONSCALING',
      'CAPACITY',
      '2',
      'ITEMS',
      'a',
      'b',
      'c',
      'd',
    )) as unknown[]
    expect(full.slice(0, 2)).toEqual([1, 1])
    expect((full[2] as Error).message).toBe('ERR non scaling filter is full')
    expect(full).toHaveLength(3)
  })

  it('argument errors: wrong arity and bad numbers', async () => {
    await expect(redis.call('BF.ADD', k('bf'))).rejects.toThrow(/^ERR wrong number of arguments for 'bf.add' command$/)
    await expect(redis.call('BF.RESERVE', k('x'), 'abc', '10')).rejects.toThrow(/^ERR bad error rate$/)
    await expect(redis.call('BF.RESERVE', k('x'), '0.01', '0')).rejects.toThrow(
      /^ERR \(capacity should be larger than 0\)$/,
    )
    await expect(redis.call('BF.RESERVE', k('x'), '0.01', '10', 'EXPANSION', '2', 'NONSCALING')).rejects.toThrow(
      /^Nonscaling filters cannot expand$/,
    )
  })

  it('error rates are read as RedisBloom reads them (strtod through RedisModule_StringToDouble)', async () => {
    // Hexadecimal floats are numbers: 0x0.1p0 is 0.0625, so both filters have the same shape.
    expect(await redis.call('BF.RESERVE', k('hex'), '0x0.1p0', '100')).toBe('OK')
    expect(await redis.call('BF.RESERVE', k('dec'), '0.0625', '100')).toBe('OK')
    expect(await redis.call('BF.INFO', k('hex'))).toEqual(await redis.call('BF.INFO', k('dec')))
    expect(await redis.call('BF.INSERT', k('hexi'), 'ERROR', '0X1P-3', 'ITEMS', 'a')).toEqual([1])
    // A number out of (0, 1) is a range error; underflow to zero (ERANGE) and NaN are not numbers.
    for (const rate of ['0x10', 'inf', '0e-400', '-0x.8', '1e-310x']) {
      const expected = rate === '1e-310x' ? /^ERR bad error rate$/ : /^ERR \(0 < error rate range < 1\) $/
      await expect(redis.call('BF.RESERVE', k('x'), rate, '10')).rejects.toThrow(expected)
    }
    for (const rate of ['1e-400', '0x1p-1075', 'nan', ' 0.1', '0.1 ', '0x', '0x1p', '1e309']) {
      await expect(redis.call('BF.RESERVE', k('x'), rate, '10')).rejects.toThrow(/^ERR bad error rate$/)
      await expect(redis.call('BF.INSERT', k('x'), 'ERROR', rate, 'ITEMS', 'a')).rejects.toThrow(/^Bad error rate$/)
    }
    expect(await redis.call('EXISTS', k('x'))).toBe(0)
    // A subnormal result is kept (ERANGE but not zero), as strtod gives it.
    expect(await redis.call('BF.RESERVE', k('tiny'), '1e-310', '1')).toBe('OK')
  })

  it('binary items (Buffers with NUL, CR, LF and high bytes) are stored byte for byte', async () => {
    const items = [
      Buffer.from([0x00]),
      Buffer.from([0x00, 0x00]),
      Buffer.from('\r\n'),
      Buffer.from([0xff, 0xfe, 0x80, 0x0d, 0x0a, 0x00, 0x24]),
      Buffer.from('*3\r\n$1\r\nx\r\n'),
      Buffer.alloc(70_000, 0xab),
    ]
    for (const item of items) expect(await redis.call('BF.ADD', k('bin'), item)).toBe(1)
    expect(await redis.call('BF.MEXISTS', k('bin'), ...items)).toEqual(items.map(() => 1))
    // Neighbours of the stored bytes are other items.
    const others = [
      Buffer.from([0x00, 0x00, 0x00]),
      Buffer.from('\n'),
      Buffer.from([0xff, 0xfe, 0x80, 0x0d, 0x0a, 0x00]),
    ]
    expect(await redis.call('BF.MEXISTS', k('bin'), ...others)).toEqual([0, 0, 0])
    expect(await redis.call('BF.CARD', k('bin'))).toBe(items.length)
    // A binary key name too, read back through KEYS as raw bytes.
    const key = Buffer.concat([Buffer.from(k('binkey')), Buffer.from([0x00, 0xff, 0x0d, 0x0a])])
    expect(await redis.call('BF.ADD', key, 'x')).toBe(1)
    const keys = (await redis.callBuffer(
      'KEYS',
      Buffer.concat([Buffer.from(k('binkey')), Buffer.from('*')]),
    )) as Buffer[]
    expect(keys).toHaveLength(1)
    expect(keys[0]!.equals(key)).toBe(true)
    const echoed = (await redis.callBuffer('ECHO', items[3]!)) as Buffer
    expect(echoed.equals(items[3]!)).toBe(true)
  })

  it('pipelines: replies in order, errors in place', async () => {
    const pipe = redis.pipeline()
    pipe.call('BF.RESERVE', k('p'), '0.0001', '500')
    for (let i = 0; i < 200; i++) pipe.call('BF.ADD', k('p'), `item-${i % 150}`)
    pipe.call('BF.RESERVE', k('p'), '0.01', '500')
    pipe.call('BF.MEXISTS', k('p'), 'item-0', 'item-149', 'item-150')
    pipe.call('BF.CARD', k('p'))
    pipe.call('NOSUCHCMD', 'a')
    pipe.call('BF.EXISTS', k('p'), 'item-7')
    const results = (await pipe.exec())!
    expect(results).toHaveLength(206)
    expect(results[0]).toEqual([null, 'OK'])
    for (let i = 0; i < 200; i++) expect(results[1 + i]).toEqual([null, i < 150 ? 1 : 0])
    expect(results[201]![0]!.message).toBe('ERR item exists')
    expect(results[202]).toEqual([null, [1, 1, 0]])
    expect(results[203]).toEqual([null, 150])
    expect(results[204]![0]!.message).toBe("ERR unknown command 'NOSUCHCMD', with args beginning with: 'a' ")
    expect(results[205]).toEqual([null, 1])
  })

  it('a large pipeline of BF.MADD batches', async () => {
    const pipe = redis.pipeline()
    for (let batch = 0; batch < 50; batch++) {
      pipe.call('BF.MADD', k('big'), ...Array.from({ length: 100 }, (_, i) => `b${batch}-${i}`))
    }
    const results = (await pipe.exec())!
    expect(results).toHaveLength(50)
    let added = 0
    for (const [error, reply] of results) {
      expect(error).toBeNull()
      expect(reply).toHaveLength(100)
      added += (reply as number[]).reduce((sum, v) => sum + v, 0)
    }
    // Scaling filter: nothing is lost, a rare false positive answers 0 on add.
    expect(added).toBeGreaterThan(4900)
    expect(await redis.call('BF.CARD', k('big'))).toBe(added)
  })

  it('INFO parses into sections with the redis fields', async () => {
    const text = await redis.info()
    expect(text.startsWith('# Server\r\n')).toBe(true)
    const fields = parseInfo(text)
    expect(fields.get('redis_version')).toMatch(/^7\.0\.\d+$/)
    expect(fields.get('bfs_version')).toMatch(/^\d+\.\d+\.\d+/)
    expect(fields.get('loading')).toBe('0')
    expect(fields.get('tcp_port')).toBe(String(running.port))
    expect(Number(fields.get('connected_clients'))).toBeGreaterThanOrEqual(1)
    const server = await redis.info('server')
    expect(server).toContain('redis_version:')
    expect(server).not.toContain('connected_clients:')
  })

  it('keyspace commands through the client', async () => {
    await redis.call('BF.ADD', k('ks'), 'x')
    expect(await redis.call('TYPE', k('ks'))).toBe('MBbloom--')
    expect(await redis.call('EXISTS', k('ks'), k('ks'), k('nope'))).toBe(2)
    expect(await redis.call('TTL', k('ks'))).toBe(-1)
    expect(await redis.call('RENAME', k('ks'), k('ks2'))).toBe('OK')
    expect(await redis.call('BF.EXISTS', k('ks2'), 'x')).toBe(1)
    expect(await redis.call('DEL', k('ks2'), k('nope'))).toBe(1)
    expect(await redis.call('EXISTS', k('ks2'))).toBe(0)
  })
})

describe('ioredis 6 options', () => {
  it('protocol: 2 stays on RESP2 (no HELLO)', async () => {
    const redis = new Redis6({ port: running.port, host: '127.0.0.1', protocol: 2 })
    try {
      expect(String(await redis.call('CLIENT', 'INFO'))).toContain(' resp=2 ')
      expect(await redis.call('BF.ADD', 'io6-p2', 'a')).toBe(1)
    } finally {
      await redis.quit()
    }
  })

  it('replyMapping "resp3" gets HELLO as an object and null expansion as null', async () => {
    const redis = new Redis6({ port: running.port, host: '127.0.0.1', replyMapping: 'resp3' })
    try {
      const hello = (await redis.call('HELLO')) as Record<string, unknown>
      expect(hello.server).toBe('redis')
      expect(hello.proto).toBe(3)
      expect(hello.mode).toBe('standalone')
      expect(hello.role).toBe('master')
      expect(await redis.call('BF.RESERVE', 'io6-map-ns', '0.01', '2', 'NONSCALING')).toBe('OK')
      const info = (await redis.call('BF.INFO', 'io6-map-ns')) as unknown[]
      expect(info[9]).toBeNull()
    } finally {
      await redis.quit()
    }
  })
})
