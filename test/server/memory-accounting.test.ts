/**
 * `maxmemory` counts a filter's memory when it is allocated, whatever allocates it: RESTORE, BF.LOAD,
 * BF.LOADCHUNK's header and BFS.RESTORE-PART's staging are checked against it from the size their
 * payload declares, before anything is allocated, and refused with -OOM when it would not fit (as
 * BF.RESERVE is). Pipelined, only what fits is accepted: the count is not left to the recount once
 * a second. Open stagings are counted (until their commit moves them into the keyspace, or they
 * are dropped) and bounded in number.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { layerGeometry } from '../../src/core/sizing.js'
import { dumpPayloadFile } from '../../src/format/dump-payload.js'
import { encodeSyncPayload } from '../../src/format/sync-payload.js'
import { MAX_OPEN_STAGINGS } from '../../src/commands/migration/restore-part.js'

const OOM = "OOM command not allowed when used memory > 'maxmemory'."
const MAXMEMORY = 10 * 1024 * 1024
/** A filter of about 3 MB of bitmap: three fit in MAXMEMORY, four do not. */
const CAPACITY = 2_200_000
const FILTER_BYTES = layerGeometry(CAPACITY, 0.005).byteCount

let running: RunningServer | undefined
const clients: Redis[] = []
afterEach(async () => {
  for (const client of clients.splice(0)) client.disconnect()
  await running?.stop()
  running = undefined
})

async function serverWith(config: Parameters<typeof startServer>[0] = {}): Promise<Redis> {
  running = await startServer(config)
  const redis = new Redis({ port: running.port, maxRetriesPerRequest: 0 })
  clients.push(redis)
  return redis
}

/** Each command's reply: 'OK' or the error's text. */
async function pipelined(redis: Redis, commands: (string | Buffer)[][]): Promise<string[]> {
  const pipeline = redis.pipeline()
  for (const [name, ...args] of commands) pipeline.call(name as string, ...args)
  const results = (await pipeline.exec()) ?? []
  return results.map(([error, reply]) => (error === null ? String(reply) : (error as Error).message))
}

/** Three 'OK' then OOM for the rest. */
function expectThreeFit(replies: string[]): void {
  expect(FILTER_BYTES * 3).toBeLessThan(MAXMEMORY)
  expect(FILTER_BYTES * 4).toBeGreaterThan(MAXMEMORY)
  expect(replies.slice(0, 3)).toEqual(['OK', 'OK', 'OK'])
  expect(new Set(replies.slice(3))).toEqual(new Set([OOM]))
}

/** DUMP and SCANDUMP's header of a filter of FILTER_BYTES, made and deleted before maxmemory is set. */
async function filterPayloads(redis: Redis): Promise<{ dump: Buffer; header: Buffer }> {
  expect(await redis.call('BF.RESERVE', 'src', '0.01', String(CAPACITY))).toBe('OK')
  expect(((await redis.call('BF.INFO', 'src', 'SIZE')) as number[])[0]).toBeGreaterThanOrEqual(FILTER_BYTES)
  const dump = (await redis.callBuffer('DUMP', 'src')) as Buffer
  const [, header] = (await redis.callBuffer('BF.SCANDUMP', 'src', '0')) as [number, Buffer]
  expect(await redis.call('DEL', 'src')).toBe(1)
  expect(await redis.call('CONFIG', 'SET', 'maxmemory', String(MAXMEMORY))).toBe('OK')
  return { dump, header }
}

describe('maxmemory counts what a load allocates, when it allocates it', () => {
  it('BF.LOAD of a filter larger than maxmemory: -OOM, nothing loaded', async () => {
    const redis = await serverWith()
    expect(await redis.call('BF.RESERVE', 'big', '0.01', String(CAPACITY * 8))).toBe('OK')
    expect(await redis.call('BF.SAVE', 'big', 'big.bf')).toBe('OK')
    expect(await redis.call('DEL', 'big')).toBe(1)
    expect(await redis.call('CONFIG', 'SET', 'maxmemory', String(MAXMEMORY))).toBe('OK')
    await expect(redis.call('BF.LOAD', 'again', 'big.bf')).rejects.toThrow(OOM)
    expect(await redis.call('EXISTS', 'again')).toBe(0)
    // One that fits still loads.
    expect(await redis.call('BF.RESERVE', 'small', '0.01', '1000')).toBe('OK')
    expect(await redis.call('BF.SAVE', 'small', 'small.bf')).toBe('OK')
    expect(await redis.call('BF.LOAD', 'small2', 'small.bf')).toBe('OK')
  })

  it('60 pipelined RESTOREs of a 3 MB filter with maxmemory 10 MiB: the three that fit are accepted', async () => {
    const redis = await serverWith()
    const { dump } = await filterPayloads(redis)
    expectThreeFit(
      await pipelined(
        redis,
        Array.from({ length: 60 }, (_, i) => ['RESTORE', `r${i}`, '0', dump]),
      ),
    )
    expect(await redis.call('DBSIZE')).toBe(3)
    // REPLACE of a key of the same size fits: the old filter's memory is given back.
    expect(await redis.call('RESTORE', 'r0', '0', dump, 'REPLACE')).toBe('OK')
  })

  it('60 pipelined BF.LOADCHUNK headers of a 3 MB filter with maxmemory 10 MiB: the three that fit are accepted', async () => {
    const redis = await serverWith()
    const { header } = await filterPayloads(redis)
    expectThreeFit(
      await pipelined(
        redis,
        Array.from({ length: 60 }, (_, i) => ['BF.LOADCHUNK', `c${i}`, '1', header]),
      ),
    )
    expect(await redis.call('DBSIZE')).toBe(3)
  })
})

describe('BFS.RESTORE-PART stagings', () => {
  /** The two parts of a transfer of `dump`'s filter: the first `at` bytes (its header), then the rest. */
  function parts(dump: Buffer, at = 4096): [Buffer, Buffer] {
    const { file } = dumpPayloadFile(dump)
    const payload = Buffer.concat(encodeSyncPayload([[file]]))
    expect(payload.length).toBeGreaterThan(at)
    return [payload.subarray(0, at), payload.subarray(at)]
  }
  const part = (key: string, id: string, seq: number, data: Buffer): (string | Buffer)[] => [
    'BFS.RESTORE-PART',
    key,
    '0',
    id,
    String(seq),
    data,
  ]

  it('are counted against maxmemory from part 0 on, refused with -OOM past it, and uncounted when dropped or committed', async () => {
    const redis = await serverWith()
    const { dump } = await filterPayloads(redis)
    const [first, rest] = parts(dump)
    expectThreeFit(
      await pipelined(
        redis,
        Array.from({ length: 8 }, (_, i) => part(`s${i}`, `id${i}`, 0, first)),
      ),
    )
    // What they hold is counted: a filter that would not fit beside them is refused.
    await expect(redis.call('BF.RESERVE', 'other', '0.01', String(CAPACITY))).rejects.toThrow(OOM)
    // A part out of sequence drops its staging: its memory is free again.
    await expect(redis.call(...(part('s0', 'id0', 5, rest) as [string, ...(string | Buffer)[]]))).rejects.toThrow(
      /out of sequence/,
    )
    expect(await redis.call(...(part('s3', 'id3', 0, first) as [string, ...(string | Buffer)[]]))).toBe('OK')
    await expect(redis.call(...(part('s4', 'id4', 0, first) as [string, ...(string | Buffer)[]]))).rejects.toThrow(OOM)
    // The commit moves one into the keyspace, counted once: deleting it makes room for one more.
    expect(await redis.call(...(part('s1', 'id1', 1, rest) as [string, ...(string | Buffer)[]]))).toBe('OK')
    expect(await redis.call('BF.EXISTS', 's1', 'x')).toBe(0)
    expect(await redis.call('DEL', 's1')).toBe(1)
    expect(await redis.call(...(part('s4', 'id4', 0, first) as [string, ...(string | Buffer)[]]))).toBe('OK')
    await expect(redis.call(...(part('s5', 'id5', 0, first) as [string, ...(string | Buffer)[]]))).rejects.toThrow(OOM)
  })

  it(`are bounded in number: past ${MAX_OPEN_STAGINGS} open, part 0 of another key is refused until one ends`, async () => {
    const redis = await serverWith()
    expect(await redis.call('BF.RESERVE', 'src', '0.01', '100')).toBe('OK')
    const [head, tail] = parts((await redis.callBuffer('DUMP', 'src')) as Buffer, 64)
    const opened = await pipelined(
      redis,
      Array.from({ length: MAX_OPEN_STAGINGS }, (_, i) => part(`k${i}`, `t${i}`, 0, head)),
    )
    expect(new Set(opened)).toEqual(new Set(['OK']))
    await expect(redis.call(...(part('late', 'tl', 0, head) as [string, ...(string | Buffer)[]]))).rejects.toThrow(
      /too many transfers open/,
    )
    // Part 0 again for an open key replaces its staging: allowed.
    expect(await redis.call(...(part('k0', 't0b', 0, head) as [string, ...(string | Buffer)[]]))).toBe('OK')
    expect(await redis.call(...(part('k0', 't0b', 1, tail) as [string, ...(string | Buffer)[]]))).toBe('OK')
    expect(await redis.call(...(part('late', 'tl', 0, head) as [string, ...(string | Buffer)[]]))).toBe('OK')
    expect(await redis.call(...(part('late', 'tl', 1, tail) as [string, ...(string | Buffer)[]]))).toBe('OK')
    expect(await redis.call('EXISTS', 'k0', 'late')).toBe(2)
  })
})
