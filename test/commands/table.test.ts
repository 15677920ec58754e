import { describe, expect, it } from 'vitest'
import { defineCommand, defineTable } from '../../src/commands/table.js'

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
