/**
 * BF.EXISTS and BF.MEXISTS answered by the I/O threads themselves (io-threads > 1; server/
 * thread-plane.ts, thread-answers.ts), against a real bfs over real sockets: the answers and counts
 * are the main thread's; every change to a key, and everything that would refuse or hold a check
 * (MONITOR, CLIENT PAUSE, ACL, MULTI), is seen by the next check a connection sends; the idle time,
 * CLIENT LIST and the SLOWLOG see the commands a thread answered; and under concurrent
 * re-creation, growth and deletion of filters no acknowledged item is ever answered 0.
 *
 * A connection's thread learns a key's layout once the main thread answered a check of it there,
 * so each case first waits until the thread answers (INFO bfs_io_threaded_commands_processed
 * moves), then changes something and checks at once.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeHasReusePort } from '../../src/runtime/io-threads-setting.js'
import { BFS_MAIN, startChildServer, type ChildServer } from '../helpers/child-server.js'
import { RawClient, ask, askOnce, encodeCommand } from '../helpers/resp.js'
import { waitUntil } from '../helpers/cluster-nodes.js'
import { slotOf } from '../../src/core/key-slot.js'
import { tempDirsRemovedAfterAll } from '../helpers/temp-dir.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const REUSE_PORT = nodeHasReusePort(process.version)
const tempDir = tempDirsRemovedAfterAll('bfs-thread-checks-')

let server: ChildServer
const clients: RawClient[] = []

async function connect(): Promise<RawClient> {
  const client = await RawClient.connect(server.port)
  clients.push(client)
  return client
}

/** INFO's count of the commands the I/O threads answered themselves (of the server on `port`). */
async function threadAnswered(port = server.port): Promise<number> {
  const info = await askOnce(port, 'INFO', 'stats')
  return Number(/bfs_io_threaded_commands_processed:(\d+)/.exec(info)![1])
}

/**
 * Sends `check` on `client` until its thread answers it itself (its layout learnt), expecting
 * `reply` each time; fails after 200 tries.
 */
async function warm(client: RawClient, reply: string, ...check: string[]): Promise<void> {
  const port = client.socket.remotePort!
  for (let i = 0; i < 200; i++) {
    const before = await threadAnswered(port)
    expect(await ask(client, ...check)).toBe(reply)
    if ((await threadAnswered(port)) > before) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`the I/O thread never answered ${check.join(' ')}`)
}

beforeAll(async () => {
  // `npm test` builds first (pretest); when vitest runs alone, build once here.
  if (!existsSync(BFS_MAIN)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'pipe' })
  if (!REUSE_PORT) return
  server = await startChildServer(flags())
}, 120_000)

/** A bfs without persistence in a fresh directory, with two I/O threads. */
function flags(...extra: string[]): string[] {
  return ['--port', '0', '--dir', tempDir(), '--save', '', '--appendonly', 'no', '--io-threads', '3', ...extra]
}

afterAll(async () => {
  for (const client of clients.splice(0)) client.close()
  if (server !== undefined) {
    server.bfs.kill()
    await server.bfs.waitExit()
  }
})

describe.runIf(REUSE_PORT)('checks answered by the I/O threads', () => {
  it('answer as the main thread does, and count in INFO commandstats and stats', async () => {
    const admin = await connect()
    expect(await ask(admin, 'BF.RESERVE', 'answers', '0.001', '1000')).toBe('+OK\r\n')
    expect(await ask(admin, 'BF.MADD', 'answers', 'a', 'b', 'c')).toBe('*3\r\n:1\r\n:1\r\n:1\r\n')
    const client = await connect()
    await warm(client, ':1\r\n', 'BF.EXISTS', 'answers', 'a')
    expect(await ask(admin, 'CONFIG', 'RESETSTAT')).toBe('+OK\r\n')
    const before = await threadAnswered()
    // One pipeline of plain checks, in both cases of the name: answered by the thread, in order.
    const commands = [
      ['BF.EXISTS', 'answers', 'a'],
      ['bf.exists', 'answers', 'zz'],
      ['BF.MEXISTS', 'answers', 'a', 'zz', 'b', 'c'],
      ['Bf.Mexists', 'answers', 'nope'],
    ]
    client.write(Buffer.concat(commands.map((command) => encodeCommand(command))))
    const expected = ':1\r\n:0\r\n*4\r\n:1\r\n:0\r\n:1\r\n:1\r\n*1\r\n:0\r\n'
    expect((await client.read(expected.length)).toString('latin1')).toBe(expected)
    expect((await threadAnswered()) - before).toBe(4)
    const stats = await ask(admin, 'INFO', 'commandstats')
    expect(stats).toMatch(/cmdstat_bf\.exists:calls=2,/)
    expect(stats).toMatch(/cmdstat_bf\.mexists:calls=2,/)
    // Whatever the thread does not answer goes to the main thread, in the connection's order.
    const mixed = [
      ['BF.EXISTS', 'answers', 'a'],
      ['BF.ADD', 'answers', 'd'],
      ['BF.EXISTS', 'answers', 'd'],
      ['BF.EXISTS', 'answers'],
      ['BF.EXISTS', 'missing', 'a'],
    ]
    client.write(Buffer.concat(mixed.map((command) => encodeCommand(command))))
    const replies = ":1\r\n:1\r\n:1\r\n-ERR wrong number of arguments for 'bf.exists' command\r\n:0\r\n"
    expect((await client.read(replies.length)).toString('latin1')).toBe(replies)
    // A command split over several writes is answered once whole.
    await warm(client, ':1\r\n', 'BF.EXISTS', 'answers', 'd')
    const split = encodeCommand(['BF.EXISTS', 'answers', 'b'])
    client.write(split.subarray(0, 7))
    await new Promise((resolve) => setTimeout(resolve, 50))
    client.write(split.subarray(7))
    expect((await client.read(4)).toString('latin1')).toBe(':1\r\n')
  })

  it('see every change to a key made before they were sent: DEL, re-creation, RENAME, growth, expiry, SWAPDB, SELECT, FLUSHALL', async () => {
    const admin = await connect()
    const client = await connect()
    expect(await ask(admin, 'BF.RESERVE', 'changes', '0.01', '100', 'EXPANSION', '2')).toBe('+OK\r\n')
    expect(await ask(admin, 'BF.ADD', 'changes', 'x')).toBe(':1\r\n')
    await warm(client, ':1\r\n', 'BF.EXISTS', 'changes', 'x')
    expect(await ask(admin, 'DEL', 'changes')).toBe(':1\r\n')
    expect(await ask(client, 'BF.EXISTS', 'changes', 'x')).toBe(':0\r\n')

    // Re-created with another size: the old layout is not used for the new filter.
    expect(await ask(admin, 'BF.RESERVE', 'changes', '0.001', '5000')).toBe('+OK\r\n')
    expect(await ask(admin, 'BF.ADD', 'changes', 'y')).toBe(':1\r\n')
    expect(await ask(client, 'BF.EXISTS', 'changes', 'y')).toBe(':1\r\n')
    await warm(client, ':1\r\n', 'BF.EXISTS', 'changes', 'y')
    expect(await ask(client, 'BF.EXISTS', 'changes', 'x')).toBe(':0\r\n')

    expect(await ask(admin, 'RENAME', 'changes', 'renamed')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.EXISTS', 'changes', 'y')).toBe(':0\r\n')
    expect(await ask(client, 'BF.EXISTS', 'renamed', 'y')).toBe(':1\r\n')

    // Growth: a filter of 100 takes 1000 items in new layers; every one is found at once.
    expect(await ask(admin, 'BF.RESERVE', 'grows', '0.01', '100', 'EXPANSION', '2')).toBe('+OK\r\n')
    expect(await ask(admin, 'BF.ADD', 'grows', 'first')).toBe(':1\r\n')
    await warm(client, ':1\r\n', 'BF.EXISTS', 'grows', 'first')
    const items = Array.from({ length: 1000 }, (_, i) => `item:${i}`)
    for (let i = 0; i < items.length; i += 100) {
      await ask(admin, 'BF.MADD', 'grows', ...items.slice(i, i + 100))
      const seen = await ask(client, 'BF.MEXISTS', 'grows', ...items.slice(0, i + 100))
      expect(seen).toBe(`*${i + 100}\r\n${':1\r\n'.repeat(i + 100)}`)
    }

    // An expiry: the key is left to the main thread, which hides it once expired.
    await warm(client, ':1\r\n', 'BF.EXISTS', 'grows', 'first')
    expect(await ask(admin, 'PEXPIRE', 'grows', '150')).toBe(':1\r\n')
    expect(await ask(client, 'BF.EXISTS', 'grows', 'first')).toBe(':1\r\n')
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await ask(client, 'BF.EXISTS', 'grows', 'first')).toBe(':0\r\n')

    // SWAPDB moves the key out of this connection's database; SELECT follows it.
    expect(await ask(admin, 'BF.ADD', 'swapped', 'z')).toBe(':1\r\n')
    await warm(client, ':1\r\n', 'BF.EXISTS', 'swapped', 'z')
    expect(await ask(admin, 'SWAPDB', '0', '1')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.EXISTS', 'swapped', 'z')).toBe(':0\r\n')
    expect(await ask(client, 'SELECT', '1')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.EXISTS', 'swapped', 'z')).toBe(':1\r\n')
    await warm(client, ':1\r\n', 'BF.EXISTS', 'swapped', 'z')
    expect(await ask(client, 'SELECT', '0')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.EXISTS', 'swapped', 'z')).toBe(':0\r\n')
    expect(await ask(client, 'SELECT', '1')).toBe('+OK\r\n')
    await warm(client, ':1\r\n', 'BF.EXISTS', 'swapped', 'z')
    expect(await ask(admin, 'FLUSHALL')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.EXISTS', 'swapped', 'z')).toBe(':0\r\n')
  })

  it('answer from a filter in a memory of its own (a 64 MiB layer) and to a RESP3 connection; drop it once deleted', async () => {
    const admin = await connect()
    const client = await connect()
    expect(await ask(client, 'HELLO', '3')).toMatch(/^%7\r\n/)
    // 60 M items at 1 %: one layer of about 69 MiB, past the shared arenas' 64 MiB.
    expect(await ask(admin, 'BF.RESERVE', 'large', '0.01', '60000000', 'NONSCALING')).toBe('+OK\r\n')
    expect(await ask(admin, 'BF.MADD', 'large', 'l1', 'l2')).toBe('*2\r\n:1\r\n:1\r\n')
    await warm(client, ':1\r\n', 'BF.EXISTS', 'large', 'l1')
    expect(await ask(client, 'BF.MEXISTS', 'large', 'l1', 'l2', 'l3')).toBe('*3\r\n:1\r\n:1\r\n:0\r\n')
    expect(await ask(admin, 'BF.ADD', 'large', 'l3')).toBe(':1\r\n')
    expect(await ask(client, 'BF.EXISTS', 'large', 'l3')).toBe(':1\r\n')
    expect(await ask(admin, 'DEL', 'large')).toBe(':1\r\n')
    expect(await ask(client, 'BF.MEXISTS', 'large', 'l1', 'l2', 'l3')).toBe('*3\r\n:0\r\n:0\r\n:0\r\n')
  })

  it('are not answered by the thread while MONITOR, CLIENT PAUSE, an ACL rule or MULTI would act on them', async () => {
    const admin = await connect()
    const client = await connect()
    expect(await ask(admin, 'BF.ADD', 'gated', 'g')).toBe(':1\r\n')
    await warm(client, ':1\r\n', 'BF.EXISTS', 'gated', 'g')

    const monitor = await connect()
    expect(await ask(monitor, 'MONITOR')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.EXISTS', 'gated', 'g')).toBe(':1\r\n')
    const fed = await monitor.readUntil((received) => received.includes('"BF.EXISTS" "gated" "g"'))
    expect(fed.toString()).toContain('"BF.EXISTS" "gated" "g"')
    monitor.close()
    await warm(client, ':1\r\n', 'BF.EXISTS', 'gated', 'g')

    expect(await ask(admin, 'CLIENT', 'PAUSE', '400', 'ALL')).toBe('+OK\r\n')
    const pausedAt = Date.now()
    expect(await ask(client, 'BF.EXISTS', 'gated', 'g')).toBe(':1\r\n')
    expect(Date.now() - pausedAt).toBeGreaterThanOrEqual(300)
    await warm(client, ':1\r\n', 'BF.EXISTS', 'gated', 'g')

    expect(await ask(admin, 'ACL', 'SETUSER', 'default', '-bf.exists')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.EXISTS', 'gated', 'g')).toMatch(/^-NOPERM /)
    expect(await ask(admin, 'ACL', 'SETUSER', 'default', '+@all')).toBe('+OK\r\n')
    await warm(client, ':1\r\n', 'BF.EXISTS', 'gated', 'g')

    expect(await ask(client, 'MULTI')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.EXISTS', 'gated', 'g')).toBe('+QUEUED\r\n')
    expect(await ask(client, 'EXEC')).toBe('*1\r\n:1\r\n')
    await warm(client, ':1\r\n', 'BF.EXISTS', 'gated', 'g')

    // Another client's CLIENT KILL: the connection is gone for the next check.
    const id = (await ask(client, 'CLIENT', 'ID')).slice(1, -2)
    await warm(client, ':1\r\n', 'BF.EXISTS', 'gated', 'g')
    expect(await ask(admin, 'CLIENT', 'KILL', 'ID', id)).toBe(':1\r\n')
    await client.waitClosed()
  })

  it("with ACL users: a user who may run the threads' commands on any key is answered by its thread, a restricted one by the main thread; a change applies to the next command", async () => {
    const admin = await connect()
    expect(await ask(admin, 'BF.ADD', 'acl:open', 'a')).toBe(':1\r\n')
    expect(await ask(admin, 'ACL', 'SETUSER', 'wide', 'on', 'nopass', '~*', '+@all')).toBe('+OK\r\n')
    expect(await ask(admin, 'ACL', 'SETUSER', 'narrow', 'on', 'nopass', '~acl:*', '+@all')).toBe('+OK\r\n')
    try {
      const wide = await connect()
      expect(await ask(wide, 'AUTH', 'wide', 'any')).toBe('+OK\r\n')
      await warm(wide, ':1\r\n', 'BF.EXISTS', 'acl:open', 'a')
      const narrow = await connect()
      expect(await ask(narrow, 'AUTH', 'narrow', 'any')).toBe('+OK\r\n')
      const before = await threadAnswered()
      for (let i = 0; i < 20; i++) expect(await ask(narrow, 'BF.EXISTS', 'acl:open', 'a')).toBe(':1\r\n')
      expect(await ask(narrow, 'BF.EXISTS', 'elsewhere', 'a')).toMatch(/^-NOPERM /)
      expect(await ask(narrow, 'BF.ADD', 'acl:open', 'b')).toBe(':1\r\n')
      expect(await ask(wide, 'BF.MEXISTS', 'acl:open', 'a', 'b')).toBe('*2\r\n:1\r\n:1\r\n')
      expect((await threadAnswered()) - before).toBe(1)
      expect(await ask(admin, 'ACL', 'LOG')).toContain('elsewhere')

      // The wide user loses BF.EXISTS: its next check is refused, by the main thread.
      expect(await ask(admin, 'ACL', 'SETUSER', 'wide', '-bf.exists')).toBe('+OK\r\n')
      expect(await ask(wide, 'BF.EXISTS', 'acl:open', 'a')).toMatch(/^-NOPERM /)
      expect(await ask(admin, 'ACL', 'SETUSER', 'wide', '+bf.exists')).toBe('+OK\r\n')
      await warm(wide, ':1\r\n', 'BF.EXISTS', 'acl:open', 'a')
      // Narrowed to some keys: another key is refused at once.
      expect(await ask(admin, 'ACL', 'SETUSER', 'wide', 'resetkeys', '~acl:*')).toBe('+OK\r\n')
      expect(await ask(wide, 'BF.EXISTS', 'other', 'a')).toMatch(/^-NOPERM /)
      // The narrow user may reach every key now: its thread answers it.
      expect(await ask(admin, 'ACL', 'SETUSER', 'narrow', 'allkeys')).toBe('+OK\r\n')
      await warm(narrow, ':1\r\n', 'BF.EXISTS', 'acl:open', 'b')
    } finally {
      expect(await ask(admin, 'ACL', 'DELUSER', 'wide', 'narrow')).toBe(':2\r\n')
    }
  })

  it('keep the connection from being idle (timeout, CLIENT LIST) and reach the SLOWLOG', async () => {
    const admin = await connect()
    const client = await connect()
    expect(await ask(client, 'CLIENT', 'SETNAME', 'checker')).toBe('+OK\r\n')
    expect(await ask(admin, 'BF.ADD', 'busy', 'b')).toBe(':1\r\n')
    await warm(client, ':1\r\n', 'BF.EXISTS', 'busy', 'b')
    expect(await ask(admin, 'CONFIG', 'SET', 'timeout', '1')).toBe('+OK\r\n')
    try {
      const before = await threadAnswered()
      for (let i = 0; i < 10; i++) {
        expect(await ask(client, 'BF.EXISTS', 'busy', 'b')).toBe(':1\r\n')
        await new Promise((resolve) => setTimeout(resolve, 300))
      }
      expect(await threadAnswered()).toBeGreaterThan(before)
      // A connection of its own: `admin` was idle meanwhile, and closed for it.
      const list = await askOnce(server.port, 'CLIENT', 'LIST')
      const line = list.split('\n').find((entry) => entry.includes('name=checker'))
      expect(line).toMatch(/ idle=0 /)
      expect(line).toMatch(/ cmd=bf\.exists /)
    } finally {
      expect(await askOnce(server.port, 'CONFIG', 'SET', 'timeout', '0')).toBe('+OK\r\n')
    }
    await admin.waitClosed()

    const slowlog = await connect()
    expect(await ask(slowlog, 'CONFIG', 'SET', 'slowlog-log-slower-than', '0')).toBe('+OK\r\n')
    expect(await ask(slowlog, 'SLOWLOG', 'RESET')).toBe('+OK\r\n')
    try {
      const before = await threadAnswered()
      expect(await ask(client, 'BF.EXISTS', 'busy', 'b')).toBe(':1\r\n')
      expect(await threadAnswered()).toBe(before + 1)
      const entries = await ask(slowlog, 'SLOWLOG', 'GET', '10')
      expect(entries).toContain('$9\r\nBF.EXISTS\r\n$4\r\nbusy\r\n$1\r\nb\r\n')
      expect(entries).toContain('$7\r\nchecker\r\n')
      // An argument past 128 bytes is shortened as redis's SLOWLOG does.
      expect(await ask(client, 'BF.EXISTS', 'busy', 'x'.repeat(200))).toBe(':0\r\n')
      expect(await threadAnswered()).toBe(before + 2)
      const long = await ask(slowlog, 'SLOWLOG', 'GET', '10')
      expect(long).toContain(`$147\r\n${'x'.repeat(128)}... (72 more bytes)\r\n`)
    } finally {
      expect(await ask(slowlog, 'CONFIG', 'SET', 'slowlog-log-slower-than', '10000')).toBe('+OK\r\n')
    }
  })

  it("on a replica: answer from what its master sent, and see the master's adds and DEL once applied", async () => {
    const replica = await startChildServer(flags('--replicaof', '127.0.0.1', String(server.port)))
    try {
      const admin = await connect()
      expect(await ask(admin, 'BF.ADD', 'replicated', 'a')).toBe(':1\r\n')
      expect(await ask(admin, 'WAIT', '1', '10000')).toBe(':1\r\n')
      const client = await RawClient.connect(replica.port)
      clients.push(client)
      await warm(client, ':1\r\n', 'BF.EXISTS', 'replicated', 'a')
      expect(await ask(admin, 'BF.ADD', 'replicated', 'b')).toBe(':1\r\n')
      expect(await ask(admin, 'WAIT', '1', '10000')).toBe(':1\r\n')
      expect(await ask(client, 'BF.MEXISTS', 'replicated', 'a', 'b')).toBe('*2\r\n:1\r\n:1\r\n')
      expect(await ask(admin, 'DEL', 'replicated')).toBe(':1\r\n')
      expect(await ask(admin, 'WAIT', '1', '10000')).toBe(':1\r\n')
      expect(await ask(client, 'BF.MEXISTS', 'replicated', 'a', 'b')).toBe('*2\r\n:0\r\n:0\r\n')
    } finally {
      replica.bfs.kill()
      await replica.bfs.waitExit()
    }
  })

  it("in cluster mode: answer keys of the slots served at once, and a replica's READONLY connections; from SETSLOT MIGRATING, NODE or DELSLOTS on, the ASK, MOVED or CLUSTERDOWN is the main thread's", async () => {
    const [a, b, c] = await Promise.all([
      startChildServer(flags('--cluster-enabled', 'yes')),
      startChildServer(flags('--cluster-enabled', 'yes')),
      startChildServer(flags('--cluster-enabled', 'yes')),
    ])
    try {
      const admin = await RawClient.connect(a.port)
      clients.push(admin)
      const key = 'clustered'
      const slot = slotOf(key)
      expect(await ask(admin, 'CLUSTER', 'ADDSLOTSRANGE', '0', '16383')).toBe('+OK\r\n')
      expect(await askOnce(b.port, 'CLUSTER', 'MEET', '127.0.0.1', String(a.port))).toBe('+OK\r\n')
      await waitUntil('both nodes know each other and the cluster is ok', async () => {
        const infos = await Promise.all([a.port, b.port].map((port) => askOnce(port, 'CLUSTER', 'INFO')))
        return infos.every((info) => info.includes('cluster_known_nodes:2') && info.includes('cluster_state:ok'))
      })
      const bId = (await askOnce(b.port, 'CLUSTER', 'MYID')).split('\r\n')[1]!
      expect(await ask(admin, 'BF.ADD', key, 'a')).toBe(':1\r\n')
      const client = await RawClient.connect(a.port)
      clients.push(client)
      await warm(client, ':1\r\n', 'BF.EXISTS', key, 'a')
      let before = await threadAnswered(a.port)
      expect(await ask(client, 'BF.ADD', key, 'b')).toBe(':1\r\n')
      expect(await ask(client, 'BF.MEXISTS', key, 'a', 'b', 'c')).toBe('*3\r\n:1\r\n:1\r\n:0\r\n')
      expect((await threadAnswered(a.port)) - before).toBe(2)

      // A replica of a: its READONLY connections' checks are answered by their threads, the
      // others get MOVED (from its main thread), READWRITE too.
      expect(await askOnce(c.port, 'CLUSTER', 'MEET', '127.0.0.1', String(a.port))).toBe('+OK\r\n')
      await waitUntil('the third node knows the others and the cluster is ok', async () => {
        const info = await askOnce(c.port, 'CLUSTER', 'INFO')
        return info.includes('cluster_known_nodes:3') && info.includes('cluster_state:ok')
      })
      const aId = (await ask(admin, 'CLUSTER', 'MYID')).split('\r\n')[1]!
      await waitUntil('the third node replicates a', async () =>
        (await askOnce(c.port, 'CLUSTER', 'REPLICATE', aId)).startsWith('+OK'),
      )
      const reader = await RawClient.connect(c.port)
      clients.push(reader)
      expect(await ask(reader, 'READONLY')).toBe('+OK\r\n')
      await waitUntil('the replica has the key', async () => (await ask(reader, 'BF.EXISTS', key, 'b')) === ':1\r\n')
      await warm(reader, ':1\r\n', 'BF.EXISTS', key, 'a')
      const plain = await RawClient.connect(c.port)
      clients.push(plain)
      const toA = `-MOVED ${slot} 127.0.0.1:${a.port}\r\n`
      before = await threadAnswered(c.port)
      for (let i = 0; i < 5; i++) expect(await ask(plain, 'BF.EXISTS', key, 'a')).toBe(toA)
      expect(await ask(reader, 'READWRITE')).toBe('+OK\r\n')
      for (let i = 0; i < 5; i++) expect(await ask(reader, 'BF.EXISTS', key, 'a')).toBe(toA)
      expect((await threadAnswered(c.port)) - before).toBe(0)

      // Migrating: the key is still here (served, by the main thread); a missing one of its slot is ASKed.
      expect(await ask(admin, 'CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', bId)).toBe('+OK\r\n')
      before = await threadAnswered(a.port)
      expect(await ask(client, 'BF.EXISTS', key, 'a')).toBe(':1\r\n')
      expect(await ask(client, 'BF.EXISTS', `{${key}}gone`, 'a')).toBe(`-ASK ${slot} 127.0.0.1:${b.port}\r\n`)
      expect(await ask(client, 'BF.EXISTS', key, 'a')).toBe(':1\r\n')
      expect((await threadAnswered(a.port)) - before).toBe(0)
      // Stable again: the thread answers again once it learnt the layout again.
      expect(await ask(admin, 'CLUSTER', 'SETSLOT', String(slot), 'STABLE')).toBe('+OK\r\n')
      await warm(client, ':1\r\n', 'BF.EXISTS', key, 'b')

      // Unassigned: CLUSTERDOWN for the key at once, from the main thread.
      expect(await ask(admin, 'CLUSTER', 'DELSLOTS', String(slot))).toBe('+OK\r\n')
      before = await threadAnswered(a.port)
      expect(await ask(client, 'BF.EXISTS', key, 'a')).toMatch(/^-CLUSTERDOWN /)
      expect((await threadAnswered(a.port)) - before).toBe(0)
      expect(await ask(admin, 'CLUSTER', 'ADDSLOTS', String(slot))).toBe('+OK\r\n')
      await waitUntil('the cluster is ok again', async () =>
        (await askOnce(a.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'),
      )
      await warm(client, ':1\r\n', 'BF.EXISTS', key, 'a')

      // Given to b (the key still here: its thread held the layout until DELSLOTS): MOVED.
      expect(await ask(admin, 'CLUSTER', 'DELSLOTS', String(slot))).toBe('+OK\r\n')
      expect(await askOnce(b.port, 'CLUSTER', 'SETSLOT', String(slot), 'NODE', bId)).toBe('+OK\r\n')
      const moved = `-MOVED ${slot} 127.0.0.1:${b.port}\r\n`
      await waitUntil('a sends the slot to b', async () => (await ask(client, 'BF.EXISTS', key, 'a')) === moved)
      before = await threadAnswered(a.port)
      expect(await ask(client, 'BF.EXISTS', key, 'a')).toBe(moved)
      expect(await ask(client, 'BF.ADD', key, 'c')).toBe(moved)
      expect((await threadAnswered(a.port)) - before).toBe(0)

      // ASKING lasts one command: the main thread runs the next one, and the thread the one after.
      const other = 'asked'
      expect(slotOf(other)).not.toBe(slot)
      expect(await ask(admin, 'BF.ADD', other, 'a')).toBe(':1\r\n')
      await warm(client, ':1\r\n', 'BF.EXISTS', other, 'a')
      expect(await ask(client, 'ASKING')).toBe('+OK\r\n')
      before = await threadAnswered(a.port)
      expect(await ask(client, 'BF.EXISTS', other, 'a')).toBe(':1\r\n')
      expect((await threadAnswered(a.port)) - before).toBe(0)
      await warm(client, ':1\r\n', 'BF.EXISTS', other, 'a')
    } finally {
      for (const node of [a, b, c]) {
        node.bfs.kill()
        await node.bfs.waitExit()
      }
    }
  })

  it('never answer 0 for an acknowledged item while filters are re-created, grown and deleted around them', async () => {
    const writer = await connect()
    const churner = await connect()
    const readers = await Promise.all(Array.from({ length: 8 }, () => connect()))
    const before = await threadAnswered()
    const failures: string[] = []
    const deadline = Date.now() + 8000
    let round = 0
    // Other filters made and deleted all along: their memory is collected and reused meanwhile.
    const churn = (async () => {
      for (let n = 0; Date.now() < deadline; n++) {
        await ask(churner, 'BF.RESERVE', `other:${n % 8}`, '0.01', String(1000 + (n % 5) * 700))
        await ask(churner, 'BF.MADD', `other:${n % 8}`, ...Array.from({ length: 20 }, (_, i) => `o${n}:${i}`))
        if (n % 3 === 2) await ask(churner, 'DEL', `other:${(n + 5) % 8}`)
      }
    })()
    // One filter grown all along by adds, while other readers check what was acknowledged so far.
    const grower = await connect()
    const watchers = await Promise.all(Array.from({ length: 4 }, () => connect()))
    expect(await ask(grower, 'BF.RESERVE', 'growing', '0.01', '100', 'EXPANSION', '2')).toBe('+OK\r\n')
    const acked: string[] = []
    const grow = (async () => {
      for (let n = 0; Date.now() < deadline; n++) {
        const batch = Array.from({ length: 50 }, (_, i) => `g${n}:${i}`)
        expect((await ask(grower, 'BF.MADD', 'growing', ...batch)).startsWith('*50\r\n')).toBe(true)
        acked.push(...batch)
      }
    })()
    const watch = watchers.map(async (watcher, index) => {
      while (Date.now() < deadline) {
        const sample = acked.slice(-100)
        if (sample.length === 0) {
          await new Promise((resolve) => setTimeout(resolve, 5))
          continue
        }
        const reply = await ask(watcher, 'BF.MEXISTS', 'growing', ...sample)
        if (reply !== `*${sample.length}\r\n${':1\r\n'.repeat(sample.length)}`)
          failures.push(`watcher ${index}: ${reply.slice(0, 60)}`)
      }
    })
    while (Date.now() < deadline) {
      // Each round: the key re-created with another size, items added past its capacity (new
      // layers), then every reader checks them all (all must answer 1), twice.
      const key = `round:${round % 3}`
      await ask(writer, 'DEL', key)
      expect(await ask(writer, 'BF.RESERVE', key, '0.01', String(50 + (round % 4) * 30), 'EXPANSION', '2')).toBe(
        '+OK\r\n',
      )
      const items = Array.from({ length: 200 }, (_, i) => `r${round}:${i}`)
      const added = await ask(writer, 'BF.MADD', key, ...items)
      expect(added.startsWith('*200\r\n')).toBe(true)
      for (let pass = 0; pass < 2; pass++) {
        const seen = await Promise.all(readers.map((reader) => ask(reader, 'BF.MEXISTS', key, ...items)))
        for (const [index, reply] of seen.entries())
          if (reply !== `*200\r\n${':1\r\n'.repeat(200)}`)
            failures.push(`round ${round} reader ${index} pass ${pass}: ${reply.slice(0, 60)}`)
      }
      round++
    }
    await Promise.all([churn, grow, ...watch])
    expect(failures).toEqual([])
    expect(acked.length).toBeGreaterThan(1000)
    expect(round).toBeGreaterThan(5)
    // The threads answered a good part of the checks (each reader's first check of a round's new filter goes to the main thread).
    expect((await threadAnswered()) - before).toBeGreaterThan(round * 4)
  })
})
