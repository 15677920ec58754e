/**
 * Cross protocol scripting (issue 15): a web page can make a browser POST to the RESP port, and
 * the request's body would run as commands. As redis 7.0 processCommand does, a command named
 * POST or Host: (any case, inline or multibulk) closes the connection without a reply: nothing
 * after it runs, and replies not yet sent to earlier commands of the same read are dropped.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { RawClient, encodeCommand } from '../helpers/resp.js'
import { startServer, type RunningServer } from '../helpers/start-server.js'

/** redis 7.0 server.c securityWarningCommand. */
const WARNING =
  'Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: commands to Redis. This is likely due to an attacker attempting to use Cross Protocol Scripting to compromise your Redis instance. Connection aborted.'

const BROWSER_POST =
  'POST / HTTP/1.1\r\nHost: 127.0.0.1:6379\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nFLUSHALL\r\n'

let running: RunningServer | undefined
afterEach(async () => {
  await running?.stop()
  running = undefined
})

/** A server holding the filter `kept`. */
async function serverWithData(): Promise<RunningServer> {
  running = await startServer()
  const setup = await RawClient.connect(running.port)
  setup.write(encodeCommand(['BF.ADD', 'kept', 'a']))
  expect((await setup.read(4)).toString()).toBe(':1\r\n')
  setup.socket.destroy()
  return running
}

/** Sends `packets` (each in its own write, after the previous one's replies), returns all it got once closed. */
async function sendUntilClosed(
  port: number,
  packets: readonly (string | Buffer)[],
  replies: readonly string[] = [],
): Promise<string> {
  const client = await RawClient.connect(port)
  let got = ''
  for (const [index, packet] of packets.entries()) {
    client.write(packet)
    const expected = replies[index]
    if (expected !== undefined) got += (await client.read(expected.length)).toString('latin1')
  }
  await client.waitClosed()
  return got + (await client.readUntil(() => true)).toString('latin1')
}

async function filtersLeft(port: number): Promise<string> {
  const client = await RawClient.connect(port)
  client.write(encodeCommand(['DBSIZE']))
  const reply = (await client.read(4)).toString()
  client.socket.destroy()
  return reply
}

describe('POST and Host: on the RESP port close the connection', () => {
  it('a browser POST whose body is FLUSHALL: no reply, closed, nothing flushed, the warning logged', async () => {
    const { port, logs } = await serverWithData()
    expect(await sendUntilClosed(port, [BROWSER_POST])).toBe('')
    expect(await filtersLeft(port)).toBe(':1\r\n')
    expect(logs.filter((line) => line.includes(WARNING))).toHaveLength(1)
  })

  it('multibulk and lower case (host:), after another command of the same read: its reply is dropped too', async () => {
    const { port } = await serverWithData()
    const packet = Buffer.concat([encodeCommand(['PING']), encodeCommand(['host:', 'x']), encodeCommand(['FLUSHALL'])])
    expect(await sendUntilClosed(port, [packet])).toBe('')
    expect(await filtersLeft(port)).toBe(':1\r\n')
  })

  it('inline `post` after earlier commands were answered; with requirepass (no NOAUTH first) and inside MULTI', async () => {
    const { port } = await serverWithData()
    expect(await sendUntilClosed(port, ['PING\r\n', 'post /x\r\nflushall\r\n'], ['+PONG\r\n'])).toBe('+PONG\r\n')
    expect(await sendUntilClosed(port, ['MULTI\r\n', 'Host: x\r\nEXEC\r\n'], ['+OK\r\n'])).toBe('+OK\r\n')
    expect(await filtersLeft(port)).toBe(':1\r\n')
    await running!.stop()
    running = undefined
    running = await startServer({ requirepass: 'secret' })
    expect(await sendUntilClosed(running.port, [BROWSER_POST])).toBe('')
  })

  it('the warning is logged once a minute at most; HOST without the colon is an unknown command', async () => {
    const { port, logs } = await serverWithData()
    await sendUntilClosed(port, [BROWSER_POST])
    await sendUntilClosed(port, [BROWSER_POST])
    expect(logs.filter((line) => line.includes(WARNING))).toHaveLength(1)
    const client = await RawClient.connect(port)
    client.write('HOST x\r\nPING\r\n')
    const expected = "-ERR unknown command 'HOST', with args beginning with: 'x' \r\n+PONG\r\n"
    expect((await client.read(expected.length)).toString()).toBe(expected)
    client.socket.destroy()
  })
})
