import { describe, expect, it } from 'vitest'
import { isKeyword, parseDouble, parseInteger } from '../../../src/commands/kernel/args.js'

const b = (text: string): Buffer => Buffer.from(text, 'latin1')

describe('parseInteger (redis string2ll)', () => {
  it.each([
    ['0', 0],
    ['1', 1],
    ['-1', -1],
    ['1000', 1000],
    ['9007199254740991', 9007199254740991],
    ['9223372036854775807', 2 ** 63],
    ['-9223372036854775808', -(2 ** 63)],
  ])('accepts %s', (text, value) => {
    expect(parseInteger(b(text))).toBe(value)
  })

  it.each([
    '',
    '-',
    '-0',
    '01',
    '+1',
    ' 1',
    '1 ',
    '1.0',
    '1e3',
    'abc',
    '9223372036854775808',
    '-9223372036854775809',
    '10000000000000000000',
    '99999999999999999999',
    '0x10',
  ])('refuses %j', (text) => {
    expect(parseInteger(b(text))).toBeUndefined()
  })
})

describe('parseDouble (redis getDoubleFromObject)', () => {
  it.each([
    ['0.01', 0.01],
    ['1', 1],
    ['.5', 0.5],
    ['5.', 5],
    ['+0.5', 0.5],
    ['-2', -2],
    ['1e-3', 0.001],
    ['1E3', 1000],
    ['inf', Infinity],
    ['-Infinity', -Infinity],
    // glibc strtod's hexadecimal floats, rounded to nearest even; subnormal results are kept.
    ['0x0.1p0', 0.0625],
    ['0x10', 16],
    ['0X1P-3', 0.125],
    ['-0x.8', -0.5],
    ['0x1.8p1', 3],
    ['0x1p-1074', 5e-324],
    ['0x3p-1075', 1e-323],
    ['0x1.00000000000018p0', 1.0000000000000004],
    ['0x1.fffffffffffff7p1023', Number.MAX_VALUE],
    ['1e-310', 1e-310],
    ['2.5e-324', 5e-324],
    ['0e-400', 0],
    ['0.' + '0'.repeat(400), 0],
    ['1' + '0'.repeat(300) + 'e-300', 1],
  ])('accepts %s', (text, value) => {
    expect(parseDouble(b(text))).toBe(value)
  })

  // Each refused by redis-server 7.0.15's string2d too (ZADD z <text> m: "value is not a valid float").
  it.each([
    '',
    ' 1',
    '1 ',
    'abc',
    'nan',
    'NaN',
    'nan(1)',
    'infin',
    '1e400',
    '1..2',
    '.',
    '1e',
    '0x',
    '0x1p',
    '0xg',
    '1e-400',
    '2.4e-324',
    '0x1p-1075',
    '0x1p99999',
    '0x1.fffffffffffff8p1023',
    '0.' + '0'.repeat(400) + '1',
    '1,5',
  ])('refuses %j', (text) => {
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
