/**
 * CONFIG REWRITE on a real server over real sockets, and the redis 7.0 aliases (slaveof,
 * slave-read-only, ...) in CONFIG GET/SET and the config file. Replies byte for byte as a real
 * redis-server 7.0.15 gave them to the same requests.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { exchange, type RawClient } from '../../helpers/resp.js'
import { serverPerTest } from '../../helpers/server-hooks.js'
import { tempDirsRemovedAfterAll } from '../../helpers/temp-dir.js'
import { childClient, startChildServer } from '../../helpers/child-server.js'
import { REWRITE_SIGNATURE } from '../../../src/runtime/config-rewrite.js'
import { loadConfig } from '../../../src/runtime/config-load.js'

const { start, connect } = serverPerTest()
const tempDir = tempDirsRemovedAfterAll('bfs-rewrite-')

async function check(client: RawClient, commands: string[][], expected: string): Promise<void> {
  expect(await exchange(client, commands, expected)).toBe(expected)
}

/** A server started from a config file `text` written in a directory of its own. */
async function startWithFile(text: string): Promise<{ port: number; file: string; dir: string; logs: string[] }> {
  const dir = tempDir()
  const file = path.join(dir, 'bfs.conf')
  writeFileSync(file, text)
  const running = await start(loadConfig(text, ['--port', '0', '--dir', dir]), { configFile: file })
  return { port: running.port, file, dir, logs: running.logs }
}

const BASE = ['# mine', 'appendonly no', 'save ""', 'slave-priority 50', ''].join('\n')

describe('CONFIG REWRITE', () => {
  it("without a config file, or with an argument: redis's errors", async () => {
    const { port } = await start()
    const client = await connect(port)
    await check(client, [['CONFIG', 'REWRITE']], '-ERR The server is running without a config file\r\n')
    await check(client, [['CONFIG', 'REWRITE', 'x']], "-ERR wrong number of arguments for 'config|rewrite' command\r\n")
  })

  it("rewrites the file in place: comments kept, aliases under the key's name, changes appended after the signature", async () => {
    const { port, file, dir, logs } = await startWithFile(BASE)
    const client = await connect(port)
    await check(
      client,
      [['CONFIG', 'SET', 'maxmemory', '10mb', 'slave-read-only', 'no', 'default-capacity', '555']],
      '+OK\r\n',
    )
    await check(client, [['CONFIG', 'REWRITE']], '+OK\r\n')
    expect(readFileSync(file, 'utf8')).toBe(
      [
        '# mine',
        'appendonly no',
        'save ""',
        'replica-priority 50',
        '',
        REWRITE_SIGNATURE,
        // The flags' values are the running configuration too, as in redis.
        'port 0',
        `dir "${dir}"`,
        'maxmemory 10mb',
        'default-capacity 555',
        'replica-read-only no',
        'user default on nopass ~* &* +@all',
        '',
      ].join('\n'),
    )
    // Replaced through a temp file: nothing else is left beside it.
    expect(readdirSync(dir).filter((name) => name.startsWith('bfs.conf'))).toEqual(['bfs.conf'])
    expect(logs.some((line) => line.includes('CONFIG REWRITE executed with success.'))).toBe(true)
  })

  it('CONFIG SET, CONFIG REWRITE, then a restart of the process with the file keeps the values', async () => {
    const dir = tempDir()
    const file = path.join(dir, 'bfs.conf')
    writeFileSync(file, `port 0\ndir "${dir}"\nappendonly no\nsave ""\nslave-serve-stale-data yes\n`)
    const first = await startChildServer([file])
    const redis = childClient(first.port)
    try {
      expect(
        await redis.call('CONFIG', 'SET', 'slave-serve-stale-data', 'no', 'timeout', '77', 'requirepass', 'a "b" c'),
      ).toBe('OK')
      expect(await redis.call('CONFIG', 'REWRITE')).toBe('OK')
    } finally {
      redis.disconnect()
    }
    first.bfs.child.kill('SIGTERM')
    expect(await first.bfs.waitExit()).toBe(0)
    const second = await startChildServer([file])
    const again = await connect(second.port)
    try {
      await check(again, [['AUTH', 'a "b" c']], '+OK\r\n')
      await check(
        again,
        [['CONFIG', 'GET', 'replica-serve-stale-data', 'timeout']],
        '*4\r\n$24\r\nreplica-serve-stale-data\r\n$2\r\nno\r\n$7\r\ntimeout\r\n$2\r\n77\r\n',
      )
    } finally {
      second.bfs.child.kill('SIGTERM')
      await second.bfs.waitExit()
    }
  })

  it("queues in MULTI and runs inside EXEC with Sentinel's CLIENT KILLs (its failover block, SLAVEOF left out)", async () => {
    const { port, file } = await startWithFile(BASE)
    const client = await connect(port)
    const other = await connect(port)
    await check(other, [['PING']], '+PONG\r\n')
    // The bytes Sentinel 7.0.15 sends, less SLAVEOF NO ONE (another part's command).
    await check(
      client,
      [
        ['MULTI'],
        ['CONFIG', 'REWRITE'],
        ['CLIENT', 'KILL', 'TYPE', 'normal'],
        ['CLIENT', 'KILL', 'TYPE', 'pubsub'],
        ['EXEC'],
      ],
      '+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n:1\r\n:0\r\n',
    )
    await other.waitClosed()
    expect(readFileSync(file, 'utf8')).toContain(`\n${REWRITE_SIGNATURE}\n`)
  })

  it('a file that is gone is written anew; errors as redis words them', async () => {
    const { port, file, dir } = await startWithFile(BASE)
    const client = await connect(port)
    rmSync(file)
    await check(client, [['CONFIG', 'REWRITE']], '+OK\r\n')
    // Every ACL user is written, the default one too, as redis 7.0 rewriteConfigUserOption does.
    expect(readFileSync(file, 'utf8')).toBe(
      `${REWRITE_SIGNATURE}\nport 0\ndir "${dir}"\nsave ""\nappendonly no\nreplica-priority 50\nuser default on nopass ~* &* +@all\n`,
    )
    rmSync(file)
    mkdirSync(file)
    await check(client, [['CONFIG', 'REWRITE']], '-ERR Rewriting config file: Is a directory\r\n')
    rmSync(dir, { recursive: true })
    await check(client, [['CONFIG', 'REWRITE']], '-ERR Rewriting config file: No such file or directory\r\n')
    expect(existsSync(dir)).toBe(false)
    writeFileSync(dir, '')
    await check(client, [['CONFIG', 'REWRITE']], '-ERR Rewriting config file: Not a directory\r\n')
    rmSync(dir)
  })
})

describe('the redis 7.0 aliases', () => {
  it('CONFIG GET: a pattern matches both names, an exact name answers as given; slaveof and replicaof are "" on a master', async () => {
    const { port } = await start({ 'replica-priority': 7 })
    const client = await connect(port)
    await check(client, [['CONFIG', 'GET', 'slaveof']], '*2\r\n$7\r\nslaveof\r\n$0\r\n\r\n')
    await check(client, [['CONFIG', 'GET', 'REPLICAOF']], '*2\r\n$9\r\nREPLICAOF\r\n$0\r\n\r\n')
    await check(
      client,
      [['CONFIG', 'GET', '*priority']],
      '*4\r\n$16\r\nreplica-priority\r\n$1\r\n7\r\n$14\r\nslave-priority\r\n$1\r\n7\r\n',
    )
    // A name answered once is not repeated, in any case; its alias is another name.
    await check(
      client,
      [['CONFIG', 'GET', 'SLAVE-PRIORITY', 'slave-priority', 'slave-*iority']],
      '*2\r\n$14\r\nSLAVE-PRIORITY\r\n$1\r\n7\r\n',
    )
  })

  it('CONFIG SET: an alias sets its key; errors name the alias; the two names are not duplicates, the later wins', async () => {
    const { port } = await start()
    const client = await connect(port)
    await check(
      client,
      [
        ['CONFIG', 'SET', 'slave-read-only', 'no'],
        ['CONFIG', 'GET', 'replica-read-only'],
      ],
      '+OK\r\n*2\r\n$17\r\nreplica-read-only\r\n$2\r\nno\r\n',
    )
    await check(
      client,
      [['CONFIG', 'SET', 'SLAVE-READ-ONLY', 'maybe']],
      "-ERR CONFIG SET failed (possibly related to argument 'slave-read-only') - argument must be 'yes' or 'no'\r\n",
    )
    await check(
      client,
      [['CONFIG', 'SET', 'slaveof', '127.0.0.1 1']],
      "-ERR CONFIG SET failed (possibly related to argument 'slaveof') - can't set immutable config\r\n",
    )
    await check(
      client,
      [['CONFIG', 'SET', 'min-slaves-max-lag', '5', 'MIN-SLAVES-MAX-LAG', '6']],
      "-ERR CONFIG SET failed (possibly related to argument 'MIN-SLAVES-MAX-LAG') - duplicate parameter\r\n",
    )
    await check(
      client,
      [
        ['CONFIG', 'SET', 'slave-read-only', 'no', 'replica-read-only', 'yes'],
        ['CONFIG', 'GET', 'slave-read-only'],
      ],
      '+OK\r\n*2\r\n$15\r\nslave-read-only\r\n$3\r\nyes\r\n',
    )
  })

  it('the config file and flags take them', () => {
    const config = loadConfig('slaveof 10.0.0.1 6390\nmin-slaves-to-write 2\nSLAVE-ANNOUNCE-IP 10.0.0.9', [
      '--repl-ping-slave-period',
      '3',
    ])
    expect([
      config.replicaof,
      config['min-replicas-to-write'],
      config['replica-announce-ip'],
      config['repl-ping-replica-period'],
    ]).toEqual(['10.0.0.1 6390', 2, '10.0.0.9', 3])
  })
})
