import { describe, expect, it } from 'vitest'
import { CommandArgs } from '../../src/protocol/command-args.js'
import { RequestParser } from '../../src/protocol/request-parser.js'

/** Every command `bytes` holds, parsed with `parse` (the reused holder), copied out as strings. */
function parseAll(parser: RequestParser, chunks: readonly Buffer[]): string[][] {
  const commands: string[][] = []
  for (const chunk of chunks) {
    parser.parse(chunk, (args) => {
      const command: string[] = []
      for (let i = 0; i < args.length; i++) {
        command.push(args.bytes(i).toString('latin1', args.start(i), args.end(i)))
        expect(args.latin1(i)).toBe(command[i])
        expect(args.get(i).toString('latin1')).toBe(command[i])
        expect(args.byteLength(i)).toBe(args.get(i).length)
      }
      commands.push(command)
    })
  }
  return commands
}

describe('CommandArgs', () => {
  it('reads arguments in place, as views or as an array', () => {
    const chunk = Buffer.from('xxBF.ADDyykeyzz')
    const args = new CommandArgs()
    args.push(chunk, 2, 8)
    args.push(chunk, 10, 13)
    expect(args.length).toBe(2)
    expect(args.get(0).toString()).toBe('BF.ADD')
    expect(args.toArray().map(String)).toEqual(['BF.ADD', 'key'])
    expect([...args].map(String)).toEqual(['BF.ADD', 'key'])
    expect(args.isKeyword(0, 'BF.ADD')).toBe(true)
    expect(args.isKeyword(1, 'KEY')).toBe(true)
    expect(args.isKeyword(1, 'KEYS')).toBe(false)
    expect(args.isKeyword(1, 'KEX')).toBe(false)
    args.clear()
    expect(args.length).toBe(0)
    expect(args.toArray()).toEqual([])
  })

  it('holds arguments from separate arrays, Buffers or not', () => {
    const args = CommandArgs.of([Buffer.from('PING'), new Uint8Array([0x68, 0x69])])
    expect(args.toArray().map(String)).toEqual(['PING', 'hi'])
    expect(args.bytes(1)).toBeInstanceOf(Buffer)
  })

  it('grows past its first slots and shrinks back after a long command', () => {
    const args = new CommandArgs()
    const items = Array.from({ length: 3000 }, (_, i) => Buffer.from(String(i)))
    args.assign(items)
    expect(args.length).toBe(3000)
    expect(args.latin1(2999)).toBe('2999')
    args.clear()
    args.assign([Buffer.from('a')])
    expect(args.toArray().map(String)).toEqual(['a'])
  })
})

describe('RequestParser.parse', () => {
  const bytes = Buffer.from(
    '*3\r\n$6\r\nBF.ADD\r\n$3\r\nkey\r\n$5\r\nitem1\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\nPING x\r\n',
  )
  const expected = [
    ['BF.ADD', 'key', 'item1'],
    ['ECHO', 'hi'],
    ['PING', 'x'],
  ]

  it('hands every command over in one reused holder', () => {
    const parser = new RequestParser()
    const holders = new Set<CommandArgs>()
    parser.parse(bytes, (args) => void holders.add(args))
    expect(holders.size).toBe(1)
    expect(parseAll(new RequestParser(), [bytes])).toEqual(expected)
  })

  it('gives the same arguments at every split point', () => {
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(parseAll(new RequestParser(), [bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(expected)
    }
  })

  it('counts a command in progress, not a delivered one, as buffered', () => {
    const parser = new RequestParser()
    let during = -1
    parser.parse(Buffer.from('*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n*2\r\n$4\r\nECHO\r\n'), () => {
      during = parser.bufferedBytes
    })
    expect(during).toBe(0)
    expect(parser.bufferedBytes).toBe(4)
  })
})
