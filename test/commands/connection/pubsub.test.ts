/**
 * Publish/subscribe over real sockets, byte for byte as redis-server 7.0.15 answers (every
 * expected string below is what a real redis-server 7.0.15 sent for the same bytes): the
 * confirmations and messages in RESP2 and RESP3, the subscribed mode's refusals, PING, RESET and
 * QUIT there, PUBSUB's subcommands, arity errors and HELP, transactions, CLIENT LIST and INFO, and
 * the pubsub output-buffer-limit class. ioredis and redis-cli as subscribers are in
 * pubsub-clients.test.ts.
 */
import { readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../helpers/start-server.js'
import { RawClient, encodeCommand } from '../../helpers/resp.js'

let running: RunningServer
const open: RawClient[] = []

beforeAll(async () => {
  running = await startServer()
})

afterAll(async () => {
  for (const client of open) client.close()
  await running?.stop()
})

async function connect(): Promise<RawClient> {
  const client = await RawClient.connect(running.port)
  open.push(client)
  return client
}

/** Sends a command (words split on spaces, or raw bytes) and returns exactly as many bytes as `expected` has. */
async function send(client: RawClient, command: string | Buffer, expected: string): Promise<string> {
  client.write(typeof command === 'string' ? encodeCommand(command.split(' ')) : command)
  return (await client.read(Buffer.byteLength(expected, 'latin1'))).toString('latin1')
}

/** `send`, expecting `expected`. */
async function expectReply(client: RawClient, command: string | Buffer, expected: string): Promise<void> {
  expect(await send(client, command, expected)).toBe(expected)
}

/** What `client` receives next: exactly `expected`'s length. */
async function expectReceived(client: RawClient, expected: string): Promise<void> {
  expect((await client.read(Buffer.byteLength(expected, 'latin1'))).toString('latin1')).toBe(expected)
}

/** HELLO <version> and a PING, whose reply (`pong`) ends what is read. */
async function hello(client: RawClient, version: string, pong: string): Promise<void> {
  client.write(Buffer.concat([encodeCommand(['HELLO', version]), encodeCommand(['PING'])]))
  const received = (await client.readUntil((bytes) => bytes.toString('latin1').endsWith(pong))).toString('latin1')
  expect(received).toContain(`proto\r\n:${version}\r\n`)
}

const refused = (name: string) =>
  `-ERR Can't execute '${name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n`
const bulk = (text: string) => `$${Buffer.byteLength(text, 'latin1')}\r\n${text}\r\n`
/** A RESP2 confirmation or message: `*3` of bulk strings and a count (`null` for a null name). */
const confirmation = (word: string, name: string | null, count: number, head = '*') =>
  `${head}3\r\n${bulk(word)}${name === null ? (head === '>' ? '_\r\n' : '$-1\r\n') : bulk(name)}:${count}\r\n`
const message = (channel: string, text: string, head = '*') =>
  `${head}3\r\n${bulk('message')}${bulk(channel)}${bulk(text)}`
const pmessage = (pattern: string, channel: string, text: string, head = '*') =>
  `${head}4\r\n${bulk('pmessage')}${bulk(pattern)}${bulk(channel)}${bulk(text)}`

describe('RESP2 subscribed mode', () => {
  it('confirms each channel with its count, answers PING as an array, refuses other commands, unsubscribes all', async () => {
    const sub = await connect()
    const pub = await connect()
    await expectReply(
      sub,
      'SUBSCRIBE a b a',
      confirmation('subscribe', 'a', 1) + confirmation('subscribe', 'b', 2) + confirmation('subscribe', 'a', 2),
    )
    await expectReply(sub, 'PING', '*2\r\n$4\r\npong\r\n$0\r\n\r\n')
    await expectReply(sub, 'PING x', '*2\r\n$4\r\npong\r\n$1\r\nx\r\n')
    await expectReply(sub, 'TYPE k', refused('type'))
    await expectReply(sub, 'CONFIG GET x', refused('config|get'))
    await expectReply(sub, 'PUBLISH a 1', refused('publish'))
    await expectReply(sub, 'HELLO 3', refused('hello'))
    await expectReply(sub, 'MULTI', refused('multi'))
    // An unknown command is unknown first, as in redis.
    await expectReply(sub, 'FOO bar', "-ERR unknown command 'FOO', with args beginning with: 'bar' \r\n")
    await expectReply(pub, 'PUBLISH a hello', ':1\r\n')
    await expectReceived(sub, message('a', 'hello'))
    await expectReply(pub, 'PUBLISH c x', ':0\r\n')
    await expectReply(sub, 'UNSUBSCRIBE', confirmation('unsubscribe', 'a', 1) + confirmation('unsubscribe', 'b', 0))
    await expectReply(sub, 'UNSUBSCRIBE', confirmation('unsubscribe', null, 0))
    await expectReply(sub, 'PUNSUBSCRIBE', confirmation('punsubscribe', null, 0))
    await expectReply(sub, 'PING', '+PONG\r\n')
  })

  it('counts channels and patterns together, and matches patterns with redis glob', async () => {
    const sub = await connect()
    const pub = await connect()
    await expectReply(
      sub,
      'PSUBSCRIBE h?llo h[^e]llo',
      confirmation('psubscribe', 'h?llo', 1) + confirmation('psubscribe', 'h[^e]llo', 2),
    )
    await expectReply(sub, 'SUBSCRIBE hallo', confirmation('subscribe', 'hallo', 3))
    await expectReply(pub, 'PUBLISH hallo m', ':3\r\n')
    await expectReceived(
      sub,
      message('hallo', 'm') + pmessage('h?llo', 'hallo', 'm') + pmessage('h[^e]llo', 'hallo', 'm'),
    )
    await expectReply(pub, 'PUBLISH hello n', ':1\r\n')
    await expectReceived(sub, pmessage('h?llo', 'hello', 'n'))
    await expectReply(sub, 'UNSUBSCRIBE', confirmation('unsubscribe', 'hallo', 2))
    await expectReply(sub, 'PUNSUBSCRIBE zz', confirmation('punsubscribe', 'zz', 2))
    await expectReply(
      sub,
      'PUNSUBSCRIBE',
      confirmation('punsubscribe', 'h?llo', 1) + confirmation('punsubscribe', 'h[^e]llo', 0),
    )
    await expectReply(pub, 'PUBLISH hallo m', ':0\r\n')
  })

  it('RESET leaves the subscribed mode silently; QUIT answers +OK and nothing after it is sent', async () => {
    const sub = await connect()
    const pub = await connect()
    await expectReply(sub, 'SUBSCRIBE x', confirmation('subscribe', 'x', 1))
    await expectReply(sub, 'RESET', '+RESET\r\n')
    await expectReply(sub, 'PING', '+PONG\r\n')
    await expectReply(pub, 'PUBLISH x m', ':0\r\n')
    await expectReply(sub, 'SUBSCRIBE x', confirmation('subscribe', 'x', 1))
    // QUIT, then a PUBLISH in the same read that it does not run, then another client's PUBLISH.
    sub.write(Buffer.concat([encodeCommand(['QUIT']), encodeCommand(['PUBLISH', 'x', 'y'])]))
    await sub.waitClosed()
    expect((await sub.readUntil(() => true)).toString('latin1')).toBe('+OK\r\n')
    await expectReply(pub, 'PUBLISH x after', ':0\r\n')
  })

  it('binary channel names and messages go through unchanged', async () => {
    const sub = await connect()
    const pub = await connect()
    const name = Buffer.from([0x00, 0xff, 0x0a])
    await expectReply(sub, encodeCommand(['SUBSCRIBE', name]), `*3\r\n$9\r\nsubscribe\r\n$3\r\n\x00\xff\n\r\n:1\r\n`)
    await expectReply(pub, encodeCommand(['PUBLISH', name, '\r\n']), ':1\r\n')
    await expectReceived(sub, `*3\r\n$7\r\nmessage\r\n$3\r\n\x00\xff\n\r\n$2\r\n\r\n\r\n`)
    await expectReply(pub, encodeCommand(['PUBSUB', 'NUMSUB', name]), `*2\r\n$3\r\n\x00\xff\n\r\n:1\r\n`)
  })

  it('inline commands subscribe and publish as multibulk ones do', async () => {
    const sub = await connect()
    const pub = await connect()
    await expectReply(sub, Buffer.from('SUBSCRIBE inl\r\n'), confirmation('subscribe', 'inl', 1))
    await expectReply(sub, Buffer.from('PING\r\n'), '*2\r\n$4\r\npong\r\n$0\r\n\r\n')
    await expectReply(pub, Buffer.from('PUBLISH inl b\r\n'), ':1\r\n')
    await expectReceived(sub, message('inl', 'b'))
  })

  it('delivers a pipeline of PUBLISH in order, each message after the one before', async () => {
    const sub = await connect()
    const pub = await connect()
    await expectReply(sub, 'SUBSCRIBE order', confirmation('subscribe', 'order', 1))
    const count = 500
    const commands = Array.from({ length: count }, (_, i) => encodeCommand(['PUBLISH', 'order', String(i)]))
    await expectReply(pub, Buffer.concat(commands), ':1\r\n'.repeat(count))
    await expectReceived(sub, Array.from({ length: count }, (_, i) => message('order', String(i))).join(''))
  })
})

describe('Sentinel', () => {
  it("answers a Sentinel's pub/sub link and hello PUBLISH with the bytes measured against redis-server 7.0.15", async () => {
    // What a Sentinel sends: its pub/sub link's first write, and a hello from another Sentinel.
    const link = await connect()
    const other = await connect()
    const hello = '127.0.0.1,18302,14e6096c0000000000000000000000000000000,0,mymaster,127.0.0.1,18001,0'
    await expectReply(
      link,
      Buffer.concat([
        encodeCommand(['CLIENT', 'SETNAME', 'sentinel-14e6096c-pubsub']),
        encodeCommand(['SUBSCRIBE', '__sentinel__:hello']),
      ]),
      '+OK\r\n*3\r\n$9\r\nsubscribe\r\n$18\r\n__sentinel__:hello\r\n:1\r\n',
    )
    await expectReply(other, encodeCommand(['PUBLISH', '__sentinel__:hello', hello]), ':1\r\n')
    await expectReceived(link, `*3\r\n$7\r\nmessage\r\n$18\r\n__sentinel__:hello\r\n$${hello.length}\r\n${hello}\r\n`)
  })
})

describe('RESP3', () => {
  it('sends confirmations and messages as push replies, answers PING as usual and runs any command', async () => {
    const sub = await connect()
    const pub = await connect()
    await hello(sub, '3', '+PONG\r\n')
    await expectReply(sub, 'SUBSCRIBE a', confirmation('subscribe', 'a', 1, '>'))
    await expectReply(sub, 'PSUBSCRIBE a*', confirmation('psubscribe', 'a*', 2, '>'))
    await expectReply(sub, 'SSUBSCRIBE s', confirmation('ssubscribe', 's', 1, '>'))
    await expectReply(sub, 'PING', '+PONG\r\n')
    await expectReply(sub, 'PING x', '$1\r\nx\r\n')
    await expectReply(sub, 'PUBLISH a hi', message('a', 'hi', '>') + pmessage('a*', 'a', 'hi', '>') + ':2\r\n')
    await expectReply(sub, 'SPUBLISH s yo', `>3\r\n${bulk('smessage')}${bulk('s')}${bulk('yo')}:1\r\n`)
    await expectReply(pub, 'PUBLISH ab x', ':1\r\n')
    await expectReceived(sub, pmessage('a*', 'ab', 'x', '>'))
    await expectReply(sub, 'TYPE nothing', '+none\r\n')
    await expectReply(sub, 'UNSUBSCRIBE', confirmation('unsubscribe', 'a', 1, '>'))
    await expectReply(sub, 'UNSUBSCRIBE', confirmation('unsubscribe', null, 1, '>'))
    await expectReply(sub, 'SUNSUBSCRIBE', confirmation('sunsubscribe', 's', 0, '>'))
    await expectReply(sub, 'PUNSUBSCRIBE', confirmation('punsubscribe', 'a*', 0, '>'))
  })

  it('HELLO 2 while subscribed puts the connection in the RESP2 subscribed mode; RESET ends it', async () => {
    const sub = await connect()
    await hello(sub, '3', '+PONG\r\n')
    await expectReply(sub, 'SUBSCRIBE a', confirmation('subscribe', 'a', 1, '>'))
    // Now RESP2 and subscribed: PING answers as an array.
    await hello(sub, '2', '*2\r\n$4\r\npong\r\n$0\r\n\r\n')
    await expectReply(sub, 'TYPE x', refused('type'))
    await expectReply(sub, 'RESET', '+RESET\r\n')
    await expectReply(sub, 'TYPE x', '+none\r\n')
  })
})

describe('arity, HELP and PUBSUB', () => {
  it.each([
    ['SUBSCRIBE', "-ERR wrong number of arguments for 'subscribe' command\r\n"],
    ['PSUBSCRIBE', "-ERR wrong number of arguments for 'psubscribe' command\r\n"],
    ['SSUBSCRIBE', "-ERR wrong number of arguments for 'ssubscribe' command\r\n"],
    ['PUBLISH a', "-ERR wrong number of arguments for 'publish' command\r\n"],
    ['PUBLISH a b c', "-ERR wrong number of arguments for 'publish' command\r\n"],
    ['SPUBLISH a', "-ERR wrong number of arguments for 'spublish' command\r\n"],
    ['PUBSUB', "-ERR wrong number of arguments for 'pubsub' command\r\n"],
    ['PUBSUB help x', "-ERR wrong number of arguments for 'pubsub|help' command\r\n"],
    ['PUBSUB NUMPAT x', "-ERR wrong number of arguments for 'pubsub|numpat' command\r\n"],
    ['PUBSUB FOO', "-ERR unknown subcommand 'FOO'. Try PUBSUB HELP.\r\n"],
    [
      'PUBSUB CHANNELS a b',
      "-ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP.\r\n",
    ],
    [
      'pubsub channels a b',
      "-ERR unknown subcommand or wrong number of arguments for 'channels'. Try PUBSUB HELP.\r\n",
    ],
    [
      'PUBSUB SHARDCHANNELS x y',
      "-ERR unknown subcommand or wrong number of arguments for 'SHARDCHANNELS'. Try PUBSUB HELP.\r\n",
    ],
    ['PUBSUB NUMSUB', '*0\r\n'],
    ['PUBSUB SHARDNUMSUB nobody', '*2\r\n$6\r\nnobody\r\n:0\r\n'],
    ['UNSUBSCRIBE a b', confirmation('unsubscribe', 'a', 0) + confirmation('unsubscribe', 'b', 0)],
    ['SUNSUBSCRIBE', confirmation('sunsubscribe', null, 0)],
  ])('%s', async (command, expected) => {
    await expectReply(await connect(), command, expected)
  })

  it('PUBSUB HELP', async () => {
    await expectReply(
      await connect(),
      'PUBSUB HELP',
      [
        '*14',
        '+PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
        '+CHANNELS [<pattern>]',
        "+    Return the currently active channels matching a <pattern> (default: '*').",
        '+NUMPAT',
        '+    Return number of subscriptions to patterns.',
        '+NUMSUB [<channel> ...]',
        '+    Return the number of subscribers for the specified channels, excluding',
        '+    pattern subscriptions(default: no channels).',
        '+SHARDCHANNELS [<pattern>]',
        "+    Return the currently active shard level channels matching a <pattern> (default: '*').",
        '+SHARDNUMSUB [<shardchannel> ...]',
        '+    Return the number of subscribers for the specified shard level channel(s)',
        '+HELP',
        '+    Prints this help.',
        '',
      ].join('\r\n'),
    )
  })

  it('NUMSUB answers in the order asked, channels only; CHANNELS matches; NUMPAT counts patterns; INFO stats', async () => {
    const one = await connect()
    const two = await connect()
    const ask = await connect()
    // Earlier tests' subscribers are still connected: counts are taken relative to now.
    const hub = running.server.pubsub
    const before = [hub.count('channels'), hub.count('patterns'), hub.count('shardChannels')] as const
    await expectReply(one, 'SUBSCRIBE nz ny', confirmation('subscribe', 'nz', 1) + confirmation('subscribe', 'ny', 2))
    await expectReply(two, 'SUBSCRIBE ny', confirmation('subscribe', 'ny', 1))
    await expectReply(
      two,
      'PSUBSCRIBE np* np*',
      confirmation('psubscribe', 'np*', 2) + confirmation('psubscribe', 'np*', 2),
    )
    await expectReply(two, 'SSUBSCRIBE nq', confirmation('ssubscribe', 'nq', 1))
    await expectReply(
      ask,
      'PUBSUB NUMSUB nx ny nz ny np*',
      '*10\r\n$2\r\nnx\r\n:0\r\n$2\r\nny\r\n:2\r\n$2\r\nnz\r\n:1\r\n$2\r\nny\r\n:2\r\n$3\r\nnp*\r\n:0\r\n',
    )
    await expectReply(ask, 'PUBSUB NUMPAT', `:${before[1] + 1}\r\n`)
    await expectReply(ask, 'PUBSUB CHANNELS n[xz]', '*1\r\n$2\r\nnz\r\n')
    await expectReply(ask, 'PUBSUB SHARDCHANNELS', '*1\r\n$2\r\nnq\r\n')
    await expectReply(ask, 'PUBSUB SHARDNUMSUB nq', '*2\r\n$2\r\nnq\r\n:1\r\n')
    const now = [before[0] + 2, before[1] + 1, before[2] + 1]
    ask.write(encodeCommand(['INFO', 'stats']))
    const stats = (await ask.readUntil((received) => received.includes('pubsubshard_channels'))).toString('latin1')
    expect(stats).toContain(
      `\r\npubsub_channels:${now[0]}\r\npubsub_patterns:${now[1]}\r\npubsubshard_channels:${now[2]}\r\n`,
    )
    expect(stats).toMatch(/\r\nkeyspace_misses:\d+\r\npubsub_channels:/)
    await expectReply(one, 'UNSUBSCRIBE nz', confirmation('unsubscribe', 'nz', 1))
    await expectReply(ask, 'PUBSUB CHANNELS nz', '*0\r\n')
    await expectReply(two, 'RESET', '+RESET\r\n')
    await expectReply(ask, 'PUBSUB NUMPAT', `:${before[1]}\r\n`)
    await expectReply(ask, 'PUBSUB NUMSUB ny', '*2\r\n$2\r\nny\r\n:1\r\n')
  })
})

describe('transactions', () => {
  it('SUBSCRIBE runs inside EXEC and leaves the connection subscribed; SSUBSCRIBE is refused there', async () => {
    const client = await connect()
    const pub = await connect()
    await expectReply(client, 'MULTI', '+OK\r\n')
    await expectReply(client, 'SUBSCRIBE ta', '+QUEUED\r\n')
    await expectReply(client, 'SSUBSCRIBE ts', '+QUEUED\r\n')
    await expectReply(client, 'PUBLISH ta x', '+QUEUED\r\n')
    await expectReply(
      client,
      'EXEC',
      '*3\r\n' +
        confirmation('subscribe', 'ta', 1) +
        "-ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client\r\n" +
        message('ta', 'x') +
        ':1\r\n',
    )
    await expectReply(client, 'PING', '*2\r\n$4\r\npong\r\n$0\r\n\r\n')
    await expectReply(pub, 'PUBLISH ta y', ':1\r\n')
    await expectReceived(client, message('ta', 'y'))
  })

  it('a queued SUBSCRIBE without channels and an unknown PUBSUB subcommand abort the transaction', async () => {
    const client = await connect()
    await expectReply(client, 'MULTI', '+OK\r\n')
    await expectReply(client, 'SUBSCRIBE', "-ERR wrong number of arguments for 'subscribe' command\r\n")
    await expectReply(client, 'EXEC', '-EXECABORT Transaction discarded because of previous errors.\r\n')
    await expectReply(client, 'MULTI', '+OK\r\n')
    await expectReply(client, 'PUBSUB FOO', "-ERR unknown subcommand 'FOO'. Try PUBSUB HELP.\r\n")
    await expectReply(client, 'PUBSUB CHANNELS a b', '+QUEUED\r\n')
    await expectReply(client, 'EXEC', '-EXECABORT Transaction discarded because of previous errors.\r\n')
  })
})

describe('clients', () => {
  it('CLIENT LIST shows sub, psub, ssub and the P flag; TYPE pubsub lists and kills subscribers only', async () => {
    const sub = await connect()
    const other = await connect()
    await expectReply(sub, 'CLIENT SETNAME listed', '+OK\r\n')
    await expectReply(sub, 'SUBSCRIBE la lb', confirmation('subscribe', 'la', 1) + confirmation('subscribe', 'lb', 2))
    await expectReply(sub, 'PSUBSCRIBE lp*', confirmation('psubscribe', 'lp*', 3))
    await expectReply(sub, 'SSUBSCRIBE ls', confirmation('ssubscribe', 'ls', 1))
    other.write(encodeCommand(['CLIENT', 'LIST', 'TYPE', 'pubsub']))
    const listed = (await other.readUntil((received) => received.toString('latin1').endsWith('\n\r\n'))).toString(
      'latin1',
    )
    const line = listed.split('\n').find((entry) => entry.includes('name=listed'))
    expect(line).toMatch(/ flags=P db=0 sub=2 psub=1 ssub=1 /)
    other.write(encodeCommand(['CLIENT', 'KILL', 'TYPE', 'pubsub']))
    const killed = Number((await other.readUntil((received) => received.includes('\r\n'))).toString('latin1').slice(1))
    expect(killed).toBeGreaterThanOrEqual(1)
    await sub.waitClosed()
    await expectReply(other, 'PING', '+PONG\r\n')
    await expectReply(other, 'PUBSUB NUMSUB la', '*2\r\n$2\r\nla\r\n:0\r\n')
  })

  it('a closed subscriber is forgotten: PUBLISH no longer counts it', async () => {
    const sub = await connect()
    const pub = await connect()
    await expectReply(sub, 'SUBSCRIBE gone', confirmation('subscribe', 'gone', 1))
    sub.close()
    for (let i = 0; i < 500; i++) {
      if ((await send(pub, 'PUBLISH gone m', ':0\r\n')) === ':0\r\n') return
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    throw new Error('the closed subscriber was still counted')
  })
})

describe('the pubsub output buffer limit', () => {
  it('drops a subscriber that does not read once its unsent messages pass the pubsub class hard limit', async () => {
    const limited = await startServer({ save: '' })
    try {
      const admin = await RawClient.connect(limited.port)
      await expectReply(
        admin,
        encodeCommand(['CONFIG', 'SET', 'client-output-buffer-limit', 'pubsub 1mb 0 0']),
        '+OK\r\n',
      )
      // A subscriber that never reads: its socket is paused from the start.
      const sub = net.connect(limited.port, '127.0.0.1')
      let closed = false
      sub.on('close', () => (closed = true))
      sub.on('error', () => {})
      await new Promise((resolve) => sub.once('connect', resolve))
      sub.write(encodeCommand(['SUBSCRIBE', 'flood']))
      let subscribed = false
      sub.once('data', () => {
        subscribed = true
        sub.pause()
      })
      while (!subscribed) await new Promise((resolve) => setTimeout(resolve, 10))
      // 64 KiB messages until the subscriber is gone: the normal class (no limit) would keep it
      // forever, holding every message in the server's memory.
      const chunk = Buffer.alloc(64 * 1024, 0x61)
      let receivers = 1
      let sent = 0
      for (; receivers > 0 && sent < 4000; sent++) {
        admin.write(encodeCommand(['PUBLISH', 'flood', chunk]))
        receivers = Number((await admin.readUntil((received) => received.includes('\r\n'))).toString('latin1').slice(1))
      }
      expect(receivers).toBe(0)
      // Never more than the limit plus what the kernel's socket buffers took, far below 4000 x 64 KiB.
      expect(sent).toBeLessThan(1000)
      // Reading again, it finds what reached its socket, then the end (a paused socket sees no close).
      sub.resume()
      while (!closed) await new Promise((resolve) => setTimeout(resolve, 10))
      expect(
        limited.logs.some((line) =>
          /Client id=\d+ .* scheduled to be closed ASAP for overcoming of output buffer limits\./.test(line),
        ),
      ).toBe(true)
      admin.close()
      sub.destroy()
    } finally {
      await limited.stop()
    }
  })
})

describe('propagation', () => {
  it('PUBLISH is never written to the append-only log', async () => {
    const logged = await startServer({ appendonly: true, appendfsync: 'always' })
    try {
      const client = await RawClient.connect(logged.port)
      await expectReply(client, 'PUBLISH ch message-text', ':0\r\n')
      await expectReply(client, 'BF.ADD logged-key item', ':1\r\n')
      client.close()
      const text = logFiles(logged.dir)
        .map((file) => readFileSync(file, 'latin1'))
        .join('')
      expect(text).toContain('logged-key')
      expect(text).not.toContain('message-text')
    } finally {
      await logged.stop()
    }
  })
})

/** Every file under `dir`, recursively. */
function logFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath ?? entry.path, entry.name))
}
