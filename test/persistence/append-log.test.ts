/**
 * The append-only log in a real bfs: a restart replays every kind of write; under `always` a reply
 * comes only after its record is fsynced; a truncated tail loads with a warning; damage in the
 * middle stops startup naming the offset; BGREWRITEAOF under load loses nothing (through issue 3's snapshot); INFO aof_*;
 * CONFIG SET appendonly yes/no at run time.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { appendFileSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { makeTempDir } from '../helpers/temp-dir.js'
import { RawClient, encodeCommand } from '../helpers/resp.js'
import { replyEnd } from '../helpers/tools.js'
import { testIoThreads } from '../helpers/start-server.js'
import { createServer, type BfsServer } from '../../src/server/server.js'
import type { Config } from '../../src/runtime/config.js'
import { listSegments, segmentName } from '../../src/store/append-log.js'

const dirs: string[] = []
const servers: BfsServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function tempDir(): string {
  const dir = makeTempDir('bfs-aof-server-')
  dirs.push(dir)
  return dir
}

interface Started {
  server: BfsServer
  logs: string[]
}

function build(dir: string, config: Partial<Config> = {}): Started {
  const logs: string[] = []
  const server = createServer({
    config: { port: 0, save: '', appendonly: true, appendfsync: 'everysec', ...testIoThreads(), ...config, dir },
    logSink: (line) => logs.push(line),
  })
  servers.push(server)
  return { server, logs }
}

async function boot(dir: string, config: Partial<Config> = {}): Promise<Started> {
  const started = build(dir, config)
  await started.server.start()
  return started
}

async function stop(server: BfsServer): Promise<void> {
  servers.splice(servers.indexOf(server), 1)
  await server.close()
}

/** Sends the commands in one write and returns their replies as strings. */
async function send(port: number, commands: (string | Buffer)[][]): Promise<string[]> {
  const client = await RawClient.connect(port)
  try {
    client.write(Buffer.concat(commands.map((argv) => encodeCommand(argv))))
    const raw = await client.readUntil((bytes) => countReplies(bytes) >= commands.length)
    return splitReplies(raw)
  } finally {
    client.close()
  }
}

function countReplies(bytes: Buffer): number {
  return splitReplies(bytes).length
}

function splitReplies(bytes: Buffer): string[] {
  const replies: string[] = []
  let at = 0
  while (at < bytes.length) {
    const end = replyEnd(bytes, at)
    if (end < 0) break
    replies.push(bytes.toString('latin1', at, end))
    at = end
  }
  return replies
}

const WRITES: (string | Buffer)[][] = [
  ['BF.RESERVE', 'fixed', '0.001', '50', 'NONSCALING'],
  ['BF.MADD', 'fixed', 'a', 'b', 'c'],
  ['BF.ADD', 'auto', 'x'],
  ['BF.INSERT', 'ins', 'CAPACITY', '10', 'ERROR', '0.01', 'ITEMS', 'p', 'q'],
  ['BF.ADD', Buffer.from([0xff, 0x00, 0x0a]), Buffer.from([1, 2, 3])],
  ['BF.ADD', 'gone', 'y'],
  ['DEL', 'gone'],
  ['BF.ADD', 'old', 'moved'],
  ['RENAME', 'old', 'new'],
  ['BF.ADD', 'scaling', ...Array.from({ length: 1 }, () => 'one')],
  ['BF.MADD', 'scaling', ...Array.from({ length: 500 }, (_, i) => `s${i}`)],
]

const PROBES: (string | Buffer)[][] = [
  ['BF.MEXISTS', 'fixed', 'a', 'b', 'c', 'zz'],
  ['BF.INFO', 'fixed'],
  ['BF.CARD', 'auto'],
  ['BF.INFO', 'ins'],
  ['BF.EXISTS', Buffer.from([0xff, 0x00, 0x0a]), Buffer.from([1, 2, 3])],
  ['EXISTS', 'gone', 'old', 'new'],
  ['BF.EXISTS', 'new', 'moved'],
  ['BF.INFO', 'scaling'],
  ['BF.MEXISTS', 'scaling', 's0', 's250', 's499'],
  ['DBSIZE'],
]

describe('append-only log in a running server', () => {
  it('a restart replays every write, leaving the same answers', async () => {
    const dir = tempDir()
    const first = await boot(dir)
    await send(first.server.port, WRITES)
    const before = await send(first.server.port, PROBES)
    await stop(first.server)

    const second = await boot(dir)
    expect(await send(second.server.port, PROBES)).toEqual(before)
    expect(before[5]).toBe(':1\r\n') // only 'new' exists of the three
    expect(second.logs.some((line) => /DB loaded from append only file: \d+ commands/.test(line))).toBe(true)
    // The replay did not log itself again.
    const file = path.join(dir, segmentName('appendonly.aof', 1))
    const size = statSync(file).size
    await stop(second.server)
    expect(statSync(file).size).toBe(size)
  })

  it('records carry explicit options, so a replay does not depend on the defaults of the day', async () => {
    const dir = tempDir()
    const first = await boot(dir, { 'default-capacity': 1000, 'default-error-rate': 0.05 })
    await send(first.server.port, [['BF.ADD', 'k', 'v']])
    const info = await send(first.server.port, [['BF.INFO', 'k']])
    await stop(first.server)
    expect(readFileSync(path.join(dir, segmentName('appendonly.aof', 1)), 'latin1')).toContain(
      'BF.RESERVE\r\n$1\r\nk\r\n$4\r\n0.05\r\n$4\r\n1000',
    )
    const second = await boot(dir)
    expect(await send(second.server.port, [['BF.INFO', 'k']])).toEqual(info)
  })

  it('appendfsync always: the replies to a pipelined batch arrive after its records are fsynced', async () => {
    const dir = tempDir()
    const { server } = await boot(dir, { appendfsync: 'always' })
    const client = await RawClient.connect(server.port)
    for (let batch = 0; batch < 5; batch++) {
      const commands = Array.from({ length: 16 }, (_, i) => ['BF.ADD', 'f', `item-${batch}-${i}`])
      client.write(Buffer.concat(commands.map((argv) => encodeCommand(argv))))
      const raw = await client.readUntil((bytes) => countReplies(bytes) >= 16)
      // At the moment the replies are here, the log holds them on disk.
      expect(server.persistence.appendLog.syncedBytes).toBeGreaterThanOrEqual(
        server.persistence.appendLog.appendedBytes,
      )
      expect(splitReplies(raw)).toHaveLength(16)
    }
    client.close()
  })

  it("appendfsync always: a client that did not write sees another client's add only once it is fsynced", async () => {
    const dir = tempDir()
    const { server } = await boot(dir, { appendfsync: 'always' })
    const log = server.persistence.appendLog
    // Holds the fsync of the log until released, as a slow disk would.
    const realSync = log.sync.bind(log)
    let held = true
    log.sync = () => {
      if (!held) realSync()
    }
    const writer = await RawClient.connect(server.port)
    const reader = await RawClient.connect(server.port)
    try {
      writer.write(encodeCommand(['BF.ADD', 'f', 'item']))
      while (log.writtenBytes === 0) await new Promise((resolve) => setImmediate(resolve))
      const target = log.writtenBytes
      const processed = server.stats.commandsProcessed
      // Reads that show the add, and an add of the same item that answers "already there".
      reader.write(Buffer.concat([encodeCommand(['BF.EXISTS', 'f', 'item']), encodeCommand(['BF.ADD', 'f', 'item'])]))
      while (server.stats.commandsProcessed < processed + 2) await new Promise((resolve) => setImmediate(resolve))
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(log.syncedBytes).toBeLessThan(target)
      held = false
      log.sync()
      let syncedWhenSeen = -1
      const raw = await reader.readUntil((bytes) => {
        const done = countReplies(bytes) >= 2
        if (done && syncedWhenSeen < 0) syncedWhenSeen = log.syncedBytes
        return done
      })
      expect(splitReplies(raw)).toEqual([':1\r\n', ':0\r\n'])
      expect(syncedWhenSeen).toBeGreaterThanOrEqual(target)
      expect(splitReplies(await writer.readUntil((bytes) => countReplies(bytes) >= 1))).toEqual([':1\r\n'])
    } finally {
      writer.close()
      reader.close()
    }
  })

  it('a log cut inside its last record loads up to the last whole record, with a warning', async () => {
    const dir = tempDir()
    const first = await boot(dir)
    await send(first.server.port, [
      ['BF.ADD', 'f', 'kept'],
      ['BF.ADD', 'f', 'cut'],
    ])
    await stop(first.server)
    const file = path.join(dir, segmentName('appendonly.aof', 1))
    writeFileSync(file, readFileSync(file).subarray(0, statSync(file).size - 4))
    const second = await boot(dir)
    expect(await send(second.server.port, [['BF.MEXISTS', 'f', 'kept', 'cut']])).toEqual(['*2\r\n:1\r\n:0\r\n'])
    expect(second.logs.some((line) => /short read/.test(line))).toBe(true)
  })

  it('a record answering an error is logged with its offset and skipped; the replay goes on', async () => {
    const dir = tempDir()
    const first = await boot(dir)
    await send(first.server.port, [
      ['BF.RESERVE', 'f', '0.01', '100'],
      ['BF.ADD', 'f', 'one'],
    ])
    await stop(first.server)
    const file = path.join(dir, segmentName('appendonly.aof', 1))
    const at = statSync(file).size
    appendFileSync(
      file,
      Buffer.concat([encodeCommand(['BF.RESERVE', 'f', '0.01', '100']), encodeCommand(['BF.ADD', 'f', 'two'])]),
    )
    const second = await boot(dir, { loglevel: 'verbose' })
    expect(await send(second.server.port, [['BF.MEXISTS', 'f', 'one', 'two']])).toEqual(['*2\r\n:1\r\n:1\r\n'])
    expect(second.logs.some((line) => new RegExp(`AOF replay \\S+@${at}: ERR item exists$`).test(line))).toBe(true)
    expect(
      second.logs.some((line) => line.includes('1 command(s) of the append only file answered an error while loading')),
    ).toBe(true)
  })

  it('damage in the middle stops startup with a message naming the byte offset', async () => {
    const dir = tempDir()
    const first = await boot(dir)
    await send(first.server.port, [
      ['BF.ADD', 'f', 'one'],
      ['BF.ADD', 'f', 'two'],
      ['BF.ADD', 'f', 'three'],
    ])
    await stop(first.server)
    const file = path.join(dir, segmentName('appendonly.aof', 1))
    const bytes = readFileSync(file)
    const at = bytes.indexOf('$3\r\ntwo')
    bytes[at] = 0x25 // %
    writeFileSync(file, bytes)
    const { server } = build(dir)
    await expect(server.start()).rejects.toThrow(new RegExp(`at offset ${at}\\b`))
    expect(server.port).toBe(0) // never listened
    servers.splice(servers.indexOf(server), 1)

    const tolerant = await boot(dir, { 'aof-load-corrupt': true })
    expect(await send(tolerant.server.port, [['BF.EXISTS', 'f', 'one']])).toEqual([':1\r\n'])
  })

  it('INFO persistence reports the aof_* fields', async () => {
    const { server } = await boot(tempDir())
    await send(server.port, [['BF.ADD', 'f', 'x']])
    const [info] = await send(server.port, [['INFO', 'persistence']])
    for (const field of [
      'aof_enabled:1',
      'aof_rewrite_in_progress:0',
      'aof_last_bgrewrite_status:ok',
      'aof_last_write_status:ok',
      'aof_current_size:',
    ]) {
      expect(info).toContain(field)
    }
    expect(Number(/aof_current_size:(\d+)/.exec(info!)![1])).toBeGreaterThan(0)
    const off = await boot(tempDir(), { appendonly: false })
    const [offInfo] = await send(off.server.port, [['INFO', 'persistence']])
    expect(offInfo).toContain('aof_enabled:0')
  })
})

describe('BGREWRITEAOF', () => {
  it('a rewrite under pipelined load from several clients loses no acknowledged add', async () => {
    const dir = tempDir()
    const first = await boot(dir)
    const port = first.server.port
    await send(port, [['BF.RESERVE', 'f', '0.001', '100000']])
    const acked: string[] = []
    let rewriteStarted = false
    const loaders = Array.from({ length: 4 }, async (_, clientIndex) => {
      const client = await RawClient.connect(port)
      for (let batch = 0; batch < 30; batch++) {
        const items = Array.from({ length: 16 }, (_, i) => `c${clientIndex}-${batch}-${i}`)
        client.write(Buffer.concat(items.map((item) => encodeCommand(['BF.ADD', 'f', item]))))
        const replies = splitReplies(await client.readUntil((bytes) => countReplies(bytes) >= 16))
        replies.forEach((reply, i) => {
          if (reply === ':1\r\n' || reply === ':0\r\n') acked.push(items[i]!)
        })
        if (clientIndex === 0 && batch === 10) {
          expect(await send(port, [['BGREWRITEAOF']])).toEqual(['+Background append only file rewriting started\r\n'])
          rewriteStarted = true
        }
      }
      client.close()
    })
    await Promise.all(loaders)
    expect(rewriteStarted).toBe(true)
    await first.server.persistence.logRewriter.idle()
    const [info] = await send(port, [['INFO', 'persistence']])
    expect(info).toContain('aof_last_bgrewrite_status:ok')
    expect(info).toContain('aof_rewrites:1')
    // The first segment is folded into the snapshot; writes made during the rewrite are in the second.
    expect(listSegments(dir, 'appendonly.aof').map((segment) => segment.seq)).toEqual([2])
    expect(statSync(path.join(dir, segmentName('appendonly.aof', 2))).size).toBeGreaterThan(0)
    await stop(first.server)
    expect(acked).toHaveLength(4 * 30 * 16)

    // Restart: snapshot load, then the log written after it.
    const second = await boot(dir)
    for (let at = 0; at < acked.length; at += 500) {
      const chunk = acked.slice(at, at + 500)
      const [reply] = await send(second.server.port, [['BF.MEXISTS', 'f', ...chunk]])
      expect(reply).toBe(`*${chunk.length}\r\n` + ':1\r\n'.repeat(chunk.length))
    }
    const [card] = await send(second.server.port, [['BF.CARD', 'f']])
    expect(Number(card!.slice(1))).toBeGreaterThan(acked.length * 0.99)
  })
})

describe('CONFIG SET appendonly', () => {
  it('yes: opens the log with a rewrite as its base, so a restart with the log on has every write', async () => {
    const dir = tempDir()
    const first = await boot(dir, { appendonly: false })
    const port = first.server.port
    const half = Math.floor(WRITES.length / 2)
    await send(port, WRITES.slice(0, half)) // made while the log is off: the rewrite must keep them
    expect(listSegments(dir, 'appendonly.aof')).toEqual([])
    expect(
      await send(port, [
        ['CONFIG', 'SET', 'appendonly', 'yes'],
        ['CONFIG', 'GET', 'appendonly'],
      ]),
    ).toEqual(['+OK\r\n', '*2\r\n$10\r\nappendonly\r\n$3\r\nyes\r\n'])
    await send(port, WRITES.slice(half))
    await first.server.persistence.logRewriter.idle()
    const [info] = await send(port, [['INFO', 'persistence']])
    for (const field of ['aof_enabled:1', 'aof_rewrites:1', 'aof_last_bgrewrite_status:ok'])
      expect(info).toContain(field)
    expect(first.logs.some((line) => line.includes('Append only file enabled'))).toBe(true)
    const before = await send(port, PROBES)
    await stop(first.server) // save "": no final snapshot, the restart needs the rewrite and the log

    const second = await boot(dir, { appendonly: true })
    expect(await send(second.server.port, PROBES)).toEqual(before)
    expect(before[5]).toBe(':1\r\n')
  })

  it('no: writes and closes the log; later writes are not logged and a snapshot retires its segments', async () => {
    const dir = tempDir()
    const { server } = await boot(dir)
    await send(server.port, [['BF.ADD', 'f', 'a']])
    const file = path.join(dir, segmentName('appendonly.aof', 1))
    expect(await send(server.port, [['CONFIG', 'SET', 'appendonly', 'no']])).toEqual(['+OK\r\n'])
    const size = statSync(file).size
    expect(size).toBeGreaterThan(0)
    expect(
      await send(server.port, [
        ['BF.ADD', 'f', 'b'],
        ['INFO', 'persistence'],
      ]),
    ).toEqual([':1\r\n', expect.stringContaining('aof_enabled:0')])
    expect(statSync(file).size).toBe(size)
    expect(await send(server.port, [['CONFIG', 'SET', 'appendonly', 'no']])).toEqual(['+OK\r\n'])
    expect(await send(server.port, [['SAVE']])).toEqual(['+OK\r\n'])
    expect(listSegments(dir, 'appendonly.aof')).toEqual([])
    // And on again: a fresh segment after the snapshot's log-from.
    expect(
      await send(server.port, [
        ['CONFIG', 'SET', 'appendonly', 'yes'],
        ['BF.ADD', 'f', 'c'],
      ]),
    ).toEqual(['+OK\r\n', ':1\r\n'])
    await server.persistence.logRewriter.idle()
    expect(listSegments(dir, 'appendonly.aof').length).toBe(1)
  })

  it('a log that cannot be opened is an error and changes nothing (all or nothing)', async () => {
    const dir = tempDir()
    const { server } = await boot(dir, { appendonly: false })
    // The data directory is gone (moved away): the segment cannot be created.
    renameSync(dir, `${dir}.moved`)
    try {
      const [reply] = await send(server.port, [['CONFIG', 'SET', 'maxclients', '7', 'appendonly', 'yes']])
      expect(reply).toBe(
        "-ERR CONFIG SET failed (possibly related to argument 'appendonly') - Unable to turn on AOF. Check server logs.\r\n",
      )
      expect(
        await send(server.port, [
          ['CONFIG', 'GET', 'appendonly'],
          ['CONFIG', 'GET', 'maxclients'],
          ['BF.ADD', 'f', 'a'],
        ]),
      ).toEqual(['*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n', '*2\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n', ':1\r\n'])
    } finally {
      renameSync(`${dir}.moved`, dir)
    }
    expect(await send(server.port, [['CONFIG', 'SET', 'appendonly', 'yes']])).toEqual(['+OK\r\n'])
  })
})
