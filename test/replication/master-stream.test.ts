/**
 * The replica's reader of its master's stream (src/replication/master-stream.ts): commands and
 * their exact bytes, whatever the read boundaries, a large bulk over many reads, and refusals.
 */
import { describe, expect, it } from 'vitest'
import { MasterStreamError, MasterStreamReader } from '../../src/replication/master-stream.js'
import { encodeCommand } from '../helpers/resp.js'

function readAll(reader: MasterStreamReader, chunks: Buffer[]): { argv: string[]; bytes: string }[] {
  const out: { argv: string[]; bytes: string }[] = []
  for (const chunk of chunks) {
    reader.push(chunk, (command) => {
      out.push({
        argv: command.argv.toArray().map((arg) => arg.toString('latin1')),
        bytes: command.bytes.toString('latin1'),
      })
      return true
    })
  }
  return out
}

const COMMANDS = [
  ['SELECT', '0'],
  ['BF.ADD', 'k', 'item\r\nwith crlf'],
  ['ping'],
  ['BF.MADD', 'k', '', 'x'.repeat(300)],
]
const STREAM = Buffer.concat(COMMANDS.map((argv) => encodeCommand(argv)))

describe('MasterStreamReader', () => {
  it('splits the stream into commands with their exact bytes, at every read boundary', () => {
    for (let cut = 0; cut <= STREAM.length; cut++) {
      const reader = new MasterStreamReader()
      const out = readAll(reader, [STREAM.subarray(0, cut), STREAM.subarray(cut)])
      expect(out.map((command) => command.argv)).toEqual(COMMANDS)
      expect(out.map((command) => command.bytes).join('')).toBe(STREAM.toString('latin1'))
      expect(reader.bufferedBytes).toBe(0)
    }
  })

  it('reads a large command arriving a few bytes at a time, counting what it holds', () => {
    const big = encodeCommand(['BF.LOADCHUNK', 'k', '1', Buffer.alloc(200_000, 7)])
    const reader = new MasterStreamReader()
    const seen: number[] = []
    for (let at = 0; at < big.length; at += 997) {
      reader.push(big.subarray(at, at + 997), (command) => {
        seen.push(command.bytes.length, command.argv.byteLength(3))
        return true
      })
      if (seen.length === 0) expect(reader.bufferedBytes).toBe(Math.min(at + 997, big.length))
    }
    expect(seen).toEqual([big.length, 200_000])
    expect(reader.bufferedBytes).toBe(0)
  })

  it('passes an empty command (*0) on with its bytes', () => {
    expect(readAll(new MasterStreamReader(), [Buffer.from('*0\r\n')])).toEqual([{ argv: [], bytes: '*0\r\n' }])
  })

  it('stops where the callback says, and starts clean after reset', () => {
    const reader = new MasterStreamReader()
    const out: string[] = []
    reader.push(STREAM, (command) => {
      out.push(command.argv.latin1(0))
      return false
    })
    expect(out).toEqual(['SELECT'])
    reader.reset()
    expect(reader.bufferedBytes).toBe(0)
    expect(readAll(reader, [STREAM]).length).toBe(COMMANDS.length)
  })

  it('refuses what a master never sends: inline commands, non-bulk items, bad lengths, a bulk without its CRLF', () => {
    for (const bad of ['PING\r\n', '*1\r\n:1\r\n', '*-5\r\n', '*1\r\n$-1\r\n', '*1\r\n$2\r\nabXY', '*1x\r\n']) {
      expect(() => readAll(new MasterStreamReader(), [Buffer.from(bad)]), bad).toThrow(MasterStreamError)
    }
  })
})
