/**
 * MEMORY USAGE beside a real redis-server 7.0.15. With RedisBloom 2.4.23 loaded, redis answers
 * the module's mem_usage (BF.INFO's Size) plus what its memoryCommand adds for any key: the key's
 * string as the allocator sizes it (jemalloc's size class of sds header + length + 1) and the
 * 24-byte dictEntry. That pair answers 1,088 for key `bf` holding a 1,056-byte filter, 272 for key
 * `a` with Size 240 and 1,128 for a 42-byte key with Size 1,056. The key's part is the same for a
 * string key, so it is compared here with what redis-server counts for string keys of each length.
 */
import { describe, expect, it } from 'vitest'
import { besideRedis } from '../../helpers/beside-redis.js'
import { askRaw, type RawClient } from '../../helpers/resp.js'

const servers = besideRedis()

async function integer(client: RawClient, ...args: string[]): Promise<number> {
  const reply = (await askRaw(client, ...args)).toString('latin1')
  // BF.INFO key SIZE answers an array of one integer, as RedisBloom 2.4 does.
  const match = /^(?:\*1\r\n)?:(\d+)\r\n$/.exec(reply)
  if (match === null) throw new Error(`not an integer reply to ${args.join(' ')}: ${JSON.stringify(reply)}`)
  return Number(match[1])
}

/** Key lengths on each side of the allocator's classes and of the sds header sizes (32, 256, 65,536). */
const LENGTHS = [1, 2, 6, 7, 14, 15, 30, 31, 32, 42, 45, 46, 77, 78, 252, 253, 255, 256, 1000, 65_530, 65_536]

describe('MEMORY USAGE', () => {
  it("is the filter's Size plus the key's allocation and dictEntry, as redis-server 7.0.15 with RedisBloom 2.4.23 counts them", async () => {
    const bfs = await servers.connect(servers.bfs.port)
    const redis = await servers.connect(servers.redis.port)
    const part = async (key: string): Promise<number> => {
      await askRaw(bfs, 'BF.ADD', key, 'x')
      return (await integer(bfs, 'MEMORY', 'USAGE', key)) - (await integer(bfs, 'BF.INFO', key, 'SIZE'))
    }
    // The figures the pair answered: Size + 8 + 24 for keys `bf` and `a`, Size + 48 + 24 for 42 bytes.
    await askRaw(bfs, 'BF.RESERVE', 'bf', '0.01', '695')
    expect(await integer(bfs, 'BF.INFO', 'bf', 'SIZE')).toBe(1056)
    expect(await integer(bfs, 'MEMORY', 'USAGE', 'bf')).toBe(1088)
    expect(await part('bf')).toBe(32)
    expect(await part('a')).toBe(32)
    expect(await part('k'.repeat(42))).toBe(72)
    // Every other length: the key's part moves as redis-server's own for a string key of that length.
    await askRaw(redis, 'SET', 'k', 'v')
    const redisBase = await integer(redis, 'MEMORY', 'USAGE', 'k')
    for (const length of LENGTHS) {
      const key = 'k'.repeat(length)
      await askRaw(redis, 'SET', key, 'v')
      const redisPart = (await integer(redis, 'MEMORY', 'USAGE', key)) - redisBase
      expect(await part(key), `key of ${length} bytes`).toBe(32 + redisPart)
    }
  })

  it('counts a window filter (APBF) key the same way', async () => {
    const bfs = await servers.connect(servers.bfs.port)
    expect(await askRaw(bfs, 'APBF.RESERVE', 'win', 'COUNT', '0.01', '1000')).toEqual(Buffer.from('+OK\r\n'))
    const info = (await askRaw(bfs, 'APBF.INFO', 'win')).toString('latin1')
    const size = Number(/Size\r\n:(\d+)\r\n/.exec(info)![1])
    expect(await integer(bfs, 'MEMORY', 'USAGE', 'win')).toBe(size + 32)
  })

  it("refuses bad SAMPLES arguments with redis's errors, before looking the key up", async () => {
    const bfs = await servers.connect(servers.bfs.port)
    const redis = await servers.connect(servers.redis.port)
    const lines = [
      ['nokey', 'SAMPLES', 'x'],
      ['nokey', 'SAMPLES', '-1'],
      ['nokey', 'SAMPLES', '0'],
      ['nokey', 'SAMPLES', '5', 'SAMPLES', '3'],
      ['nokey', 'samples', '99999999999999999999'],
      ['nokey', 'SAMPLES'],
      ['nokey', 'foo'],
      ['nokey', 'SAMPLES', '5', 'bar'],
    ]
    for (const line of lines) {
      const [ours, theirs] = [
        await askRaw(bfs, 'MEMORY', 'USAGE', ...line),
        await askRaw(redis, 'MEMORY', 'USAGE', ...line),
      ]
      expect(ours.toString('latin1'), line.join(' ')).toBe(theirs.toString('latin1'))
    }
  })
})
