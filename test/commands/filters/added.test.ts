/**
 * BF.ADDED over real sockets: the record the append-only log and the replicas' stream take for the
 * adds the I/O threads answered 1 for (server/thread-plane.ts). Every item is set in the newest
 * layer and counted, present or not, so that a replay counts what the answers counted; a full
 * newest layer takes it as BF.ADD would; and the record itself survives a restart from the log.
 */
import { describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../../helpers/start-server.js'
import { makeTempDir } from '../../helpers/temp-dir.js'
import { countSetBits } from '../../../src/core/bitmap.js'
import { bloomOf } from '../../helpers/bloom-of.js'

/** Runs `test` against a fresh server and an ioredis client of it, both closed after it. */
async function withServer(
  config: Parameters<typeof startServer>[0],
  test: (redis: Redis, running: RunningServer) => Promise<void>,
): Promise<void> {
  const running = await startServer(config)
  const redis = new Redis({ port: running.port, host: '127.0.0.1' })
  try {
    await test(redis, running)
  } finally {
    redis.disconnect()
    await running.stop()
  }
}

describe('BF.ADDED', () => {
  it('counts every item, present or not, in the newest layer, with its bits', () =>
    withServer({}, async (redis, running) => {
      expect(await redis.call('BF.RESERVE', 'k', '0.01', '100')).toBe('OK')
      expect(await redis.call('BF.ADD', 'k', 'a')).toBe(1)
      // Two threads that both answered 1 for `b` recorded it twice: counted twice here too.
      expect(await redis.call('BF.ADDED', 'k', 'a', 'b', 'b')).toBe(3)
      expect(await redis.call('BF.CARD', 'k')).toBe(4)
      expect(await redis.call('BF.MEXISTS', 'k', 'a', 'b', 'c')).toEqual([1, 1, 0])
      expect(await redis.call('BF.ADD', 'k', 'b')).toBe(0)
      const layer = bloomOf(running.server.registry.get('k')).layers[0]!
      expect(layer.setBits).toBe(countSetBits(layer.bitmap))
    }))

  it('adds as BF.ADD does once the newest layer is full: it grows, or a non-scaling filter refuses', () =>
    withServer({}, async (redis) => {
      expect(await redis.call('BF.RESERVE', 'small', '0.01', '2', 'EXPANSION', '2')).toBe('OK')
      expect(await redis.call('BF.ADDED', 'small', 'x', 'y', 'z')).toBe(3)
      expect(await redis.call('BF.INFO', 'small', 'FILTERS')).toEqual([2])
      expect(await redis.call('BF.CARD', 'small')).toBe(3)
      expect(await redis.call('BF.RESERVE', 'fixed', '0.01', '2', 'NONSCALING')).toBe('OK')
      await expect(redis.call('BF.ADDED', 'fixed', 'x', 'y', 'z')).rejects.toThrow('ERR non scaling filter is full')
      expect(await redis.call('BF.CARD', 'fixed')).toBe(2)
    }))

  it('refuses a missing key, another kind and a missing item', () =>
    withServer({}, async (redis) => {
      await expect(redis.call('BF.ADDED', 'none', 'x')).rejects.toThrow('ERR not found')
      expect(await redis.call('CF.RESERVE', 'cuckoo', '100')).toBe('OK')
      await expect(redis.call('BF.ADDED', 'cuckoo', 'x')).rejects.toThrow('WRONGTYPE')
      await expect(redis.call('BF.ADDED', 'none')).rejects.toThrow(
        "ERR wrong number of arguments for 'bf.added' command",
      )
      expect(await redis.call('EXISTS', 'none')).toBe(0)
    }))

  it('is in the append-only log, and counts the same after a restart', async () => {
    const dir = makeTempDir()
    await withServer({ dir, appendonly: true }, async (redis) => {
      expect(await redis.call('BF.RESERVE', 'k', '0.01', '100')).toBe('OK')
      expect(await redis.call('BF.ADDED', 'k', 'a', 'a', 'b')).toBe(3)
    })
    await withServer({ dir, appendonly: true }, async (redis) => {
      expect(await redis.call('BF.CARD', 'k')).toBe(3)
      expect(await redis.call('BF.MEXISTS', 'k', 'a', 'b', 'c')).toEqual([1, 1, 0])
    })
  })
})
