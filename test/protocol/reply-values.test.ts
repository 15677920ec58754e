/**
 * The value sink against the byte writer: the same reply calls, once into a ReplyValues and once
 * into a ReplyWriter whose bytes a ReplyReader reads back, must give the same values (RESP2 and
 * RESP3, pushes apart, both line encodings).
 */
import { describe, expect, test } from 'vitest'
import { ReplyReader, RespReplyError, type RespValue } from '../../src/protocol/reply-reader.js'
import { ReplyValues } from '../../src/protocol/reply-values.js'
import { ReplyWriter } from '../../src/protocol/reply-writer.js'
import type { Protocol } from '../../src/protocol/reply-sink.js'
import type { ReplySink } from '../../src/protocol/reply-sink.js'
import * as shared from '../../src/protocol/shared-replies.js'
import { seededRandom } from '../helpers/seeded-random.js'

type Encoding = 'latin1' | 'utf8'
type Seen = [RespValue, boolean][]

/** What a reader makes of the writer's bytes for `write`: each reply and whether it was a push. */
function throughBytes(protocol: Protocol, encoding: Encoding, write: (sink: ReplySink) => void): Seen {
  const writer = new ReplyWriter()
  writer.protocol = protocol
  write(writer)
  const seen: Seen = []
  const bytes = writer.take()
  if (bytes !== undefined)
    new ReplyReader((value, push) => seen.push([value, push]), { lineEncoding: encoding }).feed(bytes)
  return seen
}

/** What the value sink makes of the same calls: its replies, with each push where it came. */
function asValues(protocol: Protocol, encoding: Encoding, write: (sink: ReplySink) => void): Seen {
  const pushes: [RespValue, number][] = []
  const values: ReplyValues = new ReplyValues({
    lineEncoding: encoding,
    onPush: (value) => pushes.push([value, values.length]),
  })
  values.protocol = protocol
  write(values)
  const seen: Seen = []
  const replies = values.take()
  let next = 0
  for (const [push, before] of pushes) {
    while (next < before) seen.push([replies[next++]!, false])
    seen.push([push, true])
  }
  while (next < replies.length) seen.push([replies[next++]!, false])
  return seen
}

function same(write: (sink: ReplySink) => void): void {
  for (const protocol of [2, 3] as const) {
    for (const encoding of ['latin1', 'utf8'] as const) {
      expect(asValues(protocol, encoding, write), `RESP${protocol} ${encoding}`).toEqual(
        throughBytes(protocol, encoding, write),
      )
    }
  }
}

describe("ReplyValues gives what ReplyReader reads from ReplyWriter's bytes", () => {
  const cases: [string, (sink: ReplySink) => void][] = [
    ['simple', (s) => s.simple('OK')],
    ['simple, not ASCII', (s) => s.simple('café ☕')],
    ['error', (s) => s.error('ERR not found')],
    ['error with a leading minus and line breaks', (s) => s.error('-ERR a\r\nb\n')],
    [
      'error quoting raw bytes (latin1)',
      (s) => s.error(`ERR unknown '${Buffer.from('é☕', 'utf8').toString('latin1')}'`, 'latin1'),
    ],
    ['error, not ASCII, utf8', (s) => s.error('ERR é')],
    [
      'integers',
      (s) => [0, -0, 1, -1, 1023, 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 60, -(2 ** 62)].forEach((n) => s.integer(n)),
    ],
    [
      'bulk strings',
      (s) => {
        s.bulk('text é')
        s.bulk(Buffer.from([0, 13, 10, 255]))
        s.bulk(new Uint8Array([1, 2, 3]).subarray(1))
        s.bulk('')
      },
    ],
    [
      'nulls',
      (s) => {
        s.nullBulk()
        s.nullArray()
      },
    ],
    [
      'arrays, nested and empty',
      (s) => {
        s.array(3)
        s.integer(1)
        s.array(0)
        s.array(2)
        s.bulk('a')
        s.array(1)
        s.simple('deep')
      },
    ],
    ['a null array header', (s) => s.array(-1)],
    [
      'maps',
      (s) => {
        s.map(2)
        s.bulk('k1')
        s.integer(1)
        s.simple('k2')
        s.map(0)
        s.map(1)
        s.bulk('x')
        s.double(0.5)
      },
    ],
    [
      'sets',
      (s) => {
        s.set(2)
        s.bulk('m')
        s.boolean(false)
        s.set(0)
      },
    ],
    ['doubles', (s) => [0, -0, 1.5, -2.25, 1 / 3, 1e300, 5e-324, Infinity, -Infinity, 3].forEach((n) => s.double(n))],
    ['NaN', (s) => s.double(NaN)],
    [
      'booleans',
      (s) => {
        s.boolean(true)
        s.boolean(false)
      },
    ],
    [
      'verbatim',
      (s) => {
        s.verbatim('line 1\r\nline 2 é')
        s.verbatim('# Server', 'mkd')
        s.verbatim('x', 'toolong')
        s.verbatim('')
      },
    ],
    [
      'pushes, and arrays inside them',
      (s) => {
        s.push(3)
        s.bulk('message')
        s.bulk('chan')
        s.array(1)
        s.integer(7)
        s.integer(1)
        s.push(0)
      },
    ],
    ['zeroOrOne', (s) => s.zeroOrOne(new Uint8Array([1, 0, 1, 1, 0]), 1, 3)],
    [
      'integerLater, answered',
      (s) => {
        let at: number[] = []
        const settle = (): void => {
          s.settled()
          s.answer(at[0]!, true)
          s.answer(at[1]!, false)
          s.answer(at[2]!, true)
        }
        at = [s.integerLater(settle), s.integerLater(settle)]
        s.simple('between')
        at.push(s.integerLater(settle))
        settle()
      },
    ],
    [
      'integerLater, some answered by an error (a failed add of a batch)',
      (s) => {
        let at: number[] = []
        const settle = (): void => {
          s.settled()
          let shift = 0
          s.answer(at[0]! + shift, true)
          shift += s.answerError(at[1]! + shift, 'ERR Filter is full')
          s.answer(at[2]! + shift, true)
          s.answerError(at[3]! + shift, 'Maximum expansions reached')
        }
        at = [s.integerLater(settle), s.integerLater(settle), s.integerLater(settle), s.integerLater(settle)]
        settle()
        s.simple('after')
      },
    ],
    [
      'integerLater, settled by a take',
      (s) => {
        const at: number[] = []
        const settle = (): void => {
          s.settled()
          for (const each of at) s.answer(each, true)
        }
        at.push(s.integerLater(settle), s.integerLater(settle))
      },
    ],
    [
      'truncate to a mark',
      (s) => {
        s.simple('kept')
        const mark = s.mark()
        s.integer(2)
        s.array(1)
        s.bulk('dropped')
        s.truncate(mark)
        s.simple('after')
      },
    ],
    [
      'shared replies (raw)',
      (s) => {
        for (const bytes of [
          shared.OK,
          shared.PONG,
          shared.ZERO,
          shared.ONE,
          shared.EMPTY_ARRAY,
          shared.NULL_BULK_RESP2,
          shared.NULL_ARRAY_RESP2,
          shared.NULL_RESP3,
        ])
          s.raw(bytes)
        s.raw(shared.integerReply(1023))
        s.raw(shared.integerReply(-5))
      },
    ],
    [
      'raw big numbers and 64-bit integers',
      (s) => {
        s.raw(Buffer.from(`:${-(2n ** 63n)}\r\n`, 'latin1'))
        s.raw(Buffer.from(`:${2n ** 63n - 1n}\r\n`, 'latin1'))
        s.raw(Buffer.from('(123456789012345678901234567890\r\n', 'latin1'))
        s.raw(Buffer.from('(-12\r\n', 'latin1'))
      },
    ],
    [
      'raw elements of every type',
      (s) => {
        s.raw(
          Buffer.from(
            '+OK é\r\n-ERR raw é\r\n,1.5\r\n,inf\r\n,-inf\r\n#t\r\n#f\r\n_\r\n$4\r\na\r\nb\r\n=8\r\ntxt:text\r\n!5\r\nERR x\r\n$-1\r\n',
            'latin1',
          ),
        )
        s.raw(Buffer.from('%1\r\n+k\r\n:1\r\n~2\r\n:1\r\n:2\r\n>1\r\n+p\r\n', 'latin1'))
      },
    ],
    [
      'a raw header with its elements written after it (a pub/sub message)',
      (s) => {
        s.push(3)
        s.raw(Buffer.from('$7\r\nmessage\r\n', 'latin1'))
        s.bulk('c')
        s.bulk('m')
        s.array(2)
        s.raw(Buffer.from('*1\r\n', 'latin1'))
        s.raw(shared.ONE)
        s.raw(shared.ZERO)
      },
    ],
  ]
  for (const [name, write] of cases) test(name, () => same(write))

  test('random reply trees', () => {
    const random = seededRandom(31)
    const scalar = (s: ReplySink): void => {
      const pick = Math.floor(random() * 9)
      if (pick === 0) s.integer(Math.floor((random() - 0.5) * 2 ** 40))
      else if (pick === 1)
        s.bulk(Buffer.from(Array.from({ length: Math.floor(random() * 20) }, () => Math.floor(random() * 256))))
      else if (pick === 2) s.simple(`s${Math.floor(random() * 100)}`)
      else if (pick === 3) s.error(`ERR e${Math.floor(random() * 100)}`)
      else if (pick === 4) s.double((random() - 0.5) * 1e6)
      else if (pick === 5) s.boolean(random() < 0.5)
      else if (pick === 6) s.nullBulk()
      else if (pick === 7) s.verbatim(`v${random()}`)
      else s.raw(random() < 0.5 ? shared.ONE : shared.OK)
    }
    const tree = (s: ReplySink, depth: number): void => {
      if (depth > 3 || random() < 0.5) return scalar(s)
      const n = Math.floor(random() * 4)
      const kind = Math.floor(random() * 4)
      if (kind === 0) s.array(n)
      else if (kind === 1) s.set(n)
      else if (kind === 2) s.push(n)
      else s.map(n)
      for (let i = 0; i < (kind === 3 ? 2 * n : n); i++) tree(s, depth + 1)
    }
    for (let round = 0; round < 200; round++) {
      // One random sequence of calls, recorded, then made on both sinks.
      const calls: [string, unknown[]][] = []
      const recorder = new Proxy({} as ReplySink, {
        get:
          (_, name) =>
          (...args: unknown[]) => {
            calls.push([String(name), args])
          },
      })
      for (let i = 0; i < 1 + Math.floor(random() * 4); i++) tree(recorder, 0)
      same((s) => {
        for (const [name, args] of calls) (s[name as keyof ReplySink] as (...a: unknown[]) => void)(...args)
      })
    }
  })

  test('an error is an error value, a later reply is not lost', () => {
    const values = new ReplyValues()
    values.error('ERR wrong')
    values.raw(shared.ONE)
    const [error, one] = values.take()
    expect(error).toBeInstanceOf(RespReplyError)
    expect((error as RespReplyError).message).toBe('ERR wrong')
    expect(one).toBe(1)
    expect(values.take()).toEqual([])
  })

  test('a bulk string is a copy of the bytes passed', () => {
    const values = new ReplyValues()
    const bytes = Buffer.from('abc')
    values.bulk(bytes)
    bytes[0] = 0x7a
    expect(values.take()).toEqual([Buffer.from('abc')])
  })
})
