/**
 * Every line of the RedisBloom 2.4.23 reference file, sent over a real socket in order on one
 * connection, must get the same bytes back: once in RESP2, once after HELLO 3 on a fresh server.
 */
import { expect, it } from 'vitest'
import { loadReferenceCases, replayReferenceCases } from '../../helpers/reference-replies.js'

const cases = loadReferenceCases()

it('reads every reference case', () => {
  expect(cases.length).toBe(96)
  expect(cases.every((reference) => reference.resp2.length > 0)).toBe(true)
})

replayReferenceCases('reference replies', cases)
