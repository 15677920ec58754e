/**
 * Cuckoo filters beside the real RedisBloom: redis-server with the module named by REDISBLOOM_SO
 * (a RedisBloom 2.4 build; the tests skip only when it is not given) and bfs get the same seeded
 * CF command streams; every reply, and every CF.SCANDUMP chunk, must be equal. Then each side's
 * CF.SCANDUMP is loaded with CF.LOADCHUNK into the other, and both copies answer CF.EXISTS and
 * CF.COUNT as the original did.
 */
import { existsSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { seededRandom } from '../../helpers/seeded-random.js'
import { startRedisServer, type ReferenceServer } from '../../helpers/redis-server.js'
import { startServer, type RunningServer } from '../../helpers/start-server.js'
import { hasTool } from '../../helpers/tools.js'

const moduleSo = process.env.REDISBLOOM_SO ?? ''

type Reply = unknown

async function call(client: Redis, args: readonly (string | Buffer)[]): Promise<Reply> {
  try {
    return await client.callBuffer(String(args[0]), ...args.slice(1))
  } catch (error) {
    return `error: ${(error as Error).message}`
  }
}

/** The CF.SCANDUMP chunks of `key`, cursor and data, up to the closing cursor 0. */
async function scandump(client: Redis, key: string): Promise<[number, Buffer][]> {
  const chunks: [number, Buffer][] = []
  let cursor = 0
  for (;;) {
    const [next, data] = (await client.callBuffer('CF.SCANDUMP', key, String(cursor))) as [number, Buffer | null]
    if (next === 0) return chunks
    chunks.push([next, data ?? Buffer.alloc(0)])
    cursor = next
  }
}

describe.skipIf(moduleSo === '' || !existsSync(moduleSo) || !hasTool('redis-server'))(
  'CF beside RedisBloom (REDISBLOOM_SO)',
  () => {
    let bfsServer: RunningServer
    let redisServer: ReferenceServer
    let bfs: Redis
    let redis: Redis

    beforeAll(async () => {
      ;[bfsServer, redisServer] = await Promise.all([startServer(), startRedisServer(['--loadmodule', moduleSo])])
      bfs = new Redis({ port: bfsServer.port, host: '127.0.0.1' })
      redis = new Redis({ port: redisServer.port, host: '127.0.0.1' })
      const modules = (await redis.call('MODULE', 'LIST')) as unknown[][]
      expect(modules.map((entry) => String(entry[1]))).toContain('bf')
    })

    afterAll(async () => {
      bfs?.disconnect()
      redis?.disconnect()
      await Promise.all([bfsServer?.stop(), redisServer?.stop()])
    })

    /** Sends `args` to both servers and expects the same reply. */
    async function both(args: readonly (string | Buffer)[]): Promise<Reply> {
      const [mine, theirs] = await Promise.all([call(bfs, args), call(redis, args)])
      expect(mine, args.map(String).join(' ')).toEqual(theirs)
      return theirs
    }

    /** A seeded stream on `key` in both servers; returns the items it added. */
    async function stream(seed: number, key: string): Promise<Buffer[]> {
      const random = seededRandom(seed)
      const bucketSize = 1 + Math.floor(random() * 4)
      const maxIterations = 1 + Math.floor(random() * 30)
      const expansion = [0, 1, 2, 4][Math.floor(random() * 4)]!
      const capacity = bucketSize * 2 + Math.floor(random() * 200)
      await both([
        'CF.RESERVE',
        key,
        String(capacity),
        'BUCKETSIZE',
        String(bucketSize),
        'MAXITERATIONS',
        String(maxIterations),
        'EXPANSION',
        String(expansion),
      ])
      const added: Buffer[] = []
      // Binary items: any bytes, CR LF and NUL included.
      const item = (): Buffer =>
        Buffer.from(Array.from({ length: Math.floor(random() * 12) }, () => Math.floor(random() * 256)))
      const known = (): Buffer =>
        added.length > 0 && random() < 0.7 ? added[Math.floor(random() * added.length)]! : item()
      for (let op = 0; op < 500; op++) {
        const roll = random()
        if (roll < 0.35) {
          const value = item()
          if ((await both(['CF.ADD', key, value])) === 1) added.push(value)
        } else if (roll < 0.45) {
          const value = known()
          if ((await both(['CF.ADDNX', key, value])) === 1) added.push(value)
        } else if (roll < 0.55) {
          const values = [item(), known(), item()]
          await both([random() < 0.5 ? 'CF.INSERT' : 'CF.INSERTNX', key, 'ITEMS', ...values])
        } else if (roll < 0.7) {
          await both(['CF.DEL', key, known()])
        } else if (roll < 0.8) {
          await both(['CF.COUNT', key, known()])
        } else if (roll < 0.9) {
          await both(['CF.MEXISTS', key, known(), item(), known()])
        } else {
          await both(['CF.EXISTS', key, known()])
        }
      }
      await both(['CF.INFO', key])
      return added
    }

    /** Both servers answer CF.EXISTS and CF.COUNT for `items` on `copy` as the reference does on `key`. */
    async function answersAsOriginal(key: string, copy: string, items: readonly Buffer[]): Promise<void> {
      for (const value of items) {
        const original = [await call(redis, ['CF.EXISTS', key, value]), await call(redis, ['CF.COUNT', key, value])]
        expect([await call(bfs, ['CF.EXISTS', copy, value]), await call(bfs, ['CF.COUNT', copy, value])]).toEqual(
          original,
        )
        expect([await call(redis, ['CF.EXISTS', copy, value]), await call(redis, ['CF.COUNT', copy, value])]).toEqual(
          original,
        )
      }
    }

    describe.each([1, 2, 3, 4, 5, 6, 7, 8])('seed %i', (seed) => {
      it('answers the same stream with the same replies and dumps the same CF.SCANDUMP chunks', async () => {
        const key = `stream-${seed}`
        await stream(seed, key)
        expect(await scandump(bfs, key)).toEqual(await scandump(redis, key))
      })

      it("loads the other's CF.SCANDUMP with CF.LOADCHUNK and answers CF.EXISTS and CF.COUNT the same", async () => {
        const key = `cross-${seed}`
        const added = await stream(100 + seed, key)
        const probes = [...added, ...Array.from({ length: 50 }, (_, index) => Buffer.from(`probe-${index}`))]
        const copy = `${key}-copy`
        // RedisBloom's dump into bfs, and bfs's into RedisBloom.
        for (const [from, to] of [
          [redis, bfs],
          [bfs, redis],
        ] as const) {
          for (const [cursor, data] of await scandump(from, key)) {
            expect(await call(to, ['CF.LOADCHUNK', copy, String(cursor), data])).toEqual(Buffer.from('OK'))
          }
        }
        await answersAsOriginal(key, copy, probes)
        expect(await scandump(bfs, copy)).toEqual(await scandump(redis, key))
        expect(await scandump(redis, copy)).toEqual(await scandump(redis, key))
      })
    })
  },
)
