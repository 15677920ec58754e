/**
 * Every line of the RedisBloom 2.4.23 CF.* reference file (test/fixtures/redisbloom-2.4-cf-replies.txt),
 * sent over a real socket in order on one connection, must get the same bytes back: once in RESP2,
 * once after HELLO 3 on a fresh server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { RawClient, encodeCommand } from '../helpers/resp.js'
import { loadReferenceCases } from '../helpers/reference-replies.js'

// bfs holds filters only: no SET, so no string key to answer -WRONGTYPE on (CF.EXISTS and
// CF.SCANDUMP on it answer as on a missing key, and stay).
const STRING_KEY_LINES = ['SET str v', 'CF.ADD str x']
const all = loadReferenceCases('redisbloom-2.4-cf-replies.txt')
const cases = all.filter((reference) => !STRING_KEY_LINES.includes(reference.command.join(' ')))

describe.each([2, 3] as const)('CF reference replies over RESP%i', (protocol) => {
  let running: RunningServer
  let client: RawClient

  beforeAll(async () => {
    running = await startServer()
    client = await RawClient.connect(running.port)
    if (protocol === 3) {
      client.write(encodeCommand(['HELLO', '3']))
      const greeting = await client.readUntil((bytes) => bytes.includes('args'))
      expect(greeting.subarray(0, 2).toString()).toBe('%7')
      await new Promise((resolve) => setTimeout(resolve, 50))
      await client.readUntil(() => true, 100)
    }
  })

  afterAll(async () => {
    client.close()
    await running.stop()
  })

  it('reads every reference case', () => {
    expect(all.length).toBe(172)
    expect(cases.length).toBe(170)
    expect(cases.every((reference) => reference.resp2.length > 0)).toBe(true)
  })

  for (const reference of cases) {
    const expected = protocol === 3 && reference.resp3 !== undefined ? reference.resp3 : reference.resp2
    it(`line ${reference.line}: ${reference.command.join(' ').slice(0, 120)}`, async () => {
      client.write(encodeCommand(reference.args))
      const got = await client.read(expected.length)
      expect(got.toString('latin1')).toBe(expected.toString('latin1'))
    })
  }

  it('sent nothing more than the reference', async () => {
    client.write(encodeCommand(['PING']))
    expect((await client.read(7)).toString()).toBe('+PONG\r\n')
  })
})
