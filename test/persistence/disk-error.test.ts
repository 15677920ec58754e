/**
 * -MISCONF while persistence fails, through a real bfs and real failing files (no mocks):
 * - a background save that cannot commit (its MANIFEST name taken by a non-empty directory, so
 *   the final rename fails) refuses writes and PING with redis 7.0's exact text, byte for byte,
 *   until a save succeeds; stop-writes-on-bgsave-error no and `save ""` lift it, as in redis;
 * - an append-only log segment that is /dev/full (every write fails with ENOSPC) refuses writes
 *   with "Errors writing to the AOF file: No space left on device", and the write whose record
 *   could not be written is not acknowledged until CONFIG SET appendonly no, the way out;
 * - a snapshot taken meanwhile (BGSAVE, SHUTDOWN SAVE) holds what the log could not take: the held
 *   write is acknowledged once the snapshot is on disk, writes are accepted again, and a restart
 *   after SIGKILL has it; SHUTDOWN NOSAVE closes the held client instead of acknowledging it.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer } from '../helpers/start-server.js'
import { makeTempDir } from '../helpers/temp-dir.js'
import { childClient, killChildServer, startChildServer } from '../helpers/child-server.js'
import { strerror } from '../../src/store/disk-error.js'
import { ERR } from '../../src/protocol/error-texts.js'
import { listSegments, segmentName } from '../../src/store/append-log.js'
import { scanLog } from '../../src/store/log-replay.js'

const cleanup: string[] = []
afterAll(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true })
})

function infoField(info: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)\\r?$`, 'm').exec(info)?.[1]
}

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Sends raw bytes and returns everything the server answered once `expected` bytes arrived. */
async function rawExchange(port: number, request: string, expected: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request))
    let received = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      received += chunk
      if (received.length >= expected) {
        socket.end()
        resolve(received)
      }
    })
    socket.on('error', reject)
    socket.on('close', () => resolve(received))
  })
}

async function lastBgsaveStatus(redis: Redis): Promise<string | undefined> {
  const info = String(await redis.info('persistence'))
  return infoField(info, 'rdb_bgsave_in_progress') === '0' ? infoField(info, 'rdb_last_bgsave_status') : undefined
}

describe('-MISCONF after a failed background save', () => {
  it("refuses writes and PING with redis's text until a save succeeds; reads go on", async () => {
    const running = await startServer({ save: '3600 1', appendonly: false, 'http-port': -1, 'http-filter': 'f' })
    const redis = new Redis({ port: running.port, host: '127.0.0.1', maxRetriesPerRequest: 0 })
    const manifest = path.join(running.dir, 'snapshot', 'MANIFEST')
    try {
      expect(await redis.call('BF.ADD', 'f', 'a')).toBe(1)
      // The save can write its filter files but not commit: MANIFEST is a non-empty directory.
      mkdirSync(path.join(manifest, 'in-the-way'), { recursive: true })

      // A failed SAVE is only an error reply, as in redis: writes stay allowed.
      await expect(redis.call('SAVE')).rejects.toThrow(/^ERR/)
      expect(await lastBgsaveStatus(redis)).toBe('ok')
      expect(await redis.call('BF.ADD', 'f', 'b')).toBe(1)

      // Neither is a failed log rewrite (it only sets aof_last_bgrewrite_status, as in redis).
      expect(await redis.call('BGREWRITEAOF')).toBe('Background append only file rewriting started')
      await waitUntil(
        async () => infoField(String(await redis.info('persistence')), 'aof_rewrite_in_progress') === '0',
        'the rewrite',
      )
      const afterRewrite = String(await redis.info('persistence'))
      expect([
        infoField(afterRewrite, 'aof_last_bgrewrite_status'),
        infoField(afterRewrite, 'rdb_last_bgsave_status'),
      ]).toEqual(['err', 'ok'])
      expect(await redis.call('BF.ADD', 'f', 'r')).toBe(1)

      expect(await redis.call('BGSAVE')).toBe('Background saving started')
      await waitUntil(async () => (await lastBgsaveStatus(redis)) !== undefined, 'the background save')
      expect(await lastBgsaveStatus(redis)).toBe('err')

      const refused = `-${ERR.MISCONF_BGSAVE}\r\n`
      const raw = await rawExchange(
        running.port,
        'BF.ADD f c\r\nPING\r\nBF.EXISTS f a\r\nBF.MADD f d e\r\nBF.MEXISTS f a c\r\nDEL f\r\n',
        refused.length * 4 + ':1\r\n'.length + '*2\r\n:1\r\n:0\r\n'.length,
      )
      expect(raw).toBe(refused + refused + ':1\r\n' + refused + '*2\r\n:1\r\n:0\r\n' + refused)
      expect(ERR.MISCONF_BGSAVE).toBe(
        "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. " +
          'Commands that may modify the data set are disabled, because this instance is configured to report ' +
          'errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check ' +
          'the Redis logs for details about the RDB error.',
      )
      const stats = String(await redis.call('INFO', 'commandstats'))
      expect(stats).toMatch(/^cmdstat_bf\.add:calls=3,.*rejected_calls=1,failed_calls=0/m)
      expect(stats).toMatch(/^cmdstat_ping:calls=0,.*rejected_calls=1,/m)
      expect(await redis.call('BF.INFO', 'f', 'ITEMS')).toEqual([3])
      // The HTTP API too: a refused add is a 503 with the error, a check answers.
      const http = `http://127.0.0.1:${running.server.httpPort}`
      const add = await fetch(`${http}/add=h`)
      expect([add.status, await add.text()]).toEqual([503, `${ERR.MISCONF_BGSAVE}\n`])
      const contain = await fetch(`${http}/contain=a`)
      expect([contain.status, await contain.text()]).toEqual([200, 'true'])

      // As in redis: the check is off with stop-writes-on-bgsave-error no, or with no save rules.
      expect(await redis.call('CONFIG', 'SET', 'stop-writes-on-bgsave-error', 'no')).toBe('OK')
      expect(await redis.call('BF.ADD', 'f', 'c')).toBe(1)
      expect(await redis.call('CONFIG', 'SET', 'stop-writes-on-bgsave-error', 'yes')).toBe('OK')
      await expect(redis.call('BF.ADD', 'f', 'x')).rejects.toThrow(/^MISCONF Redis is configured to save RDB snapshots/)
      expect(await redis.call('CONFIG', 'SET', 'save', '')).toBe('OK')
      expect(await redis.call('BF.ADD', 'f', 'd')).toBe(1)
      expect(await redis.call('CONFIG', 'SET', 'save', '3600 1')).toBe('OK')
      await expect(redis.call('PING')).rejects.toThrow(/^MISCONF/)

      // The disk is fixed: the next successful save lifts the refusal.
      rmSync(manifest, { recursive: true })
      expect(await redis.call('BGSAVE')).toBe('Background saving started')
      await waitUntil(async () => (await lastBgsaveStatus(redis)) === 'ok', 'a successful background save')
      expect(await redis.call('PING')).toBe('PONG')
      expect(await redis.call('BF.ADD', 'f', 'e')).toBe(1)
      expect(await redis.call('BF.MEXISTS', 'f', 'a', 'b', 'c', 'd', 'e', 'x')).toEqual([1, 1, 1, 1, 1, 0])
    } finally {
      redis.disconnect()
      rmSync(manifest, { recursive: true, force: true }) // so that a failed assertion is not hidden by the final save's
      await running.stop()
    }
  })
})

/** A child bfs whose log segment is /dev/full, a write held on it, and the client that waits. */
async function failingLog(): Promise<{
  dir: string
  port: number
  bfs: Awaited<ReturnType<typeof startChildServer>>['bfs']
  writer: Redis
  other: Redis
  pending: Promise<unknown>
  acknowledged: () => boolean
}> {
  expect(existsSync('/dev/full')).toBe(true)
  const dir = makeTempDir('bfs-misconf-snapshot-')
  cleanup.push(dir)
  writeFileSync(path.join(dir, 'bfs.conf'), 'save ""\nappendonly yes\nappendfsync everysec\n')
  const { bfs, port } = await startChildServer([path.join(dir, 'bfs.conf'), '--port', '0', '--dir', dir])
  const writer = childClient(port)
  const other = childClient(port)
  expect(await other.call('BF.ADD', 'f', 'a')).toBe(1)
  const segments = listSegments(dir, 'appendonly.aof')
  symlinkSync('/dev/full', path.join(dir, segmentName('appendonly.aof', segments[segments.length - 1]!.seq + 1)))
  expect(await other.call('BGSAVE')).toBe('Background saving started')
  await waitUntil(async () => (await lastBgsaveStatus(other)) === 'ok', 'the background save')
  let acknowledged = false
  const pending = writer.call('BF.ADD', 'f', 'b').then((reply) => {
    acknowledged = true
    return reply
  })
  pending.catch(() => {})
  await waitUntil(
    async () => infoField(String(await other.call('INFO', 'persistence')), 'aof_last_write_status') === 'err',
    'the log write error',
  )
  await expect(other.call('BF.ADD', 'f', 'c')).rejects.toThrow(/^MISCONF Errors writing to the AOF file/)
  expect(acknowledged).toBe(false)
  return { dir, port, bfs, writer, other, pending, acknowledged: () => acknowledged }
}

/** A BGSAVE that fails to commit (its MANIFEST's name taken by a non-empty directory; the real one kept aside). */
async function failedSnapshot(manifest: string, client: Redis): Promise<void> {
  renameSync(manifest, `${manifest}.kept`)
  mkdirSync(path.join(manifest, 'in-the-way'), { recursive: true })
  expect(await client.call('BGSAVE')).toBe('Background saving started')
  await waitUntil(async () => (await lastBgsaveStatus(client)) === 'err', 'the failed background save')
}

/**
 * Starts bfs again on `dir`, the disk fixed: the /dev/full segment, if still there, becomes the
 * empty file it is on a disk that took nothing (a missing segment would stop the start).
 */
async function restartHas(dir: string, items: string[]): Promise<number[]> {
  for (const name of readdirSync(dir)) {
    if (name.endsWith('.incr.aof') && lstatSync(path.join(dir, name)).isSymbolicLink()) {
      rmSync(path.join(dir, name))
      writeFileSync(path.join(dir, name), '')
    }
  }
  const again = await startChildServer([path.join(dir, 'bfs.conf'), '--port', '0', '--dir', dir])
  const client = childClient(again.port)
  try {
    return (await client.call('BF.MEXISTS', 'f', ...items)) as number[]
  } finally {
    client.disconnect()
    await killChildServer(again.bfs)
  }
}

describe('-MISCONF while the append-only log cannot be written', () => {
  it('refuses writes with the errno text, keeps reads, and does not acknowledge the unwritten write', async () => {
    const { dir, port, bfs, writer, other, pending, acknowledged } = await failingLog()
    try {
      const refused = `-MISCONF Errors writing to the AOF file: ${strerror('ENOSPC')}\r\n`
      expect(refused).toBe('-MISCONF Errors writing to the AOF file: No space left on device\r\n')
      const raw = await rawExchange(
        port,
        'BF.ADD f c\r\nBF.EXISTS f a\r\nPING\r\nBF.RESERVE g 0.01 100\r\n',
        refused.length * 3 + 4,
      )
      expect(raw).toBe(refused + ':1\r\n' + refused + refused)
      // The record of the held BF.ADD never reached the log: its reply is still held back.
      expect(acknowledged()).toBe(false)
      expect(bfs.stdout + bfs.stderr).toContain('Error writing to the AOF file: ENOSPC')

      // The operator's way out, as in redis: turn the log off. The held write is answered (it is
      // in memory, and in the next snapshot) and writes are accepted again.
      expect(await other.call('CONFIG', 'SET', 'appendonly', 'no')).toBe('OK')
      await pending
      expect(acknowledged()).toBe(true)
      expect(await other.call('BF.ADD', 'f', 'c')).toBe(1)
      expect(await other.call('PING')).toBe('PONG')
      const info = String(await other.call('INFO', 'persistence'))
      expect([infoField(info, 'aof_enabled'), infoField(info, 'aof_last_write_status')]).toEqual(['0', 'ok'])
      expect(bfs.stdout + bfs.stderr).toMatch(/Append only file closed with \d+ bytes of records it could not take/)
    } finally {
      writer.disconnect()
      other.disconnect()
      await killChildServer(bfs)
    }
    // What was acknowledged while the log was on is there after a restart (the disk fixed).
    expect(await restartHas(dir, ['a', 'z'])).toEqual([1, 0])
  })
})

describe('a snapshot while the append-only log cannot be written', () => {
  it('BGSAVE holds the unwritten write: it is acknowledged once saved, writes go on, and SIGKILL loses nothing', async () => {
    const { dir, bfs, writer, other, pending, acknowledged } = await failingLog()
    try {
      expect(await other.call('BGSAVE')).toBe('Background saving started')
      expect(await pending).toBe(1)
      expect(acknowledged()).toBe(true)
      expect(await lastBgsaveStatus(other)).toBe('ok')
      expect(bfs.stdout + bfs.stderr).toMatch(
        /could not take \d+ bytes of records \(cannot write the append only file\)/,
      )
      const info = String(await other.call('INFO', 'persistence'))
      expect([infoField(info, 'aof_enabled'), infoField(info, 'aof_last_write_status')]).toEqual(['1', 'ok'])
      expect(await other.call('BF.ADD', 'f', 'c')).toBe(1)
      expect(await other.call('PING')).toBe('PONG')
      // The failing segment went with the snapshot's commit; later writes are in the new one.
      expect(readdirSync(dir).filter((name) => name.endsWith('.incr.aof'))).toHaveLength(1)
    } finally {
      writer.disconnect()
      other.disconnect()
      await killChildServer(bfs)
    }
    expect(await restartHas(dir, ['a', 'b', 'c', 'x'])).toEqual([1, 1, 1, 0])
  })

  it('a snapshot that fails leaves the write held; another follows by itself once the disk is back', async () => {
    const { dir, bfs, writer, other, pending, acknowledged } = await failingLog()
    const manifest = path.join(dir, 'snapshot', 'MANIFEST')
    try {
      await failedSnapshot(manifest, other)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(acknowledged()).toBe(false)
      await expect(other.call('BF.ADD', 'f', 'c')).rejects.toThrow(/^MISCONF Errors writing to the AOF file/)
      // The disk is fixed: no command from anyone, and the write is answered within seconds.
      rmSync(manifest, { recursive: true })
      renameSync(`${manifest}.kept`, manifest)
      expect(await pending).toBe(1)
      expect(bfs.stdout + bfs.stderr).toContain('still wait for a snapshot: rewriting')
      expect(await other.call('BF.ADD', 'f', 'c')).toBe(1)
    } finally {
      writer.disconnect()
      other.disconnect()
      await killChildServer(bfs)
    }
    expect(await restartHas(dir, ['a', 'b', 'c'])).toEqual([1, 1, 1])
  }, 30_000)

  it('SHUTDOWN NOSAVE after a failed snapshot closes the held client unanswered', async () => {
    const { dir, bfs, writer, other, pending, acknowledged } = await failingLog()
    const manifest = path.join(dir, 'snapshot', 'MANIFEST')
    try {
      await failedSnapshot(manifest, other)
      await other.call('SHUTDOWN', 'NOSAVE').catch(() => {})
      await expect(pending).rejects.toThrow(/Connection is closed/)
      expect(acknowledged()).toBe(false)
      await bfs.waitExit()
      expect(bfs.stdout + bfs.stderr).toContain('left to a snapshot that was not saved')
    } finally {
      writer.disconnect()
      other.disconnect()
    }
    rmSync(manifest, { recursive: true })
    renameSync(`${manifest}.kept`, manifest)
    expect(await restartHas(dir, ['a', 'b'])).toEqual([1, 0])
  })

  it('a write cut short is cut back to its last whole record at once; a snapshot then holds the rest', async () => {
    const dir = makeTempDir('bfs-partial-write-')
    cleanup.push(dir)
    writeFileSync(
      path.join(dir, 'bfs.conf'),
      'save ""\nappendonly yes\nappendfsync everysec\nauto-aof-rewrite-percentage 0\n',
    )
    // Files of this process stop at 64 KiB: the log's write that crosses it is cut short.
    const { bfs, port } = await startChildServer([path.join(dir, 'bfs.conf'), '--port', '0', '--dir', dir], {
      fileSizeLimitKiB: 64,
    })
    const writer = childClient(port)
    const other = childClient(port)
    const item = (i: number): string => `${i}:${'x'.repeat(1000)}`
    let sent = 0
    let held: Promise<unknown> | undefined
    try {
      while (held === undefined && sent < 200) {
        const reply = writer.call('BF.ADD', 'f', item(sent++))
        reply.catch(() => {})
        const answered = await Promise.race([
          reply.then(() => true),
          new Promise((resolve) => setTimeout(() => resolve(false), 500)),
        ])
        if (!answered && infoField(String(await other.call('INFO', 'persistence')), 'aof_last_write_status') === 'err')
          held = reply
        else await reply
      }
      expect(held).toBeDefined()
      expect(bfs.stdout + bfs.stderr).toContain('EFBIG')
      const segment = path.join(dir, segmentName('appendonly.aof', 1))
      const bytes = readFileSync(segment)
      expect(bytes.length).toBeLessThan(64 * 1024)
      const added: string[] = []
      expect(
        // BF.ADDED: the record of an add an I/O thread answered (the threads project).
        scanLog(
          bytes,
          (argv) => ['BF.ADD', 'BF.ADDED'].includes(argv[0]!.toString()) && added.push(argv[2]!.toString()),
        ).validBytes,
      ).toBe(bytes.length)
      // Every write before the held one is there, whole; the held one is not, not even in part.
      expect(added).toEqual(Array.from({ length: sent - 1 }, (_, i) => item(i)))
      expect(Number(infoField(String(await other.call('INFO', 'persistence')), 'aof_current_size'))).toBe(bytes.length)
      expect(await other.call('BGSAVE')).toBe('Background saving started')
      expect(await held).toBe(1)
    } finally {
      writer.disconnect()
      other.disconnect()
      await killChildServer(bfs)
    }
    const again = await startChildServer([path.join(dir, 'bfs.conf'), '--port', '0', '--dir', dir])
    const client = childClient(again.port)
    try {
      expect(await client.call('BF.MEXISTS', 'f', ...Array.from({ length: sent }, (_, i) => item(i)))).toEqual(
        Array(sent).fill(1),
      )
      expect(await client.call('BF.CARD', 'f')).toBe(sent)
    } finally {
      client.disconnect()
      await killChildServer(again.bfs)
    }
  })

  it('SHUTDOWN SAVE saves it and exits; SHUTDOWN NOSAVE closes the held client unanswered', async () => {
    const saved = await failingLog()
    try {
      await saved.other.call('SHUTDOWN', 'SAVE').catch(() => {})
      expect(await saved.pending).toBe(1)
      expect(await saved.bfs.waitExit()).toBe(0)
    } finally {
      saved.writer.disconnect()
      saved.other.disconnect()
    }
    expect(await restartHas(saved.dir, ['a', 'b'])).toEqual([1, 1])

    const unsaved = await failingLog()
    try {
      await unsaved.other.call('SHUTDOWN', 'NOSAVE').catch(() => {})
      await expect(unsaved.pending).rejects.toThrow(/Connection is closed/)
      expect(unsaved.acknowledged()).toBe(false)
      await unsaved.bfs.waitExit()
      expect(unsaved.bfs.stdout + unsaved.bfs.stderr).toContain('Error closing the append only file')
    } finally {
      unsaved.writer.disconnect()
      unsaved.other.disconnect()
    }
    // Not acknowledged, and nowhere on disk: the next start does not have it.
    expect(await restartHas(unsaved.dir, ['a', 'b'])).toEqual([1, 0])
  })
})

describe('CONFIG SET appendonly yes when the rewrite under the log fails', () => {
  it('is tried again each second, backs off after 3 failures, and stops with appendonly no', async () => {
    const running = await startServer({ save: '', appendonly: false, 'http-port': -1 })
    const redis = new Redis({ port: running.port, host: '127.0.0.1', maxRetriesPerRequest: 0 })
    const manifest = path.join(running.dir, 'snapshot', 'MANIFEST')
    const persistence = async (): Promise<string> => String(await redis.info('persistence'))
    const failures = async (): Promise<number> =>
      Number(infoField(await persistence(), 'aof_rewrites_consecutive_failures'))
    try {
      mkdirSync(path.join(manifest, 'in-the-way'), { recursive: true })
      expect(await redis.call('CONFIG', 'SET', 'appendonly', 'yes')).toBe('OK')
      await waitUntil(
        async () =>
          running.logs.some((line) =>
            line.includes('repeatedly failed and triggered the limit, will retry in 1 minutes'),
          ),
        'the back-off',
      )
      expect(await failures()).toBe(3)
      expect(infoField(await persistence(), 'aof_rewrite_scheduled')).toBe('1')
      await new Promise((resolve) => setTimeout(resolve, 2500))
      expect(await failures()).toBe(3)
      // redis stopAppendOnly: nothing is scheduled for a log that is off.
      expect(await redis.call('CONFIG', 'SET', 'appendonly', 'no')).toBe('OK')
      expect(infoField(await persistence(), 'aof_rewrite_scheduled')).toBe('0')
      // Turning it on again starts a rewrite at once, back-off or not.
      rmSync(manifest, { recursive: true })
      expect(await redis.call('CONFIG', 'SET', 'appendonly', 'yes')).toBe('OK')
      await waitUntil(async () => infoField(await persistence(), 'aof_last_bgrewrite_status') === 'ok', 'the rewrite')
      expect([await failures(), infoField(await persistence(), 'aof_rewrite_scheduled')]).toEqual([0, '0'])
    } finally {
      redis.disconnect()
      rmSync(manifest, { recursive: true, force: true })
      await running.stop()
    }
  })

  it('is tried again each second, as redis reschedules it, and INFO counts the failures', async () => {
    const running = await startServer({ save: '', appendonly: false, 'http-port': -1 })
    const redis = new Redis({ port: running.port, host: '127.0.0.1', maxRetriesPerRequest: 0 })
    const manifest = path.join(running.dir, 'snapshot', 'MANIFEST')
    const persistence = async (): Promise<string> => String(await redis.info('persistence'))
    try {
      expect(await redis.call('BF.ADD', 'f', 'while-off')).toBe(1)
      mkdirSync(path.join(manifest, 'in-the-way'), { recursive: true })
      expect(await redis.call('CONFIG', 'SET', 'appendonly', 'yes')).toBe('OK')
      await waitUntil(
        async () => Number(infoField(await persistence(), 'aof_rewrites_consecutive_failures')) >= 2,
        'two failed rewrites',
      )
      const failing = await persistence()
      expect([infoField(failing, 'aof_enabled'), infoField(failing, 'aof_last_bgrewrite_status')]).toEqual(['1', 'err'])
      rmSync(manifest, { recursive: true })
      await waitUntil(
        async () => infoField(await persistence(), 'aof_last_bgrewrite_status') === 'ok',
        'the rewrite retried',
      )
      const done = await persistence()
      expect(infoField(done, 'aof_rewrites_consecutive_failures')).toBe('0')
      expect(infoField(done, 'aof_rewrites')).toBe('1')
      // Not again once one succeeded.
      await new Promise((resolve) => setTimeout(resolve, 1500))
      expect([
        infoField(await persistence(), 'aof_rewrites'),
        infoField(await persistence(), 'aof_rewrite_scheduled'),
      ]).toEqual(['1', '0'])
    } finally {
      redis.disconnect()
      rmSync(manifest, { recursive: true, force: true })
      await running.stop()
    }
  })
})
