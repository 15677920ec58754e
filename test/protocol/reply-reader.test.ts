/**
 * The client's reply reader: every RESP2 and RESP3 type, split at every byte, nested, refused
 * when not RESP, and the limits on sizes read from the wire applied before anything is gathered.
 */
import { describe, expect, it } from 'vitest'
import {
  ReplyReader,
  RespProtocolError,
  RespReplyError,
  type ReplyLimits,
  type RespValue,
} from '../../src/protocol/reply-reader.js'
import { ReplyWriter } from '../../src/protocol/reply-writer.js'

function readAll(chunks: readonly Buffer[], limits?: ReplyLimits): RespValue[] {
  const out: RespValue[] = []
  const reader = new ReplyReader((value) => out.push(value), limits)
  for (const chunk of chunks) reader.feed(chunk)
  expect(reader.bufferedBytes).toBe(0)
  return out
}

const STREAM = Buffer.concat([
  Buffer.from('+OK\r\n-ERR not found\r\n:42\r\n:-7\r\n$5\r\nhe\r\no\r\n$0\r\n\r\n$-1\r\n*-1\r\n', 'latin1'),
  Buffer.from('*2\r\n:1\r\n$2\r\n\x00\xff\r\n*3\r\n:1\r\n-ERR full\r\n*0\r\n', 'latin1'),
  Buffer.from(
    '_\r\n#t\r\n#f\r\n,1.5\r\n,inf\r\n,-inf\r\n(12345678901234567890\r\n(-3\r\n%1\r\n+k\r\n:1\r\n=8\r\ntxt:abcd\r\n',
    'latin1',
  ),
  Buffer.from('~2\r\n:1\r\n:2\r\n!9\r\nERR bulky\r\n|1\r\n+key-popularity\r\n:7\r\n+annotated\r\n', 'latin1'),
  Buffer.from('*2\r\n%1\r\n+a\r\n*1\r\n~1\r\n#f\r\n_\r\n', 'latin1'),
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
    false,
    1.5,
    Infinity,
    -Infinity,
    12345678901234567890n,
    -3,
    ['k', 1],
    Buffer.from('abcd'),
    [1, 2],
    new RespReplyError('ERR bulky'),
    'annotated',
    [['a', [[false]]], null],
  ]
}

describe('ReplyReader', () => {
  it('reads a stream of every reply type in one piece', () => {
    expect(readAll([STREAM])).toEqual(expected())
  })

  it('reads the same stream split at every byte position, and byte by byte', () => {
    for (let at = 1; at < STREAM.length; at++) {
      expect(readAll([STREAM.subarray(0, at), STREAM.subarray(at)])).toEqual(expected())
    }
    expect(readAll([...STREAM].map((byte) => Buffer.from([byte])))).toEqual(expected())
  })

  it("reads what the server's reply writer writes, in RESP2 and RESP3", () => {
    const write = (protocol: 2 | 3): Buffer => {
      const writer = new ReplyWriter()
      writer.protocol = protocol
      writer.array(9)
      writer.integer(5)
      writer.bulk(Buffer.from([0, 13, 10]))
      writer.error('ERR no')
      writer.map(1)
      writer.simple('k')
      writer.double(2.5)
      writer.set(1)
      writer.boolean(true)
      writer.verbatim('v')
      writer.nullBulk()
      writer.nullArray()
      writer.simple('end')
      return writer.take()!
    }
    const common = [5, Buffer.from([0, 13, 10]), new RespReplyError('ERR no')]
    expect(readAll([write(2)])).toEqual([
      [...common, ['k', Buffer.from('2.5')], [1], Buffer.from('v'), null, null, 'end'],
    ])
    expect(readAll([write(3)])).toEqual([[...common, ['k', 2.5], [true], Buffer.from('v'), null, null, 'end']])
  })

  it('tells pushes from replies', () => {
    const seen: [RespValue, boolean][] = []
    const reader = new ReplyReader((value, push) => seen.push([value, push]))
    reader.feed(Buffer.from('>3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n:1\r\n'))
    expect(seen).toEqual([
      [[Buffer.from('message'), Buffer.from('c'), Buffer.from('m')], true],
      [1, false],
    ])
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

  it('decodes lines as latin1, or as UTF-8 when asked', () => {
    const line = Buffer.concat([
      Buffer.from('+'),
      Buffer.from('é'),
      Buffer.from('\r\n-ERR '),
      Buffer.from('é'),
      Buffer.from('\r\n'),
    ])
    expect(readAll([line])).toEqual([
      Buffer.from('é').toString('latin1'),
      new RespReplyError(`ERR ${Buffer.from('é').toString('latin1')}`),
    ])
    expect(readAll([line], { lineEncoding: 'utf8' })).toEqual(['é', new RespReplyError('ERR é')])
  })

  it('refuses bytes that are not RESP', () => {
    for (const bad of [
      '?what\r\n',
      '$3\r\nabcde\r\n',
      '*x\r\n',
      '$-2\r\n',
      ':1x\r\n',
      '+a\rb\r\n',
      '#x\r\n',
      '=2\r\nab\r\n',
      '$99999999999999999999\r\n',
    ]) {
      expect(() => readAll([Buffer.from(bad)]), bad).toThrow(RespProtocolError)
    }
  })

  it('refuses sizes past its limits as soon as it reads them, before their bytes arrive', () => {
    const limits = { maxBulkBytes: 100, maxAggregateLength: 10, maxLineBytes: 20, maxDepth: 3 }
    const refused = (bytes: string): void => {
      const reader = new ReplyReader(() => {}, limits)
      expect(() => reader.feed(Buffer.from(bytes)), bytes).toThrow(RespProtocolError)
    }
    refused('$101\r\n')
    refused('!101\r\n')
    refused('=101\r\n')
    refused('*11\r\n')
    refused('~11\r\n')
    refused('>11\r\n')
    refused('%6\r\n')
    refused(`+${'a'.repeat(21)}`)
    refused(`-${'a'.repeat(30)}\r\n`)
    refused('*1\r\n*1\r\n*1\r\n*1\r\n')
    // At the limits: read.
    expect(
      readAll(
        [
          Buffer.from(
            `$100\r\n${'b'.repeat(100)}\r\n*10\r\n${':1\r\n'.repeat(10)}%5\r\n${':1\r\n'.repeat(10)}*1\r\n*1\r\n*1\r\n:1\r\n`,
          ),
        ],
        limits,
      ),
    ).toHaveLength(4)
  })

  it('holds an incomplete reply and gives nothing for it', () => {
    const out: RespValue[] = []
    const reader = new ReplyReader((value) => out.push(value))
    reader.feed(Buffer.from('*2\r\n:1\r\n$3\r\nab'))
    expect(out).toEqual([])
    expect(reader.bufferedBytes).toBe(14)
    reader.feed(Buffer.from('c\r\n'))
    expect(out).toEqual([[1, Buffer.from('abc')]])
    expect(reader.bufferedBytes).toBe(0)
  })
})
