/** save-schedule: redis.conf `save` rules and serverCron's decision, with no clock and no disk. */
import { describe, expect, it } from 'vitest'
import { parseSaveRules, SAVE_RETRY_DELAY_MS, shouldSave } from '../../src/store/save-schedule.js'

describe('parseSaveRules', () => {
  it('reads redis defaults as pairs', () => {
    expect(parseSaveRules('3600 1 300 100 60 10000')).toEqual([
      { seconds: 3600, changes: 1 },
      { seconds: 300, changes: 100 },
      { seconds: 60, changes: 10000 },
    ])
  })

  it('reads "" as no rules', () => {
    expect(parseSaveRules('')).toEqual([])
    expect(parseSaveRules('   ')).toEqual([])
  })

  it('refuses an odd count and non-numbers', () => {
    expect(() => parseSaveRules('60')).toThrow(RangeError)
    expect(() => parseSaveRules('60 x')).toThrow(/whole numbers/)
    expect(() => parseSaveRules('-1 5')).toThrow(RangeError)
  })
})

describe('shouldSave', () => {
  const rules = parseSaveRules('3600 1 300 100 60 10000')
  const t0 = 1_700_000_000_000

  it('fires when a rule has enough changes and more than its seconds have passed', () => {
    expect(shouldSave(rules, { nowMs: t0 + 3600_001, lastSaveMs: t0, dirty: 1 })).toBe(true)
    expect(shouldSave(rules, { nowMs: t0 + 300_001, lastSaveMs: t0, dirty: 100 })).toBe(true)
    expect(shouldSave(rules, { nowMs: t0 + 60_001, lastSaveMs: t0, dirty: 10_000 })).toBe(true)
  })

  it('does not fire at exactly the rule seconds (redis: elapsed > seconds), nor with too few changes', () => {
    expect(shouldSave(rules, { nowMs: t0 + 3600_000, lastSaveMs: t0, dirty: 1 })).toBe(false)
    expect(shouldSave(rules, { nowMs: t0 + 300_001, lastSaveMs: t0, dirty: 99 })).toBe(false)
    expect(shouldSave(rules, { nowMs: t0 + 3600_001, lastSaveMs: t0, dirty: 0 })).toBe(false)
  })

  it('never fires without rules', () => {
    expect(shouldSave([], { nowMs: t0 + 1e9, lastSaveMs: t0, dirty: 1e9 })).toBe(false)
  })

  it('holds back a retry for a while after a failed attempt', () => {
    const state = { lastSaveMs: t0, dirty: 5, lastAttemptFailed: true, lastAttemptMs: t0 + 10_000 }
    expect(shouldSave(parseSaveRules('1 1'), { ...state, nowMs: t0 + 10_000 + SAVE_RETRY_DELAY_MS })).toBe(false)
    expect(shouldSave(parseSaveRules('1 1'), { ...state, nowMs: t0 + 10_001 + SAVE_RETRY_DELAY_MS })).toBe(true)
    expect(shouldSave(parseSaveRules('1 1'), { ...state, lastAttemptFailed: false, nowMs: t0 + 10_001 })).toBe(true)
  })
})
