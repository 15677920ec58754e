/**
 * The tools' RESP client: the reader on bytes split at every point, and the client pipelining
 * against a real bfs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RespClient, RespProtocolError, RespReader, RespReplyError, encodeCommand, type RespValue } from '../../src/tools/resp-client.js'
import { startServer, type RunningServer } from '../helpers/start-server.js'

function readAll(chunks: readonly Buffer[]): RespValue[] {
  const out: RespValue[] = []
  const reader = new RespReader((value) => out.push(value))
  for (const chunk of chunks) reader.feed(chunk)
  expect(reader.bufferedBytes).toBe(0)
  return out
}

const STREAM = Buffer.concat([
  Buffer.from('+OK\r\n-ERR not found\r\n:42\r\n:-7\r\n$5\r\nhe\r\no\r\n$0\r\n\r\n$-1\r\n*-1\r\n', 'latin1'),
  Buffer.from('*2\r\n:1\r\n$2\r\n\x00\xff\r\n*3\r\n:1\r\n-ERR full\r\n*0\r\n', 'latin1'),
  Buffer.from('_\r\n#t\r\n,1.5\r\n(12345678901234567890\r\n%1\r\n+k\r\n:1\r\n=8\r\ntxt:abcd\r\n', 'latin1'),
])

function expected(): RespValue[] {
  return [
    'OK',
    new RespReplyError('ERR not found'),
    42,
    -7,
    Buffer.from('he\r\no'),
    Buffer.alloc(0),
    null,
    null,
    [1, Buffer.from([0, 0xff])],
    [1, new RespReplyError('ERR full'), []],
    null,
    true,
    1.5,
    12345678901234567890n,
    ['k', 1],
    Buffer.from('abcd'),
  ]
}

describe('RespReader', () => {
  it('reads a stream of every reply type in one piece', () => {
    expect(readAll([STREAM])).toEqual(expected())
  })

  it('reads the same stream split at every byte position, and byte by byte', () => {
    for (let at = 1; at < STREAM.length; at++) {
      expect(readAll([STREAM.subarray(0, at), STREAM.subarray(at)])).toEqual(expected())
    }
    expect(readAll([...STREAM].map((byte) => Buffer.from([byte])))).toEqual(expected())
  })

  it('gathers a large bulk string from many chunks', () => {
    const body = Buffer.alloc(3 * 1024 * 1024, 7)
    const bytes = Buffer.concat([Buffer.from(`*2\r\n:9\r\n$${body.length}\r\n`), body, Buffer.from('\r\n+next\r\n')])
    const chunks: Buffer[] = []
    for (let at = 0; at < bytes.length; at += 65_536) chunks.push(bytes.subarray(at, at + 65_536))
    const [first, second] = readAll(chunks) as [RespValue[], string]
    expect(first[0]).toBe(9)
    expect((first[1] as Buffer).equals(body)).toBe(true)
    expect(second).toBe('next')
  })

  it('refuses bytes that are not RESP', () => {
    expect(() => readAll([Buffer.from('?what\r\n')])).toThrow(RespProtocolError)
    expect(() => readAll([Buffer.from('$3\r\nabcde\r\n')])).toThrow(RespProtocolError)
    expect(() => readAll([Buffer.from('*x\r\n')])).toThrow(RespProtocolError)
  })
})

describe('encodeCommand', () => {
  it('writes a multibulk, large arguments as their own buffer', () => {
    expect(Buffer.concat(encodeCommand(['SET', 'k', 12])).toString('latin1')).toBe('*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\n12\r\n')
    const big = Buffer.alloc(100_000, 1)
    const pieces = encodeCommand(['X', big])
    // The argument's own memory, not a copy.
    expect(pieces.some((piece) => piece.buffer === big.buffer && piece.length === big.length)).toBe(true)
    expect(Buffer.concat(pieces).equals(Buffer.concat([Buffer.from('*2\r\n$1\r\nX\r\n$100000\r\n'), big, Buffer.from('\r\n')]))).toBe(true)
  })

  it('encodes any mix of small, large, text and binary arguments as the plain multibulk', () => {
    const naive = (argv: (string | Buffer)[]): Buffer =>
      Buffer.concat([Buffer.from(`*${argv.length}\r\n`), ...argv.flatMap((arg) => {
        const bytes = typeof arg === 'string' ? Buffer.from(arg) : arg
        return [Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n')]
      })])
    let seed = 7
    const next = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n
    for (let round = 0; round < 200; round++) {
      const argv = Array.from({ length: 1 + next(6) }, () =>
        next(3) === 0 ? 'é'.repeat(next(40)) : Buffer.alloc(next(4) === 0 ? 16_384 + next(40_000) : next(100), next(256)))
      expect(Buffer.concat(encodeCommand(argv)).equals(naive(argv))).toBe(true)
    }
  })
})

describe('RespClient', () => {
  let running: RunningServer

  beforeAll(async () => {
    running = await startServer({ requirepass: 'pw' })
  })

  afterAll(async () => {
    await running.stop()
  })

  it('authenticates, pipelines commands and matches replies in order', async () => {
    const client = await RespClient.connect('127.0.0.1', running.port, { password: 'pw' })
    try {
      const replies = await Promise.all(Array.from({ length: 1000 }, (_, i) => client.send(['ECHO', `reply ${i}`])))
      expect(replies.map((reply) => (reply as Buffer).toString())).toEqual(Array.from({ length: 1000 }, (_, i) => `reply ${i}`))
      expect(await client.send(['BF.ADD', 'f', 'x'])).toBe(1)
      expect(await client.send(['BF.ADD', 'f', 'x'])).toBe(0)
      await expect(client.send(['BF.INFO', 'missing'])).rejects.toThrow('ERR not found')
      expect(await client.send(['PING'])).toBe('PONG')
      expect(client.pending).toBe(0)
    } finally {
      await client.close()
    }
    await expect(client.send(['PING'])).rejects.toThrow('connection closed')
  })

  it('rejects a wrong password', async () => {
    await expect(RespClient.connect('127.0.0.1', running.port, { password: 'nope' })).rejects.toThrow(/WRONGPASS/)
  })
})
