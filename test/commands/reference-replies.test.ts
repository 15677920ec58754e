/**
 * Every line of the RedisBloom 2.4.23 reference file, sent over a real socket in order on one
 * connection, must get the same bytes back: once in RESP2, once after HELLO 3 on a fresh server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { RawClient, encodeCommand } from '../helpers/resp.js'
import { loadReferenceCases } from '../helpers/reference-replies.js'

const cases = loadReferenceCases()

describe.each([2, 3] as const)('reference replies over RESP%i', (protocol) => {
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
    expect(cases.length).toBe(96)
    expect(cases.every((reference) => reference.resp2.length > 0)).toBe(true)
  })

  for (const reference of cases) {
    const expected = protocol === 3 && reference.resp3 !== undefined ? reference.resp3 : reference.resp2
    it(`line ${reference.line}: ${reference.command.join(' ')}`, async () => {
      client.write(encodeCommand(reference.command))
      const got = await client.read(expected.length)
      expect(got.toString('latin1')).toBe(expected.toString('latin1'))
    })
  }

  it('sent nothing more than the reference', async () => {
    client.write(encodeCommand(['PING']))
    expect((await client.read(7)).toString()).toBe('+PONG\r\n')
  })
})
