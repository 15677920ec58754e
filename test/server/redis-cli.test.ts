/**
 * redis-cli against a real bfs: one-shot commands, a session driven through stdin, --pipe mass
 * insertion, --raw / --no-raw output and -3 (RESP3). When stdout is not a terminal redis-cli prints
 * replies raw ("1", "OK", errors without "(error)"); --no-raw restores the "(integer) 1" form.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { encodeCommand } from '../helpers/resp.js'
import { hasTool, InteractiveTool, runTool } from '../helpers/tools.js'

describe.skipIf(!hasTool('redis-cli'))('redis-cli', () => {
  let running: RunningServer
  const cli = (...args: string[]) => runTool('redis-cli', ['-h', '127.0.0.1', '-p', String(running.port), ...args])

  beforeAll(async () => {
    running = await startServer()
  })

  afterAll(async () => {
    await running?.stop()
  })

  describe('one-shot commands', () => {
    it('BF.ADD / BF.EXISTS print the integer', async () => {
      expect(await cli('BF.ADD', 'f', 'a')).toMatchObject({ code: 0, stdout: '1\n' })
      expect(await cli('BF.ADD', 'f', 'a')).toMatchObject({ code: 0, stdout: '0\n' })
      expect(await cli('BF.EXISTS', 'f', 'a')).toMatchObject({ code: 0, stdout: '1\n' })
      expect(await cli('BF.EXISTS', 'f', 'b')).toMatchObject({ code: 0, stdout: '0\n' })
    })

    it('PING, BF.RESERVE, BF.MADD, BF.CARD', async () => {
      expect((await cli('PING')).stdout).toBe('PONG\n')
      expect((await cli('BF.RESERVE', 'r', '0.001', '5000')).stdout).toBe('OK\n')
      expect((await cli('BF.MADD', 'r', 'x', 'y', 'x')).stdout).toBe('1\n1\n0\n')
      expect((await cli('BF.CARD', 'r')).stdout).toBe('2\n')
    })

    it('--no-raw prints the typed form', async () => {
      expect((await cli('--no-raw', 'BF.ADD', 'nr', 'a')).stdout).toBe('(integer) 1\n')
      expect((await cli('--no-raw', 'BF.MEXISTS', 'nr', 'a', 'b')).stdout).toBe('1) (integer) 1\n2) (integer) 0\n')
      expect((await cli('--no-raw', 'BF.RESERVE', 'nr2', '0.01', '2', 'NONSCALING')).stdout).toBe('OK\n')
      expect((await cli('--no-raw', 'BF.INFO', 'nr2')).stdout).toBe(
        [
          '1) Capacity',
          '2) (integer) 2',
          '3) Size',
          '4) (integer) 104',
          '5) Number of filters',
          '6) (integer) 1',
          '7) Number of items inserted',
          '8) (integer) 0',
          '9) Expansion rate',
          '10) (nil)',
          '',
        ]
          .join('\n')
          .replace(/^(\d\))/gm, ' $1'),
      )
      expect((await cli('--no-raw', 'BF.MADD', 'nr2', '1', '2', '3')).stdout).toBe(
        '1) (integer) 1\n2) (integer) 1\n3) (error) ERR non scaling filter is full\n',
      )
      expect((await cli('--no-raw', 'ECHO', 'hi there')).stdout).toBe('"hi there"\n')
      expect((await cli('--no-raw', 'GETNAME_NOPE')).stdout).toBe(
        "(error) ERR unknown command 'GETNAME_NOPE', with args beginning with: \n",
      )
    })

    it('--raw prints errors and arrays plainly', async () => {
      const error = await cli('--raw', 'BF.INFO', 'nosuchfilter')
      expect(error.stdout.trimEnd()).toBe('ERR not found')
      expect((await cli('--raw', 'BF.INSERT', 'raw', 'ITEMS', 'a', 'b', 'a')).stdout).toBe('1\n1\n0\n')
      expect((await cli('--raw', 'TYPE', 'raw')).stdout).toBe('MBbloom--\n')
      // --raw does not quote or escape: the bytes come back as sent.
      expect((await cli('--raw', 'ECHO', 'a "b"\tc')).stdout).toBe('a "b"\tc\n')
    })

    it('wrong arity text', async () => {
      expect((await cli('BF.ADD', 'f')).stdout.trimEnd()).toBe("ERR wrong number of arguments for 'bf.add' command")
    })

    it('-3 speaks RESP3: HELLO is a map, a null is (nil)', async () => {
      const hello = await cli('-3', '--no-raw', 'HELLO')
      expect(hello.code).toBe(0)
      expect(hello.stdout).toContain('1# "server" => "redis"\n')
      expect(hello.stdout).toMatch(/2# "version" => "7\.0\.\d+"\n/)
      expect(hello.stdout).toContain('3# "proto" => (integer) 3\n')
      expect(hello.stdout).toContain('5# "mode" => "standalone"\n')
      expect(hello.stdout).toContain('6# "role" => "master"\n')
      const info = await cli('-3', '--no-raw', 'BF.INFO', 'nr2', 'EXPANSION')
      expect(info.stdout).toBe('1) (nil)\n')
      const client = await cli('-3', 'CLIENT', 'INFO')
      expect(client.stdout).toContain(' resp=3 ')
    })

    it('HELLO 3 in raw form: one "key value" line per map entry', async () => {
      const hello = await cli('--raw', 'HELLO', '3')
      const lines = hello.stdout.split('\n')
      expect(lines[0]).toBe('server redis')
      expect(lines[1]).toMatch(/^version 7\.0\.\d+$/)
      expect(lines[2]).toBe('proto 3')
      expect(lines[4]).toBe('mode standalone')
      expect(lines[5]).toBe('role master')
    })

    it('INFO and CONFIG GET', async () => {
      const info = await cli('INFO', 'server')
      expect(info.stdout).toMatch(/^# Server\r?\n/)
      expect(info.stdout).toMatch(/redis_version:7\.0\.\d+/)
      const config = await cli('CONFIG', 'GET', 'default-capacity')
      expect(config.stdout).toBe('default-capacity\n100\n')
    })

    it('reads the last argument from stdin with -x', async () => {
      const result = await runTool('redis-cli', ['-p', String(running.port), '-x', 'BF.ADD', 'stdin'], 'from stdin')
      expect(result.stdout).toBe('1\n')
      expect((await cli('BF.EXISTS', 'stdin', 'from stdin')).stdout).toBe('1\n')
    })
  })

  describe('interactive session through stdin', () => {
    it('answers each line in turn on one connection', async () => {
      const session = InteractiveTool.start('redis-cli', ['-h', '127.0.0.1', '-p', String(running.port)])
      try {
        const say = async (line: string, expected: string): Promise<void> =>
          expect(await session.answer(line, expected.length)).toBe(expected)
        await say('PING', 'PONG\n')
        await say('BF.RESERVE sess 0.01 100', 'OK\n')
        await say('BF.ADD sess "two words"', '1\n')
        await say("BF.EXISTS sess 'two words'", '1\n')
        await say('bf.exists sess two', '0\n')
        await say('CLIENT SETNAME interactive', 'OK\n')
        // The same connection: the name set above is still there.
        await say('CLIENT GETNAME', 'interactive\n')
        await say('BF.MADD sess a b', '1\n1\n')
        await say('BF.CARD sess', '3\n')
        await say('SELECT 16', 'ERR DB index is out of range\n\n')
        session.child.stdin.end()
        expect(await session.waitExit()).toBe(0)
      } finally {
        session.kill()
      }
    })
  })

  describe('--pipe mass insertion', () => {
    it('inserts 100,000 items with no errors', async () => {
      expect((await cli('BF.RESERVE', 'mass', '0.0001', '100000')).stdout).toBe('OK\n')
      const commands: Buffer[] = []
      for (let i = 0; i < 100_000; i++) commands.push(encodeCommand(['BF.ADD', 'mass', `item:${i}`]))
      const result = await runTool(
        'redis-cli',
        ['-h', '127.0.0.1', '-p', String(running.port), '--pipe'],
        Buffer.concat(commands),
        180_000,
      )
      expect(result.code).toBe(0)
      expect(result.stdout).toContain('All data transferred. Waiting for the last reply...')
      expect(result.stdout).toContain('Last reply received from server.')
      expect(result.stdout).toContain('errors: 0, replies: 100000')
      const card = Number((await cli('BF.CARD', 'mass')).stdout)
      // At 1 in 10,000 a handful of adds may answer 0 (false positives); none may be counted twice.
      expect(card).toBeLessThanOrEqual(100_000)
      expect(card).toBeGreaterThan(99_950)
      expect((await cli('BF.MEXISTS', 'mass', 'item:0', 'item:99999', 'item:50000')).stdout).toBe('1\n1\n1\n')
    }, 240_000)

    it('counts error replies', async () => {
      const input = Buffer.concat([
        encodeCommand(['BF.ADD', 'pipe-err', 'a']),
        encodeCommand(['BF.RESERVE', 'pipe-err', '0.01', '10']),
        encodeCommand(['BF.ADD', 'pipe-err']),
        encodeCommand(['BF.ADD', 'pipe-err', 'b']),
      ])
      const result = await runTool('redis-cli', ['-h', '127.0.0.1', '-p', String(running.port), '--pipe'], input)
      expect(result.stdout).toContain('errors: 2, replies: 4')
      // redis-cli writes each error reply to stderr.
      const output = result.stdout + result.stderr
      expect(output).toContain('ERR item exists')
      expect(output).toContain("ERR wrong number of arguments for 'bf.add' command")
    })
  })
})
