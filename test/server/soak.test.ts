/**
 * Soak: for a bounded time, hundreds of concurrent hostile connections (random bytes, random
 * valid commands, half frames, abrupt disconnects) against one server. Afterwards PING answers,
 * a filter filled before answers exactly as before, no connection is left, RSS stays near where
 * it started (a loose bound: the test runs in the server's own process), and the second half of
 * the soak adds little to the RSS of the first (no leak per connection).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { RawClient, askLine, encodeCommand } from '../helpers/resp.js'
import { randomSession, playSession } from '../helpers/hostile-traffic.js'
import { seededRandom } from '../helpers/seeded-random.js'
import { testIoThreadsCount } from '../helpers/child-server.js'

const SEED = 0x50a6
const SOAK_MS = 8000
const CONCURRENCY = 200
const ITEMS = 5000
/**
 * RSS may end this much above where it started: the heaps grow to what this load keeps, then stay
 * (the same RSS after 8 s and after 24 s of it), each I/O thread's isolate with its own heap
 * (about 200 MiB in all for one thread, 240 for four, on a 2-core machine).
 */
const RSS_SLACK_BYTES = (256 + 48 * ((testIoThreadsCount() ?? 1) - 1)) * 1024 * 1024
/** The second half of the soak may add this much to the first's: a leak of 6 KB a connection would pass it. */
const LEAK_SLACK_BYTES = 96 * 1024 * 1024

let running: RunningServer
let checker: RawClient

async function probe(): Promise<string> {
  const items = Array.from({ length: ITEMS * 2 }, (_, i) => `item-${i}`)
  checker.write(encodeCommand(['BF.MEXISTS', 'kept', ...items]))
  return (
    await checker.readUntil((bytes) => bytes.toString('latin1').split('\r\n').length - 1 >= items.length + 1)
  ).toString('latin1')
}

beforeAll(async () => {
  running = await startServer({
    'max-filter-bytes': 1024 * 1024,
    maxmemory: 64 * 1024 * 1024,
    'rename-command': [
      'SHUTDOWN',
      'FLUSHALL',
      'FLUSHDB',
      'CONFIG',
      'CLIENT',
      'DEL',
      'UNLINK',
      'RENAME',
      'RENAMENX',
    ].map((from) => ({ from, to: '' })),
  })
  checker = await RawClient.connect(running.port)
})

afterAll(async () => {
  checker?.close()
  await running?.stop()
})

describe('soak', () => {
  it(`${SOAK_MS / 1000} s of ${CONCURRENCY} concurrent hostile connections`, async () => {
    expect(await askLine(checker, 'BF.RESERVE', 'kept', '0.001', String(ITEMS))).toBe('+OK\r\n')
    const added = Array.from({ length: ITEMS }, (_, i) => `item-${i * 2}`)
    checker.write(encodeCommand(['BF.MADD', 'kept', ...added]))
    await checker.readUntil((bytes) => bytes.toString('latin1').split('\r\n').length - 1 >= ITEMS + 1)
    const before = await probe()
    const rssBefore = process.memoryUsage().rss

    const random = seededRandom(SEED)
    let sessions = 0
    const soak = async (ms: number): Promise<void> => {
      const stopAt = Date.now() + ms
      const worker = async (): Promise<void> => {
        while (Date.now() < stopAt) {
          sessions++
          await playSession(running.port, randomSession(random), 2000)
        }
      }
      await Promise.all(Array.from({ length: CONCURRENCY }, worker))
    }
    // Two halves: the first lets the heaps grow to what this load keeps (each I/O thread's too),
    // the second must not add to that what a leak would.
    await soak(SOAK_MS / 2)
    const rssHalfway = process.memoryUsage().rss
    await soak(SOAK_MS / 2)

    expect(await askLine(checker, 'PING')).toBe('+PONG\r\n')
    expect(await probe()).toBe(before)
    const deadline = Date.now() + 10_000
    while (running.server.clientCount > 1 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20))
    expect(running.server.clientCount).toBe(1)
    expect(sessions).toBeGreaterThan(1000)
    expect(running.server.stats.connectionsReceived).toBeGreaterThanOrEqual(sessions)
    const rssAfter = process.memoryUsage().rss
    // Figures for bench/README.md's Hardening section.
    console.log(
      `soak: ${sessions} connections in ${SOAK_MS} ms, RSS ${(rssBefore / 2 ** 20).toFixed(0)} MiB → ${(rssHalfway / 2 ** 20).toFixed(0)} MiB halfway → ${(rssAfter / 2 ** 20).toFixed(0)} MiB`,
    )
    expect(rssAfter).toBeLessThan(rssBefore + RSS_SLACK_BYTES)
    expect(rssAfter).toBeLessThan(rssHalfway + LEAK_SLACK_BYTES)
  })
})
