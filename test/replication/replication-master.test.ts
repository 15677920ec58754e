/**
 * The master's side of replication over real sockets, byte for byte: the handshake, PSYNC's full
 * sync (diskless `$EOF:` and disk `$<len>` forms) and the stream after it (`SELECT 0` first),
 * +CONTINUE from the backlog, the replid2 rules, WAIT and its blocking, NOREPLICAS, the ping
 * cadence, the replica output limit, repl-timeout and `redis-cli --replica` (SYNC).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { RawClient, askLine, encodeCommand } from '../helpers/resp.js'
import { InteractiveTool, hasTool } from '../helpers/tools.js'
import type { Config } from '../../src/runtime/config.js'
import { ERR } from '../../src/protocol/error-texts.js'

let running: RunningServer | undefined

afterEach(async () => {
  await running?.stop()
  running = undefined
})

async function start(config: Partial<Config> = {}): Promise<RunningServer> {
  // One thread, in the threads project too: the stream is compared byte for byte with the commands
  // sent, and an add an I/O thread answers is recorded as BF.ADDED (docs/THREADS.md;
  // test/server/thread-adds.test.ts checks that stream on a real replica).
  running = await startServer({ 'repl-diskless-sync-delay': 0, 'io-threads': 1, ...config })
  return running
}

const SELECT_0 = '*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n'
const GETACK = '*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n'

function command(...args: string[]): Buffer {
  return encodeCommand(args)
}

/** Sends a command and reads exactly `expected`'s length of reply. */
async function ask(client: RawClient, args: string[], expectedLength: number): Promise<string> {
  client.write(command(...args))
  return (await client.read(expectedLength)).toString('latin1')
}

/** A replica's handshake (PING, REPLCONF listening-port, REPLCONF capa), then PSYNC: the replica's socket with what follows PSYNC unread. */
async function replica(
  port: number,
  psync: [string, string] = ['?', '-1'],
  listeningPort = '7001',
): Promise<RawClient> {
  const client = await RawClient.connect(port)
  expect(await ask(client, ['PING'], 7)).toBe('+PONG\r\n')
  client.write(
    Buffer.concat([
      command('REPLCONF', 'listening-port', listeningPort),
      command('REPLCONF', 'capa', 'eof', 'capa', 'psync2'),
    ]),
  )
  expect((await client.read(10)).toString('latin1')).toBe('+OK\r\n+OK\r\n')
  client.write(command('PSYNC', ...psync))
  return client
}

interface FullSync {
  replid: string
  offset: number
  payload: Buffer
}

/** Reads `+FULLRESYNC <replid> <offset>` and a diskless payload (`$EOF:<mark>` ... `<mark>`), skipping keep-alives. */
async function readDisklessSync(client: RawClient, timeoutMs = 10_000): Promise<FullSync> {
  const head = (
    await client.readUntil((bytes) => /\$EOF:[0-9a-f]{40}\r\n/.test(bytes.toString('latin1')), timeoutMs)
  ).toString('latin1')
  const match = /^\n*\+FULLRESYNC ([0-9a-f]{40}) (\d+)\r\n\$EOF:([0-9a-f]{40})\r\n([^]*)$/.exec(head)
  expect(match, JSON.stringify(head)).not.toBeNull()
  const mark = match![3]!
  let rest = Buffer.from(match![4]!, 'latin1')
  const ends = (bytes: Buffer): boolean =>
    bytes.length >= 40 && bytes.subarray(bytes.length - 40).toString('latin1') === mark
  if (!ends(rest))
    rest = Buffer.concat([
      rest,
      await client.readUntil((bytes) => ends(bytes.length >= 40 ? bytes : Buffer.concat([rest, bytes])), timeoutMs),
    ])
  const payload = rest.subarray(0, rest.length - 40)
  return { replid: match![1]!, offset: Number(match![2]), payload }
}

/** BF.RESERVE before any replica: later adds propagate as themselves (no auto-created BF.RESERVE). */
async function reserve(port: number, name: string): Promise<void> {
  const client = await RawClient.connect(port)
  expect(await askLine(client, 'BF.RESERVE', name, '0.01', '1000')).toBe('+OK\r\n')
  client.close()
}

async function info(port: number, section: string): Promise<string> {
  const client = await RawClient.connect(port)
  try {
    client.write(command('INFO', section))
    const head = (await client.readUntil((bytes) => bytes.includes('\r\n'))).toString('latin1')
    const length = Number(/^\$(\d+)\r\n/.exec(head)![1])
    const headerLength = head.indexOf('\r\n') + 2
    const rest =
      head.length - headerLength >= length + 2
        ? Buffer.alloc(0)
        : await client.read(length + 2 - (head.length - headerLength))
    return (head.slice(headerLength) + rest.toString('latin1')).slice(0, length)
  } finally {
    client.close()
  }
}

function field(text: string, name: string): string | undefined {
  return new RegExp(`^${name}:(.*)\r$`, 'm').exec(text)?.[1]
}

async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('full sync', () => {
  it('PSYNC ? -1: +FULLRESYNC, the $EOF: payload, then after the first ACK the stream from SELECT 0', async () => {
    const { port } = await start()
    const writer = await RawClient.connect(port)
    expect(await askLine(writer, 'BF.ADD', 'before', 'x')).toBe(':1\r\n')
    expect(await askLine(writer, 'BF.RESERVE', 'after', '0.01', '100')).toBe('+OK\r\n')
    const link = await replica(port)
    const sync = await readDisklessSync(link)
    expect(sync.offset).toBe(0)
    expect(sync.payload.subarray(0, 8).toString('latin1')).toBe('BFSSYNC1')
    expect(sync.payload[sync.payload.length - 1]).toBe(0)
    const replication = await info(port, 'replication')
    expect(field(replication, 'connected_slaves')).toBe('1')
    expect(field(replication, 'slave0')).toBe('ip=127.0.0.1,port=7001,state=online,offset=0,lag=0')
    expect(field(replication, 'master_replid')).toBe(sync.replid)
    expect(field(await info(port, 'stats'), 'sync_full')).toBe('1')
    // The stream waits for the first ACK: this write is held, then sent after SELECT 0.
    expect(await askLine(writer, 'BF.ADD', 'after', 'y')).toBe(':1\r\n')
    link.write(command('REPLCONF', 'ACK', '0'))
    const record = command('BF.ADD', 'after', 'y').toString('latin1')
    const stream = (await link.read(SELECT_0.length + record.length)).toString('latin1')
    expect(stream).toBe(SELECT_0 + record)
    const later = await info(port, 'replication')
    expect(field(later, 'master_repl_offset')).toBe(String(SELECT_0.length + record.length))
    expect(field(later, 'repl_backlog_histlen')).toBe(String(SELECT_0.length + record.length))
    expect(field(later, 'repl_backlog_first_byte_offset')).toBe('1')
    link.close()
    writer.close()
  })

  it('a BF.ADD that creates its filter reaches the stream as the log gets it: BF.RESERVE, then the add', async () => {
    const { port } = await start()
    const link = await replica(port)
    await readDisklessSync(link)
    link.write(command('REPLCONF', 'ACK', '0'))
    const writer = await RawClient.connect(port)
    expect(await askLine(writer, 'MULTI')).toBe('+OK\r\n')
    expect(await askLine(writer, 'BF.ADD', 'a', '1')).toBe('+QUEUED\r\n')
    expect(await askLine(writer, 'BF.ADD', 'a', '2')).toBe('+QUEUED\r\n')
    expect(await askLine(writer, 'EXEC')).toMatch(/^\*2\r\n/)
    const received = (await link.readUntil((bytes) => bytes.toString('latin1').includes('EXEC'))).toString('latin1')
    expect(
      received.startsWith(SELECT_0 + command('MULTI').toString('latin1') + '*6\r\n$10\r\nBF.RESERVE\r\n$1\r\na\r\n'),
    ).toBe(true)
    expect(
      received.endsWith(
        command('BF.ADD', 'a', '1').toString('latin1') +
          command('BF.ADD', 'a', '2').toString('latin1') +
          command('EXEC').toString('latin1'),
      ),
    ).toBe(true)
    link.close()
    writer.close()
  })

  it('disk form (repl-diskless-sync no): +FULLRESYNC at once, then $<len> and the payload with the stream right after it', async () => {
    const { port } = await start({ 'repl-diskless-sync': false })
    const writer = await RawClient.connect(port)
    expect(await askLine(writer, 'BF.ADD', 'f', 'x')).toBe(':1\r\n')
    const link = await replica(port)
    const head = (await link.readUntil((bytes) => /\$\d+\r\n/.test(bytes.toString('latin1')))).toString('latin1')
    const match = /^\+FULLRESYNC ([0-9a-f]{40}) 0\r\n\n*\$(\d+)\r\n([^]*)$/.exec(head)
    expect(match, JSON.stringify(head)).not.toBeNull()
    const length = Number(match![2])
    let payload = Buffer.from(match![3]!, 'latin1')
    if (payload.length < length) payload = Buffer.concat([payload, await link.read(length - payload.length)])
    expect(payload.subarray(0, 8).toString('latin1')).toBe('BFSSYNC1')
    expect(payload[length - 1]).toBe(0)
    // No ACK needed: a disk-synced replica is online once the file is sent.
    await until(
      async () => (field(await info(port, 'replication'), 'slave0')?.includes('state=online') ? true : undefined),
      'online',
    )
    expect(await askLine(writer, 'BF.ADD', 'f', 'y')).toBe(':1\r\n')
    const record = command('BF.ADD', 'f', 'y').toString('latin1')
    const rest = payload.subarray(length).toString('latin1')
    const stream = rest + (await link.read(SELECT_0.length + record.length - rest.length)).toString('latin1')
    expect(stream).toBe(SELECT_0 + record)
    link.close()
    writer.close()
  })

  it('paces a large payload by each socket: a replica that stops reading holds its sync back without the master buffering it, and is dropped after repl-timeout', async () => {
    const { port, logs } = await start({ 'repl-timeout': 2, 'repl-diskless-sync-delay': 1 })
    const writer = await RawClient.connect(port)
    const names: string[] = []
    for (let i = 0; i < 80; i++) names.push(`${'n'.repeat(100_000)}${i}`)
    for (const name of names) expect(await askLine(writer, 'BF.RESERVE', name, '0.01', '100')).toBe('+OK\r\n')
    const stuck = await replica(port, ['?', '-1'], '7001')
    const reader = await replica(port, ['?', '-1'], '7002')
    stuck.socket.pause()
    const sync = readDisklessSync(reader, 30_000)
    let largestOutput = 0
    await until(
      async () => {
        largestOutput = Math.max(
          largestOutput,
          Number(field(await info(port, 'clients'), 'client_recent_max_output_buffer')),
        )
        return logs.some((entry) => entry.includes('Disconnecting timedout replica (full sync): 127.0.0.1:7001'))
          ? true
          : undefined
      },
      'the stuck replica dropped',
      30_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}: ${logs.slice(-8).join(' | ')}`)
    })
    // 8 MB of payload; the master held at most a few slices of it for the stuck replica.
    expect(largestOutput).toBeLessThan(4 * 1024 * 1024)
    const { payload } = await sync
    expect(payload.length).toBeGreaterThan(8_000_000)
    expect(payload.subarray(0, 8).toString('latin1')).toBe('BFSSYNC1')
    stuck.close()
    reader.close()
    writer.close()
  })

  it('keeps a diskless replica waiting repl-diskless-sync-delay with \\n keep-alives', async () => {
    const { port } = await start({ 'repl-diskless-sync-delay': 1 })
    const link = await replica(port)
    const head = (await link.readUntil((bytes) => bytes.includes('+FULLRESYNC'))).toString('latin1')
    expect(head).toMatch(/^\n+\+FULLRESYNC/)
    link.close()
  })
})

describe('partial resync', () => {
  /** A replica fully synced and streaming; returns its replid and the offset it processed. */
  async function syncedReplica(port: number): Promise<{ link: RawClient; replid: string }> {
    const link = await replica(port)
    const sync = await readDisklessSync(link)
    link.write(command('REPLCONF', 'ACK', String(sync.offset)))
    return { link, replid: sync.replid }
  }

  it('+CONTINUE <replid> and the backlog from the asked offset; sync_partial_ok', async () => {
    const { port } = await start()
    await reserve(port, 'f')
    const first = await syncedReplica(port)
    const writer = await RawClient.connect(port)
    expect(await askLine(writer, 'BF.ADD', 'f', 'one')).toBe(':1\r\n')
    const one = SELECT_0 + command('BF.ADD', 'f', 'one').toString('latin1')
    expect(await first.link.read(one.length).then((bytes) => bytes.toString('latin1'))).toBe(one)
    first.link.close()
    await until(
      async () => (field(await info(port, 'replication'), 'connected_slaves') === '0' ? true : undefined),
      'the replica gone',
    )
    expect(await askLine(writer, 'BF.ADD', 'f', 'two')).toBe(':1\r\n')
    const again = await replica(port, [first.replid, String(one.length + 1)])
    const two = command('BF.ADD', 'f', 'two').toString('latin1')
    const expected = `+CONTINUE ${first.replid}\r\n${two}`
    expect((await again.read(expected.length)).toString('latin1')).toBe(expected)
    const stats = await info(port, 'stats')
    expect([field(stats, 'sync_full'), field(stats, 'sync_partial_ok'), field(stats, 'sync_partial_err')]).toEqual([
      '1',
      '1',
      '0',
    ])
    again.close()
    writer.close()
  })

  it('an unknown replid or an offset outside the backlog gets a full sync and counts sync_partial_err', async () => {
    const { port } = await start()
    const first = await syncedReplica(port)
    const other = await replica(port, ['0123456789012345678901234567890123456789', '1'], '7002')
    expect((await readDisklessSync(other)).replid).toBe(first.replid)
    const ahead = await replica(port, [first.replid, '1000'], '7003')
    expect((await readDisklessSync(ahead)).replid).toBe(first.replid)
    const stats = await info(port, 'stats')
    expect([field(stats, 'sync_full'), field(stats, 'sync_partial_ok'), field(stats, 'sync_partial_err')]).toEqual([
      '3',
      '0',
      '2',
    ])
    for (const link of [first.link, other, ahead]) link.close()
  })

  it('replid2 (after SLAVEOF NO ONE): +CONTINUE with the new id up to second_repl_offset, a full sync past it', async () => {
    const { port, server } = await start()
    await reserve(port, 'f')
    const first = await syncedReplica(port)
    const writer = await RawClient.connect(port)
    expect(await askLine(writer, 'BF.ADD', 'f', 'one')).toBe(':1\r\n')
    const one = SELECT_0 + command('BF.ADD', 'f', 'one').toString('latin1')
    await first.link.read(one.length)
    server.replication.shiftIds()
    const replication = await info(port, 'replication')
    expect(field(replication, 'master_replid2')).toBe(first.replid)
    expect(field(replication, 'second_repl_offset')).toBe(String(one.length + 1))
    const newId = field(replication, 'master_replid')!
    const continued = await replica(port, [first.replid, String(one.length + 1)], '7002')
    expect((await continued.read(52)).toString('latin1')).toBe(`+CONTINUE ${newId}\r\n`)
    const past = await replica(port, [first.replid, String(one.length + 2)], '7003')
    expect((await readDisklessSync(past)).replid).toBe(newId)
    for (const link of [first.link, continued, past]) link.close()
    writer.close()
  })
})

describe('WAIT', () => {
  it('answers at once with no replicas to wait for, and the count at its timeout', async () => {
    const { port } = await start()
    const client = await RawClient.connect(port)
    expect(await askLine(client, 'WAIT', '0', '0')).toBe(':0\r\n')
    expect(await askLine(client, 'BF.ADD', 'f', 'x')).toBe(':1\r\n')
    expect(await askLine(client, 'WAIT', '1', '50')).toBe(':0\r\n')
    expect(await askLine(client, 'WAIT', '1', '-1')).toBe('-ERR timeout is negative\r\n')
    expect(await askLine(client, 'WAIT', 'x', '1')).toBe('-ERR value is not an integer or out of range\r\n')
    expect(await askLine(client, 'WAIT', '1', 'x')).toBe('-ERR timeout is not an integer or out of range\r\n')
    client.close()
  })

  /** A master with filter f, a replica link online at its offset, and a client. */
  async function onlineReplicaAndClient(): Promise<{ port: number; link: RawClient; client: RawClient }> {
    const { port } = await start()
    await reserve(port, 'f')
    const link = await replica(port)
    const sync = await readDisklessSync(link)
    link.write(command('REPLCONF', 'ACK', String(sync.offset)))
    await until(
      async () => (field(await info(port, 'replication'), 'slave0')?.includes('online') ? true : undefined),
      'online',
    )
    const client = await RawClient.connect(port)
    return { port, link, client }
  }

  it('blocks the client (its next command waits too), sends REPLCONF GETACK *, and answers once the ACK covers its write', async () => {
    const { port, link, client } = await onlineReplicaAndClient()
    expect(await askLine(client, 'BF.ADD', 'f', 'x')).toBe(':1\r\n')
    client.write(Buffer.concat([command('WAIT', '1', '0'), command('PING')]))
    const record = SELECT_0 + command('BF.ADD', 'f', 'x').toString('latin1')
    const stream = (await link.read(record.length + GETACK.length)).toString('latin1')
    expect(stream).toBe(record + GETACK)
    expect(field(await info(port, 'clients'), 'blocked_clients')).toBe('1')
    link.write(command('REPLCONF', 'ACK', String(record.length)))
    // The PING after WAIT ran only once WAIT answered.
    expect((await client.read(11)).toString('latin1')).toBe(':1\r\n+PONG\r\n')
    client.close()
    link.close()
  })

  it('WAIT after adds run together in the same read (read-batch.ts) waits for all of their records', async () => {
    const { port, link, client } = await onlineReplicaAndClient()
    client.write(
      Buffer.concat([
        command('BF.ADD', 'f', 'a'),
        command('BF.ADD', 'f', 'b'),
        command('BF.ADD', 'f', 'a'),
        command('WAIT', '1', '0'),
        command('PING'),
      ]),
    )
    const records =
      SELECT_0 + command('BF.ADD', 'f', 'a').toString('latin1') + command('BF.ADD', 'f', 'b').toString('latin1')
    const stream = (await link.read(records.length + GETACK.length)).toString('latin1')
    expect(stream).toBe(records + GETACK)
    expect((await client.read(12)).toString('latin1')).toBe(':1\r\n:1\r\n:0\r\n')
    expect(field(await info(port, 'clients'), 'blocked_clients')).toBe('1')
    link.write(command('REPLCONF', 'ACK', String(records.length)))
    expect((await client.read(11)).toString('latin1')).toBe(':1\r\n+PONG\r\n')
    client.close()
    link.close()
  })

  it("a timeout past a timer's range (WAIT 1 9999999999999) keeps the client blocked instead of firing at once", async () => {
    const { port, server } = await start()
    const client = await RawClient.connect(port)
    expect(await askLine(client, 'BF.ADD', 'f', 'x')).toBe(':1\r\n')
    client.write(Buffer.concat([command('WAIT', '1', '9999999999999'), command('PING')]))
    await until(
      async () => (field(await info(port, 'clients'), 'blocked_clients') === '1' ? true : undefined),
      'blocked',
    )
    // Still blocked a cron second later; then released.
    await new Promise((resolve) => setTimeout(resolve, 1100))
    expect(field(await info(port, 'clients'), 'blocked_clients')).toBe('1')
    server.masterSide.unblockAll(ERR.UNBLOCKED_ROLE_CHANGE)
    expect((await client.readUntil((bytes) => bytes.includes('\r\n'))).toString('latin1')).toBe(
      `-${ERR.UNBLOCKED_ROLE_CHANGE}\r\n`,
    )
    await client.waitClosed()
  })

  it('unblockAll: -UNBLOCKED to a blocked client, which is then closed', async () => {
    const { port, server } = await start()
    const link = await replica(port)
    await readDisklessSync(link)
    const client = await RawClient.connect(port)
    expect(await askLine(client, 'BF.ADD', 'f', 'x')).toBe(':1\r\n')
    client.write(command('WAIT', '1', '0'))
    await until(
      async () => (field(await info(port, 'clients'), 'blocked_clients') === '1' ? true : undefined),
      'blocked',
    )
    server.masterSide.unblockAll(ERR.UNBLOCKED_ROLE_CHANGE)
    expect((await client.readUntil((bytes) => bytes.includes('\r\n'))).toString('latin1')).toBe(
      `-${ERR.UNBLOCKED_ROLE_CHANGE}\r\n`,
    )
    await client.waitClosed()
    link.close()
  })
})

describe('limits and timers', () => {
  it('min-replicas-to-write: -NOREPLICAS for writes (an EXEC of writes aborts), reads still run', async () => {
    const { port } = await start({ 'min-replicas-to-write': 1 })
    const client = await RawClient.connect(port)
    expect(await askLine(client, 'BF.ADD', 'f', 'x')).toBe('-NOREPLICAS Not enough good replicas to write.\r\n')
    expect(await askLine(client, 'BF.EXISTS', 'f', 'x')).toBe(':0\r\n')
    expect(await askLine(client, 'MULTI')).toBe('+OK\r\n')
    expect(await askLine(client, 'BF.ADD', 'f', 'x')).toBe('-NOREPLICAS Not enough good replicas to write.\r\n')
    expect(await askLine(client, 'EXEC')).toBe('-EXECABORT Transaction discarded because of previous errors.\r\n')
    const link = await replica(port)
    const sync = await readDisklessSync(link)
    link.write(command('REPLCONF', 'ACK', String(sync.offset)))
    await until(
      async () => (field(await info(port, 'replication'), 'min_slaves_good_slaves') === '1' ? true : undefined),
      'a good replica',
    )
    expect(await askLine(client, 'BF.ADD', 'f', 'x')).toBe(':1\r\n')
    client.close()
    link.close()
  })

  it("INFO replication has redis 7.0.15's fields in its order (measured on a master with one replica and min-replicas-to-write 1)", async () => {
    const { port } = await start({ 'min-replicas-to-write': 1 })
    const link = await replica(port)
    await readDisklessSync(link)
    const names = (await info(port, 'replication'))
      .split('\r\n')
      .filter((entry) => entry.includes(':'))
      .map((entry) => entry.split(':')[0])
    expect(names).toEqual([
      'role',
      'connected_slaves',
      'min_slaves_good_slaves',
      'slave0',
      'master_failover_state',
      'master_replid',
      'master_replid2',
      'master_repl_offset',
      'second_repl_offset',
      'repl_backlog_active',
      'repl_backlog_size',
      'repl_backlog_first_byte_offset',
      'repl_backlog_histlen',
    ])
    link.close()
  })

  it('pings the replicas every repl-ping-replica-period seconds', async () => {
    const { port } = await start({ 'repl-ping-replica-period': 1 })
    const link = await replica(port)
    const sync = await readDisklessSync(link)
    link.write(command('REPLCONF', 'ACK', String(sync.offset)))
    const pings = (
      await link.readUntil((bytes) => bytes.toString('latin1').split('*1\r\n$4\r\nping\r\n').length > 2, 20_000)
    ).toString('latin1')
    expect(pings.replaceAll('*1\r\n$4\r\nping\r\n', '')).toBe('')
    link.close()
  })

  it('drops a replica whose unsent stream passes the replica output limit', async () => {
    const { port, server, logs } = await start()
    server.config['client-output-buffer-limit'] = {
      ...server.config['client-output-buffer-limit'],
      replica: { hard: 256 * 1024, soft: 0, softSeconds: 0 },
    }
    const link = await replica(port)
    await readDisklessSync(link)
    // No ACK: the stream is held for the replica while it is not streaming, and counts.
    const writer = await RawClient.connect(port)
    const item = 'x'.repeat(64 * 1024)
    for (let i = 0; i < 6; i++) expect(await askLine(writer, 'BF.ADD', 'f', `${item}${i}`)).toMatch(/^:[01]\r\n$/)
    await link.waitClosed()
    expect(
      logs.some((entry) => entry.includes('scheduled to be closed ASAP for overcoming of output buffer limits')),
    ).toBe(true)
    await until(
      async () => (field(await info(port, 'replication'), 'connected_slaves') === '0' ? true : undefined),
      'the replica dropped',
    )
    writer.close()
  })

  it('drops an online replica silent for repl-timeout, then frees the backlog after repl-backlog-ttl', async () => {
    const { port, logs } = await start({ 'repl-timeout': 1, 'repl-backlog-ttl': 1 })
    const link = await replica(port)
    const sync = await readDisklessSync(link)
    link.write(command('REPLCONF', 'ACK', String(sync.offset)))
    await link.waitClosed(20_000)
    expect(
      logs.some((entry) => entry.includes('Disconnecting timedout replica (streaming sync): 127.0.0.1:7001')),
    ).toBe(true)
    const freed = await until(async () => {
      const text = await info(port, 'replication')
      return field(text, 'repl_backlog_active') === '0' ? text : undefined
    }, 'the backlog freed')
    expect(field(freed, 'master_replid')).not.toBe(sync.replid)
  })
})

describe.runIf(hasTool('redis-cli'))('redis-cli --replica (SYNC)', () => {
  it('gets the payload with no +FULLRESYNC line and prints the stream', async () => {
    const { port } = await start()
    const cli = InteractiveTool.start('redis-cli', ['-p', String(port), '--replica'])
    try {
      await cli.waitFor((output) => output.includes('SYNC done'))
      await until(
        async () => (field(await info(port, 'replication'), 'connected_slaves') === '1' ? true : undefined),
        'attached',
      )
      const writer = await RawClient.connect(port)
      expect(await askLine(writer, 'BF.ADD', 'seen', 'item')).toBe(':1\r\n')
      await cli.waitFor((output) => output.includes('"BF.ADD","seen","item"'))
      writer.close()
    } finally {
      cli.kill()
    }
  })
})
