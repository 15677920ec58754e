/**
 * The numbered databases over the wire: SELECT, MOVE, SWAPDB, FLUSHDB and FLUSHALL answer as
 * redis-server 7.0.15 does, byte for byte (a real one runs beside bfs), each database holds its
 * own keys for every keyspace command, WATCH is per database, and ioredis (a URL ending in /2)
 * and redis-cli (-n 2) work in a database other than 0.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { besideRedis } from '../../helpers/beside-redis.js'
import { askRaw, RawClient } from '../../helpers/resp.js'
import { startServer, type RunningServer } from '../../helpers/start-server.js'
import { runTool } from '../../helpers/tools.js'
import { until } from '../../helpers/replication-info.js'

const servers = besideRedis()

/** A command that makes key `name` on either server: a filter on bfs, a string on redis. */
function makeKey(server: 'bfs' | 'redis', name: string): string[] {
  return server === 'bfs' ? ['BF.ADD', name, 'item'] : ['SET', name, 'value']
}

type Ask = (...args: string[]) => Promise<string>
/** Makes a key in the selected database of the main connection (or of the other one); its reply is not compared. */
type Make = (name: string, onOther?: boolean) => Promise<void>

/**
 * Runs `script` on both servers, each with two fresh connections (`ask` and `other`), and returns
 * the replies of each, as text.
 */
async function onBoth(
  script: (ask: Ask, make: Make, other: Ask) => Promise<void>,
): Promise<Record<'bfs' | 'redis', string[]>> {
  const out = { bfs: [] as string[], redis: [] as string[] }
  for (const side of ['bfs', 'redis'] as const) {
    const port = side === 'bfs' ? servers.bfs.port : servers.redis.port
    const [main, second] = [await servers.connect(port), await servers.connect(port)]
    await askRaw(main, 'FLUSHALL')
    const asker =
      (client: RawClient) =>
      async (...args: string[]): Promise<string> => {
        const reply = (await askRaw(client, ...args)).toString('latin1')
        out[side].push(`${args.join(' ')} → ${reply}`)
        return reply
      }
    const make: Make = async (name, onOther = false) => {
      await askRaw(onOther ? second : main, ...makeKey(side, name))
    }
    await script(asker(main), make, asker(second))
  }
  return out
}

describe('replies as redis-server 7.0.15', () => {
  it("SELECT: a database of the server, else redis db.c selectCommand's errors", async () => {
    const { bfs, redis } = await onBoth(async (ask) => {
      for (const index of [
        '0',
        '15',
        '16',
        '-1',
        'x',
        '01',
        '1.5',
        '',
        '2147483647',
        '2147483648',
        '-2147483649',
        '9223372036854775808',
      ])
        await ask('SELECT', index)
      await ask('SELECT')
      await ask('SELECT', '1', '2')
    })
    expect(bfs).toEqual(redis)
    expect(bfs[2]).toBe('SELECT 16 → -ERR DB index is out of range\r\n')
  })

  it('MOVE: :1 moved, :0 missing or taken in the target, errors for the same, a missing or a bad database', async () => {
    const { bfs, redis } = await onBoth(async (ask, make) => {
      await make('k')
      // The same database, out of range, not an integer, not a C int, a missing key, then one moved.
      for (const [key, db] of [
        ['k', '0'],
        ['k', '16'],
        ['k', 'x'],
        ['k', '2147483648'],
        ['nokey', '1'],
        ['k', '1'],
      ])
        await ask('MOVE', key!, db!)
      await ask('EXISTS', 'k')
      await make('k')
      await ask('SELECT', '1')
      await ask('EXISTS', 'k')
      await ask('MOVE', 'k', '0') // taken there
      await ask('MOVE', 'k')
    })
    expect(bfs).toEqual(redis)
    expect(bfs).toContain('MOVE k 1 → :1\r\n')
  })

  it('SWAPDB: +OK, its own texts for a bad index, out of range, and the same index twice', async () => {
    const { bfs, redis } = await onBoth(async (ask, make) => {
      await make('in0')
      await ask('SWAPDB', '0', '1')
      await ask('EXISTS', 'in0')
      await ask('SELECT', '1')
      await ask('EXISTS', 'in0')
      for (const pair of [['1', '1'], ['x', '1'], ['1', 'y'], ['2147483648', '1'], ['0', '16'], ['-1', '0'], ['0']])
        await ask('SWAPDB', ...pair)
    })
    expect(bfs).toEqual(redis)
  })

  it('FLUSHDB empties the selected database only; FLUSHALL every one; a bad argument is a syntax error', async () => {
    const { bfs, redis } = await onBoth(async (ask, make) => {
      await make('a')
      await ask('SELECT', '3')
      await make('b')
      await ask('FLUSHDB', 'x')
      await ask('FLUSHDB', 'ASYNC', 'SYNC')
      await ask('FLUSHDB', 'sync')
      await ask('DBSIZE')
      await ask('SELECT', '0')
      await ask('DBSIZE')
      await ask('SELECT', '5')
      await make('c')
      await ask('FLUSHALL', 'ASYNC')
      await ask('DBSIZE')
      await ask('SELECT', '0')
      await ask('DBSIZE')
    })
    expect(bfs).toEqual(redis)
  })

  it('WATCH is per database: the same name elsewhere does not fail EXEC; MOVE, SWAPDB and FLUSHDB of its database do', async () => {
    const { bfs, redis } = await onBoth(async (ask, make, other) => {
      const round = async (watchIn: string, write: () => Promise<unknown>): Promise<void> => {
        await ask('SELECT', watchIn)
        await ask('WATCH', 'w')
        await write()
        await ask('MULTI')
        await ask('PING')
        await ask('EXEC')
      }
      await ask('SELECT', '1')
      await make('w')
      await round('0', () => make('w', true)) // other client, database 0: touched
      await round('2', () => make('w', true)) // database 2's w is not written: runs
      await other('SELECT', '1')
      await round('2', () => other('MOVE', 'w', '2')) // moved into the watched database: touched
      await round('1', () => other('FLUSHDB')) // database 1 is empty already: not touched
      await round('2', () => other('SWAPDB', '2', '4')) // w left database 2: touched
      await round('3', () => other('SWAPDB', '3', '5')) // no w in either: runs
      await round('4', () => other('FLUSHALL')) // w was there: touched
    })
    expect(bfs).toEqual(redis)
    expect(bfs.filter((line) => line.startsWith('EXEC')).map((line) => line.slice(7, 9))).toEqual([
      '*-',
      '*1',
      '*-',
      '*1',
      '*-',
      '*1',
      '*-',
    ])
  })

  it('INFO keyspace has a line per database holding keys; DBSIZE, KEYS, SCAN, RANDOMKEY and EXISTS see the selected one', async () => {
    const { bfs, redis } = await onBoth(async (ask, make) => {
      await make('zero')
      await ask('SELECT', '2')
      await make('two')
      await make('also-two')
      await ask('PEXPIRE', 'two', '100000000')
      await ask('SELECT', '11')
      await make('eleven')
      await ask('DBSIZE')
      await ask('KEYS', '*')
      await ask('SCAN', '0')
      await ask('RANDOMKEY')
      await ask('EXISTS', 'zero', 'eleven')
      await ask('SELECT', '7')
      await ask('RANDOMKEY')
      await ask('SCAN', '0')
    })
    expect(bfs).toEqual(redis)
    const info = (await askRaw(await servers.connect(servers.bfs.port), 'INFO', 'keyspace')).toString('latin1')
    expect(info).toMatch(
      /# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\ndb2:keys=2,expires=1,avg_ttl=\d+\r\ndb11:keys=1,expires=0,avg_ttl=0\r\n/,
    )
  })
})

describe('sessions', () => {
  it('CLIENT LIST says db=; RESET and a new connection start in 0; HELLO keeps it', async () => {
    const client = await servers.connect(servers.bfs.port)
    expect((await askRaw(client, 'SELECT', '9')).toString()).toBe('+OK\r\n')
    expect((await askRaw(client, 'CLIENT', 'INFO')).toString()).toMatch(/ flags=N db=9 sub=0 /)
    expect((await askRaw(client, 'HELLO', '3')).toString()).toMatch(/^%7\r\n/)
    expect((await askRaw(client, 'CLIENT', 'INFO')).toString()).toMatch(/ db=9 /)
    expect((await askRaw(client, 'RESET')).toString()).toBe('+RESET\r\n')
    expect((await askRaw(client, 'CLIENT', 'INFO')).toString()).toMatch(/ db=0 /)
    const fresh = await servers.connect(servers.bfs.port)
    expect((await askRaw(fresh, 'CLIENT', 'LIST', 'ID', String(await idOf(fresh)))).toString()).toMatch(/ db=0 /)
  })

  it('MONITOR shows the database each command ran in, after it ran (SELECT shows its new one), as redis', async () => {
    const lines: Record<'bfs' | 'redis', string[]> = { bfs: [], redis: [] }
    for (const side of ['bfs', 'redis'] as const) {
      const port = side === 'bfs' ? servers.bfs.port : servers.redis.port
      const monitor = await servers.connect(port)
      expect((await askRaw(monitor, 'MONITOR')).toString()).toBe('+OK\r\n')
      const client = await servers.connect(port)
      for (const command of [['SELECT', '2'], ['PING'], ['SELECT', '0']]) await askRaw(client, ...command)
      const text = (await monitor.readUntil((bytes) => bytes.toString().split('\r\n').length > 3)).toString()
      lines[side] = text
        .split('\r\n')
        .slice(0, 3)
        .map((line) => line.replace(/^\+\d+\.\d+ \[(\d+) [^\]]+\]/, '[$1]'))
    }
    expect(lines.bfs).toEqual(['[2] "SELECT" "2"', '[2] "PING"', '[0] "SELECT" "0"'])
    expect(lines.bfs).toEqual(lines.redis)
  })

  it('MOVE takes the filter and its expiry with it', async () => {
    const client = await servers.connect(servers.bfs.port)
    await askRaw(client, 'SELECT', '4')
    await askRaw(client, 'BF.MADD', 'moved', 'a', 'b')
    await askRaw(client, 'PEXPIREAT', 'moved', String(Date.now() + 3_600_000))
    const pttl = Number((await askRaw(client, 'PEXPIRETIME', 'moved')).toString().slice(1, -2))
    expect((await askRaw(client, 'MOVE', 'moved', '6')).toString()).toBe(':1\r\n')
    expect((await askRaw(client, 'EXISTS', 'moved')).toString()).toBe(':0\r\n')
    await askRaw(client, 'SELECT', '6')
    expect((await askRaw(client, 'PEXPIRETIME', 'moved')).toString()).toBe(`:${pttl}\r\n`)
    expect((await askRaw(client, 'BF.MEXISTS', 'moved', 'a', 'b', 'c')).toString()).toBe('*3\r\n:1\r\n:1\r\n:0\r\n')
  })

  it('a transaction may SELECT: its commands run in the databases they were queued in', async () => {
    const client = await servers.connect(servers.bfs.port)
    await askRaw(client, 'SELECT', '0')
    await askRaw(client, 'MULTI')
    await askRaw(client, 'BF.ADD', 'tx', 'in-0')
    await askRaw(client, 'SELECT', '8')
    await askRaw(client, 'BF.ADD', 'tx', 'in-8')
    expect((await askRaw(client, 'EXEC')).toString()).toBe('*3\r\n:1\r\n+OK\r\n:1\r\n')
    expect((await askRaw(client, 'BF.EXISTS', 'tx', 'in-0')).toString()).toBe(':0\r\n')
    await askRaw(client, 'SELECT', '0')
    expect((await askRaw(client, 'BF.EXISTS', 'tx', 'in-0')).toString()).toBe(':1\r\n')
  })

  it('the active expiry cycle deletes expired keys in every database, nobody looking them up', async () => {
    const client = await servers.connect(servers.bfs.port)
    for (const db of ['3', '12']) {
      await askRaw(client, 'SELECT', db)
      await askRaw(client, 'BF.ADD', `short-${db}`, 'x')
      await askRaw(client, 'PEXPIRE', `short-${db}`, '50')
    }
    const expired = (): number => servers.bfs.server.stats.expiredKeys
    const before = expired()
    await until(async () => expired() >= before + 2, 'both keys expired by the active cycle')
    expect(servers.bfs.server.databases.db(3).peek('short-3')).toBeUndefined()
    expect(servers.bfs.server.databases.db(12).peek('short-12')).toBeUndefined()
  })
})

async function idOf(client: RawClient): Promise<number> {
  return Number((await askRaw(client, 'CLIENT', 'ID')).toString().slice(1, -2))
}

describe('clients in a database other than 0', () => {
  const opened: Redis[] = []
  afterAll(() => {
    for (const client of opened) client.disconnect()
  })

  it('ioredis with a URL ending in /2 writes and reads database 2', async () => {
    const client = new Redis(`redis://127.0.0.1:${servers.bfs.port}/2`)
    opened.push(client)
    await client.flushall()
    expect(await client.call('BF.ADD', 'by-url', 'x')).toBe(1)
    expect(await client.call('BF.EXISTS', 'by-url', 'x')).toBe(1)
    expect(await client.dbsize()).toBe(1)
    const zero = new Redis({ port: servers.bfs.port, host: '127.0.0.1' })
    opened.push(zero)
    expect(await zero.exists('by-url')).toBe(0)
    expect(await zero.call('INFO', 'keyspace')).toMatch(/\r\ndb2:keys=1,/)
  })

  it('redis-cli -n 2 reads and writes database 2', async () => {
    const cli = (...args: string[]) =>
      runTool('redis-cli', ['-h', '127.0.0.1', '-p', String(servers.bfs.port), ...args])
    expect((await cli('-n', '2', 'BF.ADD', 'by-cli', 'y')).stdout).toBe('1\n')
    expect((await cli('-n', '2', 'BF.EXISTS', 'by-cli', 'y')).stdout).toBe('1\n')
    expect((await cli('EXISTS', 'by-cli')).stdout).toBe('0\n')
    expect((await cli('-n', '16', 'PING')).stderr).toMatch(/SELECT 16 failed: ERR DB index is out of range/)
  })
})

describe('databases as configured', () => {
  let small: RunningServer | undefined
  afterAll(async () => {
    await small?.stop()
  })

  it('databases 4: SELECT 4 is out of range, CONFIG GET says 4, MOVE and SWAPDB check it too', async () => {
    small = await startServer({ databases: 4 })
    const client = await servers.connect(small.port)
    expect((await askRaw(client, 'CONFIG', 'GET', 'databases')).toString()).toBe('*2\r\n$9\r\ndatabases\r\n$1\r\n4\r\n')
    expect((await askRaw(client, 'SELECT', '3')).toString()).toBe('+OK\r\n')
    expect((await askRaw(client, 'SELECT', '4')).toString()).toBe('-ERR DB index is out of range\r\n')
    expect((await askRaw(client, 'SWAPDB', '0', '4')).toString()).toBe('-ERR DB index is out of range\r\n')
    expect((await askRaw(client, 'MOVE', 'k', '4')).toString()).toBe('-ERR DB index is out of range\r\n')
    expect((await askRaw(client, 'CONFIG', 'SET', 'databases', '8')).toString()).toBe(
      "-ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config\r\n",
    )
  })

  it('an http-db that is no database refuses to start', async () => {
    await expect(startServer({ databases: 2, 'http-db': 2 })).rejects.toThrow(
      'http-db 2: no such database (databases is 2)',
    )
  })
})
