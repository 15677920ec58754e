/**
 * SLOWLOG, INFO commandstats' usec and INFO errorstats over real sockets, beside a real
 * redis-server 7.0.15 given the same bytes: replies compared byte for byte in RESP2 and RESP3,
 * with what differs by nature (entry ids, timestamps, durations, the client's port) replaced by
 * placeholders before comparing, and checked on their own.
 */
import { describe, expect, it } from 'vitest'
import { besideRedis } from '../../helpers/beside-redis.js'
import { RawClient, ask, encodeCommand } from '../../helpers/resp.js'

const servers = besideRedis()
const connect = (port: number): Promise<RawClient> => servers.connect(port)

/** A SLOWLOG GET reply with its entries' id, time and duration as `:N`, the client's address as ADDR. */
function normalized(reply: string, client: RawClient): string {
  const addr = `${client.socket.localAddress}:${client.socket.localPort}`
  return reply
    .replace(/\*6\r\n:\d+\r\n:\d+\r\n:\d+\r\n/g, '*6\r\n:N\r\n:N\r\n:N\r\n')
    .replaceAll(`$${addr.length}\r\n${addr}\r\n`, '$ADDR\r\n')
}

/** Runs `script` on both servers (a fresh connection each, the log reset and logging everything), then SLOWLOG GET -1. */
async function bothLogs(protocol: '2' | '3', script: readonly (readonly string[])[]): Promise<[string, string]> {
  const logs: string[] = []
  for (const port of [servers.bfs.port, servers.redis.port]) {
    const client = await connect(port)
    await ask(client, 'HELLO', protocol)
    await ask(client, 'CONFIG', 'SET', 'slowlog-log-slower-than', '0')
    await ask(client, 'SLOWLOG', 'RESET')
    for (const command of script) await ask(client, ...command)
    await ask(client, 'CONFIG', 'SET', 'slowlog-log-slower-than', '-1')
    logs.push(normalized(await ask(client, 'SLOWLOG', 'GET', '-1'), client))
  }
  return [logs[0]!, logs[1]!]
}

const SCRIPT: readonly (readonly string[])[] = [
  ['MULTI'],
  ['PING'],
  ['EXEC'],
  ['AUTH', 'someone', 'secret'],
  ['AUTH', 'a', 'b', 'c'],
  ['HELLO', '3', 'AUTH', 'default', 'secret', 'SETNAME', 'me'],
  ['HELLO', '3', 'AUTH', 'default'],
  // An unsupported version: redis redacts nothing.
  ['HELLO', '9', 'AUTH', 'default', 'shown'],
  ['ECHO', 'x'.repeat(300)],
  ['DEL', ...Array.from({ length: 40 }, (_, i) => `k${i}`)],
  ['CLIENT', 'SETNAME', 'named'],
  ['PING'],
]

describe('SLOWLOG as redis 7.0.15', () => {
  for (const protocol of ['2', '3'] as const) {
    it(`logs every command with threshold 0 as redis does, RESP${protocol}: trimmed, redacted, EXEC's commands not EXEC`, async () => {
      const [ours, theirs] = await bothLogs(protocol, SCRIPT)
      expect(ours).toBe(theirs)
      // The redacted and trimmed forms are there (a comparison of two empty logs would pass too).
      expect(ours).toContain('$10\r\n(redacted)\r\n')
      expect(ours).toContain('... (172 more bytes)')
      expect(ours).toContain('... (10 more arguments)')
      expect(ours).not.toContain('secret')
      expect(ours).toContain('$5\r\nshown\r\n')
    })
  }

  it('answers SLOWLOG LEN, HELP, RESET and its errors byte for byte', async () => {
    const commands = [
      ['SLOWLOG', 'LEN'],
      ['SLOWLOG', 'HELP'],
      ['SLOWLOG', 'GET', 'x'],
      ['SLOWLOG', 'GET', '-2'],
      ['SLOWLOG', 'GET', '1', '2'],
      ['SLOWLOG', 'LEN', '1'],
      ['SLOWLOG', 'HELP', 'x'],
      ['SLOWLOG', 'RESET', 'x'],
      ['SLOWLOG', 'foo'],
      ['SLOWLOG'],
      ['SLOWLOG', 'RESET'],
      ['SLOWLOG', 'LEN'],
      ['SLOWLOG', 'GET'],
    ]
    const [ours, theirs] = [await connect(servers.bfs.port), await connect(servers.redis.port)]
    for (const client of [ours, theirs]) await ask(client, 'CONFIG', 'SET', 'slowlog-log-slower-than', '-1')
    for (const command of commands)
      expect(await ask(ours, ...command), command.join(' ')).toBe(await ask(theirs, ...command))
    expect(await ask(ours, 'SLOWLOG', 'LEN')).toBe(':0\r\n')
  })

  it('keeps slowlog-max-len entries, newest first, ids rising; logs nothing at -1 or under the threshold', async () => {
    const client = await connect(servers.bfs.port)
    await ask(client, 'CONFIG', 'SET', 'slowlog-log-slower-than', '0')
    await ask(client, 'SLOWLOG', 'RESET')
    for (let i = 0; i < 5; i++) await ask(client, 'ECHO', `m${i}`)
    await ask(client, 'CONFIG', 'SET', 'slowlog-max-len', '3')
    expect(await ask(client, 'SLOWLOG', 'LEN')).toBe(':3\r\n')
    const reply = await ask(client, 'SLOWLOG', 'GET')
    const ids = [...reply.matchAll(/\*6\r\n:(\d+)\r\n/g)].map((match) => Number(match[1]))
    expect(ids).toHaveLength(3)
    expect(ids[0]! - ids[1]!).toBe(1)
    expect(ids[1]! - ids[2]!).toBe(1)
    // The newest first: SLOWLOG LEN, CONFIG SET, the last ECHO.
    const names = [...reply.matchAll(/\*6\r\n(?::\d+\r\n){3}\*\d+\r\n\$\d+\r\n([A-Z]+)\r\n/g)].map((match) => match[1])
    expect(names).toEqual(['SLOWLOG', 'CONFIG', 'ECHO'])
    expect(reply).toContain('$2\r\nm4\r\n')
    await ask(client, 'CONFIG', 'SET', 'slowlog-max-len', '128')
    await ask(client, 'CONFIG', 'SET', 'slowlog-log-slower-than', '-1')
    await ask(client, 'SLOWLOG', 'RESET')
    await ask(client, 'ECHO', 'not logged')
    expect(await ask(client, 'SLOWLOG', 'LEN')).toBe(':0\r\n')
    await ask(client, 'CONFIG', 'SET', 'slowlog-log-slower-than', String(Number.MAX_SAFE_INTEGER))
    await ask(client, 'ECHO', 'not logged either')
    expect(await ask(client, 'SLOWLOG', 'LEN')).toBe(':0\r\n')
    await ask(client, 'CONFIG', 'SET', 'slowlog-log-slower-than', '10000')
  })
})

describe('SLOWLOG of a pipelined read (timed per read: bfs)', () => {
  it('logs a read of several commands as its first command and how many more it held', async () => {
    const client = await connect(servers.bfs.port)
    await ask(client, 'CONFIG', 'SET', 'slowlog-log-slower-than', '0')
    await ask(client, 'SLOWLOG', 'RESET')
    client.write(
      Buffer.concat([encodeCommand(['ECHO', 'one']), encodeCommand(['ECHO', 'two']), encodeCommand(['ECHO', 'three'])]),
    )
    await client.readUntil((received) => received.toString('latin1').endsWith('$5\r\nthree\r\n'))
    await ask(client, 'CONFIG', 'SET', 'slowlog-log-slower-than', '-1')
    const reply = await ask(client, 'SLOWLOG', 'GET', '-1')
    // Each entry stands for its command and the "N more" it names: the three ECHOs in all, one read or more.
    const echoes = [
      ...reply.matchAll(
        /\$4\r\nECHO\r\n\$\d+\r\n(one|two|three)\r\n(?:\$\d+\r\n\.\.\. \((\d+) more commands in the same read\)\r\n)?/g,
      ),
    ]
    expect(echoes.map((match) => 1 + Number(match[2] ?? 0)).reduce((a, b) => a + b, 0)).toBe(3)
    expect(echoes.at(-1)![1]).toBe('one')
  })
})

/** INFO <section>'s lines, the header included. */
async function infoLines(client: RawClient, section: string): Promise<string[]> {
  const reply = await ask(client, 'INFO', section)
  return reply
    .slice(reply.indexOf('\r\n') + 2)
    .split('\r\n')
    .filter((line) => line !== '')
}

describe('INFO commandstats and errorstats', () => {
  it('times commands: usec grows with calls and usec_per_call is usec over calls', async () => {
    const client = await connect(servers.bfs.port)
    await ask(client, 'CONFIG', 'RESETSTAT')
    for (let i = 0; i < 200; i++) await ask(client, 'BF.ADD', 'timed', `item${i}`)
    const line = (await infoLines(client, 'commandstats')).find((entry) => entry.startsWith('cmdstat_bf.add:'))!
    const match =
      /^cmdstat_bf\.add:calls=200,usec=(\d+),usec_per_call=(\d+\.\d\d),rejected_calls=0,failed_calls=0$/.exec(line)
    expect(match, line).not.toBeNull()
    const usec = Number(match![1])
    expect(usec).toBeGreaterThan(0)
    expect(Math.abs(Number(match![2]) - usec / 200)).toBeLessThan(0.01 + 1 / 200)
    await ask(client, 'CONFIG', 'RESETSTAT')
    expect((await infoLines(client, 'commandstats')).some((entry) => entry.startsWith('cmdstat_bf.add:'))).toBe(false)
  })

  it('counts errors by their code as redis 7.0.15, in INFO errorstats and the default INFO', async () => {
    const commands = [
      ['NOSUCHCOMMAND'],
      ['GET'],
      ['AUTH', 'nobody', 'x'],
      ['HELLO', '9'],
      ['HELLO', 'x'],
      ['PING', 'a', 'b'],
      ['CONFIG', 'SET', 'maxclients', 'many'],
      ['SLOWLOG', 'GET', 'x'],
      ['AUTH', 'nobody', 'y'],
    ]
    const sections: string[][] = []
    for (const port of [servers.bfs.port, servers.redis.port]) {
      const client = await connect(port)
      await ask(client, 'CONFIG', 'RESETSTAT')
      for (const command of commands) await ask(client, ...command)
      const lines = await infoLines(client, 'errorstats')
      const everything = await ask(client, 'INFO')
      expect(lines[0]).toBe('# Errorstats')
      expect(everything).toContain(`${lines.join('\r\n')}\r\n\r\n`)
      sections.push(lines)
    }
    expect(sections[0]).toEqual(sections[1])
    expect(sections[0]).toContain('errorstat_WRONGPASS:count=2')
    expect(sections[0]).toContain('errorstat_NOPROTO:count=1')
  })
})
