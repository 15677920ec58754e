/**
 * MONITOR over real sockets, beside a real redis-server 7.0.15 given the same bytes: the lines a
 * monitor receives (timestamps and client ports replaced by placeholders), quoting, redaction,
 * admin commands left out, transactions, the commands a monitor may not run, RESET, and the
 * output limit that closes a monitor that does not read.
 */
import net from 'node:net'
import { describe, expect, it } from 'vitest'
import { besideRedis } from '../../helpers/beside-redis.js'
import { RawClient, ask, encodeCommand } from '../../helpers/resp.js'

const servers = besideRedis()
const connect = (port: number): Promise<RawClient> => servers.connect(port)

/** Monitor lines with the time as T and each client's address as its name. */
function normalized(text: string, names: ReadonlyMap<string, string>): string {
  let out = text.replace(/^\+\d{10}\.\d{6} /gm, '+T ')
  for (const [addr, name] of names) out = out.replaceAll(addr, name)
  return out
}

const addrOf = (client: RawClient): string => `${client.socket.localAddress}:${client.socket.localPort}`

/** Runs `script` from a second client while a monitor watches; what the monitor received, normalized. */
async function monitored(
  port: number,
  protocol: '2' | '3',
  script: readonly (readonly (string | Buffer)[])[],
): Promise<string> {
  const watcher = await connect(port)
  await ask(watcher, 'HELLO', protocol)
  expect(await ask(watcher, 'MONITOR')).toBe('+OK\r\n')
  const worker = await connect(port)
  for (const command of script) await ask(worker, ...command)
  await ask(worker, 'ECHO', 'end')
  const received = await watcher.readUntil((bytes) => bytes.toString('latin1').endsWith('"ECHO" "end"\r\n'))
  watcher.close()
  return normalized(
    received.toString('latin1'),
    new Map([
      [addrOf(worker), 'WORKER'],
      [addrOf(watcher), 'WATCHER'],
    ]),
  )
}

const SCRIPT: readonly (readonly (string | Buffer)[])[] = [
  ['PING'],
  ['ECHO', Buffer.from('a"b\\c\n\r\t\x07\x08\x01\x7f\xc3\xa9 z', 'latin1')],
  ['AUTH', 'someone', 'secret'],
  ['HELLO', '2', 'AUTH', 'default', 'secret', 'SETNAME', 'w'],
  ['CONFIG', 'GET', 'port'],
  ['SLOWLOG', 'LEN'],
  ['NOSUCHCOMMAND'],
  ['ECHO'],
  ['MULTI'],
  ['PING', 'queued'],
  ['EXEC'],
  ['CLIENT', 'SETNAME', 'named'],
]

describe('MONITOR as redis 7.0.15', () => {
  for (const protocol of ['2', '3'] as const) {
    it(`shows what other clients ran, quoted, redacted, admin commands left out, RESP${protocol}`, async () => {
      const [ours, theirs] = [
        await monitored(servers.bfs.port, protocol, SCRIPT),
        await monitored(servers.redis.port, protocol, SCRIPT),
      ]
      expect(ours).toBe(theirs)
      expect(ours).toContain('+T [0 WORKER] "ECHO" "a\\"b\\\\c\\n\\r\\t\\a\\b\\x01\\x7f\\xc3\\xa9 z"\r\n')
      expect(ours).toContain('"AUTH" "(redacted)" "(redacted)"')
      expect(ours).not.toContain('secret')
      expect(ours).not.toContain('CONFIG')
    })
  }

  it('answers a monitor as redis does: its own commands, refusals, a second MONITOR, CLIENT INFO, RESET', async () => {
    const replies: string[] = []
    for (const port of [servers.bfs.port, servers.redis.port]) {
      const client = await connect(port)
      const names = new Map([[addrOf(client), 'ME']])
      const script = [
        ['MONITOR'],
        ['PING'],
        ['EXISTS', 'k'],
        ['PUBLISH', 'c', 'm'],
        ['MONITOR'],
        ['ECHO', 'x'],
        ['RESET'],
        ['PING'],
      ]
      client.write(Buffer.concat(script.map((command) => encodeCommand(command))))
      const received = await client.readUntil((bytes) => bytes.toString('latin1').endsWith('+RESET\r\n+PONG\r\n'))
      replies.push(normalized(received.toString('latin1'), names))
      const info = await ask(client, 'CLIENT', 'INFO')
      expect(info).toContain(' flags=N ')
    }
    expect(replies[0]).toBe(replies[1])
    expect(replies[0]).toContain("-ERR Replica can't interact with the keyspace\r\n")
    const inTransaction = async (port: number): Promise<string> => {
      const client = await connect(port)
      client.write(Buffer.concat([encodeCommand(['MULTI']), encodeCommand(['MONITOR']), encodeCommand(['EXEC'])]))
      return (await client.readUntil((bytes) => bytes.toString('latin1').endsWith('client\r\n'))).toString('latin1')
    }
    expect(await inTransaction(servers.bfs.port)).toBe(await inTransaction(servers.redis.port))
  })

  it('lists a monitor with the O flag and shows BF commands', async () => {
    const watcher = await connect(servers.bfs.port)
    await ask(watcher, 'MONITOR')
    const worker = await connect(servers.bfs.port)
    expect(await ask(worker, 'CLIENT', 'LIST')).toMatch(new RegExp(`addr=${addrOf(watcher)} .* flags=O `))
    await ask(worker, 'BF.ADD', 'seen', 'https://example.com/')
    const line = (await watcher.readUntil((bytes) => bytes.toString('latin1').includes('BF.ADD'))).toString('latin1')
    expect(line).toContain(`[0 ${addrOf(worker)}] "BF.ADD" "seen" "https://example.com/"\r\n`)
    watcher.close()
  })

  it('closes a monitor that does not read once its output passes the normal class limit', async () => {
    const admin = await connect(servers.bfs.port)
    await ask(admin, 'CONFIG', 'SET', 'client-output-buffer-limit', 'normal 1048576 0 0')
    const sleeper = net.connect({ port: servers.bfs.port, host: '127.0.0.1' })
    sleeper.on('error', () => {})
    await new Promise<void>((resolve) => sleeper.once('connect', () => resolve()))
    const sleeperAddr = `addr=${sleeper.localAddress}:${sleeper.localPort} `
    sleeper.write(encodeCommand(['MONITOR']))
    sleeper.pause()
    const listed = async (): Promise<boolean> => (await ask(admin, 'CLIENT', 'LIST')).includes(sleeperAddr)
    // Waits until the MONITOR is in place, then sends 1 MB lines until the server closed it.
    while (!(await ask(admin, 'CLIENT', 'LIST')).match(new RegExp(`${sleeperAddr}.* flags=O `)))
      await new Promise((resolve) => setTimeout(resolve, 10))
    const big = 'x'.repeat(1 << 20)
    for (let i = 0; i < 100 && (await listed()); i++) await ask(admin, 'ECHO', big)
    expect(await listed()).toBe(false)
    sleeper.destroy()
    expect(
      servers.bfs.logs.some((line) =>
        line.includes('scheduled to be closed ASAP for overcoming of output buffer limits'),
      ),
    ).toBe(true)
    await ask(admin, 'CONFIG', 'SET', 'client-output-buffer-limit', 'normal 268435456 0 0')
  })
})
