import { createRequire } from 'node:module'
import { describe, expect, test } from 'vitest'
import { formatDouble } from '../../src/protocol/format-double.js'
import { ReplyWriter } from '../../src/protocol/reply-writer.js'
import type { Protocol } from '../../src/protocol/reply-sink.js'
import * as shared from '../../src/protocol/shared-replies.js'
import { seededRandom } from '../helpers/seeded-random.js'

/** redis-parser is CommonJS without types: just the part these tests use. */
interface RespParser {
  execute(buffer: Buffer): void
}
type RespParserClass = new (options: {
  returnReply: (reply: unknown) => void
  returnError: (error: Error) => void
  returnFatalError?: (error: Error) => void
  returnBuffers?: boolean
}) => RespParser
const RedisParser = createRequire(import.meta.url)('redis-parser') as RespParserClass

function bytesOf(protocol: Protocol, write: (w: ReplyWriter) => void): string {
  const writer = new ReplyWriter()
  writer.protocol = protocol
  write(writer)
  return writer.take()?.toString('latin1') ?? ''
}

describe('exact bytes', () => {
  const cases: Array<[string, (w: ReplyWriter) => void, string, string]> = [
    ['simple', (w) => w.simple('OK'), '+OK\r\n', '+OK\r\n'],
    ['error', (w) => w.error('ERR not found'), '-ERR not found\r\n', '-ERR not found\r\n'],
    ['error with CR/LF', (w) => w.error('\r\nERR a\r\nb\n'), '-ERR a  b\r\n', '-ERR a  b\r\n'],
    ['error with a leading -', (w) => w.error('-WRONGTYPE x'), '-WRONGTYPE x\r\n', '-WRONGTYPE x\r\n'],
    ['integer 0', (w) => w.integer(0), ':0\r\n', ':0\r\n'],
    ['integer 7', (w) => w.integer(7), ':7\r\n', ':7\r\n'],
    ['integer -42', (w) => w.integer(-42), ':-42\r\n', ':-42\r\n'],
    ['integer 1234567890123', (w) => w.integer(1234567890123), ':1234567890123\r\n', ':1234567890123\r\n'],
    ['integer max safe', (w) => w.integer(Number.MAX_SAFE_INTEGER), ':9007199254740991\r\n', ':9007199254740991\r\n'],
    [
      'integer min safe',
      (w) => w.integer(-Number.MAX_SAFE_INTEGER),
      ':-9007199254740991\r\n',
      ':-9007199254740991\r\n',
    ],
    ['bulk string', (w) => w.bulk('hello'), '$5\r\nhello\r\n', '$5\r\nhello\r\n'],
    ['bulk utf8', (w) => w.bulk('é'), '$2\r\n\xc3\xa9\r\n', '$2\r\n\xc3\xa9\r\n'],
    ['bulk bytes', (w) => w.bulk(new Uint8Array([0, 13, 10, 255])), '$4\r\n\x00\r\n\xff\r\n', '$4\r\n\x00\r\n\xff\r\n'],
    ['bulk empty', (w) => w.bulk(''), '$0\r\n\r\n', '$0\r\n\r\n'],
    ['nullBulk', (w) => w.nullBulk(), '$-1\r\n', '_\r\n'],
    ['nullArray', (w) => w.nullArray(), '*-1\r\n', '_\r\n'],
    ['array', (w) => w.array(3), '*3\r\n', '*3\r\n'],
    ['array 0', (w) => w.array(0), '*0\r\n', '*0\r\n'],
    ['map', (w) => w.map(2), '*4\r\n', '%2\r\n'],
    ['set', (w) => w.set(5), '*5\r\n', '~5\r\n'],
    ['double', (w) => w.double(1.5), '$3\r\n1.5\r\n', ',1.5\r\n'],
    ['double 0.1', (w) => w.double(0.1), '$19\r\n0.10000000000000001\r\n', ',0.10000000000000001\r\n'],
    ['double inf', (w) => w.double(Infinity), '$3\r\ninf\r\n', ',inf\r\n'],
    ['double -inf', (w) => w.double(-Infinity), '$4\r\n-inf\r\n', ',-inf\r\n'],
    ['double nan', (w) => w.double(NaN), '$3\r\nnan\r\n', ',nan\r\n'],
    ['boolean true', (w) => w.boolean(true), ':1\r\n', '#t\r\n'],
    ['boolean false', (w) => w.boolean(false), ':0\r\n', '#f\r\n'],
    ['verbatim', (w) => w.verbatim('a\r\nb'), '$4\r\na\r\nb\r\n', '=8\r\ntxt:a\r\nb\r\n'],
    ['verbatim mkd', (w) => w.verbatim('x', 'mkd'), '$1\r\nx\r\n', '=5\r\nmkd:x\r\n'],
    ['verbatim short format', (w) => w.verbatim('x', 'md'), '$1\r\nx\r\n', '=5\r\nmd :x\r\n'],
    ['raw', (w) => w.raw(shared.OK), '+OK\r\n', '+OK\r\n'],
    ['raw, large', (w) => w.raw(Buffer.alloc(100, 0x61)), 'a'.repeat(100), 'a'.repeat(100)],
    ['integer beyond 2^53', (w) => w.integer(1e20), ':100000000000000000000\r\n', ':100000000000000000000\r\n'],
    [
      'zeroOrOne, a range',
      (w) => w.zeroOrOne(new Uint8Array([1, 1, 0, 1, 2, 0]), 1, 4),
      ':1\r\n:0\r\n:1\r\n:0\r\n',
      ':1\r\n:0\r\n:1\r\n:0\r\n',
    ],
    ['zeroOrOne, none', (w) => w.zeroOrOne(new Uint8Array([1]), 0, 0), '', ''],
  ]
  for (const [name, write, resp2, resp3] of cases) {
    test(name, () => {
      expect(bytesOf(2, write)).toBe(resp2)
      expect(bytesOf(3, write)).toBe(resp3)
    })
  }

  test('zeroOrOne past the first buffer: grown, nothing lost', () => {
    const values = Uint8Array.from({ length: 10_000 }, (_, i) => (i % 3 === 0 ? 1 : 0))
    const out = bytesOf(2, (w) => {
      w.array(values.length)
      w.zeroOrOne(values, 0, values.length)
    })
    expect(out).toBe(`*${values.length}\r\n` + Array.from(values, (v) => `:${v}\r\n`).join(''))
  })

  test('a nested reply', () => {
    const out = bytesOf(3, (w) => {
      w.map(1)
      w.bulk('k')
      w.array(2)
      w.integer(1)
      w.nullBulk()
    })
    expect(out).toBe('%1\r\n$1\r\nk\r\n*2\r\n:1\r\n_\r\n')
  })
})

describe('formatDouble is printf %.17g', () => {
  const cases: Array<[number, string]> = [
    [0, '0'],
    [-0, '-0'],
    [1, '1'],
    [-1, '-1'],
    [0.5, '0.5'],
    [100, '100'],
    [0.1, '0.10000000000000001'],
    [1 / 3, '0.33333333333333331'],
    [Math.PI, '3.1415926535897931'],
    // Expected texts below come from C printf("%.17g") (via Python's % operator).
    [0.0001, '0.0001'],
    [0.00001, '1.0000000000000001e-05'],
    [1e16, '10000000000000000'],
    [1e17, '1e+17'],
    [123456789012345680000, '1.2345678901234568e+20'],
    [1e100, '1e+100'],
    [5e-324, '4.9406564584124654e-324'],
    [Number.MAX_VALUE, '1.7976931348623157e+308'],
    [2.5e-5, '2.5000000000000001e-05'],
    [-1.5e300, '-1.5000000000000001e+300'],
    [0.01, '0.01'],
    [12345.678, '12345.678'],
    [10928588.983213553, '10928588.983213553'],
    [1.4186613525849614e134, '1.4186613525849614e+134'],
    [-7.571968556055867e-74, '-7.5719685560558675e-74'],
    [-1.4074705188261364e113, '-1.4074705188261364e+113'],
    [-3.3339745473042614e-121, '-3.3339745473042614e-121'],
    [-1.2342180766211395e-271, '-1.2342180766211395e-271'],
    [-5.126864004244935e111, '-5.1268640042449351e+111'],
    [-2.1520217579844227e32, '-2.1520217579844227e+32'],
    [0.1399601630397701, '0.1399601630397701'],
    [1.01853664031722e-244, '1.01853664031722e-244'],
    [2.9704598186234577e-115, '2.9704598186234577e-115'],
    [3.0534183338726823e150, '3.0534183338726823e+150'],
    [-2.3027782228163463e146, '-2.3027782228163463e+146'],
    [3.56409621163656e161, '3.5640962116365598e+161'],
    [6.352929017207453e-183, '6.3529290172074526e-183'],
    [0.3146575865605324, '0.31465758656053239'],
    [-1.2761724801771812e-23, '-1.2761724801771812e-23'],
    [2.0868668176225336e195, '2.0868668176225336e+195'],
    [3.66898827745704e-84, '3.6689882774570399e-84'],
    [-1.389122273370197e145, '-1.389122273370197e+145'],
    [1.7548715433165102e172, '1.7548715433165102e+172'],
    [-1039514241563211.8, '-1039514241563211.8'],
    [5.7804021771411506e-220, '5.7804021771411506e-220'],
    [-2.8497478716107576e-163, '-2.8497478716107576e-163'],
    [1.2345678901234568e-5, '1.2345678901234568e-05'],
    [0.00012345678901234567, '0.00012345678901234567'],
    [0.0012345678901234567, '0.0012345678901234567'],
    [1234567890123456.8, '1234567890123456.8'],
    [1.2345678901234566e16, '12345678901234566'],
    [1.2345678901234566e17, '1.2345678901234566e+17'],
  ]
  for (const [n, text] of cases) test(`${n} → ${text}`, () => expect(formatDouble(n)).toBe(text))
})

describe('take()', () => {
  test('undefined when empty, and after a take', () => {
    const w = new ReplyWriter()
    expect(w.take()).toBeUndefined()
    w.simple('OK')
    expect(w.pendingBytes).toBe(5)
    expect(w.take()!.toString()).toBe('+OK\r\n')
    expect(w.pendingBytes).toBe(0)
    expect(w.take()).toBeUndefined()
  })

  test('output taken is never overwritten by later writes (small and large outputs)', () => {
    const w = new ReplyWriter()
    for (const size of [10, 5000, 40_000, 200_000]) {
      w.bulk(Buffer.alloc(size, 0x61))
      const first = w.take()!
      const copy = Buffer.from(first)
      for (let i = 0; i < 20; i++) w.bulk(Buffer.alloc(size, 0x62))
      const second = w.take()!
      expect(first.equals(copy)).toBe(true)
      expect(second.length).toBe(20 * copy.length)
    }
  })

  test('the writer grows past its first buffer without losing bytes', () => {
    const w = new ReplyWriter()
    let expected = ''
    for (let i = 0; i < 10_000; i++) {
      w.integer(i)
      expected += `:${i}\r\n`
    }
    expect(w.take()!.toString()).toBe(expected)
  })
})

describe('well-formed output, decoded by redis-parser', () => {
  test('a large mixed RESP2 output decodes to the replies written', () => {
    const random = seededRandom(42)
    const w = new ReplyWriter()
    const expected: unknown[] = []
    for (let i = 0; i < 5000; i++) {
      const kind = Math.floor(random() * 9)
      const n = Math.floor((random() - 0.3) * 1e9)
      switch (kind) {
        case 0:
          w.simple(`S${i}`)
          expected.push(`S${i}`)
          break
        case 1:
          w.integer(n)
          expected.push(n)
          break
        case 2: {
          const bytes = Buffer.from(
            Array.from({ length: Math.floor(random() * 300) }, () => Math.floor(random() * 256)),
          )
          w.bulk(bytes)
          expected.push(bytes)
          break
        }
        case 3:
          w.nullBulk()
          expected.push(null)
          break
        case 4:
          w.array(3)
          w.integer(1)
          w.bulk('x')
          w.nullArray()
          expected.push([1, Buffer.from('x'), null])
          break
        case 5:
          w.map(1)
          w.bulk('k')
          w.boolean(true)
          expected.push([Buffer.from('k'), 1])
          break
        case 6:
          w.double(n / 7)
          expected.push(Buffer.from(formatDouble(n / 7)))
          break
        case 7:
          w.error(`ERR bad ${i}`)
          expected.push(`ERR bad ${i}`)
          break
        default:
          w.raw(shared.integerReply(i % 2000))
          expected.push(i % 2000)
      }
    }
    const out = w.take()!
    const replies: unknown[] = []
    const parser = new RedisParser({
      returnBuffers: true,
      returnReply: (reply) => replies.push(reply),
      returnError: (error) => replies.push(error.message),
      returnFatalError: (error) => {
        throw error
      },
    })
    // Feed in odd-sized pieces as a socket would.
    for (let i = 0; i < out.length; i += 1021) parser.execute(out.subarray(i, i + 1021))
    const normalized = replies
    expect(normalized.length).toBe(expected.length)
    for (let i = 0; i < expected.length; i++) {
      const want = expected[i]
      const got = normalized[i]
      if (typeof want === 'string' && Buffer.isBuffer(got)) expect(got.toString()).toBe(want)
      else expect(got).toEqual(want)
    }
  })
})

describe('shared replies', () => {
  test('bytes', () => {
    expect(shared.OK.toString()).toBe('+OK\r\n')
    expect(shared.PONG.toString()).toBe('+PONG\r\n')
    expect(shared.ZERO.toString()).toBe(':0\r\n')
    expect(shared.ONE.toString()).toBe(':1\r\n')
    expect(shared.EMPTY_ARRAY.toString()).toBe('*0\r\n')
    expect(shared.NULL_BULK_RESP2.toString()).toBe('$-1\r\n')
    expect(shared.NULL_ARRAY_RESP2.toString()).toBe('*-1\r\n')
    expect(shared.NULL_RESP3.toString()).toBe('_\r\n')
  })

  test('integerReply caches 0..1023 and builds the rest', () => {
    expect(shared.integerReply(5)).toBe(shared.integerReply(5))
    expect(shared.integerReply(1023).toString()).toBe(':1023\r\n')
    expect(shared.integerReply(1024).toString()).toBe(':1024\r\n')
    expect(shared.integerReply(-3).toString()).toBe(':-3\r\n')
    expect(() => shared.integerReply(1.5)).toThrow(RangeError)
  })
})

describe('integers answered later (BF.EXISTS checks of one read, commands/kernel/read-batch.ts)', () => {
  test('each placeholder gets its digit; the settle runs before a take or a truncate, once', () => {
    const writer = new ReplyWriter()
    const answers: Array<[number, boolean]> = []
    let settles = 0
    const settle = (): void => {
      settles++
      writer.settled()
      for (const [at, one] of answers) writer.answer(at, one)
    }
    writer.simple('OK')
    answers.push([writer.integerLater(settle), true])
    writer.bulk('x')
    answers.push([writer.integerLater(settle), false])
    // Enough after them that the buffer grows and moves: offsets stay right.
    writer.bulk('y'.repeat(40_000))
    answers.push([writer.integerLater(settle), true])
    expect(writer.take()!.toString('latin1')).toBe(
      `+OK\r\n:1\r\n$1\r\nx\r\n:0\r\n$40000\r\n${'y'.repeat(40_000)}\r\n:1\r\n`,
    )
    expect(settles).toBe(1)
    expect(writer.take()).toBeUndefined()
    expect(settles).toBe(1)
    answers.length = 0
    const mark = writer.pendingBytes
    answers.push([writer.integerLater(settle), true])
    writer.truncate(mark)
    expect(settles).toBe(2)
    expect(writer.take()).toBeUndefined()
  })
})
