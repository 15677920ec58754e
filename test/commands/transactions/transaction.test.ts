/**
 * MULTI / EXEC / DISCARD / WATCH / UNWATCH over real sockets, byte for byte as redis-server 7.0.15
 * answers (its replies to the same requests were read off a real redis-server: the generic texts
 * are redis's own, the BF.* replies RedisBloom's), through ioredis's multi(), and in the log: a
 * transaction is replayed whole, and one cut short at the end of a segment not at all.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { type RawClient, encodeCommand, exchange } from '../../helpers/resp.js'
import { serverPerTest } from '../../helpers/server-hooks.js'
import { tempDirsRemovedAfterAll } from '../../helpers/temp-dir.js'
import { listSegments, segmentName } from '../../../src/store/append-log.js'
import { ERR } from '../../../src/protocol/error-texts.js'

const { start, connect } = serverPerTest()
/** A data directory that outlives the servers started on it (removed after the file). */
const keptDir = tempDirsRemovedAfterAll()

async function check(client: RawClient, commands: string[][], expected: string): Promise<void> {
  expect(await exchange(client, commands, expected)).toBe(expected)
}

describe('MULTI / EXEC', () => {
  it('queues, then answers every reply in one array; a command that fails inside does not stop the others', async () => {
    const { port } = await start()
    const client = await connect(port)
    await check(
      client,
      [
        ['MULTI'],
        ['BF.RESERVE', 'f', '0.01', '100'],
        ['BF.ADD', 'f', 'a'],
        ['BF.RESERVE', 'f', '0.01', '100'],
        ['BF.MADD', 'f', 'a', 'b'],
        ['BF.EXISTS', 'f', 'b'],
        ['EXEC'],
      ],
      '+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*5\r\n+OK\r\n:1\r\n-ERR item exists\r\n*2\r\n:0\r\n:1\r\n:1\r\n',
    )
    await check(client, [['MULTI'], ['EXEC']], '+OK\r\n*0\r\n')
    await check(
      client,
      [['MULTI'], ['BF.ADD', 'f', 'c'], ['DISCARD'], ['BF.EXISTS', 'f', 'c']],
      '+OK\r\n+QUEUED\r\n+OK\r\n:0\r\n',
    )
  })

  it("answers misuse with redis's words; a refused command fails the transaction, MULTI and WATCH inside do not", async () => {
    const { port } = await start()
    const client = await connect(port)
    await check(
      client,
      [
        ['MULTI'],
        ['MULTI'],
        ['BF.ADD', 'f', 'a'],
        ['ECHO'],
        ['NOSUCH'],
        ['WATCH', 'x'],
        ['EXEC'],
        ['EXEC'],
        ['DISCARD'],
      ],
      '+OK\r\n-ERR MULTI calls can not be nested\r\n+QUEUED\r\n' +
        "-ERR wrong number of arguments for 'echo' command\r\n" +
        "-ERR unknown command 'NOSUCH', with args beginning with: \r\n" +
        '-ERR WATCH inside MULTI is not allowed\r\n' +
        '-EXECABORT Transaction discarded because of previous errors.\r\n' +
        '-ERR EXEC without MULTI\r\n-ERR DISCARD without MULTI\r\n',
    )
    // Nothing of the aborted transaction ran.
    await check(client, [['BF.EXISTS', 'f', 'a']], ':0\r\n')
    // A count redis checks only when the command runs (RedisBloom's, PING's upper bound) is queued
    // and fails inside EXEC alone.
    await check(
      client,
      [['MULTI'], ['BF.EXISTS', 'f', 'a', 'b'], ['PING', 'a', 'b'], ['BF.ADD', 'f', 'a'], ['EXEC']],
      '+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n' +
        "-ERR wrong number of arguments for 'bf.exists' command\r\n-ERR wrong number of arguments for 'ping' command\r\n:1\r\n",
    )
    // A refused EXEC ends the transaction, with the refusal as its reason, MULTI or not (redis rejectCommand).
    await check(
      client,
      [['MULTI'], ['EXEC', 'x'], ['EXEC', 'x']],
      "+OK\r\n-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command\r\n-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command\r\n",
    )
    await check(
      client,
      [['MULTI'], ['MULTI'], ['PING'], ['EXEC']],
      '+OK\r\n-ERR MULTI calls can not be nested\r\n+QUEUED\r\n*1\r\n+PONG\r\n',
    )
    await check(
      client,
      [['MULTI'], ['WATCH', 'x'], ['PING'], ['EXEC']],
      '+OK\r\n-ERR WATCH inside MULTI is not allowed\r\n+QUEUED\r\n*1\r\n+PONG\r\n',
    )
    await check(
      client,
      [['MULTI'], ['SAVE'], ['EXEC']],
      '+OK\r\n-ERR Command not allowed inside a transaction\r\n-EXECABORT Transaction discarded because of previous errors.\r\n',
    )
    // RESET runs at once and ends the transaction.
    await check(
      client,
      [['MULTI'], ['BF.ADD', 'f', 'z'], ['RESET'], ['EXEC'], ['BF.EXISTS', 'f', 'z']],
      '+OK\r\n+QUEUED\r\n+RESET\r\n-ERR EXEC without MULTI\r\n:0\r\n',
    )
  })

  it("an unknown subcommand or a subcommand's argument count is refused while queueing, as redis 7.0 does", async () => {
    const { port } = await start()
    const client = await connect(port)
    for (const [command, error] of [
      [['CLIENT', 'FOO'], "-ERR unknown subcommand 'FOO'. Try CLIENT HELP.\r\n"],
      [['CONFIG', 'GET'], "-ERR wrong number of arguments for 'config|get' command\r\n"],
      [['CLIENT', 'ID', 'x'], "-ERR wrong number of arguments for 'client|id' command\r\n"],
      [['MEMORY', 'USAGE'], "-ERR wrong number of arguments for 'memory|usage' command\r\n"],
    ] as const) {
      await check(
        client,
        [['MULTI'], ['BF.ADD', 'f', 'a'], [...command], ['EXEC']],
        `+OK\r\n+QUEUED\r\n${error}-EXECABORT Transaction discarded because of previous errors.\r\n`,
      )
    }
    await check(client, [['BF.EXISTS', 'f', 'a']], ':0\r\n')
    // A subcommand that passes its row's checks is queued and runs in EXEC.
    await check(
      client,
      [['MULTI'], ['CONFIG', 'GET', 'maxmemory'], ['EXEC']],
      '+OK\r\n+QUEUED\r\n*1\r\n*2\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n',
    )
  })

  it('EXEC renamed by rename-command keeps its role', async () => {
    const { port } = await start({ 'rename-command': [{ from: 'EXEC', to: 'MYEXEC' }] })
    const client = await connect(port)
    await check(
      client,
      [['MULTI'], ['PING'], ['EXEC'], ['MYEXEC']],
      "+OK\r\n+QUEUED\r\n-ERR unknown command 'EXEC', with args beginning with: \r\n-EXECABORT Transaction discarded because of previous errors.\r\n",
    )
    await check(client, [['MULTI'], ['PING'], ['MYEXEC']], '+OK\r\n+QUEUED\r\n*1\r\n+PONG\r\n')
  })

  it('CLIENT LIST shows the open transaction (flags=x, multi=<queued>)', async () => {
    const { port } = await start()
    const client = await connect(port)
    const other = await connect(port)
    await check(client, [['MULTI'], ['PING'], ['PING']], '+OK\r\n+QUEUED\r\n+QUEUED\r\n')
    other.write(encodeCommand(['CLIENT', 'LIST']))
    const list = (await other.readUntil((bytes) => /\n\r\n$/.test(bytes.toString('latin1')))).toString('latin1')
    expect(list).toMatch(/ flags=x db=0 sub=0 psub=0 ssub=0 multi=2 .* cmd=ping /)
    expect(list).toMatch(/ flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 .* cmd=client /)
  })

  it('with the disk failing, a queued write fails the transaction, and EXEC of writes queued before is refused with the reason', async () => {
    const running = await start({ save: '3600 1' })
    const client = await connect(running.port)
    const early = await connect(running.port)
    const manifest = path.join(running.dir, 'snapshot', 'MANIFEST')
    try {
      await check(early, [['MULTI'], ['BF.ADD', 'f', 'a']], '+OK\r\n+QUEUED\r\n')
      mkdirSync(path.join(manifest, 'in-the-way'), { recursive: true })
      await check(client, [['BGSAVE']], '+Background saving started\r\n')
      while (running.server.persistence.snapshots.lastBgsaveStatus !== 'err')
        await new Promise((resolve) => setTimeout(resolve, 20))
      await check(client, [['MULTI'], ['BF.EXISTS', 'f', 'a'], ['EXEC']], '+OK\r\n+QUEUED\r\n*1\r\n:0\r\n')
      await check(
        client,
        [['MULTI'], ['BF.ADD', 'f', 'a'], ['EXEC']],
        `+OK\r\n-${ERR.MISCONF_BGSAVE}\r\n-EXECABORT Transaction discarded because of previous errors.\r\n`,
      )
      // redis rejectCommand → execCommandAbort: the reason goes into EXECABORT's text.
      await check(
        early,
        [['EXEC'], ['EXEC']],
        `-EXECABORT Transaction discarded because of: ${ERR.MISCONF_BGSAVE}\r\n-ERR EXEC without MULTI\r\n`,
      )
      await check(client, [['BF.EXISTS', 'f', 'a']], ':0\r\n')
    } finally {
      rmSync(manifest, { recursive: true, force: true })
    }
  })
})

describe('MULTI / EXEC, limits and state', () => {
  it('over maxmemory every queued command is refused, as redis bounds a queue so', async () => {
    const { port } = await start()
    const client = await connect(port)
    await check(
      client,
      [
        ['BF.RESERVE', 'f', '0.001', '100000'],
        ['CONFIG', 'SET', 'maxmemory', '1'],
      ],
      '+OK\r\n+OK\r\n',
    )
    await check(
      client,
      [['MULTI'], ['PING'], ['BF.EXISTS', 'f', 'a'], ['MULTI'], ['EXEC']],
      `+OK\r\n-${ERR.OOM}\r\n-${ERR.OOM}\r\n-${ERR.OOM}\r\n-EXECABORT Transaction discarded because of previous errors.\r\n`,
    )
    await check(client, [['MULTI'], ['DISCARD'], ['BF.EXISTS', 'f', 'a']], '+OK\r\n+OK\r\n:0\r\n')
  })

  it('CLIENT LIST: flags=d once a watched key was written, flags=x multi=<n> while EXEC runs', async () => {
    const { port } = await start()
    const client = await connect(port)
    const other = await connect(port)
    await check(client, [['WATCH', 'f']], '+OK\r\n')
    await check(other, [['BF.ADD', 'f', 'a']], ':1\r\n')
    const listOf = async (who: RawClient, commands: string[][]): Promise<string> => {
      who.write(Buffer.concat(commands.map((command) => encodeCommand(command))))
      return (await who.readUntil((bytes) => /\n\r\n$/.test(bytes.toString('latin1')))).toString('latin1')
    }
    expect(await listOf(other, [['CLIENT', 'LIST']])).toMatch(/ flags=d db=0 .* multi=-1 /)
    const inExec = await listOf(client, [['UNWATCH'], ['MULTI'], ['PING'], ['CLIENT', 'LIST'], ['EXEC']])
    expect(inExec).toMatch(/^\+OK\r\n\+OK\r\n\+QUEUED\r\n\+QUEUED\r\n\*2\r\n\+PONG\r\n\$\d+\r\nid=/)
    // Its own line, wherever it is: with I/O threads, ids follow the order the main thread learnt
    // of the connections, which two threads accepting at once do not fix.
    expect(inExec).toMatch(/^id=\d+ .* flags=x db=0 sub=0 psub=0 ssub=0 multi=2 /m)
  })

  it('BGSAVE and BGREWRITEAOF inside EXEC are scheduled for after it: the snapshot holds the whole transaction', async () => {
    const dir = keptDir('bfs-multi-save-')
    const running = await start({ dir, appendonly: true })
    const client = await connect(running.port)
    await check(
      client,
      [
        ['BF.RESERVE', 'a', '0.01', '100'],
        ['BF.RESERVE', 'b', '0.01', '100'],
      ],
      '+OK\r\n+OK\r\n',
    )
    await check(
      client,
      [
        ['MULTI'],
        ['BF.ADD', 'a', '1'],
        ['BGSAVE'],
        ['BF.ADD', 'b', '1'],
        ['BGREWRITEAOF'],
        ['BF.ADD', 'a', '2'],
        ['EXEC'],
      ],
      '+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n' +
        '*5\r\n:1\r\n+Background saving scheduled\r\n:1\r\n+Background append only file rewriting scheduled\r\n:1\r\n',
    )
    while (!running.logs.some((line) => line.includes('Background AOF rewrite finished successfully')))
      await new Promise((resolve) => setTimeout(resolve, 20))
    while (!running.logs.some((line) => line.includes('Background saving terminated with success')))
      await new Promise((resolve) => setTimeout(resolve, 20))
    await running.stop()
    // The snapshot alone (the log not read) holds the whole transaction: the save ran after it.
    const again = await start({ dir, appendonly: false })
    const other = await connect(again.port)
    await check(
      other,
      [
        ['BF.MEXISTS', 'a', '1', '2'],
        ['BF.EXISTS', 'b', '1'],
      ],
      '*2\r\n:1\r\n:1\r\n:1\r\n',
    )
  })

  it('CONFIG SET appendonly yes inside EXEC schedules the rewrite under the log', async () => {
    const dir = keptDir('bfs-multi-aof-')
    const running = await start({ dir, appendonly: false })
    const client = await connect(running.port)
    await check(client, [['BF.ADD', 'f', 'before']], ':1\r\n')
    await check(
      client,
      [['MULTI'], ['CONFIG', 'SET', 'appendonly', 'yes'], ['BF.ADD', 'f', 'inside'], ['EXEC']],
      '+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n:1\r\n',
    )
    expect(
      running.logs.some((line) =>
        line.includes('AOF was enabled during a transaction. An AOF background was scheduled to start when possible.'),
      ),
    ).toBe(true)
    while (!running.logs.some((line) => line.includes('Background AOF rewrite finished successfully')))
      await new Promise((resolve) => setTimeout(resolve, 20))
    await check(
      client,
      [
        ['BF.ADD', 'f', 'after'],
        ['CONFIG', 'SET', 'appendonly', 'no'],
        ['CONFIG', 'SET', 'appendonly', 'yes'],
      ],
      ':1\r\n+OK\r\n+OK\r\n',
    )
    client.write(encodeCommand(['INFO', 'persistence']))
    const info = (await client.readUntil((bytes) => bytes.includes('aof_delayed_fsync'))).toString('latin1')
    expect(Number(/aof_current_size:(-?\d+)/.exec(info)![1])).toBeGreaterThanOrEqual(0)
    await running.stop()
    const again = await start({ dir, appendonly: true })
    const other = await connect(again.port)
    await check(other, [['BF.MEXISTS', 'f', 'before', 'inside', 'after']], '*3\r\n:1\r\n:1\r\n:1\r\n')
  })
})

describe('WATCH', () => {
  it('is not touched by writes that change nothing there: FLUSHALL of none, DEL of a missing key, a failed RENAME', async () => {
    const { port } = await start()
    const client = await connect(port)
    const other = await connect(port)
    for (const write of [['FLUSHALL'], ['DEL', 'wk'], ['RENAME', 'wk', 'zz']]) {
      await check(client, [['WATCH', 'wk']], '+OK\r\n')
      other.write(encodeCommand(write))
      await other.readUntil((bytes) => bytes.includes('\r\n'))
      await check(client, [['MULTI'], ['PING'], ['EXEC']], '+OK\r\n+QUEUED\r\n*1\r\n+PONG\r\n')
    }
    // A refused EXEC forgets the watched keys too.
    await check(
      client,
      [
        ['WATCH', 'wk'],
        ['EXEC', 'x'],
      ],
      "+OK\r\n-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command\r\n",
    )
    await check(other, [['BF.ADD', 'wk', 'a']], ':1\r\n')
    await check(client, [['MULTI'], ['PING'], ['EXEC']], '+OK\r\n+QUEUED\r\n*1\r\n+PONG\r\n')
  })

  it('EXEC answers a null array (RESP3: null) when another client wrote a watched key, and runs nothing', async () => {
    const { port } = await start()
    const client = await connect(port)
    const other = await connect(port)
    for (const [write, protocol] of [
      [['BF.ADD', 'f', 'b'], '2'],
      [['DEL', 'f'], '3'],
      [['FLUSHALL'], '2'],
      [['BF.RESERVE', 'g', '0.1', '10'], '2'],
    ] as const) {
      const hello = protocol === '3' ? [['HELLO', '3']] : []
      client.write(Buffer.concat(hello.map((command) => encodeCommand(command))))
      if (protocol === '3') await client.readUntil((bytes) => bytes.includes('modules'))
      // f exists and g does not (their answers depend on the round before).
      other.write(Buffer.concat([encodeCommand(['BF.ADD', 'f', 'a']), encodeCommand(['DEL', 'g'])]))
      expect(
        (await other.readUntil((bytes) => bytes.toString('latin1').split('\r\n').length === 3)).toString('latin1'),
      ).toMatch(/^:[01]\r\n:[01]\r\n$/)
      await check(client, [['WATCH', 'f', 'g']], '+OK\r\n')
      await check(other, [[...write]], write[0] === 'BF.ADD' ? ':1\r\n' : write[0] === 'DEL' ? ':1\r\n' : '+OK\r\n')
      await check(
        client,
        [['MULTI'], ['BF.ADD', 'h', 'x'], ['EXEC']],
        `+OK\r\n+QUEUED\r\n${protocol === '3' ? '_' : '*-1'}\r\n`,
      )
      await check(client, [['EXISTS', 'h']], ':0\r\n')
      if (protocol === '3')
        await check(client, [['HELLO', '2']], '*14\r\n$6\r\nserver\r\n').then(() =>
          client.readUntil((bytes) => bytes.includes('modules')),
        )
    }
  })

  it('an unchanged watched key, a read of it, a write by the watcher inside the transaction, or UNWATCH let EXEC run', async () => {
    const { port } = await start()
    const client = await connect(port)
    const other = await connect(port)
    await check(
      client,
      [['WATCH', 'f'], ['BF.EXISTS', 'f', 'a'], ['MULTI'], ['BF.ADD', 'f', 'a'], ['EXEC']],
      '+OK\r\n:0\r\n+OK\r\n+QUEUED\r\n*1\r\n:1\r\n',
    )
    await check(
      other,
      [
        ['BF.EXISTS', 'f', 'a'],
        ['BF.ADD', 'other', 'a'],
      ],
      ':1\r\n:1\r\n',
    )
    await check(client, [['WATCH', 'f'], ['UNWATCH']], '+OK\r\n+OK\r\n')
    await check(other, [['BF.ADD', 'f', 'b']], ':1\r\n')
    await check(client, [['MULTI'], ['BF.EXISTS', 'f', 'b'], ['EXEC']], '+OK\r\n+QUEUED\r\n*1\r\n:1\r\n')
    // EXEC forgets the watched keys: a later write does not fail the next transaction.
    await check(client, [['WATCH', 'f'], ['MULTI'], ['EXEC']], '+OK\r\n+OK\r\n*0\r\n')
    await check(other, [['BF.ADD', 'f', 'c']], ':1\r\n')
    await check(client, [['MULTI'], ['PING'], ['EXEC']], '+OK\r\n+QUEUED\r\n*1\r\n+PONG\r\n')
  })

  it("a BF.*/APBF.* write that fails once its key is opened touches it, as RedisBloom's RM_CloseKey of a key opened for writing does; one refused on its arguments does not", async () => {
    const { port } = await start()
    const client = await connect(port)
    const other = await connect(port)
    await check(
      other,
      [
        ['BF.RESERVE', 'f', '0.01', '100'],
        ['APBF.RESERVE', 'w', 'COUNT', '0.01', '100'],
      ],
      '+OK\r\n+OK\r\n',
    )
    const touching: [string, string[], string][] = [
      ['f', ['BF.RESERVE', 'f', '0.01', '100'], '-ERR item exists'],
      ['missing', ['BF.INSERT', 'missing', 'NOCREATE', 'ITEMS', 'a'], '-ERR not found'],
      ['lc', ['BF.LOADCHUNK', 'lc', '1', 'not a header'], '-ERR received bad data'],
      ['f', ['BF.LOADCHUNK', 'f', '999', 'junk'], '-ERR '],
      ['w', ['BF.ADD', 'w', 'a'], '-WRONGTYPE'],
      ['w', ['BF.MADD', 'w', 'a'], '-WRONGTYPE'],
      ['w', ['APBF.RESERVE', 'w', 'COUNT', '0.01', '100'], '-ERR item exists'],
      ['nowindow', ['APBF.ADD', 'nowindow', 'a'], '-ERR not found'],
      ['nowindow', ['APBF.ADDAT', 'nowindow', '5', 'a'], '-ERR not found'],
      ['f', ['BF.LOAD', 'f', 'no-such-file.bf'], '-ERR item exists'],
    ]
    for (const [key, write, error] of touching) {
      await check(client, [['WATCH', key]], '+OK\r\n')
      other.write(encodeCommand(write))
      expect((await other.readUntil((bytes) => bytes.includes('\r\n'))).toString('latin1'), write.join(' ')).toMatch(
        new RegExp(`^${error}`),
      )
      expect(
        await exchange(client, [['MULTI'], ['PING'], ['EXEC']], '+OK\r\n+QUEUED\r\n*-1\r\n'),
        write.join(' '),
      ).toBe('+OK\r\n+QUEUED\r\n*-1\r\n')
    }
    // Refused before the key is opened (rebloom.c parses these first): the watch holds.
    const untouched: [string, string[]][] = [
      ['f', ['BF.RESERVE', 'f', 'x', '100']],
      ['f', ['BF.LOADCHUNK', 'f', 'x', 'junk']],
      ['f', ['BF.INSERT', 'f', 'CAPACITY', 'x', 'ITEMS', 'a']],
      ['w', ['APBF.ADDAT', 'w', '-1', 'a']],
    ]
    for (const [key, write] of untouched) {
      await check(client, [['WATCH', key]], '+OK\r\n')
      other.write(encodeCommand(write))
      expect((await other.readUntil((bytes) => bytes.includes('\r\n'))).toString('latin1'), write.join(' ')).toMatch(
        /^-/,
      )
      expect(
        await exchange(client, [['MULTI'], ['PING'], ['EXEC']], '+OK\r\n+QUEUED\r\n*1\r\n+PONG\r\n'),
        write.join(' '),
      ).toBe('+OK\r\n+QUEUED\r\n*1\r\n+PONG\r\n')
    }
  })

  it('a watcher that disconnects is forgotten', async () => {
    const running = await start()
    const client = await connect(running.port)
    await check(client, [['WATCH', 'a', 'b']], '+OK\r\n')
    expect(running.server.watchedKeys.size).toBe(2)
    client.close()
    while (running.server.watchedKeys.size > 0) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(running.server.watchedKeys.size).toBe(0)
  })
})

describe('ioredis', () => {
  it('multi() ... exec() and watch() work as against redis', async () => {
    const { port } = await start()
    const redis = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0 })
    const other = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0 })
    try {
      const results = await redis
        .multi()
        .call('BF.RESERVE', 'f', '0.01', '1000')
        .call('BF.MADD', 'f', 'a', 'b')
        .call('BF.EXISTS', 'f', 'a')
        .call('BF.CARD', 'f')
        .exec()
      expect(results).toEqual([
        [null, 'OK'],
        [null, [1, 1]],
        [null, 1],
        [null, 2],
      ])
      await redis.watch('f')
      await other.call('BF.ADD', 'f', 'c')
      expect(await redis.multi().call('BF.ADD', 'f', 'd').exec()).toBeNull()
      expect(await other.call('BF.EXISTS', 'f', 'd')).toBe(0)
    } finally {
      redis.disconnect()
      other.disconnect()
    }
  })
})

describe('transactions in the append-only log', () => {
  it('two writes or more are logged between MULTI and EXEC and replayed; one is logged alone', async () => {
    const dir = keptDir('bfs-multi-log-')
    const first = await start({ dir, appendonly: true })
    const client = await connect(first.port)
    await check(
      client,
      [
        ['BF.RESERVE', 'f', '0.01', '100'],
        ['BF.RESERVE', 'g', '0.01', '100'],
      ],
      '+OK\r\n+OK\r\n',
    )
    await check(
      client,
      [['MULTI'], ['BF.ADD', 'f', 'a'], ['BF.EXISTS', 'f', 'a'], ['BF.ADD', 'f', 'b'], ['EXEC']],
      '+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n:1\r\n:1\r\n:1\r\n',
    )
    await check(
      client,
      [['MULTI'], ['BF.ADD', 'g', 'a'], ['BF.ADD', 'f', 'a'], ['EXEC']],
      '+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n:1\r\n:0\r\n',
    )
    client.close()
    await first.stop()
    const segments = listSegments(dir, 'appendonly.aof')
    const log = segments.map(({ file }) => readFileSync(file, 'latin1')).join('')
    const records = (...items: string[][]): string =>
      items.map((argv) => encodeCommand(argv.map((arg) => Buffer.from(arg))).toString('latin1')).join('')
    expect(log).toContain(records(['MULTI'], ['BF.ADD', 'f', 'a'], ['BF.ADD', 'f', 'b'], ['EXEC']))
    expect(log).toContain(records(['BF.ADD', 'g', 'a']))
    expect(log).not.toContain(records(['BF.ADD', 'g', 'a'], ['EXEC']))
    const second = await start({ dir, appendonly: true })
    const again = await connect(second.port)
    await check(
      again,
      [
        ['BF.MEXISTS', 'f', 'a', 'b', 'x'],
        ['BF.EXISTS', 'g', 'a'],
      ],
      '*3\r\n:1\r\n:1\r\n:0\r\n:1\r\n',
    )
  })

  it("a MULTI whose EXEC never reached the log is dropped at the end of its segment, with redis's warning", async () => {
    const dir = keptDir('bfs-multi-cut-')
    const record = (...argv: string[]): Buffer => encodeCommand(argv.map((arg) => Buffer.from(arg)))
    // A crash cut the first segment inside a transaction; a later run went on in segment 2.
    writeFileSync(
      path.join(dir, segmentName('appendonly.aof', 1)),
      Buffer.concat([record('BF.ADD', 'f', 'a'), record('MULTI'), record('BF.ADD', 'f', 'b')]),
    )
    writeFileSync(
      path.join(dir, segmentName('appendonly.aof', 2)),
      Buffer.concat([
        record('BF.ADD', 'f', 'c'),
        record('MULTI'),
        record('BF.ADD', 'f', 'd'),
        record('BF.ADD', 'f', 'e'),
        record('EXEC'),
        record('MULTI'),
        record('BF.ADD', 'f', 'g'),
      ]),
    )
    const running = await start({ dir, appendonly: true })
    const client = await connect(running.port)
    await check(
      client,
      [['BF.MEXISTS', 'f', 'a', 'b', 'c', 'd', 'e', 'g']],
      '*6\r\n:1\r\n:0\r\n:1\r\n:1\r\n:1\r\n:0\r\n',
    )
    const reverts = running.logs.filter((line) => line.includes('Revert incomplete MULTI/EXEC transaction in AOF file'))
    expect(reverts).toHaveLength(2)
    expect(reverts[0]).toContain(segmentName('appendonly.aof', 1))
    expect(reverts[1]).toContain(segmentName('appendonly.aof', 2))
  })
})
