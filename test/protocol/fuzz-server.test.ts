/**
 * A seeded, bounded fuzz of the live server: thousands of connections carrying random bytes,
 * valid commands with random arguments, half-written frames and abrupt disconnects, each split
 * at random points. Afterwards the server answers PING, a filter filled before answers exactly as
 * before, and no connection is left behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { RawClient, askLine, encodeCommand } from '../helpers/resp.js'
import { runSessions } from '../helpers/hostile-traffic.js'
import { seededRandom } from '../helpers/seeded-random.js'

const SEED = 0xb10f
const SESSIONS = 3000
const CONCURRENCY = 64
const PROBES = 2000

/** Commands the fuzz must not reach even by accident. */
const DISABLED = ['SHUTDOWN', 'FLUSHALL', 'FLUSHDB', 'CONFIG', 'CLIENT', 'DEL', 'UNLINK', 'RENAME', 'RENAMENX']

let running: RunningServer
let checker: RawClient

/** BF.MEXISTS over the probe items (half added, half not): the reply bytes. */
async function probe(): Promise<string> {
  const items = Array.from({ length: PROBES }, (_, i) => `probe-${i}`)
  checker.write(encodeCommand(['BF.MEXISTS', 'kept', ...items]))
  const reply = await checker.readUntil((bytes) => bytes.toString('latin1').split('\r\n').length - 1 >= PROBES + 1)
  return reply.toString('latin1')
}

beforeAll(async () => {
  running = await startServer({
    'max-filter-bytes': 1024 * 1024,
    maxmemory: 64 * 1024 * 1024,
    'rename-command': DISABLED.map((from) => ({ from, to: '' })),
  })
  checker = await RawClient.connect(running.port)
})

afterAll(async () => {
  checker?.close()
  await running?.stop()
})

describe('live server fuzz', () => {
  it(`survives ${SESSIONS} hostile connections (seed ${SEED})`, async () => {
    expect(await askLine(checker, 'BF.RESERVE', 'kept', '0.001', '5000')).toBe('+OK\r\n')
    const added = Array.from({ length: PROBES / 2 }, (_, i) => `probe-${i * 2}`)
    checker.write(encodeCommand(['BF.MADD', 'kept', ...added]))
    await checker.readUntil((bytes) => bytes.toString('latin1').split('\r\n').length - 1 >= added.length + 1)
    const before = await probe()
    const cardBefore = await askLine(checker, 'BF.CARD', 'kept')

    const kinds = await runSessions(running.port, seededRandom(SEED), SESSIONS, CONCURRENCY)
    for (const count of Object.values(kinds)) expect(count).toBeGreaterThan(SESSIONS / 8)

    expect(await askLine(checker, 'PING')).toBe('+PONG\r\n')
    expect(await probe()).toBe(before)
    expect(await askLine(checker, 'BF.CARD', 'kept')).toBe(cardBefore)
    // Every fuzz connection is gone; only the checker remains.
    const deadline = Date.now() + 10_000
    while (running.server.clientCount > 1 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20))
    expect(running.server.clientCount).toBe(1)
    // The fuzz did reach the server: commands ran and protocol errors were answered.
    expect(running.server.stats.commandsProcessed).toBeGreaterThan(SESSIONS)
    expect(running.server.stats.connectionsReceived).toBeGreaterThanOrEqual(SESSIONS + 1)
  })
})
