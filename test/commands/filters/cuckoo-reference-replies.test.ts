/**
 * Every line of the RedisBloom 2.4.23 CF.* reference file (test/fixtures/redisbloom-2.4-cf-replies.txt),
 * sent over a real socket in order on one connection, must get the same bytes back: once in RESP2,
 * once after HELLO 3 on a fresh server.
 */
import { expect, it } from 'vitest'
import { loadReferenceCases, replayReferenceCases } from '../../helpers/reference-replies.js'

// bfs holds filters only: no SET, so no string key to answer -WRONGTYPE on (CF.EXISTS and
// CF.SCANDUMP on it answer as on a missing key, and stay).
const STRING_KEY_LINES = ['SET str v', 'CF.ADD str x']
const all = loadReferenceCases('redisbloom-2.4-cf-replies.txt')
const cases = all.filter((reference) => !STRING_KEY_LINES.includes(reference.command.join(' ')))

it('reads every reference case', () => {
  expect(all.length).toBe(172)
  expect(cases.length).toBe(170)
  expect(cases.every((reference) => reference.resp2.length > 0)).toBe(true)
})

replayReferenceCases('CF reference replies', cases)
