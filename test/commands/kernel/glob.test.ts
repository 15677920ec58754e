import { describe, expect, it } from 'vitest'
import { globMatch } from '../../../src/commands/kernel/glob.js'

const b = (text: string): Buffer => Buffer.from(text, 'latin1')

describe('globMatch (redis 7.0.15 stringmatchlen)', () => {
  it.each([
    ['*', 'abc', true],
    ['a*c', 'abc', true],
    ['a?c', 'abc', true],
    ['a[bx]c', 'abc', true],
    ['a[^b]c', 'abc', false],
    ['a[a-c]c', 'abc', true],
    ['a\\*c', 'a*c', true],
    ['a*d', 'abc', false],
    // A class left open at the end of the pattern: redis steps back and ends the pattern there.
    ['a[', 'a[', false],
    ['a[', 'a', false],
    ['a[b', 'ab', true],
    ['a[b', 'ac', false],
  ])('%j against %j is %s', (pattern, subject, expected) => {
    expect(globMatch(b(pattern), b(subject))).toBe(expected)
  })

  it('a pattern of many stars that cannot match answers at once (CVE-2022-36021), not in exponential time', () => {
    // Without redis's skipLongerMatches this tries every way to split 200 bytes among 30 stars.
    const pattern = b(`${'*a'.repeat(30)}*b`)
    expect(globMatch(pattern, b('a'.repeat(200)))).toBe(false)
    expect(globMatch(pattern, b(`${'a'.repeat(200)}b`))).toBe(true)
    expect(globMatch(b('*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b'), b('a'.repeat(100)), true)).toBe(false)
  })
})
