/**
 * The operator's tools beside a real redis-server 7.0.15 given the same bytes: LATENCY's replies
 * and errors, CLIENT REPLY / NO-EVICT / UNBLOCK / TRACKING's, CLIENT PAUSE's errors, DEBUG's
 * refusal, COMMAND GETKEYS / GETKEYSANDFLAGS, CONFIG GET of the keys clients probe; then what only
 * bfs can show (its own event names, DEBUG with enable-debug-command yes).
 */
import { rmSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { besideRedis } from '../../helpers/beside-redis.js'
import { ask, encodeCommand, type RawClient } from '../../helpers/resp.js'
import { startServer } from '../../helpers/start-server.js'
import { makeTempDir } from '../../helpers/temp-dir.js'
import { hasTool, runTool } from '../../helpers/tools.js'

// io-threads 1, as redis's default: CONFIG GET shows the number of threads a start resolved.
const servers = besideRedis({ 'io-threads': 1 })
/** The same commands on both servers, one at a time, in RESP2 and RESP3: every reply byte for byte. */
async function same(commands: readonly (readonly string[])[]): Promise<void> {
  for (const protocol of ['2', '3']) {
    const replies: string[][] = []
    for (const port of [servers.bfs.port, servers.redis.port]) {
      const client = await servers.connect(port)
      await ask(client, 'HELLO', protocol)
      const got: string[] = []
      for (const command of commands) got.push(`${command.join(' ')} -> ${await ask(client, ...command)}`)
      replies.push(got)
    }
    expect(replies[0]).toEqual(replies[1])
  }
}

describe('beside redis-server 7.0.15', () => {
  it('LATENCY answers alike while nothing was sampled', async () => {
    await same([
      ['LATENCY', 'HELP'],
      ['LATENCY', 'LATEST'],
      ['LATENCY', 'HISTORY', 'command'],
      ['LATENCY', 'RESET'],
      ['LATENCY', 'RESET', 'a', 'b'],
      ['LATENCY', 'DOCTOR'],
      ['LATENCY', 'GRAPH', 'command'],
      ['LATENCY', 'HISTORY'],
      ['LATENCY', 'LATEST', 'x'],
      ['LATENCY', 'NOPE'],
      ['LATENCY'],
      ['CONFIG', 'GET', 'latency-monitor-threshold'],
    ])
  })

  it('CLIENT subcommands answer alike, HELP included', async () => {
    await same([
      ['CLIENT', 'HELP'],
      ['CLIENT', 'NO-EVICT', 'on'],
      ['CLIENT', 'NO-EVICT', 'maybe'],
      ['CLIENT', 'NO-EVICT', 'off'],
      ['CLIENT', 'REPLY', 'foo'],
      ['CLIENT', 'TRACKING', 'off'],
      ['CLIENT', 'CACHING', 'yes'],
      ['CLIENT', 'GETREDIR'],
      ['CLIENT', 'TRACKINGINFO'],
      ['CLIENT', 'UNBLOCK', '999999'],
      ['CLIENT', 'UNBLOCK', '999999', 'foo'],
      ['CLIENT', 'UNBLOCK', 'x'],
      ['CLIENT', 'UNBLOCK', '1', '2', '3'],
      ['CLIENT', 'PAUSE', 'abc'],
      ['CLIENT', 'PAUSE', '-1'],
      ['CLIENT', 'PAUSE', '10', 'foo'],
      ['CLIENT', 'PAUSE', '10', 'write', 'x'],
      ['CLIENT', 'PAUSE', '0', 'WRITE'],
      ['CLIENT', 'UNPAUSE'],
      ['CLIENT', 'KILL', 'ID', '0'],
      ['CLIENT', 'KILL', 'SKIPME', 'maybe'],
      ['CLIENT', 'KILL', 'ID', '999999', 'SKIPME', 'no'],
      ['CLIENT', 'KILL', 'ADDR', '1.2.3.4:5'],
      ['CLIENT', 'KILL', '1.2.3.4:5'],
      ['CLIENT', 'KILL', 'LADDR', '1.2.3.4:5', 'TYPE', 'pubsub'],
      ['CLIENT', 'KILL', 'TYPE', 'nope'],
      ['CLIENT', 'KILL', 'ID'],
    ])
  })

  it('CLIENT REPLY OFF and SKIP drop the replies redis drops, in one pipeline', async () => {
    const script = [
      ['CLIENT', 'REPLY', 'SKIP'],
      ['PING'],
      ['ECHO', 'a'],
      ['CLIENT', 'REPLY', 'OFF'],
      ['PING'],
      ['CLIENT', 'REPLY', 'SKIP'],
      ['ECHO', 'x'],
      ['CLIENT', 'REPLY', 'ON'],
      ['ECHO', 'b'],
    ]
    const got: string[] = []
    for (const port of [servers.bfs.port, servers.redis.port]) {
      const client = await servers.connect(port)
      client.write(Buffer.concat(script.map((command) => encodeCommand(command))))
      got.push((await client.read('$1\r\na\r\n+OK\r\n$1\r\nb\r\n'.length)).toString('latin1'))
    }
    expect(got[0]).toBe('$1\r\na\r\n+OK\r\n$1\r\nb\r\n')
    expect(got[0]).toBe(got[1])
  })

  it('CLIENT LIST shows NO-EVICT as flag e, as redis does', async () => {
    for (const port of [servers.bfs.port, servers.redis.port]) {
      const client = await servers.connect(port)
      await ask(client, 'CLIENT', 'NO-EVICT', 'on')
      expect(await ask(client, 'CLIENT', 'INFO')).toMatch(/ flags=e /)
    }
  })

  it('COMMAND GETKEYS and GETKEYSANDFLAGS find the keys redis finds, with its errors', async () => {
    await same([
      ['COMMAND', 'GETKEYS', 'del', 'a', 'b', 'c'],
      ['COMMAND', 'GETKEYS', 'rename', 'a', 'b'],
      ['COMMAND', 'GETKEYS', 'expire', 'k', '10'],
      ['COMMAND', 'GETKEYS', 'watch', 'a', 'b'],
      ['COMMAND', 'GETKEYS', 'exists', 'a'],
      ['COMMAND', 'GETKEYS', 'memory', 'usage', 'k'],
      ['COMMAND', 'GETKEYSANDFLAGS', 'rename', 'a', 'b'],
      ['COMMAND', 'GETKEYSANDFLAGS', 'unlink', 'a', 'b'],
      ['COMMAND', 'GETKEYSANDFLAGS', 'expire', 'a', '1'],
      ['COMMAND', 'GETKEYSANDFLAGS', 'type', 'a'],
      ['COMMAND', 'GETKEYSANDFLAGS', 'watch', 'a'],
      ['COMMAND', 'GETKEYS', 'ping', 'x'],
      ['COMMAND', 'GETKEYS', 'nope', 'a'],
      ['COMMAND', 'GETKEYS', 'config', 'get', 'x'],
      ['COMMAND', 'GETKEYS', 'ssubscribe', 'a'],
      ['COMMAND', 'GETKEYS', 'spublish', 'c', 'm'],
      ['COMMAND', 'GETKEYS', 'expire', 'k'],
      ['COMMAND', 'GETKEYS', 'memory', 'nope', 'k'],
      ['COMMAND', 'GETKEYS', 'del'],
      ['COMMAND', 'GETKEYSANDFLAGS', 'get'],
    ])
  })

  it('CONFIG GET answers the keys clients, Sentinel and exporters probe, with redis 7.0 defaults where bfs has no such behaviour', async () => {
    await same([
      ['CONFIG', 'GET', 'maxmemory-policy'],
      ['CONFIG', 'GET', 'io-threads'],
      ['CONFIG', 'GET', 'io-threads-do-reads'],
      ['CONFIG', 'SET', 'io-threads', '2'],
      ['CONFIG', 'SET', 'io-threads-do-reads', 'yes'],
      ['CONFIG', 'GET', 'lua-time-limit'],
      ['CONFIG', 'GET', 'cluster-enabled'],
      ['CONFIG', 'GET', 'notify-keyspace-events'],
      ['CONFIG', 'GET', 'lazyfree-lazy-user-del'],
      ['CONFIG', 'GET', 'hz'],
      ['CONFIG', 'GET', 'slave-read-only'],
      ['CONFIG', 'GET', 'appendfsync'],
      ['CONFIG', 'GET', 'timeout'],
      ['CONFIG', 'GET', 'tcp-keepalive'],
      ['CONFIG', 'GET', 'maxmemory-samples'],
      ['CONFIG', 'GET', 'busy-reply-threshold'],
      ['CONFIG', 'GET', 'dbfilename'],
      ['CONFIG', 'GET', 'tls-port'],
      ['CONFIG', 'GET', 'list-max-listpack-size'],
    ])
    // Every key redis 7.0 has is answered (values may differ: bfs's own settings and defaults).
    const names = async (port: number): Promise<string[]> => {
      const client = await servers.connect(port)
      const lines = (await ask(client, 'CONFIG', 'GET', '*')).split('\r\n').filter((line, i) => i % 4 === 2)
      return lines
    }
    const bfsNames = new Set(await names(servers.bfs.port))
    const missing = (await names(servers.redis.port)).filter((name) => !bfsNames.has(name) && name !== 'databases')
    expect(missing).toEqual([])
  })

  it("INFO commandstats names a container's subcommands one by one, as redis 7.0 (cmdstat_config|get)", async () => {
    const names: string[][] = []
    for (const port of [servers.bfs.port, servers.redis.port]) {
      const client = await servers.connect(port)
      await ask(client, 'CONFIG', 'RESETSTAT')
      for (const command of [
        ['CONFIG', 'GET', 'port'],
        ['CLIENT', 'ID'],
        ['CLIENT', 'NOPE'],
        ['COMMAND', 'COUNT'],
        ['PING'],
        ['LATENCY', 'LATEST'],
      ])
        await ask(client, ...command)
      const stats = await ask(client, 'INFO', 'commandstats')
      names.push([...stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((match) => `${match[1]}=${match[2]}`).sort())
    }
    expect(names[0]).toEqual([
      'client|id=1',
      'command|count=1',
      'config|get=1',
      'config|resetstat=1',
      'latency|latest=1',
      'ping=1',
    ])
    expect(names[0]).toEqual(names[1])
  })

  it('DEBUG is refused as redis 7.0 refuses it by default (enable-debug-command no)', async () => {
    await same([
      ['DEBUG', 'SLEEP', '0'],
      ['DEBUG', 'HELP'],
      ['CONFIG', 'GET', 'enable-debug-command'],
    ])
  })
})

describe.skipIf(!hasTool('redis-cli'))('redis-cli', () => {
  it('prints LATENCY, COMMAND GETKEYSANDFLAGS, CONFIG GET and CLIENT PAUSE as it does for redis-server', async () => {
    for (const args of [
      ['LATENCY', 'DOCTOR'],
      ['COMMAND', 'GETKEYSANDFLAGS', 'rename', 'a', 'b'],
      ['CONFIG', 'GET', 'maxmemory-policy'],
      ['CLIENT', 'PAUSE', '10', 'WRITE'],
      ['LATENCY', 'HELP'],
    ]) {
      const [ours, theirs] = await Promise.all(
        [servers.bfs.port, servers.redis.port].map((port) => runTool('redis-cli', ['-p', String(port), ...args])),
      )
      expect(ours!.stdout, args.join(' ')).toBe(theirs!.stdout)
      expect(ours!.stdout.length).toBeGreaterThan(0)
    }
  })
})

describe('bfs on its own', () => {
  it('LATENCY samples DEBUG SLEEP under command and event-loop, and LATEST, HISTORY, GRAPH, DOCTOR, RESET report them', async () => {
    const bfs = await startServer({ 'enable-debug-command': 'yes', 'latency-monitor-threshold': 50 })
    try {
      const client = await servers.connect(bfs.port)
      // The event loop's sampler starts at the next cron tick: wait until the server saw one.
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(await ask(client, 'DEBUG', 'SLEEP', '0.2')).toBe('+OK\r\n')
      let latest = ''
      for (let i = 0; i < 100 && !latest.includes('event-loop'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        latest = await ask(client, 'LATENCY', 'LATEST')
      }
      expect(latest).toMatch(/^\*2\r\n/)
      const [, commandMs] = /\$7\r\ncommand\r\n:\d+\r\n:(\d+)\r\n/.exec(latest)!
      expect(Number(commandMs)).toBeGreaterThanOrEqual(200)
      // The highest delay seen (the latest sample may be a smaller one of a later second).
      const [, loopMs] = /\$10\r\nevent-loop\r\n:\d+\r\n:\d+\r\n:(\d+)\r\n/.exec(latest)!
      expect(Number(loopMs)).toBeGreaterThanOrEqual(150)
      expect(await ask(client, 'LATENCY', 'HISTORY', 'command')).toMatch(/^\*1\r\n\*2\r\n:\d+\r\n:\d+\r\n$/)
      expect(await ask(client, 'LATENCY', 'GRAPH', 'command')).toContain('command - high ')
      const doctor = await ask(client, 'LATENCY', 'DOCTOR')
      expect(doctor).toContain('1. command: 1 latency spikes')
      expect(doctor).toContain('- Check your Slow Log')
      expect(await ask(client, 'LATENCY', 'RESET', 'COMMAND')).toBe(':1\r\n')
      expect(await ask(client, 'LATENCY', 'RESET')).toBe(':1\r\n')
      expect(await ask(client, 'LATENCY', 'LATEST')).toBe('*0\r\n')
    } finally {
      await bfs.stop()
    }
  })

  it('CLIENT KILL by ID, ADDR, LADDR, USER and SKIPME, combined, and the old addr form', async () => {
    const bfs = await startServer()
    try {
      const [admin, one, two, three, four] = await Promise.all([0, 1, 2, 3, 4].map(() => servers.connect(bfs.port)))
      const id = async (client: RawClient): Promise<string> => (await ask(client, 'CLIENT', 'ID')).slice(1, -2)
      const addr = (client: RawClient): string => `${client.socket.localAddress}:${client.socket.localPort}`
      const laddr = `127.0.0.1:${bfs.port}`
      expect(await ask(admin, 'CLIENT', 'KILL', 'ID', await id(one!))).toBe(':1\r\n')
      await one!.waitClosed()
      expect(await ask(admin, 'CLIENT', 'KILL', 'ADDR', addr(two!), 'ID', await id(three!))).toBe(':0\r\n')
      expect(await ask(admin, 'CLIENT', 'KILL', 'ADDR', addr(two!), 'USER', 'default')).toBe(':1\r\n')
      await two!.waitClosed()
      expect(await ask(admin, 'CLIENT', 'KILL', addr(three!))).toBe('+OK\r\n')
      await three!.waitClosed()
      expect(await ask(admin, 'CLIENT', 'KILL', 'USER', 'nobody')).toBe("-ERR No such user 'nobody'\r\n")
      // LADDR matches every client of this listener; SKIPME yes (the default) spares the caller.
      expect(await ask(admin, 'CLIENT', 'KILL', 'LADDR', laddr)).toBe(':1\r\n')
      await four!.waitClosed()
      expect(await ask(admin, 'CLIENT', 'KILL', 'LADDR', laddr, 'SKIPME', 'no')).toBe(':1\r\n')
      await admin!.waitClosed()
    } finally {
      await bfs.stop()
    }
  })

  it('DEBUG RELOAD saves and loads back every database, not database 0 alone', async () => {
    const dir = makeTempDir()
    const bfs = await startServer({ 'enable-debug-command': 'yes', dir })
    try {
      const client = await servers.connect(bfs.port)
      await ask(client, 'BF.ADD', 'zero', 'a')
      await ask(client, 'SELECT', '3')
      await ask(client, 'BF.ADD', 'three', 'b')
      await ask(client, 'APBF.RESERVE', 'window', 'COUNT', '0.01', '100')
      await ask(client, 'APBF.ADD', 'window', 'c')
      expect(await ask(client, 'DEBUG', 'RELOAD')).toBe('+OK\r\n')
      expect(await ask(client, 'INFO', 'keyspace')).toMatch(/db0:keys=1,.*\r\ndb3:keys=2,/s)
      expect(await ask(client, 'BF.EXISTS', 'three', 'b')).toBe(':1\r\n')
      expect(await ask(client, 'APBF.EXISTS', 'window', 'c')).toBe('*1\r\n:1\r\n')
      await ask(client, 'SELECT', '0')
      expect(await ask(client, 'BF.EXISTS', 'zero', 'a')).toBe(':1\r\n')
      // The snapshot it saved holds them too: a restart from it finds every key in its database.
      await bfs.stop()
      const again = await startServer({ dir })
      try {
        const second = await servers.connect(again.port)
        expect(await ask(second, 'INFO', 'keyspace')).toMatch(/db0:keys=1,.*\r\ndb3:keys=2,/s)
      } finally {
        await again.stop()
      }
    } finally {
      await bfs.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('DEBUG RELOAD saves, empties and loads back the dataset, expiries included; OBJECT, SET-ACTIVE-EXPIRE, CHANGE-REPL-ID, ERROR, HELP', async () => {
    const bfs = await startServer({ 'enable-debug-command': 'yes' })
    try {
      const client = await servers.connect(bfs.port)
      await ask(client, 'BF.ADD', 'kept', 'a')
      await ask(client, 'BF.ADD', 'expiring', 'b')
      await ask(client, 'EXPIRE', 'expiring', '1000')
      const replid = /master_replid:(\w+)/.exec(await ask(client, 'INFO', 'replication'))![1]
      expect(await ask(client, 'DEBUG', 'RELOAD')).toBe('+OK\r\n')
      expect(bfs.logs.some((line) => line.includes('DB reloaded by DEBUG RELOAD'))).toBe(true)
      expect(await ask(client, 'BF.EXISTS', 'kept', 'a')).toBe(':1\r\n')
      expect(await ask(client, 'TTL', 'expiring')).toMatch(/^:(99\d|1000)\r\n$/)
      expect(await ask(client, 'DEBUG', 'RELOAD', 'NOSAVE')).toBe('+OK\r\n')
      expect(await ask(client, 'DBSIZE')).toBe(':2\r\n')
      expect(await ask(client, 'DEBUG', 'RELOAD', 'BAD')).toBe(
        '-ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.\r\n',
      )
      expect(await ask(client, 'DEBUG', 'OBJECT', 'kept')).toMatch(
        /^\+Value at:0x[0-9a-f]+ refcount:1 encoding:raw serializedlength:\d+ lru:0 lru_seconds_idle:0\r\n$/,
      )
      expect(await ask(client, 'DEBUG', 'OBJECT', 'nope')).toBe('-ERR no such key\r\n')
      expect(await ask(client, 'DEBUG', 'SET-ACTIVE-EXPIRE', '0')).toBe('+OK\r\n')
      expect(bfs.server.activeExpireEnabled).toBe(false)
      expect(await ask(client, 'DEBUG', 'SET-ACTIVE-EXPIRE', '1')).toBe('+OK\r\n')
      expect(await ask(client, 'DEBUG', 'CHANGE-REPL-ID')).toBe('+OK\r\n')
      expect(await ask(client, 'INFO', 'replication')).not.toContain(replid!)
      expect(await ask(client, 'DEBUG', 'ERROR', 'WRONG thing')).toBe('-WRONG thing\r\n')
      expect(await ask(client, 'DEBUG', 'HELP')).toContain('+SLEEP <seconds>\r\n')
      expect(await ask(client, 'DEBUG', 'NOPE')).toBe(
        "-ERR unknown subcommand or wrong number of arguments for 'NOPE'. Try DEBUG HELP.\r\n",
      )
    } finally {
      await bfs.stop()
    }
  })
})
