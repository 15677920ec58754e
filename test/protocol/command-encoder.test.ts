/**
 * The client's command encoder: the exact bytes of a multibulk, written in place from CommandArgs
 * (the log's and the replication stream's path) or from values, large arguments and arguments
 * given in pieces not copied.
 */
import { describe, expect, it } from 'vitest'
import { CommandArgs } from '../../src/protocol/command-args.js'
import { RequestParser } from '../../src/protocol/request-parser.js'
import {
  commandSize,
  encodeCommand,
  encodeCommandPieces,
  writeCommand,
  type CommandArg,
} from '../../src/protocol/command-encoder.js'
import { seededRandom } from '../helpers/seeded-random.js'

/** The multibulk written the obvious way. */
function naive(argv: readonly (string | Uint8Array)[]): Buffer {
  return Buffer.concat([
    Buffer.from(`*${argv.length}\r\n`),
    ...argv.flatMap((arg) => {
      const bytes = typeof arg === 'string' ? Buffer.from(arg) : Buffer.from(arg)
      return [Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n')]
    }),
  ])
}

describe('encodeCommand', () => {
  it('writes strings as UTF-8, numbers in decimal, bytes as they are', () => {
    expect(encodeCommand(['SET', 'k', 12]).toString('latin1')).toBe('*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\n12\r\n')
    expect(encodeCommand(['é', Buffer.from([0, 13, 10])]).equals(naive(['é', Buffer.from([0, 13, 10])]))).toBe(true)
    expect(encodeCommand(['PING']).toString()).toBe('*1\r\n$4\r\nPING\r\n')
    expect(encodeCommand(['ECHO', '']).toString()).toBe('*2\r\n$4\r\nECHO\r\n$0\r\n\r\n')
  })

  it('encodes CommandArgs as the same bytes, in place at an offset', () => {
    const argv = [Buffer.from('BF.ADD'), Buffer.from('k'), Buffer.alloc(300, 9), Buffer.from([0, 13, 10])]
    const args = CommandArgs.of(argv)
    expect(encodeCommand(args).equals(naive(argv))).toBe(true)
    expect(commandSize(args)).toBe(naive(argv).length)
    const out = Buffer.alloc(7 + commandSize(args) + 3, 0xee)
    expect(writeCommand(args, out, 7)).toBe(7 + commandSize(args))
    expect(out.subarray(7, 7 + commandSize(args)).equals(naive(argv))).toBe(true)
    expect([...out.subarray(0, 7), ...out.subarray(out.length - 3)].every((byte) => byte === 0xee)).toBe(true)
  })

  it('round-trips through the request parser', () => {
    const random = seededRandom(11)
    const parser = new RequestParser()
    for (let round = 0; round < 200; round++) {
      const argv = Array.from({ length: 1 + Math.floor(random() * 8) }, () =>
        Buffer.from(Array.from({ length: Math.floor(random() * 40) }, () => Math.floor(random() * 256))),
      )
      const parsed: Buffer[][] = []
      parser.execute(encodeCommand(argv), (args) => {
        parsed.push(args.map((arg) => Buffer.from(arg)))
      })
      expect(parsed).toEqual([argv])
    }
  })
})

describe('encodeCommandPieces', () => {
  it('sends a large argument as its own buffer, not copied', () => {
    const big = Buffer.alloc(100_000, 1)
    const pieces = encodeCommandPieces(['X', big])
    expect(pieces.some((piece) => piece.buffer === big.buffer && piece.length === big.length)).toBe(true)
    expect(Buffer.concat(pieces).equals(naive(['X', big]))).toBe(true)
  })

  it('writes an argument given in pieces as one bulk string, its pieces as they are', () => {
    const parts = [Buffer.from('ab'), Buffer.alloc(0), Buffer.from('\r\nc')]
    const pieces = encodeCommandPieces(['BFS.RESTORE-PART', 'k', parts, 'ABSTTL'])
    expect(Buffer.concat(pieces).toString('latin1')).toBe(
      '*4\r\n$16\r\nBFS.RESTORE-PART\r\n$1\r\nk\r\n$5\r\nab\r\nc\r\n$6\r\nABSTTL\r\n',
    )
    expect(pieces).toContain(parts[0])
    expect(pieces).toContain(parts[2])
  })

  it('encodes any mix of small, large, text and binary arguments as the plain multibulk', () => {
    const random = seededRandom(7)
    const next = (n: number): number => Math.floor(random() * n)
    for (let round = 0; round < 200; round++) {
      const argv: CommandArg[] = Array.from({ length: 1 + next(6) }, () =>
        next(3) === 0
          ? 'é'.repeat(next(40))
          : Buffer.alloc(next(4) === 0 ? 16_384 + next(40_000) : next(100), next(256)),
      )
      const plain = naive(argv as (string | Buffer)[])
      expect(Buffer.concat(encodeCommandPieces(argv)).equals(plain)).toBe(true)
      expect(encodeCommand(argv).equals(plain)).toBe(true)
    }
  })
})
