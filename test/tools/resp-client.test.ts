/**
 * The tools' RESP client pipelining against a real bfs (its codec: test/protocol/command-encoder
 * and reply-reader).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RespClient } from '../../src/tools/resp-client.js'
import { startServer, type RunningServer } from '../helpers/start-server.js'

describe('RespClient', () => {
  let running: RunningServer

  beforeAll(async () => {
    running = await startServer({ requirepass: 'pw' })
  })

  afterAll(async () => {
    await running.stop()
  })

  it('authenticates, pipelines commands and matches replies in order', async () => {
    const client = await RespClient.connect('127.0.0.1', running.port, { password: 'pw' })
    try {
      const replies = await Promise.all(Array.from({ length: 1000 }, (_, i) => client.send(['ECHO', `reply ${i}`])))
      expect(replies.map((reply) => (reply as Buffer).toString())).toEqual(
        Array.from({ length: 1000 }, (_, i) => `reply ${i}`),
      )
      expect(await client.send(['BF.ADD', 'f', 'x'])).toBe(1)
      expect(await client.send(['BF.ADD', 'f', 'x'])).toBe(0)
      await expect(client.send(['BF.INFO', 'missing'])).rejects.toThrow('ERR not found')
      expect(await client.send(['PING'])).toBe('PONG')
      expect(client.pending).toBe(0)
    } finally {
      await client.close()
    }
    await expect(client.send(['PING'])).rejects.toThrow('connection closed')
  })

  it('rejects a wrong password', async () => {
    await expect(RespClient.connect('127.0.0.1', running.port, { password: 'nope' })).rejects.toThrow(/WRONGPASS/)
  })
})
