/**
 * Pub/sub through the clients people use: ioredis 5 (RESP2) and ioredis 6 (RESP3) in subscriber
 * mode, and redis-cli SUBSCRIBE / PSUBSCRIBE (RESP2 and -3), whose output is compared with what
 * it printed against a real redis-server 7.0.15.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { Redis as Redis6 } from 'ioredis6'
import { startServer, type RunningServer } from '../../helpers/start-server.js'
import { hasTool, InteractiveTool } from '../../helpers/tools.js'

let running: RunningServer

beforeAll(async () => {
  running = await startServer()
})

afterAll(async () => {
  await running?.stop()
})

/** What both ioredis majors offer a subscriber and a publisher. */
interface PubSubClient {
  subscribe(...channels: string[]): Promise<unknown>
  psubscribe(...patterns: string[]): Promise<unknown>
  unsubscribe(...channels: string[]): Promise<unknown>
  punsubscribe(...patterns: string[]): Promise<unknown>
  publish(channel: string, message: string): Promise<number>
  ping(): Promise<unknown>
  call(...args: string[]): Promise<unknown>
  on(event: string, listener: (...args: string[]) => void): unknown
  quit(): Promise<unknown>
}

const CLIENTS: { label: string; make: (port: number) => PubSubClient }[] = [
  { label: 'ioredis 5 (RESP2)', make: (port) => new Redis({ port, host: '127.0.0.1' }) as unknown as PubSubClient },
  { label: 'ioredis 6 (RESP3)', make: (port) => new Redis6({ port, host: '127.0.0.1' }) as unknown as PubSubClient },
]

describe.each(CLIENTS)('$label', ({ label, make }) => {
  it('subscriber mode: message and pmessage events, PING, unsubscribe, then normal commands again', async () => {
    const sub = make(running.port)
    const pub = make(running.port)
    try {
      const received: string[] = []
      sub.on('message', (channel, message) => received.push(`message ${channel} ${message}`))
      sub.on('pmessage', (pattern, channel, message) => received.push(`pmessage ${pattern} ${channel} ${message}`))
      const news = `news-${label}`
      expect(await sub.subscribe(news, 'other')).toBe(2)
      expect(await sub.psubscribe(`${news.slice(0, 6)}*`)).toBe(3)
      await sub.ping()
      expect(await pub.publish(news, 'first')).toBe(2)
      expect(await pub.publish('other', 'second')).toBe(1)
      expect(await pub.call('PUBSUB', 'NUMSUB', news, 'other')).toEqual([news, 1, 'other', 1])
      for (let i = 0; i < 200 && received.length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 10))
      expect(received).toEqual([`message ${news} first`, `pmessage news-i* ${news} first`, 'message other second'])
      // By name: ioredis 5 waits forever on a bare UNSUBSCRIBE, against redis-server too.
      await sub.unsubscribe(news, 'other')
      await sub.punsubscribe(`${news.slice(0, 6)}*`)
      expect(await sub.call('TYPE', 'nothing')).toBe('none')
    } finally {
      await sub.quit()
      await pub.quit()
    }
  })
})

describe.skipIf(!hasTool('redis-cli'))('redis-cli', () => {
  it.each([
    ['SUBSCRIBE', [], 'cli-ch', 'subscribe\ncli-ch\n1\nmessage\ncli-ch\nhello\n'],
    ['PSUBSCRIBE (RESP3)', ['-3'], 'cli-*', 'psubscribe\ncli-*\n1\npmessage\ncli-*\ncli-ch\nhello\n'],
  ])('%s prints what it printed against redis-server 7.0.15', async (label, flags, name, expected) => {
    const command = label.startsWith('PSUBSCRIBE') ? 'PSUBSCRIBE' : 'SUBSCRIBE'
    const cli = InteractiveTool.start('redis-cli', [
      '-h',
      '127.0.0.1',
      '-p',
      String(running.port),
      ...flags,
      command,
      name,
    ])
    try {
      await cli.waitFor((output) => output.includes('\n1\n'))
      const publisher = new Redis({ port: running.port, host: '127.0.0.1' })
      expect(await publisher.publish('cli-ch', 'hello')).toBeGreaterThanOrEqual(1)
      await publisher.quit()
      await cli.waitFor((output) => output.endsWith('hello\n'))
      expect(cli.stdout).toBe(expected)
    } finally {
      cli.child.kill('SIGKILL')
    }
  })
})
