import { describe, expect, it } from 'vitest'
import { isFilterError, NON_SCALING_FULL, TOO_LARGE } from '../../src/core/filter-error.js'

describe('FilterError', () => {
  it('recognises the two codes and nothing else', () => {
    expect(isFilterError(NON_SCALING_FULL)).toBe(true)
    expect(isFilterError(TOO_LARGE)).toBe(true)
    expect(isFilterError({ code: 'non-scaling-full' })).toBe(true)
    for (const x of [0, 1, null, undefined, 'too-large', {}, { code: 'max-layers' }, { code: 1 }]) {
      expect(isFilterError(x)).toBe(false)
    }
  })

  it('shares frozen instances', () => {
    expect(Object.isFrozen(NON_SCALING_FULL)).toBe(true)
    expect(NON_SCALING_FULL.code).toBe('non-scaling-full')
    expect(TOO_LARGE.code).toBe('too-large')
  })
})
