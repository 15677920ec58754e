/**
 * BF.ADD, BF.MADD, BF.INSERT and BF.CARD answered by the I/O threads themselves (io-threads > 1; server/
 * thread-plane.ts, thread-answers.ts), against real bfs processes over real sockets: the answers
 * and counts are the main thread's; a layer takes exactly its capacity and the filter grows where a
 * serial server's would; under many connections adding the same and different items, with DEL,
 * re-creation, growth, FLUSHDB and BGSAVE underneath, no acknowledged item is lost and BF.CARD is
 * exactly the number of adds that answered 1, before and after a restart from the snapshot; and
 * where the adds would have to be recorded or refused (the append-only log, WATCH), the main thread
 * takes them again.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeHasReusePort } from '../../src/runtime/io-threads-setting.js'
import { BFS_MAIN, startChildServer, type ChildServer } from '../helpers/child-server.js'
import { RawClient, ask, askOnce, encodeCommand } from '../helpers/resp.js'
import { waitUntil } from '../helpers/cluster-nodes.js'
import { tempDirsRemovedAfterAll } from '../helpers/temp-dir.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const REUSE_PORT = nodeHasReusePort(process.version)
const tempDir = tempDirsRemovedAfterAll('bfs-thread-adds-')

const IO = ['--io-threads', '3']
const servers: ChildServer[] = []
const clients: RawClient[] = []

/** A bfs with two I/O threads, without the log and (unless `extra` sets them) save rules. */
async function start(dir: string, ...extra: string[]): Promise<ChildServer> {
  const save = extra.includes('--save') ? [] : ['--save', '']
  const server = await startChildServer(['--port', '0', '--dir', dir, '--appendonly', 'no', ...save, ...IO, ...extra])
  servers.push(server)
  return server
}

async function stop(server: ChildServer, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  server.bfs.child.kill(signal)
  await server.bfs.waitExit()
  servers.splice(servers.indexOf(server), 1)
}

async function connect(port: number): Promise<RawClient> {
  const client = await RawClient.connect(port)
  clients.push(client)
  return client
}

/** INFO's count of the commands the I/O threads answered themselves. */
async function threadAnswered(port: number): Promise<number> {
  const info = await askOnce(port, 'INFO', 'stats')
  return Number(/bfs_io_threaded_commands_processed:(\d+)/.exec(info)![1])
}

/** Checks `key` on `client` until its thread answers the check itself (its layout learnt). */
async function warm(client: RawClient, key: string): Promise<void> {
  const port = client.socket.remotePort!
  for (let i = 0; i < 200; i++) {
    const before = await threadAnswered(port)
    await ask(client, 'BF.EXISTS', key, 'warm')
    if ((await threadAnswered(port)) > before) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`the I/O thread never answered a check of ${key}`)
}

/** The 1s of an array reply of 0/1 integers (or of one integer reply). */
function ones(reply: string): number {
  return reply.split('\r\n').filter((line) => line === ':1').length
}

/** One BF.ADD per item, pipelined: their replies together. */
async function pipelinedAdds(client: RawClient, key: string, items: readonly string[]): Promise<string> {
  client.write(Buffer.concat(items.map((item) => encodeCommand(['BF.ADD', key, item]))))
  return (await client.read(4 * items.length)).toString('latin1')
}

/** BF.DEBUG's layers: [size, capacity] of each, oldest first. */
async function layers(port: number, key: string): Promise<[number, number][]> {
  const reply = await askOnce(port, 'BF.DEBUG', key)
  return [...reply.matchAll(/capacity:(\d+) size:(\d+)/g)].map((match) => [Number(match[2]), Number(match[1])])
}

/** Each layer holds at most its capacity, and every layer before the newest exactly that. */
function expectFilledInOrder(found: [number, number][]): void {
  for (const [index, [size, capacity]] of found.entries()) {
    expect(size).toBeLessThanOrEqual(capacity)
    if (index < found.length - 1) expect(size).toBe(capacity)
  }
}

/** What {@link concurrentLoad} saw: failures, the items acknowledged, the adds that answered 1. */
interface Load {
  readonly failures: string[]
  readonly acked: string[]
  onesSeen: number
}

/**
 * `ms` of concurrent adds to `hot` from the eight `adders` (already warm): four send the same
 * items (racing on each), four their own, pipelined BF.ADD and BF.MADD, two of them BF.INSERT with
 * CAPACITY, which the main thread runs (its adds meet the threads'); each also adds to filters
 * deleted and re-created underneath (`churn:0-3`), and with `readBack` reads back what was
 * acknowledged so far. Underneath, from `admin` and one more connection: DEL and re-RESERVE of
 * the churned filters, adds in database 1 and its FLUSHDB, BGSAVE.
 */
async function concurrentLoad(
  port: number,
  admin: RawClient,
  adders: readonly RawClient[],
  ms: number,
  readBack: boolean,
): Promise<Load> {
  const deadline = Date.now() + ms
  const load: Load = { failures: [], acked: [], onesSeen: 0 }
  const { failures, acked } = load
  const adding = adders.map(async (adder, a) => {
    for (let n = 0; Date.now() < deadline; n++) {
      const batch = Array.from({ length: 8 }, (_, i) => (a < 4 ? `same:${n}:${i}` : `own${a}:${n}:${i}`))
      const reply =
        n % 3 === 0
          ? await pipelinedAdds(adder, 'hot', batch)
          : a >= 6
            ? await ask(adder, 'BF.INSERT', 'hot', 'CAPACITY', '500', 'ITEMS', ...batch)
            : await ask(adder, 'BF.MADD', 'hot', ...batch)
      if (!/^(\*8\r\n)?(:[01]\r\n){8}$/.test(reply)) failures.push(`adder ${a}: ${reply.slice(0, 80)}`)
      load.onesSeen += ones(reply)
      acked.push(...batch)
      const churn = await ask(adder, 'BF.MADD', `churn:${n % 4}`, `c${a}:${n}`)
      if (!/^\*1\r\n:[01]\r\n$/.test(churn)) failures.push(`churn ${a}: ${churn}`)
      if (readBack && n % 10 === 0) {
        const sample = acked.slice(-50)
        const seen = await ask(adder, 'BF.MEXISTS', 'hot', ...sample)
        if (seen !== `*${sample.length}\r\n${':1\r\n'.repeat(sample.length)}`)
          failures.push(`adder ${a} read back: ${seen.slice(0, 80)}`)
      }
    }
  })
  const other = await connect(port)
  const underneath = (async () => {
    expect(await ask(other, 'SELECT', '1')).toBe('+OK\r\n')
    for (let n = 0; Date.now() < deadline; n++) {
      await ask(admin, 'DEL', `churn:${n % 4}`)
      await ask(admin, 'BF.RESERVE', `churn:${n % 4}`, '0.01', String(20 + (n % 3) * 10))
      await ask(other, 'BF.MADD', 'elsewhere', ...Array.from({ length: 20 }, (_, i) => `e${n}:${i}`))
      if (n % 5 === 0) await ask(other, 'FLUSHDB')
      if (n % 7 === 0) {
        const reply = await ask(admin, 'BGSAVE')
        if (!reply.startsWith('+Background saving started') && !reply.includes('in progress'))
          failures.push(`BGSAVE: ${reply}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  await Promise.all([...adding, underneath])
  return load
}

/** How many of `items` the filter `hot` on `port` answers 0 for (a false negative each). */
async function missing(port: number, items: readonly string[]): Promise<number> {
  let absent = 0
  for (let i = 0; i < items.length; i += 200) {
    const slice = items.slice(i, i + 200)
    absent += slice.length - ones(await askOnce(port, 'BF.MEXISTS', 'hot', ...slice))
  }
  return absent
}

beforeAll(() => {
  // `npm test` builds first (pretest); when vitest runs alone, build once here.
  if (!existsSync(BFS_MAIN)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'pipe' })
}, 120_000)

afterAll(async () => {
  for (const client of clients.splice(0)) client.close()
  for (const server of servers.splice(0)) {
    server.bfs.kill()
    await server.bfs.waitExit()
  }
})

describe.runIf(REUSE_PORT)('adds answered by the I/O threads', () => {
  it('answer and count as the main thread does: replies, BF.CARD, BF.INFO, commandstats, changes since the last save', async () => {
    const server = await start(tempDir())
    const admin = await connect(server.port)
    expect(await ask(admin, 'BF.RESERVE', 'adds', '0.001', '1000')).toBe('+OK\r\n')
    const client = await connect(server.port)
    await warm(client, 'adds')
    expect(await ask(admin, 'CONFIG', 'RESETSTAT')).toBe('+OK\r\n')
    const changes = async (): Promise<number> =>
      Number(/rdb_changes_since_last_save:(\d+)/.exec(await ask(admin, 'INFO', 'persistence'))![1])
    const changedBefore = await changes()
    const before = await threadAnswered(server.port)
    const commands = [
      ['BF.ADD', 'adds', 'a'],
      ['bf.add', 'adds', 'a'],
      ['BF.MADD', 'adds', 'b', 'c', 'b', 'a'],
      ['BF.CARD', 'adds'],
      ['BF.EXISTS', 'adds', 'c'],
      ['Bf.Madd', 'adds', 'd'],
      ['BF.CARD', 'adds'],
      ['BF.INSERT', 'adds', 'NOCREATE', 'ITEMS', 'e', 'a'],
      ['bf.insert', 'adds', 'items', 'f'],
    ]
    client.write(Buffer.concat(commands.map((command) => encodeCommand(command))))
    const expected =
      ':1\r\n:0\r\n*4\r\n:1\r\n:1\r\n:0\r\n:0\r\n:3\r\n:1\r\n*1\r\n:1\r\n:4\r\n*2\r\n:1\r\n:0\r\n*1\r\n:1\r\n'
    expect((await client.read(expected.length)).toString('latin1')).toBe(expected)
    expect((await threadAnswered(server.port)) - before).toBe(9)
    const stats = await ask(admin, 'INFO', 'commandstats')
    expect(stats).toMatch(/cmdstat_bf\.add:calls=2,/)
    expect(stats).toMatch(/cmdstat_bf\.madd:calls=2,/)
    expect(stats).toMatch(/cmdstat_bf\.card:calls=2,/)
    expect(stats).toMatch(/cmdstat_bf\.insert:calls=2,/)
    expect((await changes()) - changedBefore).toBe(6)
    expect(await ask(admin, 'BF.CARD', 'adds')).toBe(':6\r\n')
    expect(await ask(admin, 'BF.MEXISTS', 'adds', 'a', 'b', 'c', 'd', 'e', 'f', 'g')).toBe(
      '*7\r\n:1\r\n:1\r\n:1\r\n:1\r\n:1\r\n:1\r\n:0\r\n',
    )
    // A key without a filter, an item count past what a thread takes, wrong arity, BF.INSERT's
    // options and errors: the main thread's.
    const others = [
      ['BF.ADD', 'new-key', 'x'],
      ['BF.CARD', 'adds', 'extra'],
      ['BF.MADD', 'adds', ...Array.from({ length: 300 }, (_, i) => `many${i}`)],
      ['BF.INSERT', 'adds', 'CAPACITY', '10', 'ITEMS', 'g'],
      ['BF.INSERT', 'adds', 'ITEMS'],
      ['BF.INSERT', 'adds', 'NOCREATE', 'BOGUS', 'ITEMS', 'h'],
      ['BF.INSERT', 'none', 'NOCREATE', 'ITEMS', 'h'],
      ['BF.CARD', 'adds'],
    ]
    client.write(Buffer.concat(others.map((command) => encodeCommand(command))))
    const replies =
      `:1\r\n-ERR wrong number of arguments for 'bf.card' command\r\n*300\r\n${':1\r\n'.repeat(300)}` +
      `*1\r\n:1\r\n-ERR wrong number of arguments for 'bf.insert' command\r\n-Unknown argument received\r\n` +
      `-ERR not found\r\n:307\r\n`
    expect((await client.read(replies.length)).toString('latin1')).toBe(replies)
    await stop(server)
  })

  it('fill each layer to its capacity and grow where a serial server does', async () => {
    const server = await start(tempDir())
    const admin = await connect(server.port)
    expect(await ask(admin, 'BF.RESERVE', 'grow', '0.01', '100', 'EXPANSION', '2')).toBe('+OK\r\n')
    const adders = await Promise.all(Array.from({ length: 4 }, () => connect(server.port)))
    for (const adder of adders) await warm(adder, 'grow')
    const before = await threadAnswered(server.port)
    const answered = await Promise.all(
      adders.map(async (adder, a) => {
        let added = 0
        for (let n = 0; n < 30; n++) {
          const batch = Array.from({ length: 10 }, (_, i) => `a${a}:${n}:${i}`)
          const reply = await ask(adder, 'BF.MADD', 'grow', ...batch)
          expect(reply.startsWith('*10\r\n')).toBe(true)
          added += ones(reply)
        }
        return added
      }),
    )
    const total = answered.reduce((sum, n) => sum + n, 0)
    expect(await ask(admin, 'BF.CARD', 'grow')).toBe(`:${total}\r\n`)
    const found = await layers(server.port, 'grow')
    expectFilledInOrder(found)
    expect(found.map(([, capacity]) => capacity)).toEqual([100, 200, 400, 800].slice(0, found.length))
    expect(found.length).toBe(4)
    // Most of them on the threads (each growth sends the next add to the main thread).
    expect((await threadAnswered(server.port)) - before).toBeGreaterThan(100)
    await stop(server)
  })

  it('lose no acknowledged item and keep BF.CARD to the adds that answered 1 under concurrent adds, DEL, re-creation, growth, FLUSHDB and BGSAVE, and after a restart', async () => {
    const dir = tempDir()
    let server = await start(dir)
    const port = server.port
    const admin = await connect(port)
    expect(await ask(admin, 'BF.RESERVE', 'hot', '0.01', '500', 'EXPANSION', '2')).toBe('+OK\r\n')
    const adders = await Promise.all(Array.from({ length: 8 }, () => connect(port)))
    for (const adder of adders) await warm(adder, 'hot')
    const before = await threadAnswered(port)
    const { failures, acked, onesSeen } = await concurrentLoad(port, admin, adders, 10_000, true)
    expect(failures).toEqual([])
    expect(acked.length).toBeGreaterThan(2000)
    expect((await threadAnswered(port)) - before).toBeGreaterThan(1000)
    const card = await ask(admin, 'BF.CARD', 'hot')
    expect(card).toBe(`:${onesSeen}\r\n`)
    const found = await layers(port, 'hot')
    expectFilledInOrder(found)
    expect(found.length).toBeGreaterThan(1)
    expect(await missing(port, acked)).toBe(0)
    // A restart from the snapshot (SHUTDOWN saves): the same counts, layers and items.
    await ask(admin, 'SHUTDOWN', 'SAVE').catch(() => undefined)
    await server.bfs.waitExit()
    servers.splice(servers.indexOf(server), 1)
    server = await start(dir)
    expect(await askOnce(server.port, 'BF.CARD', 'hot')).toBe(card)
    expect(await layers(server.port, 'hot')).toEqual(found)
    expect(await missing(server.port, acked)).toBe(0)
    await stop(server)
  }, 60_000)

  it('are in the final save of a SIGTERM that comes right after them (save rules on)', async () => {
    const dir = tempDir()
    const server = await start(dir, '--save', '3600 1')
    const admin = await connect(server.port)
    expect(await ask(admin, 'BF.RESERVE', 'last', '0.01', '1000')).toBe('+OK\r\n')
    expect(await ask(admin, 'SAVE')).toBe('+OK\r\n')
    const client = await connect(server.port)
    await warm(client, 'last')
    const items = Array.from({ length: 40 }, (_, i) => `last${i}`)
    expect(await pipelinedAdds(client, 'last', items)).toBe(':1\r\n'.repeat(items.length))
    // Only the threads' adds changed anything since the SAVE: the final save must count them in.
    await stop(server)
    const again = await start(dir)
    expect(await askOnce(again.port, 'BF.CARD', 'last')).toBe(`:${items.length}\r\n`)
    expect(await askOnce(again.port, 'BF.MEXISTS', 'last', ...items)).toBe(
      `*${items.length}\r\n${':1\r\n'.repeat(items.length)}`,
    )
    await stop(again)
  })

  it('add while min-replicas-to-write replicas acknowledge, and leave the adds to the main thread (-NOREPLICAS) once they do not', async () => {
    const server = await start(tempDir(), '--min-replicas-to-write', '1', '--min-replicas-max-lag', '2')
    const port = server.port
    const replica = await start(tempDir(), '--replicaof', '127.0.0.1', String(port))
    const admin = await connect(port)
    await waitUntil('the replica acknowledges', async () => (await ask(admin, 'WAIT', '1', '1000')) === ':1\r\n')
    expect(await ask(admin, 'BF.RESERVE', 'quorum', '0.01', '1000')).toBe('+OK\r\n')
    const adder = await connect(port)
    await warm(adder, 'quorum')
    let before = await threadAnswered(port)
    for (let i = 0; i < 20; i++) expect(await ask(adder, 'BF.ADD', 'quorum', `acked${i}`)).toBe(':1\r\n')
    expect((await threadAnswered(port)) - before).toBe(20)

    // The replica stops acknowledging: once its last ACK is older than the lag, every add is refused.
    replica.bfs.child.kill('SIGSTOP')
    try {
      let tries = 0
      await waitUntil('an add is refused for want of replicas', async () => {
        const reply = await ask(adder, 'BF.ADD', 'quorum', `late${tries++}`)
        return reply.startsWith('-NOREPLICAS ')
      })
      before = await threadAnswered(port)
      for (let i = 0; i < 20; i++) expect(await ask(adder, 'BF.ADD', 'quorum', `refused${i}`)).toMatch(/^-NOREPLICAS /)
      expect(await ask(adder, 'BF.EXISTS', 'quorum', 'refused0')).toBe(':0\r\n')
      expect((await threadAnswered(port)) - before).toBeLessThanOrEqual(1)
    } finally {
      replica.bfs.child.kill('SIGCONT')
    }
    // Acknowledging again: the thread adds again.
    await waitUntil('the replica acknowledges again', async () => (await ask(admin, 'WAIT', '1', '1000')) === ':1\r\n')
    await waitUntil('the thread adds again', async () => {
      const at = await threadAnswered(port)
      expect(await ask(adder, 'BF.ADD', 'quorum', `again${at}`)).toBe(':1\r\n')
      return (await threadAnswered(port)) > at
    })
  })

  it('add with the append-only log on (their records in the log before the reply), leave the adds to the main thread while a WATCH needs them, and lose none at a kill -9', async () => {
    const dir = tempDir()
    const server = await start(dir, '--appendfsync', 'always')
    const admin = await connect(server.port)
    expect(await ask(admin, 'BF.RESERVE', 'logged', '0.01', '1000')).toBe('+OK\r\n')
    const client = await connect(server.port)
    await warm(client, 'logged')
    let before = await threadAnswered(server.port)
    expect(await ask(client, 'BF.ADD', 'logged', 'threaded')).toBe(':1\r\n')
    expect((await threadAnswered(server.port)) - before).toBe(1)
    // The log on: the threads still add, and journal each add for the main thread to log.
    expect(await ask(admin, 'CONFIG', 'SET', 'appendonly', 'yes')).toBe('+OK\r\n')
    for (let i = 0; i < 100 && !(await ask(admin, 'INFO', 'persistence')).includes('aof_rewrite_in_progress:0'); i++)
      await new Promise((resolve) => setTimeout(resolve, 20))
    await warm(client, 'logged')
    before = await threadAnswered(server.port)
    for (let i = 0; i < 20; i++) expect(await ask(client, 'BF.ADD', 'logged', `logged${i}`)).toBe(':1\r\n')
    expect(await ask(client, 'BF.EXISTS', 'logged', 'logged0')).toBe(':1\r\n')
    // BF.CARD reads the counts the main thread keeps in shared words: the thread answers it still.
    expect(await ask(client, 'BF.CARD', 'logged')).toBe(':21\r\n')
    expect((await threadAnswered(server.port)) - before).toBe(22)
    // WATCH: an add from another connection to the watched key is the main thread's and fails the
    // transaction; the thread goes on adding to the other keys.
    expect(await ask(admin, 'CONFIG', 'SET', 'appendonly', 'no')).toBe('+OK\r\n')
    expect(await ask(admin, 'BF.RESERVE', 'unwatched', '0.01', '1000')).toBe('+OK\r\n')
    await warm(client, 'unwatched')
    const watcher = await connect(server.port)
    expect(await ask(watcher, 'WATCH', 'logged')).toBe('+OK\r\n')
    expect(await ask(watcher, 'MULTI')).toBe('+OK\r\n')
    expect(await ask(watcher, 'BF.CARD', 'logged')).toBe('+QUEUED\r\n')
    before = await threadAnswered(server.port)
    expect(await ask(client, 'BF.ADD', 'unwatched', 'beside')).toBe(':1\r\n')
    expect(await threadAnswered(server.port)).toBe(before + 1)
    for (let i = 0; i < 10; i++) expect(await ask(client, 'BF.ADD', 'logged', `while-watched${i}`)).toBe(':1\r\n')
    expect(await threadAnswered(server.port)).toBe(before + 1)
    expect(await ask(watcher, 'EXEC')).toBe('*-1\r\n')
    // Watched no more: the thread adds to it again.
    await warm(client, 'logged')
    before = await threadAnswered(server.port)
    expect(await ask(client, 'BF.ADD', 'logged', 'after-exec')).toBe(':1\r\n')
    expect(await threadAnswered(server.port)).toBe(before + 1)
    // kill -9 with the log back on: the adds acknowledged after it are there after the restart.
    expect(await ask(admin, 'CONFIG', 'SET', 'appendonly', 'yes')).toBe('+OK\r\n')
    for (let i = 0; i < 100 && !(await ask(admin, 'INFO', 'persistence')).includes('aof_rewrite_in_progress:0'); i++)
      await new Promise((resolve) => setTimeout(resolve, 20))
    await warm(client, 'logged')
    before = await threadAnswered(server.port)
    // Each add's record is in the log's file when its reply comes (fsync'd, appendfsync always).
    const logFile = (): string => {
      const name = readdirSync(dir).find((file) => file.endsWith('.incr.aof'))
      return name === undefined ? '' : readFileSync(path.join(dir, name), 'latin1')
    }
    for (let i = 0; i < 20; i++) {
      expect(await ask(client, 'BF.ADD', 'logged', `late${i}`)).toBe(':1\r\n')
      expect(logFile()).toContain(`$8\r\nBF.ADDED\r\n$6\r\nlogged\r\n$${String(i).length + 4}\r\nlate${i}\r\n`)
    }
    expect((await threadAnswered(server.port)) - before).toBe(20)
    const card = await ask(client, 'BF.CARD', 'logged')
    await stop(server, 'SIGKILL')
    const again = await start(dir, '--appendonly', 'yes')
    expect(await askOnce(again.port, 'BF.CARD', 'logged')).toBe(card)
    const items = [
      'threaded',
      'after-exec',
      ...Array.from({ length: 10 }, (_, i) => `while-watched${i}`),
      ...Array.from({ length: 20 }, (_, i) => `logged${i}`),
      ...Array.from({ length: 20 }, (_, i) => `late${i}`),
    ]
    expect(await askOnce(again.port, 'BF.MEXISTS', 'logged', ...items)).toBe(
      `*${items.length}\r\n${':1\r\n'.repeat(items.length)}`,
    )
    await stop(again)
  })
  it('journal their adds with the log on (appendfsync always) and a replica: under concurrent adds, DEL, re-creation, growth, FLUSHDB and BGSAVE the counts and layers are equal on the master, on the replica after WAIT and after a restart from the log, and a kill -9 under load loses no acknowledged item', async () => {
    const dir = tempDir()
    const logged = ['--appendonly', 'yes', '--appendfsync', 'always']
    let server = await start(dir, ...logged)
    let port = server.port
    const replica = await start(tempDir(), '--replicaof', '127.0.0.1', String(port))
    const admin = await connect(port)
    expect(await ask(admin, 'BF.RESERVE', 'hot', '0.01', '500', 'EXPANSION', '2')).toBe('+OK\r\n')
    expect(await ask(admin, 'WAIT', '1', '10000')).toBe(':1\r\n')
    const adders = await Promise.all(Array.from({ length: 8 }, () => connect(port)))
    for (const adder of adders) await warm(adder, 'hot')
    const before = await threadAnswered(port)
    const { failures, acked, onesSeen } = await concurrentLoad(port, admin, adders, 8000, false)
    expect(failures).toEqual([])
    expect(acked.length).toBeGreaterThan(1000)
    expect((await threadAnswered(port)) - before).toBeGreaterThan(500)
    const card = await ask(admin, 'BF.CARD', 'hot')
    expect(card).toBe(`:${onesSeen}\r\n`)
    const info = await ask(admin, 'BF.INFO', 'hot')
    const found = await layers(port, 'hot')
    expectFilledInOrder(found)
    expect(found.length).toBeGreaterThan(1)
    const debug = await askOnce(port, 'BF.DEBUG', 'hot')
    const churned = await Promise.all([0, 1, 2, 3].map((n) => askOnce(port, 'BF.DEBUG', `churn:${n}`)))
    expect(await missing(port, acked)).toBe(0)
    // The replica, once it has every record: the same counts, layers and bits.
    expect(await ask(admin, 'WAIT', '1', '10000')).toBe(':1\r\n')
    expect(await askOnce(replica.port, 'BF.CARD', 'hot')).toBe(card)
    expect(await askOnce(replica.port, 'BF.INFO', 'hot')).toBe(info)
    expect(await askOnce(replica.port, 'BF.DEBUG', 'hot')).toBe(debug)
    for (const [n, reply] of churned.entries())
      expect(await askOnce(replica.port, 'BF.DEBUG', `churn:${n}`)).toBe(reply)
    expect(await missing(replica.port, acked)).toBe(0)
    // A kill -9 and a restart from the log: the same again.
    await stop(server, 'SIGKILL')
    server = await start(dir, ...logged)
    port = server.port
    expect(await askOnce(port, 'BF.CARD', 'hot')).toBe(card)
    expect(await askOnce(port, 'BF.INFO', 'hot')).toBe(info)
    expect(await askOnce(port, 'BF.DEBUG', 'hot')).toBe(debug)
    expect(await missing(port, acked)).toBe(0)
    // A kill -9 while eight connections add: every add acknowledged before it is in the log.
    const loaders = await Promise.all(Array.from({ length: 8 }, () => connect(port)))
    for (const loader of loaders) await warm(loader, 'hot')
    const loadedBefore = await threadAnswered(port)
    const ackedUnderLoad: string[] = []
    let killed = false
    const loading = loaders.map(async (loader, a) => {
      for (let n = 0; !killed; n++) {
        const batch = Array.from({ length: 4 }, (_, i) => `load${a}:${n}:${i}`)
        const reply = await ask(loader, 'BF.MADD', 'hot', ...batch).catch(() => undefined)
        if (reply === undefined || killed) return
        if (/^\*4\r\n(:[01]\r\n){4}$/.test(reply)) ackedUnderLoad.push(...batch)
      }
    })
    while (ackedUnderLoad.length < 2000) await new Promise((resolve) => setTimeout(resolve, 10))
    expect((await threadAnswered(port)) - loadedBefore).toBeGreaterThan(100)
    const ackedAtKill = [...ackedUnderLoad]
    server.bfs.child.kill('SIGKILL')
    killed = true
    await server.bfs.waitExit()
    servers.splice(servers.indexOf(server), 1)
    await Promise.all(loading)
    server = await start(dir, ...logged)
    expect(await missing(server.port, ackedAtKill)).toBe(0)
    expect(await missing(server.port, acked)).toBe(0)
    await stop(server)
    await stop(replica)
  }, 90_000)
})
