/**
 * The extension hook end to end: examples/crawler-seen.ts's BFX.MADDNEW added to a real server
 * (through createServer's `commands` and through addCommand), called over a socket with ioredis,
 * and seen by COMMAND and INFO commandstats like a built-in command.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { createServer, type BfsServer, type CommandContext } from 'bloom-filter-server'
import { BFX_MADDNEW } from '../../examples/crawler-seen.js'
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.js'
import { testIoThreads } from '../helpers/start-server.js'

let dir: string
let server: BfsServer
let redis: Redis

beforeAll(async () => {
  dir = makeTempDir('bfs-extension-')
  server = createServer({
    config: { ...testIoThreads(), port: 0, dir, save: '', appendonly: false },
    logSink: () => {},
    commands: [BFX_MADDNEW],
  })
  await server.start()
  redis = new Redis({ port: server.port, host: '127.0.0.1', lazyConnect: true })
  await redis.connect()
})

afterAll(async () => {
  redis?.disconnect()
  await server?.close()
  removeTempDir(dir)
})

/** INFO text as `field → value`. */
function infoFields(text: string): Map<string, string> {
  const fields = new Map<string, string>()
  for (const line of text.split('\r\n')) {
    const at = line.indexOf(':')
    if (at > 0 && !line.startsWith('#')) fields.set(line.slice(0, at), line.slice(at + 1))
  }
  return fields
}

describe('BFX.MADDNEW from examples/', () => {
  it('returns only the items that were new, and adds them', async () => {
    expect(await redis.call('BFX.MADDNEW', 'seen', 'https://a/', 'https://b/', 'https://a/', 'https://c/')).toEqual([
      'https://a/',
      'https://b/',
      'https://c/',
    ])
    expect(await redis.call('bfx.maddnew', 'seen', 'https://b/', 'https://d/')).toEqual(['https://d/'])
    expect(await redis.call('BFX.MADDNEW', 'seen', 'https://a/')).toEqual([])
    expect(await redis.call('BF.CARD', 'seen')).toBe(4)
    expect(await redis.call('BF.MEXISTS', 'seen', 'https://d/', 'https://e/')).toEqual([1, 0])
  })

  it('creates a missing filter with the server defaults, as BF.MADD does', async () => {
    await redis.call('BFX.MADDNEW', 'fresh', 'x')
    expect(await redis.call('BF.INFO', 'fresh', 'CAPACITY')).toEqual([server.config['default-capacity']])
  })

  it('ends the array with the error when a non-scaling filter fills up', async () => {
    expect(await redis.call('BF.RESERVE', 'small', '0.01', '2', 'NONSCALING')).toBe('OK')
    const reply = (await redis.call('BFX.MADDNEW', 'small', 'x', 'y', 'z', 'w')) as unknown[]
    expect(reply.slice(0, 2)).toEqual(['x', 'y'])
    expect(reply).toHaveLength(3)
    expect(String(reply[2])).toContain('non scaling filter is full')
    expect(await redis.call('BF.EXISTS', 'small', 'z')).toBe(0)
  })

  it('is refused with the wrong number of arguments before its handler runs', async () => {
    await expect(redis.call('BFX.MADDNEW', 'seen')).rejects.toThrow(
      "ERR wrong number of arguments for 'bfx.maddnew' command",
    )
  })

  it('is listed by COMMAND INFO, COMMAND LIST and COMMAND COUNT', async () => {
    const [info] = (await redis.call('COMMAND', 'INFO', 'BFX.MADDNEW')) as unknown[][]
    expect(info!.slice(0, 6)).toEqual(['bfx.maddnew', -3, ['write', 'denyoom'], 1, 1, 1])
    expect(info![6]).toContain('@bloom')
    expect(await redis.call('COMMAND', 'LIST')).toContain('bfx.maddnew')
    expect(await redis.call('COMMAND', 'COUNT')).toBe(server.commands.size)
  })

  it('is counted in INFO commandstats', async () => {
    const fields = infoFields(await redis.info('commandstats'))
    const stats = fields.get('cmdstat_bfx.maddnew')
    expect(stats).toMatch(/^calls=5,usec=\d+,usec_per_call=[\d.]+,rejected_calls=1,failed_calls=0$/)
  })
})

describe('BfsServer.addCommand', () => {
  it('adds a command to a running server', async () => {
    server.addCommand({
      name: 'filters.count',
      arity: 1,
      flags: ['readonly', 'fast'],
      handler: (ctx: CommandContext) => ctx.client.reply.integer(ctx.server.registry.size),
    })
    expect(await redis.call('FILTERS.COUNT')).toBe(server.registry.size)
    const [info] = (await redis.call('COMMAND', 'INFO', 'filters.count')) as unknown[][]
    expect(info!.slice(0, 6)).toEqual(['filters.count', 1, ['readonly', 'fast'], 0, 0, 0])
    expect(infoFields(await redis.info('commandstats')).get('cmdstat_filters.count')).toMatch(/^calls=1,/)
  })

  it('turns a thrown ReplyError into an error reply, counted as a failed call', async () => {
    const { ReplyError } = await import('bloom-filter-server')
    server.addCommand({
      name: 'FAILS',
      arity: -1,
      flags: [],
      handler: () => {
        throw new ReplyError('ERR nope')
      },
    })
    await expect(redis.call('FAILS')).rejects.toThrow('ERR nope')
    expect(infoFields(await redis.info('commandstats')).get('cmdstat_fails')).toMatch(/failed_calls=1$/)
  })

  it('answers a key longer than bfs can hold with an error, not an internal error', async () => {
    server.addCommand({
      name: 'X.LONGKEY',
      arity: 1,
      flags: ['readonly'],
      // The key lookup every BF command makes, with a key of 2^29 - 23 bytes (one past V8's
      // longest string; allocUnsafe touches no page of it).
      handler: (ctx: CommandContext) =>
        ctx.client.reply.integer(ctx.server.registry.lookup(Buffer.allocUnsafe(2 ** 29 - 23)) ? 1 : 0),
    })
    await expect(redis.call('X.LONGKEY')).rejects.toThrow('ERR key or name longer than 536870888 bytes')
    expect(await redis.call('PING')).toBe('PONG')
  })

  it('refuses a name that is taken, a zero arity and an unknown flag', () => {
    const handler = (): void => {}
    expect(() => server.addCommand({ name: 'bf.add', arity: 3, flags: [], handler })).toThrow(/duplicate command/)
    expect(() => server.addCommand({ name: 'X.ZERO', arity: 0, flags: [], handler })).toThrow(/bad arity/)
    // @ts-expect-error: 'sometimes' is not a CommandFlag
    expect(() => server.addCommand({ name: 'X.FLAG', arity: 1, flags: ['sometimes'], handler })).toThrow(/unknown flag/)
  })
})
