/**
 * Key expiry over real sockets: EXPIRE and its family with redis 7.0.15's replies (bytes taken from
 * redis-server 7.0.15, string keys there, filters here), an expired key invisible everywhere,
 * lazy and active deletion (counted, logged as DEL), RENAME/DEL/BF.RESERVE/BF.LOAD on expiring
 * keys, the expiry through SAVE and through the log (absolute PEXPIREAT), keys that expired while
 * the server was down, WATCH, and a replica that hides expired keys until its master's DEL.
 *
 * Time is moved by the server's expiry clock (registry.expiry.now) where a test needs a key past
 * its time at once; the tests that need real time use short expiries and bounded polling.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ask, encodeCommand } from '../../helpers/resp.js'
import { serverPerTest } from '../../helpers/server-hooks.js'
import { type RunningServer } from '../../helpers/start-server.js'
import { tempDirsRemovedAfterAll } from '../../helpers/temp-dir.js'
import { replyEnd } from '../../helpers/tools.js'
import { listSegments, segmentName } from '../../../src/store/append-log.js'
import { MANIFEST_FILE } from '../../../src/format/manifest.js'
import { SNAPSHOT_DIR } from '../../../src/store/snapshot.js'
import type { Client } from '../../../src/server/client.js'

const { start, connect } = serverPerTest()
const tempDir = tempDirsRemovedAfterAll('bfs-expiry-')

/** Moves the server's expiry clock `ms` ahead of the wall clock (keys expire without waiting). */
function advanceClock(running: RunningServer, ms: number): void {
  const policy = running.server.registry.expiry
  policy.now = () => Date.now() + ms
}

/** Polls `check` every 20 ms until it holds, for at most 10 s. */
async function eventually(check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

function infoField(info: string, field: string): string | undefined {
  return new RegExp(`\\r\\n${field}:([^\\r]*)\\r\\n`).exec(info)?.[1]
}

const ERR_INT = '-ERR value is not an integer or out of range\r\n'

describe('EXPIRE and its family: redis 7.0.15 replies', () => {
  it('refuses bad flags before a bad time, and a time that overflows 64 bits, naming the command', async () => {
    const running = await start()
    const c = await connect(running.port)
    await ask(c, 'BF.ADD', 'k', 'a')
    expect(await ask(c, 'EXPIRE', 'k', '10', 'nx', 'xx')).toBe(
      '-ERR NX and XX, GT or LT options at the same time are not compatible\r\n',
    )
    expect(await ask(c, 'EXPIRE', 'k', '10', 'NX', 'LT')).toBe(
      '-ERR NX and XX, GT or LT options at the same time are not compatible\r\n',
    )
    expect(await ask(c, 'EXPIRE', 'k', '10', 'gt', 'lt')).toBe(
      '-ERR GT and LT options at the same time are not compatible\r\n',
    )
    expect(await ask(c, 'EXPIRE', 'k', '10', 'foo')).toBe('-ERR Unsupported option foo\r\n')
    expect(await ask(c, 'EXPIRE', 'k', 'abc', 'foo')).toBe('-ERR Unsupported option foo\r\n')
    expect(await ask(c, 'EXPIRE', 'k', 'abc')).toBe(ERR_INT)
    expect(await ask(c, 'EXPIRE', 'k', '10.5')).toBe(ERR_INT)
    expect(await ask(c, 'EXPIRE', 'k', '99999999999999999999')).toBe(ERR_INT)
    expect(await ask(c, 'EXPIRE', 'nokey', '10', 'xx', 'nx')).toBe(
      '-ERR NX and XX, GT or LT options at the same time are not compatible\r\n',
    )
    expect(await ask(c, 'EXPIRE', 'k', '9223372036854775807')).toBe("-ERR invalid expire time in 'expire' command\r\n")
    expect(await ask(c, 'EXPIRE', 'k', '-9223372036854775808')).toBe("-ERR invalid expire time in 'expire' command\r\n")
    expect(await ask(c, 'PEXPIRE', 'k', '9223372036854775807')).toBe(
      "-ERR invalid expire time in 'pexpire' command\r\n",
    )
    expect(await ask(c, 'EXPIREAT', 'k', '9223372036854775807')).toBe(
      "-ERR invalid expire time in 'expireat' command\r\n",
    )
    expect(await ask(c, 'EXPIRE', 'k')).toBe("-ERR wrong number of arguments for 'expire' command\r\n")
    expect(await ask(c, 'PERSIST', 'a', 'b')).toBe("-ERR wrong number of arguments for 'persist' command\r\n")
    expect(await ask(c, 'EXPIRETIME', 'k')).toBe(':-1\r\n') // nothing above changed the key
  })

  it('NX, XX, GT and LT as redis: no expiry counts as infinite', async () => {
    const running = await start()
    const c = await connect(running.port)
    await ask(c, 'BF.ADD', 'k', 'a')
    const steps: [string[], string][] = [
      [['EXPIRE', 'k', '10', 'XX'], ':0'],
      [['EXPIRE', 'k', '10', 'GT'], ':0'],
      [['EXPIRE', 'k', '100', 'NX'], ':1'],
      [['EXPIRE', 'k', '100', 'NX'], ':0'],
      [['EXPIRE', 'k', '50', 'GT'], ':0'],
      [['EXPIRE', 'k', '200', 'gt'], ':1'],
      [['EXPIRE', 'k', '300', 'LT'], ':0'],
      [['EXPIRE', 'k', '100', 'lt'], ':1'],
      [['TTL', 'k'], ':100'],
      [['EXPIRE', 'k', '10', 'NX', 'NX'], ':0'],
      [['PERSIST', 'k'], ':1'],
      [['PERSIST', 'k'], ':0'],
      [['EXPIRE', 'k', '10', 'LT'], ':1'],
      [['EXPIRE', 'nokey', '10'], ':0'],
      [['PERSIST', 'nokey'], ':0'],
    ]
    for (const [command, reply] of steps) expect(await ask(c, ...command), command.join(' ')).toBe(`${reply}\r\n`)
  })

  it('TTL, PTTL, EXPIRETIME, PEXPIRETIME: -2 no key, -1 no expiry, else the time, in RESP2 and RESP3 alike', async () => {
    const running = await start()
    for (const protocol of ['2', '3']) {
      const c = await connect(running.port)
      if (protocol === '3') await ask(c, 'HELLO', '3')
      await ask(c, 'BF.ADD', 'k', 'a')
      await ask(c, 'PERSIST', 'k')
      for (const command of ['TTL', 'PTTL', 'EXPIRETIME', 'PEXPIRETIME']) {
        expect(await ask(c, command, 'nokey')).toBe(':-2\r\n')
        expect(await ask(c, command, 'k')).toBe(':-1\r\n')
      }
      expect(await ask(c, 'EXPIREAT', 'k', '4102444800')).toBe(':1\r\n')
      expect(await ask(c, 'EXPIRETIME', 'k')).toBe(':4102444800\r\n')
      expect(await ask(c, 'PEXPIRETIME', 'k')).toBe(':4102444800000\r\n')
      expect(await ask(c, 'PEXPIRE', 'k', '1500')).toBe(':1\r\n')
      // The time left in seconds is rounded to the nearest (redis: (ttl + 500) / 1000).
      expect(['1', '2']).toContain(/^:(\d+)\r\n$/.exec(await ask(c, 'TTL', 'k'))?.[1])
      const pttl = Number(/^:(\d+)\r\n$/.exec(await ask(c, 'PTTL', 'k'))?.[1])
      expect(pttl).toBeGreaterThan(0)
      expect(pttl).toBeLessThanOrEqual(1500)
    }
  })

  it('a 64-bit expiry is answered as redis prints it (PEXPIREAT 2^63 - 1)', async () => {
    const running = await start()
    const c = await connect(running.port)
    await ask(c, 'BF.ADD', 'k', 'a')
    expect(await ask(c, 'PEXPIREAT', 'k', '9223372036854775807')).toBe(':1\r\n')
    expect(await ask(c, 'PEXPIRETIME', 'k')).toBe(':9223372036854775807\r\n')
    expect(await ask(c, 'EXPIRETIME', 'k')).toBe(':9223372036854776\r\n')
    expect(await ask(c, 'PEXPIREAT', 'k', '-9223372036854775808')).toBe(':1\r\n')
    expect(await ask(c, 'EXISTS', 'k')).toBe(':0\r\n')
  })

  it('a time already past deletes the key at once (not counted as expired), as redis checkAlreadyExpired', async () => {
    const running = await start()
    const c = await connect(running.port)
    for (const command of [
      ['EXPIRE', 'k', '-1'],
      ['PEXPIRE', 'k', '0'],
      ['EXPIREAT', 'k', '100'],
      ['PEXPIREAT', 'k', '-5'],
    ]) {
      await ask(c, 'BF.ADD', 'k', 'a')
      expect(await ask(c, ...command)).toBe(':1\r\n')
      expect(await ask(c, 'EXISTS', 'k')).toBe(':0\r\n')
    }
    expect(infoField(await ask(c, 'INFO', 'stats'), 'expired_keys')).toBe('0')
  })
})

describe('an expired key is never visible', () => {
  it('EXISTS, TYPE, TTL, KEYS, SCAN, DBSIZE, RANDOMKEY, INFO keyspace, BF.EXISTS and /metrics agree; the lookup deletes it and logs DEL', async () => {
    const dir = tempDir()
    const running = await start({ dir, appendonly: true, 'http-port': -1 })
    const c = await connect(running.port)
    await ask(c, 'BF.ADD', 'live', 'a')
    await ask(c, 'BF.ADD', 'gone', 'a')
    await ask(c, 'BF.ADD', 'later', 'a')
    expect(await ask(c, 'EXPIRE', 'gone', '100')).toBe(':1\r\n')
    expect(await ask(c, 'EXPIRE', 'later', '1000')).toBe(':1\r\n')
    expect(infoField(await ask(c, 'INFO', 'keyspace'), 'db0')).toMatch(/^keys=3,expires=2,avg_ttl=\d+$/)
    advanceClock(running, 200_000)
    // Nothing looked it up yet, and the active cycle is not looked at here: every view hides it.
    expect(await ask(c, 'DBSIZE')).toBe(':2\r\n')
    expect(await ask(c, 'KEYS', '*')).toBe('*2\r\n$4\r\nlive\r\n$5\r\nlater\r\n')
    expect(await ask(c, 'SCAN', '0')).toBe('*2\r\n$1\r\n0\r\n*2\r\n$4\r\nlive\r\n$5\r\nlater\r\n')
    const db0 = infoField(await ask(c, 'INFO', 'keyspace'), 'db0')
    expect(db0).toMatch(/^keys=2,expires=1,avg_ttl=\d+$/)
    expect(Number(/avg_ttl=(\d+)/.exec(db0!)![1])).toBeLessThanOrEqual(800_000)
    const metrics = await (await fetch(`http://127.0.0.1:${running.server.httpPort}/metrics`)).text()
    expect(metrics).toMatch(/^bfs_filters 2$/m)
    expect(metrics).toMatch(/^bfs_filters_with_expiry 1$/m)
    for (let i = 0; i < 20; i++) expect(['$4\r\nlive\r\n', '$5\r\nlater\r\n']).toContain(await ask(c, 'RANDOMKEY'))
    expect(await ask(c, 'EXISTS', 'gone', 'live')).toBe(':1\r\n')
    expect(await ask(c, 'TYPE', 'gone')).toBe('+none\r\n')
    expect(await ask(c, 'TTL', 'gone')).toBe(':-2\r\n')
    expect(await ask(c, 'BF.EXISTS', 'gone', 'a')).toBe(':0\r\n')
    expect(await ask(c, 'DEL', 'gone')).toBe(':0\r\n')
    const stats = await ask(c, 'INFO', 'stats')
    expect(infoField(stats, 'expired_keys')).toBe('1')
    expect(await ask(c, 'BF.RESERVE', 'gone', '0.01', '100')).toBe('+OK\r\n')
    expect(await ask(c, 'TTL', 'gone')).toBe(':-1\r\n')
    await running.stop()
    const log = readFileSync(path.join(dir, segmentName('appendonly.aof', 1)), 'latin1')
    // The expiry deleted the key and logged it, before the new BF.RESERVE.
    expect(log).toMatch(/\*2\r\n\$3\r\nDEL\r\n\$4\r\ngone\r\n\*4\r\n\$10\r\nBF\.RESERVE\r\n\$4\r\ngone\r\n/)
  })

  it('the active cycle deletes keys nobody looks up, counts them and logs a DEL each', async () => {
    const dir = tempDir()
    const running = await start({ dir, appendonly: true })
    const c = await connect(running.port)
    const count = 500
    let batch = ''
    for (let i = 0; i < count; i++) batch += encodeCommand(['BF.ADD', `k${i}`, 'a']).toString('latin1')
    for (let i = 0; i < count; i++) batch += encodeCommand(['PEXPIRE', `k${i}`, '100000']).toString('latin1')
    c.write(Buffer.from(batch, 'latin1'))
    await c.readUntil((bytes) => bytes.toString('latin1').split('\r\n').length - 1 === count * 2)
    await ask(c, 'BF.ADD', 'stays', 'a')
    advanceClock(running, 200_000)
    await eventually(() => running.server.registry.size === 1)
    const stats = await ask(c, 'INFO', 'stats')
    expect(infoField(stats, 'expired_keys')).toBe(String(count))
    expect(Number(infoField(stats, 'expired_stale_perc'))).toBeGreaterThan(0)
    await running.stop()
    const log = readFileSync(path.join(dir, segmentName('appendonly.aof', 1)), 'latin1')
    expect(log.match(/\*2\r\n\$3\r\nDEL\r\n/g)?.length).toBe(count)
  })
})

describe('keys with an expiry and the other commands', () => {
  it("RENAME and RENAMENX keep the expiry and drop the destination's; BF.MADD keeps it; BF.MERGE's destination has none", async () => {
    const running = await start()
    const c = await connect(running.port)
    await ask(c, 'BF.ADD', 'a', 'x')
    await ask(c, 'EXPIREAT', 'a', '4102444800')
    await ask(c, 'BF.ADD', 'b', 'x')
    await ask(c, 'EXPIREAT', 'b', '4102444900')
    expect(await ask(c, 'RENAME', 'a', 'b')).toBe('+OK\r\n')
    expect(await ask(c, 'EXPIRETIME', 'b')).toBe(':4102444800\r\n')
    expect(await ask(c, 'RENAMENX', 'b', 'c')).toBe(':1\r\n')
    expect(await ask(c, 'EXPIRETIME', 'c')).toBe(':4102444800\r\n')
    await ask(c, 'BF.ADD', 'plain', 'x')
    expect(await ask(c, 'RENAME', 'plain', 'c')).toBe('+OK\r\n')
    expect(await ask(c, 'EXPIRETIME', 'c')).toBe(':-1\r\n')
    await ask(c, 'EXPIREAT', 'c', '4102444800')
    expect(await ask(c, 'BF.MADD', 'c', 'y', 'z')).toBe('*2\r\n:1\r\n:1\r\n')
    expect(await ask(c, 'EXPIRETIME', 'c')).toBe(':4102444800\r\n')
    await ask(c, 'BF.ADD', 'dest', 'x')
    await ask(c, 'EXPIREAT', 'dest', '4102444800')
    await ask(c, 'BF.ADD', 'src', 'x')
    expect(await ask(c, 'BF.MERGE', 'dest', 'src')).toBe('+OK\r\n')
    expect(await ask(c, 'EXPIRETIME', 'dest')).toBe(':-1\r\n')
  })

  it('BF.LOADCHUNK and BF.LOAD (REPLACE) make a key without expiry', async () => {
    const running = await start()
    const c = await connect(running.port)
    await ask(c, 'BF.RESERVE', 'src', '0.01', '100')
    await ask(c, 'BF.ADD', 'src', 'x')
    const chunks: Buffer[][] = []
    let cursor = '0'
    for (;;) {
      const reply = Buffer.from(await ask(c, 'BF.SCANDUMP', 'src', cursor), 'latin1')
      const match = /^\*2\r\n:(\d+)\r\n\$(\d+)\r\n/.exec(reply.toString('latin1'))!
      if (match[1] === '0') break
      const start = match[0].length
      chunks.push([Buffer.from(match[1]!), reply.subarray(start, start + Number(match[2]))])
      cursor = match[1]!
    }
    await ask(c, 'BF.ADD', 'dst', 'y')
    await ask(c, 'EXPIREAT', 'dst', '4102444800')
    await ask(c, 'DEL', 'dst')
    for (const [iterator, data] of chunks) {
      c.write(encodeCommand(['BF.LOADCHUNK', 'dst', iterator!.toString(), data!]))
      expect(
        (await c.readUntil((bytes) => bytes.length > 0 && replyEnd(bytes) === bytes.length)).toString('latin1'),
      ).toBe('+OK\r\n')
    }
    expect(await ask(c, 'EXPIRETIME', 'dst')).toBe(':-1\r\n')
    expect(await ask(c, 'BF.SAVE', 'src', 'src.bf')).toBe('+OK\r\n')
    await ask(c, 'EXPIREAT', 'dst', '4102444800')
    expect(await ask(c, 'BF.LOAD', 'dst', 'src.bf', 'REPLACE')).toBe('+OK\r\n')
    expect(await ask(c, 'EXPIRETIME', 'dst')).toBe(':-1\r\n')
  })

  it('an EXPIRE or PERSIST of a WATCHed key fails the transaction', async () => {
    const running = await start()
    const c = await connect(running.port)
    const other = await connect(running.port)
    await ask(c, 'BF.ADD', 'w', 'x')
    for (const change of [
      ['EXPIRE', 'w', '100'],
      ['PERSIST', 'w'],
    ]) {
      expect(await ask(c, 'WATCH', 'w')).toBe('+OK\r\n')
      expect(await ask(other, ...change)).toBe(':1\r\n')
      await ask(c, 'MULTI')
      await ask(c, 'BF.ADD', 'w', 'y')
      expect(await ask(c, 'EXEC')).toBe('*-1\r\n')
    }
  })

  it('a WATCHed key that expires fails the EXEC, deleted by the active cycle or not; one expired before WATCH does not (as redis 7.0.15)', async () => {
    const running = await start()
    const c = await connect(running.port)
    await ask(c, 'BF.ADD', 'w', 'x')
    await ask(c, 'PEXPIRE', 'w', '100000')
    expect(await ask(c, 'WATCH', 'w')).toBe('+OK\r\n')
    advanceClock(running, 200_000)
    await eventually(() => running.server.registry.size === 0) // the active cycle deleted it
    await ask(c, 'MULTI')
    await ask(c, 'PING')
    expect(await ask(c, 'EXEC')).toBe('*-1\r\n')
    await ask(c, 'BF.ADD', 'w', 'x')
    await ask(c, 'PEXPIRE', 'w', '300000')
    running.server.registry.expiry.mode = () => 'hide' // no deletion by the cycle meanwhile
    expect(await ask(c, 'WATCH', 'w')).toBe('+OK\r\n')
    advanceClock(running, 600_000)
    running.server.registry.expiry.mode = () => 'delete'
    await ask(c, 'MULTI')
    await ask(c, 'PING')
    expect(await ask(c, 'EXEC')).toBe('*-1\r\n')
    await ask(c, 'BF.ADD', 'w', 'x')
    await ask(c, 'PEXPIRE', 'w', '1000')
    advanceClock(running, 700_000)
    expect(await ask(c, 'WATCH', 'w')).toBe('+OK\r\n')
    await ask(c, 'MULTI')
    await ask(c, 'PING')
    expect(await ask(c, 'EXEC')).toBe('*1\r\n+PONG\r\n')
  })

  it('CONFIG SET active-expire-effort takes 1 to 10', async () => {
    const running = await start()
    const c = await connect(running.port)
    expect(await ask(c, 'CONFIG', 'GET', 'active-expire-effort')).toBe(
      '*2\r\n$20\r\nactive-expire-effort\r\n$1\r\n1\r\n',
    )
    expect(await ask(c, 'CONFIG', 'SET', 'active-expire-effort', '10')).toBe('+OK\r\n')
    expect(await ask(c, 'CONFIG', 'SET', 'active-expire-effort', '11')).toMatch(
      /^-ERR CONFIG SET failed \(possibly related to argument 'active-expire-effort'\)/,
    )
  })
})

describe('the expiry on disk', () => {
  it('survives SAVE and a restart, listed in the MANIFEST; a change of expiry alone rewrites the MANIFEST, not the filter file', async () => {
    const dir = tempDir()
    let running = await start({ dir, save: '3600 1' })
    let c = await connect(running.port)
    await ask(c, 'BF.ADD', 'k', 'a')
    await ask(c, 'BF.ADD', 'plain', 'a')
    await ask(c, 'PEXPIREAT', 'k', '4102444800123')
    expect(await ask(c, 'SAVE')).toBe('+OK\r\n')
    const manifest = readFileSync(path.join(dir, SNAPSHOT_DIR, MANIFEST_FILE), 'latin1')
    expect(manifest).toMatch(/^file \d{12}\.bf \d+ expire-at 4102444800123$/m)
    expect(manifest).toMatch(/^file \d{12}\.bf \d+$/m)
    const files = manifest.match(/\d{12}\.bf/g)
    await ask(c, 'PEXPIREAT', 'k', '4102444800456')
    expect(await ask(c, 'SAVE')).toBe('+OK\r\n')
    const rewritten = readFileSync(path.join(dir, SNAPSHOT_DIR, MANIFEST_FILE), 'latin1')
    expect(rewritten).toContain('expire-at 4102444800456')
    expect(rewritten.match(/\d{12}\.bf/g)).toEqual(files)
    await running.stop()
    running = await start({ dir, save: '3600 1' })
    c = await connect(running.port)
    expect(await ask(c, 'PEXPIRETIME', 'k')).toBe(':4102444800456\r\n')
    expect(await ask(c, 'PEXPIRETIME', 'plain')).toBe(':-1\r\n')
    expect(await ask(c, 'BF.EXISTS', 'k', 'a')).toBe(':1\r\n')
  })

  it('the log records EXPIRE as PEXPIREAT with the absolute time (flags kept), so a replay later does not extend it', async () => {
    const dir = tempDir()
    let running = await start({ dir, appendonly: true })
    let c = await connect(running.port)
    await ask(c, 'BF.ADD', 'k', 'a')
    await ask(c, 'EXPIRE', 'k', '1000', 'NX')
    const expiresAt = /^:(\d+)\r\n$/.exec(await ask(c, 'PEXPIRETIME', 'k'))![1]!
    await ask(c, 'BF.ADD', 'p', 'a')
    await ask(c, 'EXPIRE', 'p', '1000')
    await ask(c, 'PERSIST', 'p')
    await running.stop()
    const log = readFileSync(path.join(dir, segmentName('appendonly.aof', 1)), 'latin1')
    expect(log).toContain(`*4\r\n$9\r\nPEXPIREAT\r\n$1\r\nk\r\n$${expiresAt.length}\r\n${expiresAt}\r\n$2\r\nNX\r\n`)
    expect(log).toContain('*2\r\n$7\r\nPERSIST\r\n$1\r\np\r\n')
    expect(log).not.toContain('EXPIRE\r\n')
    running = await start({ dir, appendonly: true })
    c = await connect(running.port)
    expect(await ask(c, 'PEXPIRETIME', 'k')).toBe(`:${expiresAt}\r\n`)
    expect(await ask(c, 'TTL', 'p')).toBe(':-1\r\n')
  })

  it('a replay applies a logged RESTORE whose expiry has passed since, and the PERSIST after it (nothing expires while loading)', async () => {
    const dir = tempDir()
    let running = await start({ dir, appendonly: true })
    let c = await connect(running.port)
    await ask(c, 'BF.ADD', 'src', 'a')
    const dumped = await ask(c, 'DUMP', 'src')
    const payload = Buffer.from(dumped.slice(dumped.indexOf('\r\n') + 2, -2), 'latin1')
    running.server.registry.expiry.now = () => 0 // nothing expires before the stop
    const expiresAt = Date.now() + 200
    c.write(encodeCommand(['RESTORE', 'k', String(expiresAt), payload, 'ABSTTL']))
    expect((await c.readUntil((bytes) => replyEnd(bytes) === bytes.length)).toString('latin1')).toBe('+OK\r\n')
    expect(await ask(c, 'PERSIST', 'k')).toBe(':1\r\n')
    await running.stop()
    while (Date.now() <= expiresAt + 5) await new Promise((resolve) => setTimeout(resolve, 20))
    running = await start({ dir, appendonly: true })
    c = await connect(running.port)
    expect(await ask(c, 'TTL', 'k')).toBe(':-1\r\n')
    expect(await ask(c, 'BF.EXISTS', 'k', 'a')).toBe(':1\r\n')
  })

  for (const appendonly of [false, true]) {
    it(`a key that expired while the server was down is gone after the load (${appendonly ? 'log' : 'snapshot'}), and a DEL is logged`, async () => {
      const dir = tempDir()
      let running = await start({ dir, appendonly, save: '3600 1' })
      let c = await connect(running.port)
      await ask(c, 'BF.ADD', 'short', 'a')
      await ask(c, 'BF.ADD', 'long', 'a')
      await ask(c, 'EXPIRE', 'long', '1000')
      await ask(c, 'PEXPIRE', 'short', '300')
      // Written after the expiry: the replay must still apply it to the key (nothing expires while loading).
      await ask(c, 'BF.ADD', 'short', 'b')
      const expiresAt = Number(/^:(\d+)\r\n$/.exec(await ask(c, 'PEXPIRETIME', 'short'))![1])
      if (!appendonly) expect(await ask(c, 'SAVE')).toBe('+OK\r\n')
      running.server.registry.expiry.now = () => 0 // nothing expires before the stop
      await running.stop()
      while (Date.now() <= expiresAt + 5) await new Promise((resolve) => setTimeout(resolve, 20))
      // No save at this stop: the DEL stays in the log to be read.
      running = await start({ dir, appendonly, save: appendonly ? '' : '3600 1' })
      c = await connect(running.port)
      expect(running.server.registry.size).toBe(1)
      expect(await ask(c, 'DBSIZE')).toBe(':1\r\n')
      expect(await ask(c, 'EXISTS', 'short')).toBe(':0\r\n')
      expect(await ask(c, 'BF.EXISTS', 'long', 'a')).toBe(':1\r\n')
      expect(infoField(await ask(c, 'INFO', 'stats'), 'expired_keys')).toBe('1')
      expect(
        running.logs.some((line) => line.includes('Deleted 1 key(s) that expired while the server was down')),
      ).toBe(true)
      if (appendonly) {
        await running.stop()
        const segments = listSegments(dir, 'appendonly.aof').map(({ seq }) =>
          readFileSync(path.join(dir, segmentName('appendonly.aof', seq)), 'latin1'),
        )
        expect(segments.join('')).toMatch(/\*2\r\n\$3\r\nDEL\r\n\$5\r\nshort\r\n$/)
      }
    })
  }
})

describe('on a replica', () => {
  it("reads see no expired key, nothing is deleted or logged by expiry, and the master's DEL removes it", async () => {
    const dir = tempDir()
    const running = await start({ dir, appendonly: true })
    const c = await connect(running.port)
    const link = await connect(running.port)
    await ask(c, 'BF.ADD', 'k', 'a')
    await ask(c, 'BF.ADD', 'other', 'a')
    await ask(c, 'PEXPIRE', 'k', '100000')
    await ask(link, 'CLIENT', 'SETNAME', 'master-link')
    running.server.replication.role = 'replica'
    advanceClock(running, 200_000)
    expect(await ask(c, 'EXISTS', 'k')).toBe(':0\r\n')
    expect(await ask(c, 'TTL', 'k')).toBe(':-2\r\n')
    expect(await ask(c, 'DBSIZE')).toBe(':1\r\n')
    expect(await ask(c, 'KEYS', '*')).toBe('*1\r\n$5\r\nother\r\n')
    expect(await ask(c, 'SCAN', '0')).toBe('*2\r\n$1\r\n0\r\n*1\r\n$5\r\nother\r\n')
    expect(await ask(c, 'RANDOMKEY')).toBe('$5\r\nother\r\n')
    expect(await ask(c, 'BF.EXISTS', 'k', 'a')).toBe(':0\r\n')
    await new Promise((resolve) => setTimeout(resolve, 300)) // three cron ticks: the active cycle must not run here
    expect(running.server.registry.peek('k')).toBeDefined()
    expect(infoField(await ask(c, 'INFO', 'stats'), 'expired_keys')).toBe('0')
    // The link to the master sees the key as it is, and its DEL removes it.
    const master = [...running.server.clients()].find((client) => client.name === 'master-link') as Client
    master.kind = 'master'
    expect(await ask(link, 'TTL', 'k')).toBe(':0\r\n')
    expect(await ask(link, 'DEL', 'k')).toBe(':1\r\n')
    expect(running.server.registry.peek('k')).toBeUndefined()
  })

  it("a writable replica's own write meets an expired key as missing: BF.ADD makes a new key without expiry", async () => {
    const running = await start({ 'replica-read-only': false })
    const c = await connect(running.port)
    await ask(c, 'BF.ADD', 'k', 'a')
    await ask(c, 'PEXPIRE', 'k', '100000')
    running.server.replication.role = 'replica'
    advanceClock(running, 200_000)
    // redis 7.0 deletes the key for a write on a writable replica (lookupKey's force_delete_expired), then adds.
    expect(await ask(c, 'BF.ADD', 'k', 'b')).toBe(':1\r\n')
    expect(await ask(c, 'TTL', 'k')).toBe(':-1\r\n')
    expect(await ask(c, 'BF.MEXISTS', 'k', 'a', 'b')).toBe('*2\r\n:0\r\n:1\r\n')
    expect(await ask(c, 'PERSIST', 'k')).toBe(':0\r\n')
  })
})
