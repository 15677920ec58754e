/**
 * Every limit, hit on a real server: the exact words redis 7.0 uses, and a server that answers
 * PING afterwards. maxclients, query and output buffers, timeout, tcp-keepalive, maxmemory,
 * max-filter-bytes, protocol limits, handler exceptions, rename-command and graceful close.
 */
import net from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ask, askLine, encodeCommand } from '../helpers/resp.js'
import { serverPerTest } from '../helpers/server-hooks.js'
import { layerGeometry } from '../../src/core/sizing.js'
import { DEFAULT_OUTPUT_BUFFER_LIMITS, ConfigError, type OutputBufferLimits } from '../../src/runtime/config.js'
import { loadConfig } from '../../src/runtime/config-load.js'
import { createServer } from '../../src/server/server.js'

const OOM = "-OOM command not allowed when used memory > 'maxmemory'.\r\n"
const TOO_LARGE = '-ERR filter would exceed the maximum filter size\r\n'

// Registered first, so it runs after serverPerTest's clean-up (vitest runs after-hooks in reverse).
afterEach(() => {
  vi.restoreAllMocks()
})
const { start, connect } = serverPerTest()

/** Sends one command and reads one whole reply line (these tests only need single-line replies). */
async function expectHealthy(port: number): Promise<void> {
  const client = await connect(port)
  expect(await askLine(client, 'PING')).toBe('+PONG\r\n')
}

/** Bytes of the first layer BF.RESERVE key <errorRate> <capacity> allocates (scalable: rate halved). */
function reserveBytes(errorRate: number, capacity: number): number {
  return layerGeometry(capacity, errorRate / 2).byteCount
}

describe('maxclients', () => {
  it("the client past the limit gets redis's error and is closed; the others keep working", async () => {
    const { port, server } = await start({ maxclients: 2 })
    const a = await connect(port)
    const b = await connect(port)
    expect(await askLine(a, 'PING')).toBe('+PONG\r\n')
    expect(await askLine(b, 'PING')).toBe('+PONG\r\n')
    const c = await connect(port)
    // readUntil(() => false) returns what arrived once the server closes the connection.
    expect((await c.readUntil(() => false)).toString()).toBe('-ERR max number of clients reached\r\n')
    await c.waitClosed()
    expect(server.stats.rejectedConnections).toBe(1)
    expect(await askLine(a, 'PING')).toBe('+PONG\r\n')
    b.close()
    while (server.clientCount > 1) await new Promise((resolve) => setTimeout(resolve, 10))
    await expectHealthy(port)
  })
})

describe('client-query-buffer-limit', () => {
  it('closes a client whose unfinished command passes the limit, without a reply', async () => {
    const { port, logs } = await start({ 'client-query-buffer-limit': 1024 * 1024 })
    const client = await connect(port)
    const bulk = Buffer.alloc(100 * 1024, 0x61)
    // 20 arguments of 100 KiB announced, 12 sent: 1.2 MiB held for a command that never ends.
    client.write('*20\r\n$4\r\nECHO\r\n')
    for (let i = 0; i < 12; i++)
      client.write(Buffer.concat([Buffer.from(`$${bulk.length}\r\n`), bulk, Buffer.from('\r\n')]))
    const received = await client.readUntil(() => false)
    expect(client.closed).toBe(true)
    expect(received.length).toBe(0)
    expect(logs.some((line) => line.includes('Closing client that reached max query buffer length'))).toBe(true)
    await expectHealthy(port)
  })

  it('a command just under the limit runs', async () => {
    const { port } = await start({ 'client-query-buffer-limit': 1024 * 1024 })
    const client = await connect(port)
    const bulk = Buffer.alloc(900 * 1024, 0x62)
    client.write(encodeCommand(['ECHO', bulk]))
    const reply = await client.read(`$${bulk.length}\r\n`.length + bulk.length + 2)
    expect(reply.subarray(0, 8).toString()).toBe(`$${bulk.length}\r\n`.slice(0, 8))
    expect(reply.length).toBe(`$${bulk.length}\r\n`.length + bulk.length + 2)
  })
})

/** Limits for the normal class, the others at their defaults. */
function normalLimit(hard: number, soft = 0, softSeconds = 0): OutputBufferLimits {
  return { ...DEFAULT_OUTPUT_BUFFER_LIMITS, normal: { hard, soft, softSeconds } }
}

describe('client-output-buffer-limit', () => {
  it('a client that sends and never reads stops being read: its pending output stays bounded', async () => {
    const { port, server } = await start({ 'client-output-buffer-limit': normalLimit(0) })
    const socket = net.connect({ port, host: '127.0.0.1' })
    socket.on('error', () => {})
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    socket.pause() // never read
    const payload = Buffer.alloc(4096, 0x63)
    const command = encodeCommand(['ECHO', payload])
    const count = 8000 // 32 MiB of requests, 32 MiB of replies: far more than socket buffers hold
    const batch = Buffer.concat(Array.from({ length: 100 }, () => command))
    for (let i = 0; i < count / 100; i++) socket.write(batch)
    // Wait until the server stops reading: our own writes back up.
    const deadline = Date.now() + 20_000
    while (socket.writableLength === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(socket.writableLength).toBeGreaterThan(0)
    for (const client of server.clients()) expect(client.outputBytes()).toBeLessThan(1024 * 1024)
    await expectHealthy(port)
    // Once it reads, every reply arrives, in order.
    let received = 0
    socket.on('data', (chunk: Buffer) => (received += chunk.length))
    socket.resume()
    const replyBytes = count * (`$4096\r\n`.length + 4096 + 2)
    while (received < replyBytes && Date.now() < deadline + 20_000)
      await new Promise((resolve) => setTimeout(resolve, 20))
    expect(received).toBe(replyBytes)
    socket.destroy()
  })

  it('a client whose pending replies pass the hard limit is disconnected', async () => {
    const { port, logs } = await start({ 'client-output-buffer-limit': normalLimit(1024 * 1024) })
    const socket = net.connect({ port, host: '127.0.0.1' })
    socket.on('error', () => {})
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    socket.pause()
    // COMMAND answers with the whole table: a few KiB per 16 bytes asked, over the limit in one read.
    socket.write(Buffer.concat(Array.from({ length: 2000 }, () => encodeCommand(['COMMAND']))))
    await new Promise<void>((resolve) => socket.once('close', () => resolve()))
    expect(
      logs.some((line) => line.includes('scheduled to be closed ASAP for overcoming of output buffer limits.')),
    ).toBe(true)
    await expectHealthy(port)
  })

  it('a client past the soft limit is disconnected once it stays there longer than its seconds', async () => {
    const { port, logs, server } = await start({ 'client-output-buffer-limit': normalLimit(0, 256 * 1024, 1) })
    const socket = net.connect({ port, host: '127.0.0.1' })
    socket.on('error', () => {})
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    socket.pause()
    const sentAt = Date.now()
    socket.write(Buffer.concat(Array.from({ length: 3000 }, () => encodeCommand(['COMMAND']))))
    const closing = (): boolean =>
      logs.some((line) => line.includes('scheduled to be closed ASAP for overcoming of output buffer limits.'))
    const deadline = sentAt + 20_000
    while (!closing() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    // Over the soft limit at once, closed only after more than its second there (then within the
    // next once-a-second look, since reading from it has stopped).
    expect(closing()).toBe(true)
    expect(Date.now() - sentAt).toBeGreaterThan(1000)
    // The log line comes when the close is scheduled; the client leaves the set when its socket
    // has closed, a turn or more later.
    while ([...server.clients()].length > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20))
    expect([...server.clients()]).toHaveLength(0)
    socket.destroy()
    await expectHealthy(port)
  })

  it('a client that dips back under the soft limit in time stays connected', async () => {
    const softSeconds = 10
    const { port, server } = await start({ 'client-output-buffer-limit': normalLimit(0, 256 * 1024, softSeconds) })
    const socket = net.connect({ port, host: '127.0.0.1' })
    socket.on('error', () => {})
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    let received = 0
    socket.on('data', (chunk: Buffer) => (received += chunk.length))
    socket.pause()
    // About 22 MB of replies: more than the socket buffers hold, so the rest stays pending, over the
    // soft limit. Making them takes about a second on a loaded machine (3,000 took 3.6 s there), well
    // within the soft seconds.
    socket.write(Buffer.concat(Array.from({ length: 1000 }, () => encodeCommand(['COMMAND']))))
    // Wait until it is over the soft limit (however long a loaded machine takes to answer)...
    const overLimit = () =>
      Math.max(0, ...[...server.clients()].map((client) => client.outputBytes())) > 256 * 1024 + 16 * 1024
    const overDeadline = Date.now() + 30_000
    while (!overLimit() && Date.now() < overDeadline) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(overLimit()).toBe(true)
    const overAt = Date.now()
    socket.resume() // ...then read everything well before its seconds are up
    // Past its seconds there, and past the next once-a-second look after them.
    while (Date.now() < overAt + (softSeconds + 1.5) * 1000) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(received).toBeGreaterThan(0)
    expect(socket.destroyed).toBe(false)
    socket.write(encodeCommand(['PING']))
    const before = received
    const deadline = Date.now() + 10_000
    while (received === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(received).toBeGreaterThan(before)
    socket.destroy()
  })

  it('leaves the first 16 KiB of unsent output out, as redis leaves its reply buffer out', async () => {
    const { port } = await start({ 'client-output-buffer-limit': normalLimit(1024) })
    const client = await connect(port)
    const info = await ask(client, 'INFO')
    expect(info.length).toBeGreaterThan(1024)
    expect(await askLine(client, 'PING')).toBe('+PONG\r\n')
  })

  it("CONFIG GET/SET speak redis.conf's form, with redis's errors", async () => {
    const { port } = await start({})
    const client = await connect(port)
    const limitError = (why: string) =>
      `-ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - ${why}\r\n`
    const get = (value: string) => `*2\r\n$26\r\nclient-output-buffer-limit\r\n$${value.length}\r\n${value}\r\n`
    expect(await ask(client, 'CONFIG', 'GET', 'client-output-buffer-limit')).toBe(
      get('normal 268435456 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60'),
    )
    expect(await askLine(client, 'CONFIG', 'SET', 'client-output-buffer-limit', 'normal 1mb 512kb 10')).toBe('+OK\r\n')
    expect(await askLine(client, 'CONFIG', 'SET', 'client-output-buffer-limit', 'replica 2mb 1mb 5 pubsub 0 0 0')).toBe(
      '+OK\r\n',
    )
    expect(await ask(client, 'CONFIG', 'GET', 'client-output-buffer-limit')).toBe(
      get('normal 1048576 524288 10 slave 2097152 1048576 5 pubsub 0 0 0'),
    )
    expect(await askLine(client, 'CONFIG', 'SET', 'client-output-buffer-limit', 'normal 1mb')).toBe(
      limitError('Wrong number of arguments in buffer limit configuration.'),
    )
    expect(await askLine(client, 'CONFIG', 'SET', 'client-output-buffer-limit', 'bogus 1 1 1')).toBe(
      limitError('Invalid client class specified in buffer limit configuration.'),
    )
    for (const bad of ['normal 1x 2 10', 'normal -1 2 10', 'normal 1 2 -3', 'slave 1 2 x']) {
      expect(await askLine(client, 'CONFIG', 'SET', 'client-output-buffer-limit', bad)).toBe(
        limitError('Error in hard, soft or soft_seconds setting in buffer limit configuration.'),
      )
    }
    // redis splits on single spaces: doubled spaces are empty words (0), an empty value changes nothing.
    expect(await askLine(client, 'CONFIG', 'SET', 'client-output-buffer-limit', 'normal  1 2 3')).toBe(
      limitError('Wrong number of arguments in buffer limit configuration.'),
    )
    expect(await askLine(client, 'CONFIG', 'SET', 'client-output-buffer-limit', 'normal')).toBe(
      limitError('Wrong number of arguments in buffer limit configuration.'),
    )
    expect(await askLine(client, 'CONFIG', 'SET', 'client-output-buffer-limit', '')).toBe('+OK\r\n')
    expect(await askLine(client, 'CONFIG', 'SET', 'client-output-buffer-limit', 'pubsub 1  ')).toBe('+OK\r\n')
    expect(await askLine(client, 'CONFIG', 'SET', 'client-output-buffer-limit', 'replica 2mb 1mb +5')).toBe('+OK\r\n')
    expect(await ask(client, 'CONFIG', 'GET', 'client-output-buffer-limit')).toBe(
      get('normal 1048576 524288 10 slave 2097152 1048576 5 pubsub 1 0 0'),
    )
    // bfs's one-size form: normal's hard limit.
    expect(await askLine(client, 'CONFIG', 'SET', 'client-output-buffer-limit', '64mb')).toBe('+OK\r\n')
    expect(await ask(client, 'CONFIG', 'GET', 'client-output-buffer-limit')).toBe(
      get('normal 67108864 0 0 slave 2097152 1048576 5 pubsub 1 0 0'),
    )
    const config = loadConfig('client-output-buffer-limit normal 0 0 0\nclient-output-buffer-limit pubsub 1mb 1kb 9\n')
    expect(config['client-output-buffer-limit']).toEqual({
      normal: { hard: 0, soft: 0, softSeconds: 0 },
      replica: DEFAULT_OUTPUT_BUFFER_LIMITS.replica,
      pubsub: { hard: 1048576, soft: 1024, softSeconds: 9 },
    })
  })
})

describe('timeout and tcp-keepalive', () => {
  it('timeout closes an idle client and leaves a busy one', async () => {
    const { port } = await start({ timeout: 1 })
    const idle = await connect(port)
    const busy = await connect(port)
    expect(await askLine(idle, 'PING')).toBe('+PONG\r\n')
    const until = Date.now() + 2500
    while (Date.now() < until && !idle.closed) {
      expect(await askLine(busy, 'PING')).toBe('+PONG\r\n')
      await new Promise((resolve) => setTimeout(resolve, 150))
    }
    await idle.waitClosed(10_000)
    expect(idle.closed).toBe(true)
    expect(busy.closed).toBe(false)
    expect(await askLine(busy, 'PING')).toBe('+PONG\r\n')
  })

  it('timeout 0 never closes', async () => {
    const { port } = await start({ timeout: 0 })
    const client = await connect(port)
    await new Promise((resolve) => setTimeout(resolve, 1300))
    expect(await askLine(client, 'PING')).toBe('+PONG\r\n')
  })

  it('tcp-keepalive sets keep-alive on each client socket; 0 leaves it off', async () => {
    // The spy sees this thread's sockets: the connections are the main thread's own (io-threads 1).
    const spy = vi.spyOn(net.Socket.prototype, 'setKeepAlive')
    const first = await start({ 'tcp-keepalive': 300, 'io-threads': 1 })
    const client = await connect(first.port)
    expect(await askLine(client, 'PING')).toBe('+PONG\r\n')
    expect(spy).toHaveBeenCalledWith(true, 300_000)
    client.close()
    await first.stop()
    spy.mockClear()
    const second = await start({ 'tcp-keepalive': 0, 'io-threads': 1 })
    const other = await connect(second.port)
    expect(await askLine(other, 'PING')).toBe('+PONG\r\n')
    expect(spy.mock.calls.filter((call) => call[0] === true)).toHaveLength(0)
  })
})

describe('maxmemory', () => {
  const capacity = 400_000
  const filterBytes = reserveBytes(0.01, capacity)

  it('a BF.RESERVE that would pass it gets -OOM; reads, small writes and DEL still work', async () => {
    const maxmemory = Math.floor(filterBytes * 1.5)
    const { port } = await start({ maxmemory })
    const client = await connect(port)
    expect(await askLine(client, 'BF.RESERVE', 'a', '0.01', String(capacity))).toBe('+OK\r\n')
    expect(await askLine(client, 'BF.RESERVE', 'b', '0.01', String(capacity))).toBe(OOM)
    expect(await askLine(client, 'EXISTS', 'b')).toBe(':0\r\n')
    expect(await askLine(client, 'BF.ADD', 'a', 'x')).toBe(':1\r\n')
    expect(await askLine(client, 'BF.EXISTS', 'a', 'x')).toBe(':1\r\n')
    // Auto-create of a small filter fits.
    expect(await askLine(client, 'BF.ADD', 'small', 'x')).toBe(':1\r\n')
    // An auto-create that does not fit (BF.INSERT with a capacity) is refused too.
    expect(await askLine(client, 'BF.INSERT', 'big', 'CAPACITY', String(capacity), 'ITEMS', 'x')).toBe(OOM)
    expect(await askLine(client, 'DEL', 'a')).toBe(':1\r\n')
    expect(await askLine(client, 'BF.RESERVE', 'b', '0.01', String(capacity))).toBe('+OK\r\n')
    await expectHealthy(port)
  })

  it('a scale-up that would pass it gets -OOM and the filter is unchanged', async () => {
    const first = reserveBytes(0.01, 10_000)
    const { port } = await start({ maxmemory: first * 4 })
    const client = await connect(port)
    expect(await askLine(client, 'BF.RESERVE', 'grow', '0.01', '10000', 'EXPANSION', '16')).toBe('+OK\r\n')
    const items = Array.from({ length: 10_000 }, (_, i) => `item-${i}`)
    client.write(encodeCommand(['BF.MADD', 'grow', ...items]))
    await client.readUntil((bytes) => bytes.toString('latin1').split('\r\n').length - 1 >= 10_001)
    let outcome = ''
    // A few of the 10,000 were false positives, so the layer fills within a few more adds.
    for (let i = 0; i < 500 && outcome !== OOM; i++) outcome = await askLine(client, 'BF.ADD', 'grow', `more-${i}`)
    expect(outcome).toBe(OOM)
    expect(await askLine(client, 'BF.INFO', 'grow', 'FILTERS')).toBe('*1\r\n:1\r\n')
    expect(await askLine(client, 'BF.EXISTS', 'grow', 'item-1')).toBe(':1\r\n')
    await expectHealthy(port)
  })

  it('once used memory is over it (CONFIG SET lowered it), denyoom commands get -OOM until DEL', async () => {
    const { port } = await start()
    const client = await connect(port)
    expect(await askLine(client, 'BF.RESERVE', 'a', '0.01', '100000')).toBe('+OK\r\n')
    expect(await askLine(client, 'CONFIG', 'SET', 'maxmemory', '1000')).toBe('+OK\r\n')
    expect(await askLine(client, 'BF.ADD', 'a', 'x')).toBe(OOM)
    expect(await askLine(client, 'BF.MADD', 'a', 'x')).toBe(OOM)
    expect(await askLine(client, 'BF.EXISTS', 'a', 'x')).toBe(':0\r\n')
    expect(await askLine(client, 'DEL', 'a')).toBe(':1\r\n')
    expect(await askLine(client, 'BF.ADD', 'a', 'x')).toBe(':1\r\n')
    expect(await askLine(client, 'CONFIG', 'SET', 'maxmemory', '0')).toBe('+OK\r\n')
    expect(await askLine(client, 'BF.RESERVE', 'b', '0.01', '100000')).toBe('+OK\r\n')
  })
})

describe('max-filter-bytes', () => {
  it('BF.RESERVE f 0.0001 1000000000000 is an error reply, not a crash', async () => {
    const { port } = await start()
    const client = await connect(port)
    expect(await askLine(client, 'BF.RESERVE', 'f', '0.0001', '1000000000000')).toBe(TOO_LARGE)
    expect(await askLine(client, 'EXISTS', 'f')).toBe(':0\r\n')
    await expectHealthy(port)
  })

  it('by default takes 10^10 items at 1 % in the limit and refuses a capacity mistyped a digit beyond', async () => {
    const { port } = await start()
    const client = await connect(port)
    expect(await askLine(client, 'CONFIG', 'GET', 'max-filter-bytes')).toBe(
      '*2\r\n$16\r\nmax-filter-bytes\r\n$11\r\n17179869184\r\n',
    )
    expect(reserveBytes(0.01, 10_000_000_000) * 2 ** -30).toBeLessThan(16) // scalable: the first layer at 0.005
    expect(await askLine(client, 'BF.RESERVE', 'f', '0.01', '100000000000')).toBe(TOO_LARGE)
    expect(await askLine(client, 'EXISTS', 'f')).toBe(':0\r\n')
  })

  it('with no per-filter limit it is still an error reply', async () => {
    const { port } = await start({ 'max-filter-bytes': 0 })
    const client = await connect(port)
    expect(await askLine(client, 'BF.RESERVE', 'f', '0.0001', '1000000000000')).toBe('-ERR could not create filter\r\n')
    await expectHealthy(port)
  })

  it('counts all layers: a scale-up past it gets the error', async () => {
    const first = reserveBytes(0.01, 10_000)
    const { port } = await start({ 'max-filter-bytes': first * 4 })
    const client = await connect(port)
    expect(await askLine(client, 'BF.RESERVE', 'f', '0.01', '10000', 'EXPANSION', '2')).toBe('+OK\r\n')
    // Layers 1 + 2 (20000 items at 0.0025) are about 3.3x the first; with layer 3 (40000) about 8x.
    let outcome = ''
    for (let i = 0; i < 40_000 && outcome !== TOO_LARGE; i += 500) {
      const items = Array.from({ length: 500 }, (_, j) => `i${i + j}`)
      client.write(encodeCommand(['BF.MADD', 'f', ...items]))
      const reply = (
        await client.readUntil(
          (bytes) =>
            /^\*(\d+)\r\n/.test(bytes.toString()) &&
            bytes.toString().split('\r\n').length - 2 >= Number(/^\*(\d+)/.exec(bytes.toString())![1]),
        )
      ).toString()
      if (reply.includes(TOO_LARGE)) outcome = TOO_LARGE
    }
    expect(outcome).toBe(TOO_LARGE)
    expect(await askLine(client, 'BF.INFO', 'f', 'FILTERS')).toBe('*1\r\n:2\r\n')
    await expectHealthy(port)
  })
})

describe('protocol limits', () => {
  const cases: [string, string | Buffer, string][] = [
    [
      'a bulk over proto-max-bulk-len',
      '*2\r\n$4\r\nECHO\r\n$600000000\r\n',
      '-ERR Protocol error: invalid bulk length\r\n',
    ],
    ['a multibulk over 1024*1024 items', '*2000000\r\n', '-ERR Protocol error: invalid multibulk length\r\n'],
    ['an inline line over 64 KiB', Buffer.alloc(70 * 1024, 0x61), '-ERR Protocol error: too big inline request\r\n'],
  ]
  for (const [name, bytes, error] of cases) {
    it(`${name}: redis's error, then only that connection closes`, async () => {
      const { port } = await start()
      const bystander = await connect(port)
      const client = await connect(port)
      client.write(bytes)
      expect((await client.readUntil((received) => received.includes('\r\n'))).toString()).toBe(error)
      await client.waitClosed()
      expect(await askLine(bystander, 'PING')).toBe('+PONG\r\n')
    })
  }
})

describe('faults', () => {
  it('an exception in a handler is -ERR internal error, logged with the command; the connection stays up', async () => {
    const { port, logs } = await start(
      {},
      {
        commands: [
          {
            name: 'BOOM',
            arity: 1,
            flags: [],
            handler: () => {
              throw new TypeError('kaput')
            },
          },
        ],
      },
    )
    const client = await connect(port)
    expect(await askLine(client, 'BOOM')).toBe('-ERR internal error\r\n')
    expect(logs.some((line) => line.includes('BOOM') && line.includes('kaput'))).toBe(true)
    expect(await askLine(client, 'PING')).toBe('+PONG\r\n')
  })
})

describe('rename-command', () => {
  it('is read from bfs.conf, repeatable, "" disables', () => {
    const config = loadConfig('rename-command CONFIG ""\nrename-command FLUSHALL nuke-it\n', [
      '--rename-command',
      'KEYS',
      '',
    ])
    expect(config['rename-command']).toEqual([
      { from: 'CONFIG', to: '' },
      { from: 'FLUSHALL', to: 'nuke-it' },
      { from: 'KEYS', to: '' },
    ])
    expect(() => loadConfig('rename-command CONFIG\n')).toThrow(ConfigError)
  })

  it('renamed and disabled commands answer as unknown; the new name works', async () => {
    const { port } = await start({
      'rename-command': [
        { from: 'CONFIG', to: '' },
        { from: 'FLUSHALL', to: 'NUKE-IT' },
      ],
    })
    const client = await connect(port)
    expect(await askLine(client, 'CONFIG', 'GET', 'port')).toBe(
      "-ERR unknown command 'CONFIG', with args beginning with: 'GET' 'port' \r\n",
    )
    expect(await askLine(client, 'FLUSHALL')).toBe("-ERR unknown command 'FLUSHALL', with args beginning with: \r\n")
    expect(await askLine(client, 'BF.ADD', 'f', 'x')).toBe(':1\r\n')
    expect(await askLine(client, 'nuke-it')).toBe('+OK\r\n')
    expect(await askLine(client, 'EXISTS', 'f')).toBe(':0\r\n')
  })

  it('renaming a container renames it with every subcommand', async () => {
    const { port } = await start({ 'rename-command': [{ from: 'CONFIG', to: 'SETTINGS' }] })
    const client = await connect(port)
    expect(await askLine(client, 'settings', 'get', 'maxmemory')).toBe('*2\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n')
    // redis names the original command in these texts (its fullname).
    expect(await askLine(client, 'SETTINGS', 'GET')).toBe("-ERR wrong number of arguments for 'config|get' command\r\n")
    expect(await askLine(client, 'SETTINGS')).toBe("-ERR wrong number of arguments for 'config' command\r\n")
    expect(await askLine(client, 'SETTINGS', 'HELP')).toMatch(/^\*11\r\n\+CONFIG <subcommand> /)
    expect(await askLine(client, 'CONFIG', 'GET', 'maxmemory')).toBe(
      "-ERR unknown command 'CONFIG', with args beginning with: 'GET' 'maxmemory' \r\n",
    )
  })

  it('an unknown command or a taken name is refused at start', () => {
    expect(() => createServer({ config: { 'rename-command': [{ from: 'NOPE', to: '' }] } })).toThrow(
      /No such command in rename-command/,
    )
    expect(() => createServer({ config: { 'rename-command': [{ from: 'PING', to: 'echo' }] } })).toThrow(
      /Target command name already exists/,
    )
  })
})

describe('graceful close', () => {
  it('answers what was read, runs nothing after, and does not wait for idle clients', async () => {
    const { port, server } = await start()
    const idle = await connect(port)
    expect(await askLine(idle, 'PING')).toBe('+PONG\r\n')
    const busy = await connect(port)
    busy.write(Buffer.concat(Array.from({ length: 20_000 }, () => encodeCommand(['PING']))))
    await busy
      .readUntil((bytes) => bytes.length > 0, 10_000)
      .then((first) => {
        const closing = server.close()
        return closing.then(async () => {
          const rest = await busy.readUntil(() => false, 3000).catch(() => Buffer.alloc(0))
          const all = Buffer.concat([first, rest]).toString()
          expect(all.length % 7).toBe(0)
          expect(all.length).toBeGreaterThan(0)
          expect(all.replaceAll('+PONG\r\n', '')).toBe('')
        })
      })
    await busy.waitClosed()
    await idle.waitClosed()
    expect(server.clientCount).toBe(0)
  })
})
