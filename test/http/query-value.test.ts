/** decodeQueryValue and parseOriginalTarget: the original API's item bytes, without a server. */
import { describe, expect, it } from 'vitest'
import { decodeQueryValue } from '../../src/http/query-value.js'
import { parseOriginalTarget } from '../../src/http/original-api.js'

describe('decodeQueryValue', () => {
  it('decodes %XX to bytes and + to a space, like libevent with decode_plus', () => {
    expect(decodeQueryValue('a%20b+c')).toEqual(Buffer.from('a b c'))
    expect(decodeQueryValue('caf%C3%A9')).toEqual(Buffer.from('café'))
    expect(decodeQueryValue('%2B%26%3D%25')).toEqual(Buffer.from('+&=%'))
    expect(decodeQueryValue('%ff%00')).toEqual(Buffer.from([0xff, 0x00]))
  })

  it('keeps a malformed or truncated % sequence as it is', () => {
    expect(decodeQueryValue('100%')).toEqual(Buffer.from('100%'))
    expect(decodeQueryValue('%4')).toEqual(Buffer.from('%4'))
    expect(decodeQueryValue('%zz%41')).toEqual(Buffer.from('%zzA'))
  })

  it('keeps raw bytes above 0x7f (Node hands the target over one char per byte)', () => {
    expect(decodeQueryValue('\u00e9x')).toEqual(Buffer.from([0xe9, 0x78]))
  })

  it('decodes only the range asked for', () => {
    expect(decodeQueryValue('/add=a%41b&c', 5, 10)).toEqual(Buffer.from('aAb'))
  })
})

describe('parseOriginalTarget', () => {
  it('reads /add= and /contain= with the first pair only', () => {
    expect(parseOriginalTarget('/add=x%2Fy')).toEqual({ verb: 'add', item: Buffer.from('x/y') })
    expect(parseOriginalTarget('/contain=a&add=b')).toEqual({ verb: 'contain', item: Buffer.from('a') })
    expect(parseOriginalTarget('/add=http://e.com/?q=1')).toEqual({
      verb: 'add',
      item: Buffer.from('http://e.com/?q=1'),
    })
  })

  it('calls a missing value a bad request and leaves other targets alone', () => {
    expect(parseOriginalTarget('/add=')).toBe('bad-request')
    expect(parseOriginalTarget('/contain=&x=1')).toBe('bad-request')
    expect(parseOriginalTarget('/add')).toBeUndefined()
    expect(parseOriginalTarget('/ADD=x')).toBeUndefined()
    expect(parseOriginalTarget('/healthz')).toBeUndefined()
  })
})
