/**
 * bfs over a plain socket, byte for byte: commands split at every boundary, a thousand commands in
 * one write, inline commands, every protocol limit (error text, then only that connection closes),
 * and the exact texts of unknown-command and wrong-arity errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { RawClient, encodeCommand } from '../helpers/resp.js'

let running: RunningServer

beforeAll(async () => {
  running = await startServer()
})

afterAll(async () => {
  await running?.stop()
})

async function connect(): Promise<RawClient> {
  const client = await RawClient.connect(running.port)
  client.socket.setNoDelay(true)
  return client
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Sends `bytes` and takes exactly `expected.length` bytes of reply. */
async function roundTrip(client: RawClient, bytes: Buffer | string, expected: Buffer | string): Promise<string> {
  client.write(bytes)
  const want = typeof expected === 'string' ? Buffer.from(expected, 'latin1') : expected
  return (await client.read(want.length)).toString('latin1')
}

/** One command on a fresh connection; returns its whole reply line (up to the first CRLF). */
async function once(bytes: Buffer | string): Promise<string> {
  const client = await connect()
  try {
    client.write(bytes)
    return (await client.readUntil((received) => received.includes('\r\n'))).toString('latin1')
  } finally {
    client.close()
  }
}

/** A protocol error: this reply, byte for byte, then the server closes the socket. */
async function expectProtocolError(bytes: Buffer | string, message: string): Promise<void> {
  const client = await connect()
  try {
    client.write(bytes)
    await client.waitClosed()
    const rest = await client.readUntil(() => true)
    expect(rest.toString('latin1')).toBe(`-ERR Protocol error: ${message}\r\n`)
    expect(client.closed).toBe(true)
  } finally {
    client.close()
  }
  // Only that connection went away: another one still works.
  expect(await once('*1\r\n$4\r\nPING\r\n')).toBe('+PONG\r\n')
}

describe('requests split at every byte boundary', () => {
  it('BF.ADD with a binary item, split at every point, on one connection', async () => {
    const client = await connect()
    try {
      // A tight filter so that no new item can be a false positive.
      expect(await roundTrip(client, encodeCommand(['BF.RESERVE', 'split', '0.0000001', '1000']), '+OK\r\n')).toBe(
        '+OK\r\n',
      )
      const probe = encodeCommand(['BF.ADD', 'split', Buffer.from([0x00, 0x0d, 0x0a, 0xff, 0x00, 0x2a])])
      for (let at = 1; at < probe.length; at++) {
        // A new binary item each time, same length, so every add answers :1.
        const item = Buffer.from([0x00, 0x0d, 0x0a, 0xff, at >> 8, at & 0xff])
        const bytes = encodeCommand(['BF.ADD', 'split', item])
        client.write(bytes.subarray(0, at))
        await pause(2)
        expect(await roundTrip(client, bytes.subarray(at), ':1\r\n'), `split at ${at}`).toBe(':1\r\n')
      }
      // And they are all there.
      const items = Array.from({ length: probe.length - 1 }, (_, i) =>
        Buffer.from([0x00, 0x0d, 0x0a, 0xff, (i + 1) >> 8, (i + 1) & 0xff]),
      )
      const all = encodeCommand(['BF.MEXISTS', 'split', ...items])
      const expected = `*${items.length}\r\n` + ':1\r\n'.repeat(items.length)
      expect(await roundTrip(client, all, expected)).toBe(expected)
    } finally {
      client.close()
    }
  })

  it('BF.MEXISTS with binary items, split at every point', async () => {
    const client = await connect()
    try {
      const present = Buffer.from([0xde, 0xad, 0x00, 0xbe, 0xef])
      const absent = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a])
      expect(await roundTrip(client, encodeCommand(['BF.ADD', 'mx', present]), ':1\r\n')).toBe(':1\r\n')
      const bytes = encodeCommand(['BF.MEXISTS', 'mx', present, absent, Buffer.alloc(0), present])
      const expected = '*4\r\n:1\r\n:0\r\n:0\r\n:1\r\n'
      for (let at = 1; at < bytes.length; at++) {
        client.write(bytes.subarray(0, at))
        await pause(2)
        expect(await roundTrip(client, bytes.subarray(at), expected), `split at ${at}`).toBe(expected)
      }
    } finally {
      client.close()
    }
  })

  it('two pipelined commands split at every point, including between them', async () => {
    const client = await connect()
    try {
      const bytes = Buffer.concat([encodeCommand(['BF.EXISTS', 'mx', 'nope']), encodeCommand(['PING', 'hi'])])
      const expected = ':0\r\n$2\r\nhi\r\n'
      for (let at = 1; at < bytes.length; at++) {
        client.write(bytes.subarray(0, at))
        await pause(2)
        expect(await roundTrip(client, bytes.subarray(at), expected), `split at ${at}`).toBe(expected)
      }
    } finally {
      client.close()
    }
  })

  it('an inline command split at every point', async () => {
    const client = await connect()
    try {
      const bytes = Buffer.from('BF.EXISTS mx "\\xde\\xad\\x00\\xbe\\xef"\r\n')
      for (let at = 1; at < bytes.length; at++) {
        client.write(bytes.subarray(0, at))
        await pause(2)
        expect(await roundTrip(client, bytes.subarray(at), ':1\r\n'), `split at ${at}`).toBe(':1\r\n')
      }
    } finally {
      client.close()
    }
  })

  it('a 1 MB item arriving one byte and then 64 KB at a time', async () => {
    const client = await connect()
    try {
      const item = Buffer.alloc(1024 * 1024)
      for (let i = 0; i < item.length; i++) item[i] = (i * 31) & 0xff
      const bytes = encodeCommand(['BF.ADD', 'huge', item])
      client.write(bytes.subarray(0, 1))
      for (let at = 1; at < bytes.length; at += 65536) {
        client.write(bytes.subarray(at, Math.min(bytes.length, at + 65536)))
        await pause(1)
      }
      expect((await client.read(4)).toString()).toBe(':1\r\n')
      expect(await roundTrip(client, encodeCommand(['BF.EXISTS', 'huge', item]), ':1\r\n')).toBe(':1\r\n')
      item[item.length - 1] ^= 1
      expect(await roundTrip(client, encodeCommand(['BF.EXISTS', 'huge', item]), ':0\r\n')).toBe(':0\r\n')
    } finally {
      client.close()
    }
  })
})

describe('pipelining', () => {
  it('1,000 commands in one write: replies in order, exact bytes', async () => {
    const client = await connect()
    try {
      const commands: Buffer[] = [encodeCommand(['BF.RESERVE', 'pipe', '0.0001', '10000'])]
      let expected = '+OK\r\n'
      for (let i = 0; i < 999; i++) {
        if (i % 3 === 0) {
          commands.push(encodeCommand(['BF.ADD', 'pipe', `item-${i}`]))
          expected += ':1\r\n'
        } else if (i % 3 === 1) {
          commands.push(encodeCommand(['BF.EXISTS', 'pipe', `item-${i - 1}`]))
          expected += ':1\r\n'
        } else {
          commands.push(encodeCommand(['BF.CARD', 'pipe']))
          expected += `:${Math.floor(i / 3) + 1}\r\n`
        }
      }
      client.write(Buffer.concat(commands))
      const received = await client.read(expected.length)
      expect(received.length).toBe(expected.length)
      expect(received.toString('latin1')).toBe(expected)
      // Nothing more arrives: a PING is answered next, and only it.
      expect(await roundTrip(client, 'PING\r\n', '+PONG\r\n')).toBe('+PONG\r\n')
    } finally {
      client.close()
    }
  })

  it('1,000 inline commands in one write', async () => {
    const client = await connect()
    try {
      const expected = '+PONG\r\n'.repeat(500) + ':1\r\n'.repeat(500)
      let bytes = 'PING\r\n'.repeat(500)
      for (let i = 0; i < 500; i++) bytes += `BF.ADD inline-pipe i${i}\n`
      // Capacity 100 by default: the filter scales, so each new item is still new (:1)…
      // …unless a false positive answers :0; allow exactly that and no other byte.
      client.write(bytes)
      const received = (await client.read(expected.length)).toString('latin1')
      expect(received.slice(0, 3500)).toBe('+PONG\r\n'.repeat(500))
      expect(received.slice(3500)).toMatch(/^(:[01]\r\n){500}$/)
      expect((received.slice(3500).match(/:1/g) ?? []).length).toBeGreaterThan(480)
    } finally {
      client.close()
    }
  })

  it('a mixed pipeline: errors do not break the order', async () => {
    const client = await connect()
    try {
      const bytes = Buffer.concat([
        encodeCommand(['BF.ADD', 'mixed', 'a']),
        encodeCommand(['NOPE']),
        encodeCommand(['BF.ADD', 'mixed']),
        Buffer.from('PING\r\n'),
        encodeCommand(['BF.RESERVE', 'mixed', '0.01', '10']),
        encodeCommand(['BF.EXISTS', 'mixed', 'a']),
      ])
      const expected =
        ':1\r\n' +
        "-ERR unknown command 'NOPE', with args beginning with: \r\n" +
        "-ERR wrong number of arguments for 'bf.add' command\r\n" +
        '+PONG\r\n' +
        '-ERR item exists\r\n' +
        ':1\r\n'
      expect(await roundTrip(client, bytes, expected)).toBe(expected)
    } finally {
      client.close()
    }
  })
})

describe('inline commands', () => {
  it('PING, BF.ADD, quoted arguments, bare LF, empty lines', async () => {
    const client = await connect()
    try {
      expect(await roundTrip(client, 'PING\r\n', '+PONG\r\n')).toBe('+PONG\r\n')
      expect(await roundTrip(client, 'BF.ADD f x\r\n', ':1\r\n')).toBe(':1\r\n')
      expect(await roundTrip(client, 'BF.EXISTS f x\n', ':1\r\n')).toBe(':1\r\n')
      expect(await roundTrip(client, 'BF.ADD f "a b"\r\n', ':1\r\n')).toBe(':1\r\n')
      expect(await roundTrip(client, "BF.EXISTS f 'a b'\r\n", ':1\r\n')).toBe(':1\r\n')
      expect(await roundTrip(client, 'BF.EXISTS f a\r\n', ':0\r\n')).toBe(':0\r\n')
      expect(await roundTrip(client, '   BF.EXISTS    f    x   \r\n', ':1\r\n')).toBe(':1\r\n')
      // "\x41" is A; "\n" inside double quotes is a newline byte.
      expect(await roundTrip(client, 'BF.ADD f "\\x41\\n"\r\n', ':1\r\n')).toBe(':1\r\n')
      expect(await roundTrip(client, encodeCommand(['BF.EXISTS', 'f', 'A\n']), ':1\r\n')).toBe(':1\r\n')
      expect(await roundTrip(client, 'ECHO "say \\"hi\\""\r\n', '$8\r\nsay "hi"\r\n')).toBe('$8\r\nsay "hi"\r\n')
      expect(await roundTrip(client, "ECHO ''\r\n", '$0\r\n\r\n')).toBe('$0\r\n\r\n')
      // Empty lines produce no reply at all.
      expect(await roundTrip(client, '\r\n\r\n\n   \r\nPING\r\n', '+PONG\r\n')).toBe('+PONG\r\n')
      expect(await roundTrip(client, 'ping hello\r\n', '$5\r\nhello\r\n')).toBe('$5\r\nhello\r\n')
    } finally {
      client.close()
    }
  })

  it('unbalanced quotes are a protocol error', async () => {
    await expectProtocolError('BF.ADD f "abc\r\n', 'unbalanced quotes in request')
  })
})

describe('protocol errors close only that connection', () => {
  it('*1048577 → invalid multibulk length', async () => {
    await expectProtocolError('*1048577\r\n', 'invalid multibulk length')
  })

  it('*1048576 is accepted as a length (the server waits for the arguments)', async () => {
    const client = await connect()
    try {
      client.write('*1048576\r\n$4\r\nPING\r\n')
      await pause(200)
      expect(client.closed).toBe(false)
    } finally {
      client.close()
    }
  })

  it('*abc → invalid multibulk length', async () => {
    await expectProtocolError('*abc\r\n', 'invalid multibulk length')
  })

  it('$536870913 → invalid bulk length', async () => {
    await expectProtocolError('*1\r\n$536870913\r\n', 'invalid bulk length')
  })

  it('$-1 inside a request → invalid bulk length', async () => {
    await expectProtocolError('*1\r\n$-1\r\n', 'invalid bulk length')
  })

  it('an inline line over 64 KiB without a newline → too big inline request', async () => {
    await expectProtocolError('A'.repeat(64 * 1024 + 100), 'too big inline request')
  })

  it('a multibulk count line over 64 KiB → too big mbulk count string', async () => {
    await expectProtocolError('*' + '1'.repeat(64 * 1024 + 100), 'too big mbulk count string')
  })

  it('a bulk count line over 64 KiB → too big bulk count string', async () => {
    await expectProtocolError('*1\r\n$' + '1'.repeat(64 * 1024 + 100), 'too big bulk count string')
  })

  it("*1 then x → expected '$', got 'x' once the line is complete", async () => {
    // redis 7.0 processMultibulkBuffer looks at the bulk header only when its line has arrived:
    // "*1\r\nx" alone waits for more, "*1\r\nx\r\n" is the error.
    const client = await connect()
    try {
      client.write('*1\r\nx')
      await pause(100)
      expect(client.closed).toBe(false)
      client.write('\r\n')
      await client.waitClosed()
      expect((await client.readUntil(() => true)).toString('latin1')).toBe(
        "-ERR Protocol error: expected '$', got 'x'\r\n",
      )
    } finally {
      client.close()
    }
    await expectProtocolError('*1\r\nx\r\n', "expected '$', got 'x'")
    await expectProtocolError('*2\r\n$1\r\na\r\n:1\r\n', "expected '$', got ':'")
    // The offending byte is quoted as it came (redis '%c'), not re-encoded as UTF-8.
    await expectProtocolError(Buffer.from('*1\r\n\xff\r\n', 'latin1'), "expected '$', got '\xff'")
  })

  it('commands after the bad bytes in the same write get no reply', async () => {
    const client = await connect()
    try {
      client.write('PING\r\n*1\r\nx\r\nPING\r\n')
      await client.waitClosed()
      const all = (await client.readUntil(() => true)).toString('latin1')
      expect(all).toBe("+PONG\r\n-ERR Protocol error: expected '$', got 'x'\r\n")
    } finally {
      client.close()
    }
  })

  it('*0 and *-1 are ignored, as redis does', async () => {
    expect(await once('*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n')).toBe('+PONG\r\n')
  })
})

describe('command names and error texts', () => {
  it('unknown command, byte for byte', async () => {
    expect(await once(encodeCommand(['foo', 'a', 'b']))).toBe(
      "-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n",
    )
    expect(await once('foo a b\r\n')).toBe("-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n")
    expect(await once(encodeCommand(['BF.NOPE']))).toBe(
      "-ERR unknown command 'BF.NOPE', with args beginning with: \r\n",
    )
  })

  it('wrong arity, byte for byte, in the lower-case name', async () => {
    expect(await once(encodeCommand(['BF.ADD', 'f']))).toBe("-ERR wrong number of arguments for 'bf.add' command\r\n")
    expect(await once(encodeCommand(['Bf.MaDd', 'f']))).toBe("-ERR wrong number of arguments for 'bf.madd' command\r\n")
    expect(await once(encodeCommand(['BF.EXISTS', 'f', 'a', 'b']))).toBe(
      "-ERR wrong number of arguments for 'bf.exists' command\r\n",
    )
    expect(await once(encodeCommand(['BF.RESERVE', 'f', '0.1', '10', 'EXPANSION', '2', 'NONSCALING', 'x']))).toBe(
      "-ERR wrong number of arguments for 'bf.reserve' command\r\n",
    )
    expect(await once(encodeCommand(['GET']))).toMatch(/^-ERR unknown command 'GET'/)
    expect(await once(encodeCommand(['ECHO']))).toBe("-ERR wrong number of arguments for 'echo' command\r\n")
    expect(await once(encodeCommand(['DBSIZE', 'x']))).toBe("-ERR wrong number of arguments for 'dbsize' command\r\n")
  })

  it('command names are case-insensitive', async () => {
    const client = await connect()
    try {
      for (const name of ['bf.add', 'BF.ADD', 'Bf.AdD', 'bF.aDd']) {
        expect(await roundTrip(client, encodeCommand([name, 'case', name]), ':1\r\n')).toBe(':1\r\n')
      }
      for (const name of ['ping', 'PING', 'PiNg']) {
        expect(await roundTrip(client, encodeCommand([name]), '+PONG\r\n')).toBe('+PONG\r\n')
      }
      expect(await roundTrip(client, 'bf.card case\r\n', ':4\r\n')).toBe(':4\r\n')
      expect(
        await roundTrip(
          client,
          encodeCommand(['bf.mexists', 'case', 'bf.add', 'BF.ADD', 'x']),
          '*3\r\n:1\r\n:1\r\n:0\r\n',
        ),
      ).toBe('*3\r\n:1\r\n:1\r\n:0\r\n')
    } finally {
      client.close()
    }
  })

  it('QUIT answers +OK and closes; later commands in the same write are dropped', async () => {
    const client = await connect()
    try {
      client.write('PING\r\nQUIT\r\nPING\r\n')
      await client.waitClosed()
      expect((await client.readUntil(() => true)).toString('latin1')).toBe('+PONG\r\n+OK\r\n')
    } finally {
      client.close()
    }
  })
})
