import { describe, expect, it } from 'vitest'
import { isKeyword, parseDouble, parseInteger } from '../../src/commands/args.js'

const b = (text: string): Buffer => Buffer.from(text, 'latin1')

describe('parseInteger (redis string2ll)', () => {
  it.each([
    ['0', 0], ['1', 1], ['-1', -1], ['1000', 1000], ['9007199254740991', 9007199254740991],
    ['9223372036854775807', 9223372036854775807], ['-9223372036854775808', -9223372036854775808],
  ])('accepts %s', (text, value) => {
    expect(parseInteger(b(text))).toBe(value)
  })

  it.each(['', '-', '-0', '01', '+1', ' 1', '1 ', '1.0', '1e3', 'abc', '9223372036854775808',
    '-9223372036854775809', '10000000000000000000', '99999999999999999999', '0x10'])('refuses %j', (text) => {
    expect(parseInteger(b(text))).toBeUndefined()
  })
})

describe('parseDouble (redis getDoubleFromObject)', () => {
  it.each([
    ['0.01', 0.01], ['1', 1], ['.5', 0.5], ['5.', 5], ['+0.5', 0.5], ['-2', -2], ['1e-3', 0.001],
    ['1E3', 1000], ['inf', Infinity], ['-Infinity', -Infinity],
  ])('accepts %s', (text, value) => {
    expect(parseDouble(b(text))).toBe(value)
  })

  it.each(['', ' 1', '1 ', 'abc', 'nan', '1e400', '0x1', '1..2', '.'])('refuses %j', (text) => {
    expect(parseDouble(b(text))).toBeUndefined()
  })
})

describe('isKeyword', () => {
  it('matches ASCII case-insensitively and nothing else', () => {
    expect(isKeyword(b('nonscaling'), 'NONSCALING')).toBe(true)
    expect(isKeyword(b('NonScaling'), 'NONSCALING')).toBe(true)
    expect(isKeyword(b('NONSCALIN'), 'NONSCALING')).toBe(false)
    expect(isKeyword(b('NONSCALING '), 'NONSCALING')).toBe(false)
  })
})
