/**
 * The databases on disk: the snapshot's MANIFEST keeps each key's database (`db N`, none for 0,
 * so a MANIFEST of database 0 alone is what it was before databases), the append-only log carries
 * a SELECT before a record of another database than the last one's, as redis's AOF does, and a
 * restart (snapshot, log replay, after a rewrite) puts every key back in its database with its
 * expiry.
 */
import { readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { makeTempDir } from '../helpers/temp-dir.js'
import { askRaw, RawClient } from '../helpers/resp.js'
import type { Config } from '../../src/runtime/config.js'

const running: RunningServer[] = []
const clients: RawClient[] = []
afterEach(async () => {
  for (const client of clients.splice(0)) client.close()
  for (const server of running.splice(0)) await server.stop()
})

async function boot(
  dir: string,
  config: Partial<Config> = {},
): Promise<{ server: RunningServer; ask: (...args: string[]) => Promise<string> }> {
  const server = await startServer({ dir, ...config })
  running.push(server)
  const client = await RawClient.connect(server.port)
  clients.push(client)
  return { server, ask: async (...args) => (await askRaw(client, ...args)).toString('latin1') }
}

async function stop(server: RunningServer): Promise<void> {
  running.splice(running.indexOf(server), 1)
  await server.stop()
}

const FAR = String(Date.now() + 86_400_000)

/** Keys in databases 0, 3 and 15, two with an expiry. */
async function fill(ask: (...args: string[]) => Promise<string>): Promise<void> {
  expect(await ask('BF.ADD', 'same', 'in-0')).toBe(':1\r\n')
  expect(await ask('SELECT', '3')).toBe('+OK\r\n')
  expect(await ask('BF.ADD', 'same', 'in-3')).toBe(':1\r\n')
  expect(await ask('PEXPIREAT', 'same', FAR)).toBe(':1\r\n')
  expect(await ask('SELECT', '15')).toBe('+OK\r\n')
  expect(await ask('BF.MADD', 'other', 'a', 'b')).toBe('*2\r\n:1\r\n:1\r\n')
  expect(await ask('PEXPIREAT', 'other', FAR)).toBe(':1\r\n')
  expect(await ask('SELECT', '0')).toBe('+OK\r\n')
}

/** What each database holds, as a client sees it. */
async function check(ask: (...args: string[]) => Promise<string>, db3Keys = 1): Promise<void> {
  expect(await ask('INFO', 'keyspace')).toMatch(
    new RegExp(
      `db0:keys=1,expires=0,avg_ttl=0\r\ndb3:keys=${db3Keys},expires=1,avg_ttl=\\d+\r\ndb15:keys=1,expires=1,`,
    ),
  )
  expect(await ask('BF.MEXISTS', 'same', 'in-0', 'in-3')).toBe('*2\r\n:1\r\n:0\r\n')
  expect(await ask('SELECT', '3')).toBe('+OK\r\n')
  expect(await ask('BF.MEXISTS', 'same', 'in-0', 'in-3')).toBe('*2\r\n:0\r\n:1\r\n')
  expect(await ask('PEXPIRETIME', 'same')).toBe(`:${FAR}\r\n`)
  expect(await ask('SELECT', '15')).toBe('+OK\r\n')
  expect(await ask('BF.MEXISTS', 'other', 'a', 'b')).toBe('*2\r\n:1\r\n:1\r\n')
  expect(await ask('PEXPIRETIME', 'other')).toBe(`:${FAR}\r\n`)
  expect(await ask('SELECT', '0')).toBe('+OK\r\n')
}

/** The records of the log's segments, oldest first, each as its words joined by spaces. */
function logRecords(dir: string): string[] {
  const segments = readdirSync(dir)
    .filter((name) => name.endsWith('.incr.aof'))
    .sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]))
  const text = segments.map((name) => readFileSync(path.join(dir, name), 'latin1')).join('')
  return text
    .split(/\*\d+\r\n/)
    .filter((record) => record !== '')
    .map((record) =>
      record
        .split('\r\n')
        .filter((_, i) => i % 2 === 1)
        .join(' '),
    )
}

describe('snapshots keep the database of every key', () => {
  it('SAVE, then a restart without a log: every key in its database, with its expiry', async () => {
    const dir = makeTempDir()
    const first = await boot(dir)
    await fill(first.ask)
    expect(await first.ask('SAVE')).toBe('+OK\r\n')
    const manifest = readFileSync(path.join(dir, 'snapshot', 'MANIFEST'), 'latin1')
    expect(manifest).toMatch(/^file \d{12}\.bf \d+$/m)
    expect(manifest).toMatch(new RegExp(`^file \\d{12}\\.bf \\d+ db 3 expire-at ${FAR}$`, 'm'))
    expect(manifest).toMatch(new RegExp(`^file \\d{12}\\.bf \\d+ db 15 expire-at ${FAR}$`, 'm'))
    await stop(first.server)
    const second = await boot(dir)
    await check(second.ask)
  })

  it('SWAPDB changes only the MANIFEST: the next SAVE keeps the files and lists their new databases', async () => {
    const dir = makeTempDir()
    const first = await boot(dir)
    await fill(first.ask)
    expect(await first.ask('SAVE')).toBe('+OK\r\n')
    const files = readdirSync(path.join(dir, 'snapshot'))
      .filter((name) => name.endsWith('.bf'))
      .sort()
    expect(await first.ask('SWAPDB', '3', '4')).toBe('+OK\r\n')
    expect(await first.ask('SAVE')).toBe('+OK\r\n')
    expect(
      readdirSync(path.join(dir, 'snapshot'))
        .filter((name) => name.endsWith('.bf'))
        .sort(),
    ).toEqual(files)
    expect(readFileSync(path.join(dir, 'snapshot', 'MANIFEST'), 'latin1')).toMatch(
      new RegExp(` db 4 expire-at ${FAR}\n`),
    )
    await stop(first.server)
    const second = await boot(dir)
    expect(await second.ask('SELECT', '4')).toBe('+OK\r\n')
    expect(await second.ask('BF.EXISTS', 'same', 'in-3')).toBe(':1\r\n')
  })

  it('a MANIFEST of database 0 alone has no db field (the format before databases), and loads into database 0', async () => {
    const dir = makeTempDir()
    const first = await boot(dir)
    expect(await first.ask('BF.ADD', 'old', 'x')).toBe(':1\r\n')
    expect(await first.ask('SAVE')).toBe('+OK\r\n')
    expect(readFileSync(path.join(dir, 'snapshot', 'MANIFEST'), 'latin1')).not.toMatch(/ db /)
    await stop(first.server)
    const second = await boot(dir)
    expect(await second.ask('BF.EXISTS', 'old', 'x')).toBe(':1\r\n')
  })

  it('a key of a database the server does not have refuses the start, naming it', async () => {
    const dir = makeTempDir()
    const first = await boot(dir)
    await fill(first.ask)
    expect(await first.ask('SAVE')).toBe('+OK\r\n')
    await stop(first.server)
    await expect(startServer({ dir, databases: 8 })).rejects.toThrow(
      /its key is of database 15, and this server has 8 databases/,
    )
  })
})

describe('window filters (APBF.*) in databases', () => {
  it("keep their database through SAVE and a restart, and through the log's replay", async () => {
    const dir = makeTempDir()
    const first = await boot(dir, { appendonly: true })
    expect(await first.ask('SELECT', '5')).toBe('+OK\r\n')
    expect(await first.ask('APBF.RESERVE', 'win', 'COUNT', '0.01', '100')).toBe('+OK\r\n')
    expect(await first.ask('APBF.ADD', 'win', 'saved')).toBe('*1\r\n:1\r\n')
    expect(await first.ask('PEXPIREAT', 'win', FAR)).toBe(':1\r\n')
    expect(await first.ask('MOVE', 'win', '6')).toBe(':1\r\n')
    expect(await first.ask('SAVE')).toBe('+OK\r\n')
    expect(readFileSync(path.join(dir, 'snapshot', 'MANIFEST'), 'latin1')).toMatch(
      new RegExp(`^file \\d{12}\\.bf \\d+ db 6 expire-at ${FAR}$`, 'm'),
    )
    // After the save, the log alone holds this add (in database 6, behind a SELECT).
    expect(await first.ask('SELECT', '6')).toBe('+OK\r\n')
    expect(await first.ask('APBF.ADD', 'win', 'logged')).toBe('*1\r\n:1\r\n')
    await stop(first.server)
    const second = await boot(dir, { appendonly: true })
    expect(await second.ask('EXISTS', 'win')).toBe(':0\r\n')
    expect(await second.ask('SELECT', '6')).toBe('+OK\r\n')
    expect(await second.ask('TYPE', 'win')).toBe('+APBFcTYPE\r\n')
    expect(await second.ask('APBF.EXISTS', 'win', 'saved', 'logged', 'never')).toBe('*3\r\n:1\r\n:1\r\n:0\r\n')
    expect(await second.ask('PEXPIRETIME', 'win')).toBe(`:${FAR}\r\n`)
  })
})

describe("the append-only log carries SELECT as redis's AOF", () => {
  it("a SELECT before a record of another database than the last one's; the replay puts each key back", async () => {
    const dir = makeTempDir()
    const first = await boot(dir, { appendonly: true })
    await first.ask('BF.RESERVE', 'a', '0.01', '100')
    await first.ask('SELECT', '2')
    await first.ask('BF.RESERVE', 'b', '0.01', '100')
    await first.ask('BF.ADD', 'b', 'x')
    await first.ask('MULTI')
    await first.ask('BF.ADD', 'b', 'y')
    await first.ask('SELECT', '0')
    await first.ask('BF.ADD', 'a', 'z')
    expect(await first.ask('EXEC')).toBe('*3\r\n:1\r\n+OK\r\n:1\r\n')
    await first.ask('SELECT', '5')
    await first.ask('FLUSHDB')
    await first.ask('MOVE', 'nothing', '1')
    await first.ask('SELECT', '2')
    await first.ask('MOVE', 'b', '7')
    await new Promise((resolve) => setTimeout(resolve, 50)) // the log is written at the end of the turn
    expect(logRecords(dir)).toEqual([
      'BF.RESERVE a 0.01 100',
      'SELECT 2',
      'BF.RESERVE b 0.01 100',
      'BF.ADD b x',
      'MULTI', // in the first command's database, as redis 7.0: no SELECT before it here
      'BF.ADD b y',
      'SELECT 0',
      'BF.ADD a z',
      'EXEC',
      'SELECT 5',
      'FLUSHDB',
      'SELECT 2',
      'MOVE b 7',
    ])
    await stop(first.server)
    const second = await boot(dir, { appendonly: true })
    expect(await second.ask('INFO', 'keyspace')).toMatch(
      /# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\ndb7:keys=1,expires=0,avg_ttl=0\r\n\r\n$/,
    )
    expect(await second.ask('BF.MEXISTS', 'a', 'z', 'x')).toBe('*2\r\n:1\r\n:0\r\n')
    expect(await second.ask('SELECT', '7')).toBe('+OK\r\n')
    expect(await second.ask('BF.MEXISTS', 'b', 'x', 'y')).toBe('*2\r\n:1\r\n:1\r\n')
  })

  it('after BGREWRITEAOF the new segment starts in database 0; a restart from snapshot and log keeps every database', async () => {
    const dir = makeTempDir()
    const first = await boot(dir, { appendonly: true })
    await fill(first.ask)
    expect(await first.ask('SELECT', '3')).toBe('+OK\r\n')
    expect(await first.ask('BGREWRITEAOF')).toBe('+Background append only file rewriting started\r\n')
    await first.server.server.persistence.logRewriter.idle()
    // Still in database 3: the first record of the new segment needs its SELECT.
    expect(await first.ask('BF.ADD', 'after', 'rewrite')).toBe(':1\r\n')
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(logRecords(dir).slice(-3)).toEqual([
      'SELECT 3',
      'BF.RESERVE after 0.01 100 EXPANSION 2',
      'BF.ADD after rewrite',
    ])
    await stop(first.server)
    const second = await boot(dir, { appendonly: true })
    await check(second.ask, 2)
    expect(await second.ask('SELECT', '3')).toBe('+OK\r\n')
    expect(await second.ask('BF.EXISTS', 'after', 'rewrite')).toBe(':1\r\n')
  })

  it('keys that expired while the server was down are deleted at start in every database, a DEL logged in each', async () => {
    const dir = makeTempDir()
    const first = await boot(dir, { appendonly: true })
    for (const db of ['0', '6']) {
      await first.ask('SELECT', db)
      await first.ask('BF.ADD', `gone-${db}`, 'x')
      await first.ask('PEXPIREAT', `gone-${db}`, String(Date.now() + 300))
    }
    await stop(first.server)
    await new Promise((resolve) => setTimeout(resolve, 400))
    const second = await boot(dir, { appendonly: true })
    expect(second.server.logs.join('\n')).toMatch(/Deleted 2 key\(s\) that expired while the server was down/)
    expect(await second.ask('INFO', 'keyspace')).toBe('$12\r\n# Keyspace\r\n\r\n')
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(logRecords(dir).slice(-3)).toEqual(['DEL gone-0', 'SELECT 6', 'DEL gone-6'])
  })
})
