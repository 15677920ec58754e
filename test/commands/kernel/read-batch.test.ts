/**
 * The single-item BF.EXISTS and BF.ADD commands of one read run together (commands/kernel/read-batch.ts):
 * what a client reads, and what the append-only log records, must be exactly what they are when
 * each command is sent on its own and its reply awaited. A seeded mix of checks, adds, deletes,
 * other filters and other commands goes to one server in one write and to another one command at
 * a time; the replies must be equal one by one, and the two logs byte for byte.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startServer, type RunningServer } from '../../helpers/start-server.js'
import { RawClient, encodeCommand } from '../../helpers/resp.js'
import { seededRandom } from '../../helpers/seeded-random.js'
import { setReadBatching } from '../../../src/commands/kernel/read-batch.js'

/** redis-parser is CommonJS without types: the part used here. */
type RespParserClass = new (options: {
  returnReply: (reply: unknown) => void
  returnError: (error: Error) => void
  returnBuffers?: boolean
}) => { execute(buffer: Buffer): void }
const RedisParser = createRequire(import.meta.url)('redis-parser') as RespParserClass

/** Replies as comparable strings: `:1`, `-ERR ...`, `$OK` (simple and bulk strings alike), arrays joined. */
function show(reply: unknown): string {
  if (reply instanceof Error) return `-${reply.message}`
  if (typeof reply === 'number') return `:${reply}`
  if (Buffer.isBuffer(reply)) return `$${reply.toString('latin1')}`
  if (Array.isArray(reply)) return `[${reply.map(show).join(',')}]`
  return `?${String(reply)}`
}

/** A connection whose replies are decoded as they arrive. */
class Replies {
  readonly got: string[] = []
  private readonly parser = new RedisParser({
    returnReply: (reply) => this.got.push(show(reply)),
    returnError: (error) => this.got.push(show(error)),
    returnBuffers: true,
  })

  private constructor(readonly client: RawClient) {
    client.socket.on('data', (chunk: Buffer) => this.parser.execute(chunk))
  }

  static async connect(port: number): Promise<Replies> {
    const client = await RawClient.connect(port)
    client.socket.setNoDelay(true)
    return new Replies(client)
  }

  async waitFor(count: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (this.got.length < count) {
      if (this.client.closed || Date.now() > deadline) throw new Error(`${this.got.length} of ${count} replies`)
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
  }
}

/**
 * Each command on its own, waiting for its reply before the next is sent, with batching off: the
 * reference (the servers run in this process, so the switch holds for both while this runs).
 */
async function oneByOne(port: number, commands: readonly (readonly (string | Buffer)[])[]): Promise<string[]> {
  const replies = await Replies.connect(port)
  setReadBatching(false)
  try {
    for (let i = 0; i < commands.length; i++) {
      replies.client.write(encodeCommand(commands[i]!))
      await replies.waitFor(i + 1)
    }
    return replies.got
  } finally {
    setReadBatching(true)
    replies.client.close()
  }
}

/** All the commands in one write. */
async function allAtOnce(port: number, commands: readonly (readonly (string | Buffer)[])[]): Promise<string[]> {
  const replies = await Replies.connect(port)
  try {
    replies.client.write(Buffer.concat(commands.map((command) => encodeCommand(command))))
    await replies.waitFor(commands.length)
    return replies.got
  } finally {
    replies.client.close()
  }
}

/**
 * A seeded mix, in runs (a client checking many items of one filter in a row is the case batched),
 * over filters that grow layers, share an arena, fill up, have a time to live, hold another type or
 * do not exist, with the commands that change them or the connection between the checks.
 */
function mix(seed: number, count: number): (string | Buffer)[][] {
  const random = seededRandom(seed)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!
  const items: (string | Buffer)[] = []
  for (let i = 0; i < 300; i++)
    items.push(`item:${i}:${'x'.repeat(Math.floor(random() * (random() < 0.1 ? 120 : 20)))}`)
  // Longer than the kernel's scratch area takes in one call: answered at once, between batched ones.
  items.push(Buffer.alloc(300 * 1024, 'y'), Buffer.alloc(200 * 1024, 'z'))
  const keys = ['a', 'b', 'big', 'full', 'ttl', 'win', 'missing']
  const commands: (string | Buffer)[][] = [
    ['BF.RESERVE', 'a', '0.01', '40'],
    ['BF.RESERVE', 'b', '0.001', '30', 'EXPANSION', '3'],
    ['BF.RESERVE', 'big', '0.01', '200000'],
    ['BF.RESERVE', 'full', '0.01', '20', 'NONSCALING'],
    ['BF.RESERVE', 'ttl', '0.01', '1000'],
    ['EXPIRE', 'ttl', '100000'],
    ['APBF.RESERVE', 'win', 'COUNT', '0.01', '100'],
  ]
  while (commands.length < count) {
    const key = pick(keys)
    const roll = random()
    const run = roll < 0.65 ? 1 + Math.floor(random() * 40) : roll < 0.8 ? 1 + Math.floor(random() * 8) : 1
    for (let r = 0; r < run && commands.length < count; r++) {
      if (roll < 0.65) commands.push(['BF.EXISTS', key, pick(items)])
      else if (roll < 0.8) commands.push([pick(['BF.ADD', 'BF.ADD', 'bf.add', 'Bf.Add']), key, pick(items)])
      else if (roll < 0.83) commands.push(['BF.MADD', key, pick(items), pick(items), pick(items)])
      else if (roll < 0.86) commands.push(['BF.MEXISTS', key, pick(items), pick(items)])
      else if (roll < 0.87) commands.push(['BF.INSERT', key, 'CAPACITY', '50', 'ITEMS', pick(items)])
      else if (roll < 0.88) commands.push(['DEL', key])
      else if (roll < 0.9) commands.push(['BF.RESERVE', key, '0.01', String(10 + Math.floor(random() * 100))])
      else if (roll < 0.91) commands.push(['PERSIST', 'ttl'], ['EXPIRE', 'ttl', '100000'])
      else if (roll < 0.92) commands.push(['SELECT', random() < 0.5 ? '1' : '0'])
      else if (roll < 0.93) commands.push(['RENAME', key, pick(keys)])
      else if (roll < 0.95) commands.push(['BF.CARD', key])
      else if (roll < 0.96) commands.push(['BF.EXISTS', key])
      else if (roll < 0.97) commands.push(['NOSUCHCOMMAND', key])
      else if (roll < 0.975) commands.push(['PING'])
      else if (roll < 0.98) commands.push(['FLUSHDB'])
      else commands.push(['PING'])
    }
  }
  return commands
}

/** The pipelined replies equal the one-by-one ones, reply for reply; a difference names its command. */
function expectSameReplies(
  commands: readonly (readonly (string | Buffer)[])[],
  got: readonly string[],
  expected: readonly string[],
): void {
  expect(got.length).toBe(commands.length)
  for (let i = 0; i < commands.length; i++) {
    if (got[i] !== expected[i])
      expect.fail(`command ${i} (${commands[i]!.map(String).join(' ').slice(0, 80)}): ${got[i]} != ${expected[i]}`)
  }
}

/**
 * A server's append-only log, every file of it in name order, with PEXPIREAT's absolute times
 * (which differ between two runs) masked.
 */
function logOf(running: RunningServer): string {
  const files = readdirSync(running.dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.aof'))
    .sort()
  expect(files.length).toBeGreaterThan(0)
  const text = files.map((name) => readFileSync(path.join(running.dir, name), 'latin1')).join('')
  return text.replace(/(\$9\r\nPEXPIREAT\r\n\$\d+\r\n[^\r]*\r\n)\$\d+\r\n\d+\r\n/gi, '$1T\r\n')
}

let sequential: RunningServer
let pipelined: RunningServer

beforeAll(async () => {
  // One thread each, in the threads project too: this is the main thread's batching, and the logs
  // are compared byte for byte, where the I/O threads record their adds in a form of their own
  // (BF.ADDED: docs/THREADS.md); test/server/thread-adds.test.ts checks theirs.
  const config = { appendonly: true, 'io-threads': 1 }
  ;[sequential, pipelined] = await Promise.all([startServer(config), startServer(config)])
})

afterAll(async () => {
  await Promise.all([sequential?.stop(), pipelined?.stop()])
})

describe('BF.EXISTS and BF.ADD run together with the rest of their read', () => {
  for (const seed of [1, 2, 3]) {
    test(`a mixed pipeline gets the replies and the log of the same commands one by one (seed ${seed})`, async () => {
      const commands = [['SELECT', '0'], ['FLUSHALL'], ...mix(seed, 2500)]
      const expected = await oneByOne(sequential.port, commands)
      const got = await allAtOnce(pipelined.port, commands)
      expectSameReplies(commands, got, expected)
      // The mix did check items a filter had and ones it had not, and added some.
      expect(expected.filter((reply) => reply === ':1').length).toBeGreaterThan(100)
      expect(expected.filter((reply) => reply === ':0').length).toBeGreaterThan(100)
      // The two logs hold the same records, byte for byte.
      const log = logOf(sequential)
      expect(log).toContain('$6\r\nBF.ADD\r\n')
      expect(logOf(pipelined) === log).toBe(true)
      // And as many changes counted (what save rules and INFO see).
      const [changes, pipelinedChanges] = await Promise.all(
        [sequential, pipelined].map(async (running) => {
          const info = await oneByOne(running.port, [['INFO', 'persistence']])
          return /rdb_changes_since_last_save:(\d+)/.exec(info[0]!)?.[1]
        }),
      )
      expect(Number(changes)).toBeGreaterThan(100)
      expect(pipelinedChanges).toBe(changes)
    })
  }

  test('thousands of checks of one filter in one write: every batch full, answers in order', async () => {
    const items = Array.from({ length: 3000 }, (_, i) => `k${i}`)
    const commands = [
      ['FLUSHALL'],
      ['BF.RESERVE', 'f', '0.001', '5000'],
      ['BF.MADD', 'f', ...items.filter((_, i) => i % 3 === 0)],
    ]
    for (const item of items) commands.push(['BF.EXISTS', 'f', item])
    commands.push(['BF.ADD', 'f', 'k1'], ['BF.EXISTS', 'f', 'k1'])
    const got = await allAtOnce(pipelined.port, commands)
    expect(got).toEqual(await oneByOne(sequential.port, commands))
    const checks = got.slice(3, 3 + items.length)
    // Members answer 1 (no false negative); of the others, at most a few false positives.
    for (let i = 0; i < items.length; i += 3) expect(checks[i]).toBe(':1')
    expect(checks.filter((reply, i) => i % 3 !== 0 && reply === ':1').length).toBeLessThan(10)
    expect(got.slice(3 + items.length)).toEqual([':1', ':1'])
  })

  test('CLIENT REPLY SKIP and OFF drop the right answers', async () => {
    const commands = [
      ['FLUSHALL'],
      ['BF.ADD', 'f', 'a'],
      ['BF.EXISTS', 'f', 'a'],
      ['CLIENT', 'REPLY', 'SKIP'],
      ['BF.EXISTS', 'f', 'a'],
      ['BF.EXISTS', 'f', 'b'],
      ['CLIENT', 'REPLY', 'OFF'],
      ['BF.EXISTS', 'f', 'a'],
      ['BF.EXISTS', 'f', 'b'],
      ['CLIENT', 'REPLY', 'ON'],
      ['BF.EXISTS', 'f', 'a'],
      ['BF.EXISTS', 'f', 'b'],
    ]
    const replies = await Replies.connect(pipelined.port)
    try {
      replies.client.write(Buffer.concat(commands.map((command) => encodeCommand(command))))
      await replies.waitFor(7)
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(replies.got).toEqual(['$OK', ':1', ':1', ':0', '$OK', ':1', ':0'])
    } finally {
      replies.client.close()
    }
  })

  test('inside MULTI the checks see the adds queued before them; after EXEC too', async () => {
    const commands = [
      ['FLUSHALL'],
      ['BF.RESERVE', 'f', '0.01', '100'],
      ['BF.EXISTS', 'f', 'x'],
      ['MULTI'],
      ['BF.EXISTS', 'f', 'x'],
      ['BF.ADD', 'f', 'x'],
      ['BF.EXISTS', 'f', 'x'],
      ['EXEC'],
      ['BF.EXISTS', 'f', 'x'],
      ['BF.EXISTS', 'f', 'y'],
    ]
    expect(await allAtOnce(pipelined.port, commands)).toEqual([
      '$OK',
      '$OK',
      ':0',
      '$OK',
      '$QUEUED',
      '$QUEUED',
      '$QUEUED',
      '[:0,:1,:1]',
      ':1',
      ':0',
    ])
  })

  test('RESP3 clients read the same integers', async () => {
    const commands = [
      ['HELLO', '3'],
      ['FLUSHALL'],
      ['BF.ADD', 'f', 'a'],
      ['BF.EXISTS', 'f', 'a'],
      ['BF.EXISTS', 'f', 'b'],
      ['BF.EXISTS', 'g', 'a'],
    ]
    const client = await RawClient.connect(pipelined.port)
    try {
      client.write(Buffer.concat(commands.map((command) => encodeCommand(command))))
      const tail = '+OK\r\n:1\r\n:1\r\n:0\r\n:0\r\n'
      const raw = await client.readUntil((received) => received.toString('latin1').endsWith(tail))
      expect(raw.toString('latin1').endsWith(tail)).toBe(true)
    } finally {
      client.close()
    }
  })
})

/**
 * A seeded mix of CF commands, in runs, over Cuckoo filters that grow, fill up (EXPANSION 0:
 * "Filter is full" in the middle of a batch), reach their most sub-filters ("Maximum expansions
 * reached"), compact on deletes, share an arena, have a time to live, hold another type or do
 * not exist, with the commands that change them between the runs.
 */
function cuckooMix(seed: number, count: number): (string | Buffer)[][] {
  const random = seededRandom(seed)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!
  const items: (string | Buffer)[] = []
  for (let i = 0; i < 150; i++)
    items.push(`item:${i}:${'x'.repeat(Math.floor(random() * (random() < 0.1 ? 120 : 20)))}`)
  items.push(Buffer.alloc(300 * 1024, 'y'))
  const keys = ['c', 'full', 'tiny', 'big', 'ttl', 'bloom', 'missing']
  const commands: (string | Buffer)[][] = [
    ['CF.RESERVE', 'c', '40'],
    ['CF.RESERVE', 'full', '20', 'EXPANSION', '0', 'MAXITERATIONS', '3'],
    ['CF.RESERVE', 'tiny', '4', 'MAXITERATIONS', '1'],
    ['CF.RESERVE', 'big', '100000', 'BUCKETSIZE', '4'],
    ['CF.RESERVE', 'ttl', '1000'],
    ['EXPIRE', 'ttl', '100000'],
    ['BF.RESERVE', 'bloom', '0.01', '100'],
  ]
  // Runs that fill 'full' and take 'tiny' to its most sub-filters: errors among a batch's replies.
  for (let i = 0; i < 40; i++) commands.push(['CF.ADD', 'full', items[i]!])
  for (let i = 0; i < 150; i++) commands.push(['CF.ADD', 'tiny', items[i]!])
  while (commands.length < count) {
    const key = pick(keys)
    const roll = random()
    const run = roll < 0.8 ? 1 + Math.floor(random() * 40) : 1
    for (let r = 0; r < run && commands.length < count; r++) {
      if (roll < 0.3) commands.push([pick(['CF.ADD', 'CF.ADD', 'cf.add', 'Cf.Add']), key, pick(items)])
      else if (roll < 0.55) commands.push(['CF.EXISTS', key, pick(items)])
      else if (roll < 0.75) commands.push([pick(['CF.DEL', 'CF.DEL', 'cf.del', 'cF.dEl']), key, pick(items)])
      else if (roll < 0.8)
        commands.push([pick(['CF.ADD', 'CF.DEL', 'CF.EXISTS', 'BF.ADD', 'BF.EXISTS']), key, pick(items)])
      else if (roll < 0.82) commands.push(['CF.ADDNX', key, pick(items)])
      else if (roll < 0.84) commands.push(['CF.MEXISTS', key, pick(items), pick(items), pick(items)])
      else if (roll < 0.86) commands.push(['CF.COUNT', key, pick(items)])
      else if (roll < 0.87) commands.push(['CF.INSERT', key, 'CAPACITY', '50', 'ITEMS', pick(items), pick(items)])
      else if (roll < 0.88) commands.push(['CF.INFO', key])
      else if (roll < 0.89) commands.push(['CF.COMPACT', key])
      else if (roll < 0.9) commands.push(['DEL', key])
      else if (roll < 0.91) commands.push(['CF.RESERVE', key, String(8 + Math.floor(random() * 100))])
      else if (roll < 0.92) commands.push(['SELECT', random() < 0.5 ? '1' : '0'])
      else if (roll < 0.93) commands.push(['RENAME', key, pick(keys)])
      else if (roll < 0.94) commands.push(['CF.ADD', key])
      else if (roll < 0.95) commands.push(['PERSIST', 'ttl'], ['EXPIRE', 'ttl', '100000'])
      else if (roll < 0.96) commands.push(['CF.SCANDUMP', key, '0'])
      else commands.push(['PING'])
    }
  }
  return commands
}

describe('CF.EXISTS, CF.ADD and CF.DEL run together with the rest of their read', () => {
  for (const seed of [1, 2, 3]) {
    test(`a mixed pipeline gets the replies, the log and the buckets of the same commands one by one (seed ${seed})`, async () => {
      const commands = [['SELECT', '0'], ['FLUSHALL'], ['CONFIG', 'RESETSTAT'], ...cuckooMix(seed, 2500)]
      // The logs from here on (the tests above sent some commands to one server only).
      const [logFrom, pipelinedLogFrom] = [logOf(sequential).length, logOf(pipelined).length]
      const changes = async (running: RunningServer): Promise<number> =>
        Number(
          /rdb_changes_since_last_save:(\d+)/.exec((await oneByOne(running.port, [['INFO', 'persistence']]))[0]!)![1],
        )
      const changesFrom = [await changes(sequential), await changes(pipelined)]
      const expected = await oneByOne(sequential.port, commands)
      const got = await allAtOnce(pipelined.port, commands)
      expectSameReplies(commands, got, expected)
      // The mix did find and miss items, add, delete, and fail adds in the middle of runs.
      expect(expected.filter((reply) => reply === ':1').length).toBeGreaterThan(100)
      expect(expected.filter((reply) => reply === ':0').length).toBeGreaterThan(100)
      expect(
        expected.filter((reply) => reply === '-Filter is full' || reply === '-Maximum expansions reached').length,
      ).toBeGreaterThan(0)
      const log = logOf(sequential).slice(logFrom)
      expect(log).toContain('$6\r\nCF.DEL\r\n')
      expect(log).toContain('$6\r\ncf.add\r\n')
      expect(logOf(pipelined).slice(pipelinedLogFrom) === log).toBe(true)
      // The same buckets and counters, the same changes counted and the same failed calls.
      const state = [
        ['SELECT', '0'],
        ...['c', 'full', 'tiny', 'big', 'ttl'].flatMap((key) => [
          ['DUMP', key],
          ['CF.DEBUG', key],
        ]),
        ['INFO', 'commandstats'],
        ['INFO', 'errorstats'],
      ]
      const [before, after] = await Promise.all([sequential, pipelined].map((running) => oneByOne(running.port, state)))
      const masked = (replies: string[]): string[] =>
        replies.map((reply) => reply.replace(/usec(_per_call)?=[\d.]+/g, 'usec=T'))
      expect(masked(after)).toEqual(masked(before))
      expect((await changes(pipelined)) - changesFrom[1]!).toBe((await changes(sequential)) - changesFrom[0]!)
      expect(before.join()).toContain('cmdstat_cf.add:calls=')
    })
  }
})
