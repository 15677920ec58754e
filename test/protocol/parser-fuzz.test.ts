import { describe, expect, test } from 'vitest'
import { ProtocolError, RequestParser } from '../../src/protocol/request-parser.js'
import { cutAt } from '../helpers/cut-bytes.js'
import { seededRandom } from '../helpers/seeded-random.js'
import { feed, multibulk } from './resp-bytes.js'

/** Bytes that are mostly protocol-shaped, so the fuzz reaches deep states, not just the first check. */
function randomStream(random: () => number): Buffer {
  const alphabet = Buffer.from('*$\r\n0123456789-+ "\'\\x\tabAB\0')
  const pieces: Buffer[] = []
  const count = 1 + Math.floor(random() * 6)
  for (let i = 0; i < count; i++) {
    const r = random()
    if (r < 0.4) {
      const args = Array.from({ length: Math.floor(random() * 4) }, () =>
        Buffer.from(Array.from({ length: Math.floor(random() * 20) }, () => Math.floor(random() * 256))),
      )
      pieces.push(multibulk(...args))
    } else if (r < 0.7) {
      pieces.push(
        Buffer.from(
          Array.from({ length: Math.floor(random() * 30) }, () => alphabet[Math.floor(random() * alphabet.length)]!),
        ),
      )
    } else {
      pieces.push(Buffer.from(Array.from({ length: Math.floor(random() * 30) }, () => Math.floor(random() * 256))))
    }
  }
  let bytes = Buffer.concat(pieces)
  if (bytes.length > 0 && random() < 0.3) {
    bytes = Buffer.from(bytes)
    bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256) // flip one byte
  }
  return bytes
}

function randomCuts(random: () => number, length: number): number[] {
  const cuts = Array.from({ length: Math.floor(random() * 6) }, () => Math.floor(random() * (length + 1)))
  return cuts.sort((a, b) => a - b)
}

describe('seeded mini-fuzz', () => {
  test('random bytes and random splits: only ProtocolError, same result however split', () => {
    const random = seededRandom(0xb10f)
    for (let iteration = 0; iteration < 3000; iteration++) {
      const bytes = randomStream(random)
      const small = { maxBulkBytes: 64, maxArrayLength: 8, maxInlineBytes: 48 }
      const limits = random() < 0.5 ? small : undefined
      const whole = feed([bytes], limits)
      if (whole.error) expect(whole.error, `iteration ${iteration}`).toBeInstanceOf(ProtocolError)
      const split = feed(cutAt(bytes, randomCuts(random, bytes.length)), limits)
      if (split.error) expect(split.error).toBeInstanceOf(ProtocolError)
      // Split feeding may only differ where a size limit is judged per chunk (as in redis).
      if (!whole.error && !split.error) expect(split.commands, `iteration ${iteration}`).toEqual(whole.commands)
      const sizeJudged = [whole.error, split.error].some((e) => e?.message.includes('too big'))
      if ((whole.error || split.error) && !sizeJudged) {
        expect(split.error?.message, `iteration ${iteration}`).toBe(whole.error?.message)
        expect(split.commands).toEqual(whole.commands)
      }
    }
  })

  test('pure random bytes fed byte by byte terminate and throw only ProtocolError', () => {
    const random = seededRandom(7)
    for (let iteration = 0; iteration < 300; iteration++) {
      const bytes = Buffer.from(Array.from({ length: 200 }, () => Math.floor(random() * 256)))
      const parser = new RequestParser({ maxInlineBytes: 64 })
      try {
        for (let i = 0; i < bytes.length; i++) parser.execute(bytes.subarray(i, i + 1), () => {})
      } catch (error) {
        expect(error).toBeInstanceOf(ProtocolError)
      }
    }
  })
})
