/**
 * Seeded streams of CF commands (adds, NX adds, inserts, deletes, counts, binary items, filters
 * that grow or fill up) sent to bfs over a real socket, each reply compared with what the core
 * (core/cuckoo-filter.ts, itself checked against RedisBloom's recorded bytes) answers for the same
 * stream, and the final CF.SCANDUMP with the core's header and buckets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { CuckooFilter, EXISTS, INSERTED, reserveSettings } from '../../../src/core/cuckoo-filter.js'
import { encodeCuckooHeader } from '../../../src/format/cuckoo-dump.js'
import { seededRandom } from '../../helpers/seeded-random.js'
import { startServer, type RunningServer } from '../../helpers/start-server.js'

let running: RunningServer
let client: Redis

beforeAll(async () => {
  running = await startServer()
  client = new Redis({ port: running.port, host: '127.0.0.1' })
})

afterAll(async () => {
  client.disconnect()
  await running.stop()
})

/** What the streams went through, all seeds together: a full filter, a grown one. */
const seen = new Set<string>()

/** The core's reply to one add, as CF.ADD / CF.INSERT answer it (errors as text). */
function addReply(status: number, multi: boolean): number | string {
  if (status === INSERTED) return 1
  if (status === EXISTS) return 0
  seen.add('full')
  return multi ? -1 : 'Filter is full'
}

async function call(args: (string | Buffer)[]): Promise<unknown> {
  try {
    return await client.call(args[0] as string, ...args.slice(1))
  } catch (error) {
    return (error as Error).message
  }
}

describe.each([1, 2, 3, 4, 5, 6])('seed %i', (seed) => {
  it('answers every command as the core does, and dumps the same bytes', async () => {
    const random = seededRandom(seed)
    const key = `stream-${seed}`
    const bucketSize = 1 + Math.floor(random() * 4)
    const maxIterations = 1 + Math.floor(random() * 30)
    const expansion = [0, 1, 2, 4][Math.floor(random() * 4)]!
    const capacity = bucketSize * 2 + Math.floor(random() * 200)
    await call([
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
    const core = new CuckooFilter(reserveSettings(capacity, bucketSize, maxIterations, expansion))
    const added: Buffer[] = []
    // Binary items: any bytes, CR LF and NUL included.
    const item = (): Buffer =>
      Buffer.from(Array.from({ length: Math.floor(random() * 12) }, () => Math.floor(random() * 256)))
    for (let op = 0; op < 600 && core.numFilters < 32; op++) {
      const roll = random()
      if (roll < 0.4) {
        const nx = random() < 0.3
        const x = item()
        const want = addReply(core.add(x, 0, x.length, nx), false)
        expect(await call([nx ? 'CF.ADDNX' : 'CF.ADD', key, x]), `op ${op}`).toEqual(want)
        if (want === 1) added.push(x)
      } else if (roll < 0.55) {
        const xs = Array.from({ length: 1 + Math.floor(random() * 8) }, item)
        const want = xs.map((x) => addReply(core.add(x, 0, x.length, false), true))
        expect(await call(['CF.INSERT', key, 'ITEMS', ...xs]), `op ${op}`).toEqual(want)
      } else if (roll < 0.75 && added.length > 0) {
        const x = added.splice(Math.floor(random() * added.length), 1)[0]!
        expect(await call(['CF.DEL', key, x]), `op ${op}`).toBe(core.delete(x, 0, x.length) ? 1 : 0)
      } else {
        const x = random() < 0.5 && added.length > 0 ? added[Math.floor(random() * added.length)]! : item()
        expect(await call(['CF.COUNT', key, x]), `op ${op}`).toBe(core.count(x, 0, x.length))
        expect(await call(['CF.EXISTS', key, x]), `op ${op}`).toBe(core.has(x, 0, x.length) ? 1 : 0)
      }
    }
    if (core.numFilters > 1) seen.add('grown')
    expect(await call(['CF.COMPACT', key])).toBe('OK')
    core.compact(true)
    const [first, header] = (await client.callBuffer('CF.SCANDUMP', key, '0')) as [number, Buffer | null]
    if (core.numItems === 0n) {
      expect([first, header]).toEqual([0, null])
      return
    }
    expect(header).toEqual(Buffer.from(encodeCuckooHeader(core)))
    const buckets: Buffer[] = []
    for (let cursor = first; ;) {
      const [next, data] = (await client.callBuffer('CF.SCANDUMP', key, String(cursor))) as [number, Buffer | null]
      if (next === 0 || data === null) break
      buckets.push(data)
      cursor = next
    }
    expect(Buffer.concat(buckets)).toEqual(Buffer.concat(core.subFilters.map((data) => Buffer.from(data))))
  })
})

describe('the streams', () => {
  it('filled a filter up and grew one', () => {
    expect([...seen].sort()).toEqual(['full', 'grown'])
  })
})
