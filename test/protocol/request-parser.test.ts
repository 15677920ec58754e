import { describe, expect, test } from 'vitest'
import { DEFAULT_PARSER_LIMITS, ProtocolError, RequestParser } from '../../src/protocol/request-parser.js'
import { cutAt } from '../helpers/cut-bytes.js'
import { asStrings, byteByByte, feed, multibulk } from './resp-bytes.js'

const CRLF = '\r\n'

describe('multibulk requests', () => {
  test('one command, whole', () => {
    expect(asStrings(feed([multibulk('BF.ADD', 'key', 'item')]).commands)).toEqual([['BF.ADD', 'key', 'item']])
  })

  test('items are zero-copy views of the chunk when whole inside it', () => {
    const chunk = multibulk('SET', 'k', 'v')
    const parser = new RequestParser()
    let argv: Buffer[] = []
    parser.execute(chunk, (a) => {
      argv = a
    })
    expect(argv).toHaveLength(3)
    for (const item of argv) expect(item.buffer).toBe(chunk.buffer)
    expect(argv[2]!.byteOffset).toBe(chunk.byteOffset + chunk.length - 3)
  })

  test('one read buffer reused for every chunk: commands split anywhere still come out whole', () => {
    // What the server does (accept-connections.ts): each read lands in the same memory, and the
    // parser must copy whatever it keeps past parse(). Garbage overwrites the chunk after each call.
    const big = 'x'.repeat(40_000) // above the 32 KiB big-bulk threshold
    const input = Buffer.concat([
      multibulk('BF.MADD', 'key', 'a', '', 'line\r\nbreak', big, 'z'),
      Buffer.from('PING inline\r\n'),
      multibulk('BF.ADD', 'key', big.slice(0, 1000)),
    ])
    const expected = [
      ['BF.MADD', 'key', 'a', '', 'line\r\nbreak', big, 'z'],
      ['PING', 'inline'],
      ['BF.ADD', 'key', big.slice(0, 1000)],
    ]
    const shared = Buffer.alloc(input.length)
    for (const step of [1, 7, 100, 4096, 50_000]) {
      const parser = new RequestParser()
      const got: string[][] = []
      for (let at = 0; at < input.length; at += step) {
        const piece = input.subarray(at, Math.min(at + step, input.length))
        const chunk = shared.subarray(0, piece.length)
        piece.copy(chunk)
        parser.parse(chunk, (args) => void got.push(args.toArray().map((item) => item.toString('latin1'))))
        shared.fill(0x3f)
      }
      expect(got, `step ${step}`).toEqual(expected)
    }
  })

  test('a read given as the whole buffer and an end: nothing past the end is looked at', () => {
    // What accept-connections.ts does: the shared buffer and a byte count, no view per read. Past
    // the end lie whole commands and line ends, which the parser must not take for the read's.
    const big = 'x'.repeat(40_000)
    const input = Buffer.concat([
      multibulk('BF.MADD', 'key', 'a', '', 'line\r\nbreak', big, 'z'),
      Buffer.from('PING inline\r\n'),
      multibulk('BF.ADD', 'key', big.slice(0, 1000)),
      Buffer.from('ECHO "quoted"\r\n'),
    ])
    const expected = [
      ['BF.MADD', 'key', 'a', '', 'line\r\nbreak', big, 'z'],
      ['PING', 'inline'],
      ['BF.ADD', 'key', big.slice(0, 1000)],
      ['ECHO', 'quoted'],
    ]
    const decoy = multibulk('DECOY')
    const decoys = Buffer.alloc(input.length + 64 * 1024)
    for (let p = 0; p < decoys.length; p += decoy.length) decoy.copy(decoys, p)
    const shared = Buffer.from(decoys)
    for (const step of [1, 3, 7, 100, 4096, 50_000]) {
      const parser = new RequestParser()
      const got: string[][] = []
      let written = 0
      for (let at = 0; at < input.length; at += step) {
        // Before each read the whole buffer holds decoys: only the bytes the last read wrote differ.
        decoys.copy(shared, 0, 0, written)
        const length = input.copy(shared, 0, at, Math.min(at + step, input.length))
        written = length
        parser.parse(shared, (args) => void got.push(args.toArray().map((item) => item.toString('latin1'))), length)
      }
      expect(got, `step ${step}`).toEqual(expected)
    }
  })

  test('an empty bulk and a zero-length argv item', () => {
    expect(asStrings(feed([multibulk('SET', 'k', '')]).commands)).toEqual([['SET', 'k', '']])
  })

  test('*0 and *-1 deliver no command and do not disturb the next one', () => {
    const bytes = Buffer.from(`*0${CRLF}*-1${CRLF}*-5${CRLF}` + multibulk('PING').toString())
    expect(asStrings(feed([bytes]).commands)).toEqual([['PING']])
  })

  test('redis skips the byte after \\r and the two after a payload without checking them', () => {
    const bytes = Buffer.from('*1\rX$4\r\nPINGab')
    expect(asStrings(feed([bytes]).commands)).toEqual([['PING']])
  })

  test('1,000 pipelined commands in one chunk, in order', () => {
    const commands = Array.from({ length: 1000 }, (_, i) => ['BF.ADD', `key${i % 7}`, `item-${i}`])
    const bytes = Buffer.concat(commands.map((c) => multibulk(...c)))
    const outcome = feed([bytes])
    expect(outcome.error).toBeUndefined()
    expect(asStrings(outcome.commands)).toEqual(commands)
  })

  test('binary items: all 256 byte values and embedded CRLF', () => {
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i))
    const tricky = Buffer.from('\r\n*3\r\n$1\r\n\r\n\0')
    const bytes = Buffer.concat([multibulk('SET', all, tricky), multibulk(tricky)])
    for (const chunks of [[bytes], byteByByte(bytes)]) {
      const { commands, error } = feed(chunks)
      expect(error).toBeUndefined()
      expect(commands).toHaveLength(2)
      expect(commands[0]![1]!.equals(all)).toBe(true)
      expect(commands[0]![2]!.equals(tricky)).toBe(true)
      expect(commands[1]![0]!.equals(tricky)).toBe(true)
    }
  })

  test('every split point of every command gives the same argv as one chunk', () => {
    const samples = [
      multibulk('BF.ADD', 'key', 'item'),
      multibulk('X', ''),
      multibulk('BF.MADD', 'k', 'a'.repeat(40), Buffer.from([0, 13, 10, 255])),
      Buffer.from(`*0${CRLF}*-1${CRLF}`),
      Buffer.from(`*1${CRLF}$12${CRLF}hello\r\nworld${CRLF}`),
      Buffer.from(`PING${CRLF}`),
      Buffer.from(`ECHO "a b\\x41" 'c\\'d'\n`),
      Buffer.from(`${CRLF}\n  \t${CRLF}`),
    ]
    const stream = Buffer.concat(samples)
    const expected = feed([stream])
    expect(expected.error).toBeUndefined()
    expect(expected.commands.length).toBe(6)
    for (let cut = 0; cut <= stream.length; cut++) {
      expect(feed(cutAt(stream, [cut])), `cut at ${cut}`).toEqual(expected)
    }
    for (let a = 0; a <= stream.length; a += 3) {
      for (let b = a; b <= stream.length; b += 5) {
        expect(feed(cutAt(stream, [a, b])), `cuts at ${a}, ${b}`).toEqual(expected)
      }
    }
    expect(feed(byteByByte(stream))).toEqual(expected)
  })

  test('empty chunks anywhere change nothing', () => {
    const bytes = multibulk('BF.ADD', 'k', 'v')
    const chunks = byteByByte(bytes).flatMap((c) => [Buffer.alloc(0), c])
    expect(asStrings(feed(chunks).commands)).toEqual([['BF.ADD', 'k', 'v']])
  })

  test('a big bulk split across chunks is assembled once and exactly', () => {
    const big = Buffer.alloc(100_000)
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff
    const bytes = multibulk('SET', 'k', big)
    const chunks: Buffer[] = []
    for (let i = 0; i < bytes.length; i += 4093) chunks.push(bytes.subarray(i, i + 4093))
    const { commands, error } = feed(chunks)
    expect(error).toBeUndefined()
    expect(commands[0]![2]!.equals(big)).toBe(true)
  })

  test('a big bulk cut anywhere around its header and trailing CRLF', () => {
    const big = Buffer.alloc(40_000, 0x7a)
    const bytes = Buffer.concat([multibulk('SET', 'k', big), multibulk('PING')])
    const expected = feed([bytes])
    expect(expected.commands).toHaveLength(2)
    const start = bytes.indexOf('$40000')
    const end = start + 8 + big.length
    for (const region of [
      [start - 2, start + 10],
      [end - 4, end + 6],
    ] as const) {
      for (let a = region[0]; a <= region[1]; a++) {
        for (let b = a; b <= region[1]; b++) {
          const { commands, error } = feed(cutAt(bytes, [a, b]))
          expect(error, `cuts ${a}, ${b}`).toBeUndefined()
          // Buffer.equals rather than toEqual: a deep compare of 40 KB per cut is slow.
          expect(commands.map((argv) => argv.map((item) => item.length))).toEqual([[3, 1, 40_000], [4]])
          expect(commands.map((argv, i) => Buffer.concat(argv).equals(Buffer.concat(expected.commands[i]!)))).toEqual([
            true,
            true,
          ])
        }
      }
    }
  })

  test('a command split across chunks stays intact when the caller keeps earlier argv', () => {
    const parser = new RequestParser()
    const seen: Buffer[][] = []
    const bytes = Buffer.concat([multibulk('A', 'x'.repeat(10)), multibulk('B', 'y'.repeat(10))])
    for (const chunk of cutAt(bytes, [7, 20, 33])) parser.execute(chunk, (argv) => void seen.push(argv))
    expect(asStrings(seen)).toEqual([
      ['A', 'x'.repeat(10)],
      ['B', 'y'.repeat(10)],
    ])
  })
})

describe('inline requests', () => {
  const cases: Array<[string, string[][]]> = [
    ['PING\r\n', [['PING']]],
    ['PING\n', [['PING']]],
    ['  set   k\tv  \r\n', [['set', 'k', 'v']]],
    ['\r\n\n   \r\n', []],
    ['ECHO "hello world"\r\n', [['ECHO', 'hello world']]],
    ['ECHO "a\\n\\r\\t\\b\\a\\\\\\"z"\n', [['ECHO', 'a\n\r\t\b\x07\\"z']]],
    ['ECHO "\\x41\\x4a\\x4A\\xzz"\n', [['ECHO', 'AJJxzz']]],
    ["ECHO 'it\\'s' 'a\\nb'\n", [['ECHO', "it's", 'a\\nb']]],
    ['ECHO "" \'\'\n', [['ECHO', '', '']]],
    ['GET k\0ignored\r\n', [['GET', 'k']]],
    ['A\x0bB\n', [['A\x0bB']]],
    ['PING\r\r\n', [['PING']]],
  ]
  for (const [line, expected] of cases) {
    test(JSON.stringify(line), () => {
      const bytes = Buffer.from(line, 'latin1')
      expect(asStrings(feed([bytes]).commands)).toEqual(expected)
      expect(asStrings(feed(byteByByte(bytes)).commands)).toEqual(expected)
    })
  }

  test('a closing quote followed by a non-blank is unbalanced', () => {
    expect(feed([Buffer.from('ECHO "a"b\r\n')]).error?.message).toBe('Protocol error: unbalanced quotes in request')
    expect(feed([Buffer.from("ECHO 'a'b\r\n")]).error?.message).toBe('Protocol error: unbalanced quotes in request')
  })

  test('a quote may open inside a token', () => {
    expect(asStrings(feed([Buffer.from('ECHO a"b c"\n')]).commands)).toEqual([['ECHO', 'ab c']])
  })

  test('inline and multibulk mix in one stream', () => {
    const bytes = Buffer.concat([Buffer.from('PING\r\n'), multibulk('BF.ADD', 'k', 'i'), Buffer.from('QUIT\n')])
    expect(asStrings(feed([bytes]).commands)).toEqual([['PING'], ['BF.ADD', 'k', 'i'], ['QUIT']])
  })
})

describe('protocol errors: exact redis text, earlier commands delivered', () => {
  const ping = multibulk('PING').toString('latin1')
  const cases: Array<[string, string]> = [
    ['*x\r\n', 'Protocol error: invalid multibulk length'],
    ['*\r\n', 'Protocol error: invalid multibulk length'],
    ['*01\r\n', 'Protocol error: invalid multibulk length'],
    ['*+1\r\n', 'Protocol error: invalid multibulk length'],
    ['*-0\r\n', 'Protocol error: invalid multibulk length'],
    ['*1 \r\n', 'Protocol error: invalid multibulk length'],
    ['*1048577\r\n', 'Protocol error: invalid multibulk length'],
    ['*-9223372036854775809\r\n', 'Protocol error: invalid multibulk length'],
    ['*1\r\n+PING\r\n', "Protocol error: expected '$', got '+'"],
    ['*2\r\n$4\r\nECHO\r\n:1\r\n', "Protocol error: expected '$', got ':'"],
    ['*1\r\n$-1\r\n', 'Protocol error: invalid bulk length'],
    ['*1\r\n$x\r\n', 'Protocol error: invalid bulk length'],
    ['*1\r\n$\r\n', 'Protocol error: invalid bulk length'],
    ['*1\r\n$04\r\nPING\r\n', 'Protocol error: invalid bulk length'],
    ['*1\r\n$536870913\r\n', 'Protocol error: invalid bulk length'],
    ['ECHO "abc\r\n', 'Protocol error: unbalanced quotes in request'],
    ["ECHO 'abc\r\n", 'Protocol error: unbalanced quotes in request'],
  ]
  for (const [bad, message] of cases) {
    test(`${JSON.stringify(bad)} → ${message}`, () => {
      const bytes = Buffer.from(ping + bad + ping, 'latin1')
      for (const chunks of [[bytes], byteByByte(bytes)]) {
        const { commands, error } = feed(chunks)
        expect(error).toBeInstanceOf(ProtocolError)
        expect(error!.message).toBe(message)
        expect(asStrings(commands)).toEqual([['PING']])
      }
    })
  }

  test('*-9223372036854775808 is LLONG_MIN: a valid (ignored) count, as string2ll has it', () => {
    expect(asStrings(feed([Buffer.from('*-9223372036854775808\r\n' + ping)]).commands)).toEqual([['PING']])
  })

  test('expected $ is judged only once the line is complete', () => {
    const parser = new RequestParser()
    parser.execute(Buffer.from('*1\r\nX'), () => {})
    expect(() => parser.execute(Buffer.from('\r\n'), () => {})).toThrow("Protocol error: expected '$', got 'X'")
  })

  test('a parser that threw ignores all later input', () => {
    const parser = new RequestParser()
    expect(() => parser.execute(Buffer.from('*x\r\n'), () => {})).toThrow(ProtocolError)
    const seen: Buffer[][] = []
    parser.execute(multibulk('PING'), (argv) => void seen.push(argv))
    expect(seen).toEqual([])
  })

  test('too big mbulk count string: 64 KiB without \\r, checked as redis does (strictly more)', () => {
    const limit = DEFAULT_PARSER_LIMITS.maxInlineBytes
    const parser = new RequestParser()
    parser.execute(Buffer.from('*' + '1'.repeat(limit - 1)), () => {})
    expect(parser.bufferedBytes).toBe(limit)
    expect(() => parser.execute(Buffer.from('1'), () => {})).toThrow('Protocol error: too big mbulk count string')
    expect(feed([Buffer.from(ping + '*' + '1'.repeat(limit))])).toMatchObject({
      commands: [[Buffer.from('PING')]],
      error: { message: 'Protocol error: too big mbulk count string' },
    })
  })

  test('too big bulk count string, and it is checked before the $ prefix', () => {
    const limit = DEFAULT_PARSER_LIMITS.maxInlineBytes
    const parser = new RequestParser()
    parser.execute(Buffer.from(`*2\r\n$4\r\nECHO\r\n$${'1'.repeat(limit - 1)}`), () => {})
    expect(() => parser.execute(Buffer.from('1'), () => {})).toThrow('Protocol error: too big bulk count string')
    expect(feed([Buffer.from(`*1\r\n${'X'.repeat(limit + 1)}`)]).error?.message).toBe(
      'Protocol error: too big bulk count string',
    )
  })

  test('too big inline request', () => {
    const limit = DEFAULT_PARSER_LIMITS.maxInlineBytes
    const ok = new RequestParser()
    ok.execute(Buffer.from('x'.repeat(limit)), () => {})
    const { commands, error } = feed([Buffer.from(ping + 'x'.repeat(limit + 1))])
    expect(asStrings(commands)).toEqual([['PING']])
    expect(error?.message).toBe('Protocol error: too big inline request')
    // A long line that arrives whole with its newline is fine, as in redis.
    expect(feed([Buffer.from('ECHO ' + 'y'.repeat(limit) + '\n')]).commands[0]![1]!.length).toBe(limit)
  })

  test('a count line ending in \\r waits for one more byte without a size check', () => {
    const parser = new RequestParser({ maxInlineBytes: 4 })
    parser.execute(Buffer.from('*1'), () => {})
    parser.execute(Buffer.from('\r'), () => {})
    const seen: string[][] = []
    parser.execute(Buffer.from('\n$4\r\nPING\r\n'), (argv) => void seen.push(argv.map(String)))
    expect(seen).toEqual([['PING']])
  })
})

describe('limits', () => {
  test('a $ header over maxBulkBytes is refused before any payload arrives', () => {
    const parser = new RequestParser({ maxBulkBytes: 10 })
    const seen: string[][] = []
    parser.execute(Buffer.from('*1\r\n$10\r\n0123456789\r\n'), (argv) => void seen.push(argv.map(String)))
    expect(seen).toEqual([['0123456789']])
    expect(() => parser.execute(Buffer.from('*1\r\n$11\r\n'), () => {})).toThrow('Protocol error: invalid bulk length')
  })

  test('a * header over maxArrayLength is refused before any item arrives', () => {
    const parser = new RequestParser({ maxArrayLength: 3 })
    parser.execute(Buffer.from('*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n'), () => {})
    expect(() => parser.execute(Buffer.from('*4\r\n'), () => {})).toThrow('Protocol error: invalid multibulk length')
  })

  test('the default limits are redis’s', () => {
    expect(DEFAULT_PARSER_LIMITS).toEqual({
      maxBulkBytes: 512 * 1024 * 1024,
      maxArrayLength: 1024 * 1024,
      maxInlineBytes: 65536,
    })
    expect(feed([Buffer.from('*1048576\r\n')]).error).toBeUndefined()
    expect(feed([Buffer.from('*1\r\n$536870912\r\n')]).error).toBeUndefined()
  })

  test('a huge announced bulk is not allocated up front', () => {
    const parser = new RequestParser()
    const before = process.memoryUsage().arrayBuffers
    parser.execute(Buffer.from('*1\r\n$536870912\r\nabc'), () => {})
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * 1024 * 1024)
    expect(parser.bufferedBytes).toBe(3)
  })

  test('small inline limit', () => {
    expect(feed([Buffer.from('PING PONG')], { maxInlineBytes: 8 }).error?.message).toBe(
      'Protocol error: too big inline request',
    )
    expect(feed([Buffer.from('PING PON')], { maxInlineBytes: 8 }).error).toBeUndefined()
  })

  test('bufferedBytes counts the incomplete command, items included', () => {
    const parser = new RequestParser()
    parser.execute(Buffer.from('*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nab'), () => {})
    expect(parser.bufferedBytes).toBe(3 + 1 + 2)
    parser.execute(Buffer.from('cde\r\n'), () => {})
    expect(parser.bufferedBytes).toBe(0)
  })

  test('invalid limits are refused', () => {
    expect(() => new RequestParser({ maxBulkBytes: -1 })).toThrow(RangeError)
    expect(() => new RequestParser({ maxArrayLength: 1.5 })).toThrow(RangeError)
  })
})

describe('stopping', () => {
  test('onCommand returning false stops parsing and discards the rest', () => {
    const parser = new RequestParser()
    const seen: string[][] = []
    const bytes = Buffer.concat([multibulk('PING'), multibulk('QUIT'), multibulk('PING'), Buffer.from('*x\r\n')])
    parser.execute(bytes, (argv) => {
      seen.push(argv.map(String))
      return argv[0]!.toString() !== 'QUIT'
    })
    parser.execute(multibulk('PING'), (argv) => void seen.push(argv.map(String)))
    expect(seen).toEqual([['PING'], ['QUIT']])
  })

  test('stopping works for inline commands and for commands completed across chunks', () => {
    for (const bytes of [Buffer.from('QUIT\r\nPING\r\n'), Buffer.concat([multibulk('QUIT'), multibulk('PING')])]) {
      for (const chunks of [[bytes], byteByByte(bytes)]) {
        const parser = new RequestParser()
        const seen: string[] = []
        for (const chunk of chunks) parser.execute(chunk, (argv) => (seen.push(String(argv[0])), false))
        expect(seen).toEqual(['QUIT'])
      }
    }
  })

  test('an exception from onCommand propagates and closes the parser', () => {
    const parser = new RequestParser()
    expect(() =>
      parser.execute(multibulk('PING'), () => {
        throw new Error('boom')
      }),
    ).toThrow('boom')
    const seen: Buffer[][] = []
    parser.execute(multibulk('PING'), (argv) => void seen.push(argv))
    expect(seen).toEqual([])
  })
})
