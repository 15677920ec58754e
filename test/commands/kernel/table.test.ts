import { describe, expect, it } from 'vitest'
import { defineCommand, defineTable, helpLines, rowOf } from '../../../src/commands/kernel/table.js'
import { CommandArgs } from '../../../src/protocol/command-args.js'

const noop = (): void => {}
const table = () =>
  defineTable([
    defineCommand({ name: 'BF.ADD', arity: 3, flags: ['write'], handler: noop }),
    defineCommand({ name: 'PING', arity: -1, flags: [], handler: noop }),
  ])

describe('CommandTable.lookup', () => {
  it('finds a command by the bytes sent, in any letter case, repeated or alternating', () => {
    const commands = table()
    const add = commands.get('bf.add')
    const ping = commands.get('ping')
    for (const spelling of ['BF.ADD', 'bf.add', 'Bf.AdD', 'BF.ADD', 'bf.add']) {
      expect(commands.lookup(Buffer.from(spelling))).toBe(add)
      expect(commands.lookup(Buffer.from('ping'))).toBe(ping)
    }
    expect(commands.lookup(Buffer.from('xxPINGxx').subarray(2, 6))).toBe(ping)
    expect(commands.lookup(Buffer.from('BF.AD'))).toBeUndefined()
    expect(commands.lookup(Buffer.from('BF.ADDX'))).toBeUndefined()
    expect(commands.lookup(Buffer.alloc(0))).toBeUndefined()
  })

  it('forgets spellings on rename: the old name no longer answers, the new one does', () => {
    const commands = table()
    expect(commands.lookup(Buffer.from('PING'))).toBeDefined()
    expect(commands.lookup(Buffer.from('bf.add'))).toBeDefined()
    commands.rename('ping', 'PONG2')
    expect(commands.lookup(Buffer.from('PING'))).toBeUndefined()
    expect(commands.lookup(Buffer.from('pong2'))?.spec.name).toBe('PING')
    commands.rename('bf.add', '')
    expect(commands.lookup(Buffer.from('bf.add'))).toBeUndefined()
  })

  it('is not fooled by a caller reusing the memory of a name it was given', () => {
    const commands = table()
    const name = Buffer.from('PING')
    expect(commands.lookup(name)).toBeDefined()
    name.write('PONG')
    expect(commands.lookup(name)).toBeUndefined()
  })
})

describe('subcommand rows', () => {
  const container = (subcommands: { name: string; arity: number }[]) =>
    defineTable([
      {
        name: 'BOX',
        arity: -2,
        flags: [],
        keys: [0, 0, 0],
        group: 'server',
        summary: '',
        since: '1.0.0',
        help: ['(self)'],
        handler: noop,
        subcommands: subcommands.map((sub) => ({ ...sub, help: [sub.name], handler: noop })),
      },
    ])
  const args = (...words: string[]) => new CommandArgs().assign(words.map((word) => Buffer.from(word)))

  it('picks the row by the second argument in any case; the command alone is its own row', () => {
    const table = container([
      { name: 'GET', arity: -3 },
      { name: 'NO-TOUCH', arity: 3 },
    ])
    const box = table.get('box')!
    expect(rowOf(box, args('BOX'))).toBe(box.row)
    expect(rowOf(box, args('box', 'get', 'x'))?.fullName).toBe('box|get')
    expect(rowOf(box, args('BOX', 'No-Touch'))?.spec.arity).toBe(3)
    expect(rowOf(box, args('BOX', 'nope'))).toBeUndefined()
    expect(helpLines(box.spec)).toEqual([
      'BOX <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
      '(self)',
      'GET',
      'NO-TOUCH',
    ])
  })

  it('a renamed container keeps its rows and their names', () => {
    const table = container([{ name: 'GET', arity: -3 }])
    table.rename('box', 'crate')
    expect(rowOf(table.get('crate')!, args('crate', 'GET'))?.fullName).toBe('box|get')
  })

  it('refuses a duplicate subcommand or a bad arity at startup', () => {
    expect(() =>
      container([
        { name: 'GET', arity: -3 },
        { name: 'get', arity: 2 },
      ]),
    ).toThrow(/duplicate subcommand/)
    expect(() => container([{ name: 'GET', arity: 0 }])).toThrow(/bad arity for box\|get/)
  })
})
