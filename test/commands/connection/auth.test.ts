/**
 * requirepass, AUTH and HELLO ... AUTH with redis 7.0's exact words (server.c shared.noautherr,
 * acl.c authCommand / helloCommand), and the start-up warning for an open bind address.
 */
import { describe, expect, it } from 'vitest'
import { ask, askLine, encodeCommand } from '../../helpers/resp.js'
import { serverPerTest } from '../../helpers/server-hooks.js'
import {
  checkOpenFiles,
  isLoopbackAddress,
  openBindWarning,
  readOpenFilesLimit,
} from '../../../src/server/startup-checks.js'

const NOAUTH = '-NOAUTH Authentication required.\r\n'
const WRONGPASS = '-WRONGPASS invalid username-password pair or user is disabled.\r\n'

const { start, connect } = serverPerTest()

describe('requirepass', () => {
  it('every command but AUTH, HELLO, QUIT and RESET gets NOAUTH until AUTH succeeds', async () => {
    const running = await start({ requirepass: 's3cret' })
    const client = await connect(running.port)
    for (const command of [
      ['PING'],
      ['BF.ADD', 'f', 'x'],
      ['BF.EXISTS', 'f', 'x'],
      ['CONFIG', 'GET', 'requirepass'],
      ['SELECT', '0'],
      ['CLIENT', 'ID'],
    ]) {
      expect(await ask(client, ...command), command.join(' ')).toBe(NOAUTH)
    }
    // redis 7.0 checks existence and arity before authentication.
    expect(await ask(client, 'NOSUCH')).toBe("-ERR unknown command 'NOSUCH', with args beginning with: \r\n")
    expect(await ask(client, 'AUTH', 'wrong')).toBe(WRONGPASS)
    expect(await ask(client, 'AUTH', 's3cre')).toBe(WRONGPASS)
    expect(await ask(client, 'AUTH', 's3cret-and-more')).toBe(WRONGPASS)
    expect(await ask(client, 'AUTH', 'someone', 's3cret')).toBe(WRONGPASS)
    expect(await ask(client, 'PING')).toBe(NOAUTH)
    expect(await ask(client, 'AUTH', 's3cret')).toBe('+OK\r\n')
    expect(await ask(client, 'PING')).toBe('+PONG\r\n')
    expect(await ask(client, 'BF.ADD', 'f', 'x')).toBe(':1\r\n')
    // RESET forgets the authentication.
    expect(await ask(client, 'RESET')).toBe('+RESET\r\n')
    expect(await ask(client, 'PING')).toBe(NOAUTH)
    expect(await ask(client, 'AUTH', 'default', 's3cret')).toBe('+OK\r\n')
    expect(await ask(client, 'BF.EXISTS', 'f', 'x')).toBe(':1\r\n')
  })

  it('HELLO needs AUTH inside it; HELLO 3 AUTH default <password> authenticates', async () => {
    const running = await start({ requirepass: 's3cret' })
    const client = await connect(running.port)
    expect(await ask(client, 'HELLO', '3')).toBe(
      '-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n',
    )
    expect(await ask(client, 'HELLO', '3', 'AUTH', 'default', 'nope')).toBe(WRONGPASS)
    const hello = await ask(client, 'HELLO', '3', 'AUTH', 'default', 's3cret')
    expect(hello.startsWith('%7\r\n')).toBe(true)
    expect(await ask(client, 'PING')).toBe('+PONG\r\n')
  })

  it('HELLO acts on its options in order, as redis 7.0 does: AUTH and SETNAME before a bad option stay done', async () => {
    const running = await start({ requirepass: 's3cret' })
    const client = await connect(running.port)
    // SETNAME works before authentication; the NOAUTH reply follows it (bytes from redis-server 7.0.15).
    expect(await ask(client, 'HELLO', '3', 'SETNAME', 'early')).toMatch(/^-NOAUTH HELLO must be called/)
    expect(await ask(client, 'HELLO', '4', 'AUTH', 'default', 's3cret')).toBe(
      '-NOPROTO unsupported protocol version\r\n',
    )
    expect(await ask(client, 'HELLO', '2', 'SETNAME', 'named', 'AUTH', 'default', 'nope')).toBe(WRONGPASS)
    expect(await ask(client, 'HELLO', '3', 'AUTH', 'default')).toBe("-ERR Syntax error in HELLO option 'AUTH'\r\n")
    expect(await ask(client, 'PING')).toBe(NOAUTH)
    expect(await ask(client, 'HELLO', '3', 'AUTH', 'default', 's3cret', 'SETNAME', 'a', 'b')).toBe(
      "-ERR Syntax error in HELLO option 'b'\r\n",
    )
    expect(await ask(client, 'PING')).toBe('+PONG\r\n')
    expect(await ask(client, 'CLIENT', 'GETNAME')).toBe('$1\r\na\r\n')
    const other = await connect(running.port)
    expect(await ask(other, 'HELLO', '2', 'SETNAME', 'first', 'AUTH', 'default', 'nope')).toBe(WRONGPASS)
    expect(await ask(other, 'AUTH', 's3cret')).toBe('+OK\r\n')
    expect(await ask(other, 'CLIENT', 'GETNAME')).toBe('$5\r\nfirst\r\n')
  })

  it('CONFIG SET requirepass takes a UTF-8 password that AUTH then matches; bytes that are not UTF-8 are refused', async () => {
    const running = await start({})
    const client = await connect(running.port)
    expect(await askLine(client, 'CONFIG', 'SET', 'requirepass', Buffer.from([0x70, 0xff, 0xfe]))).toBe(
      "-ERR CONFIG SET failed (possibly related to argument 'requirepass') - argument must be valid UTF-8\r\n",
    )
    expect(running.server.config.requirepass).toBe('')
    expect(await askLine(client, 'CONFIG', 'SET', 'requirepass', 'pässwörd')).toBe('+OK\r\n')
    const other = await connect(running.port)
    other.write(encodeCommand(['PING']))
    expect((await other.readUntil((bytes) => bytes.includes('\r\n'))).toString('latin1')).toBe(NOAUTH)
    other.write(encodeCommand(['AUTH', Buffer.from('pässwörd', 'latin1')]))
    expect((await other.readUntil((bytes) => bytes.includes('\r\n'))).toString('latin1')).toBe(WRONGPASS)
    other.write(encodeCommand(['AUTH', Buffer.from('pässwörd', 'utf8')]))
    expect((await other.readUntil((bytes) => bytes.includes('\r\n'))).toString('latin1')).toBe('+OK\r\n')
  })

  it('QUIT is allowed without AUTH', async () => {
    const running = await start({ requirepass: 's3cret' })
    const client = await connect(running.port)
    expect(await ask(client, 'QUIT')).toBe('+OK\r\n')
    await client.waitClosed()
  })

  it('CONFIG SET requirepass applies to new connections; without a password AUTH says so', async () => {
    const running = await start()
    const client = await connect(running.port)
    expect(await ask(client, 'AUTH', 'x')).toBe(
      '-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n',
    )
    expect(await ask(client, 'CONFIG', 'SET', 'requirepass', 'later')).toBe('+OK\r\n')
    const next = await connect(running.port)
    expect(await ask(next, 'PING')).toBe(NOAUTH)
    expect(await ask(next, 'AUTH', 'later')).toBe('+OK\r\n')
    expect(await ask(next, 'PING')).toBe('+PONG\r\n')
  })

  it('a wrong password never closes the connection and the server stays healthy', async () => {
    const running = await start({ requirepass: 'pw' })
    const client = await connect(running.port)
    for (let i = 0; i < 50; i++) expect(await ask(client, 'AUTH', `guess-${i}`)).toBe(WRONGPASS)
    expect(await ask(client, 'AUTH', 'pw')).toBe('+OK\r\n')
    expect(await ask(client, 'PING')).toBe('+PONG\r\n')
  })
})

describe('start-up checks', () => {
  it('binding beyond loopback with no requirepass and protected-mode no logs a warning; with one, in protected mode, or on loopback, none', async () => {
    let running = await start({ bind: '0.0.0.0', 'protected-mode': false })
    expect(running.logs.some((line) => line.includes('WARNING: listening on 0.0.0.0 with no requirepass'))).toBe(true)
    await running.stop()
    // Protected mode (the default) refuses the RESP clients the warning is about; the HTTP
    // listener, which has no protected mode, is still warned about.
    running = await start({ bind: '0.0.0.0', 'http-port': -1 })
    const warnings = running.logs.filter((line) => line.includes('no requirepass'))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('HTTP WARNING: listening on 0.0.0.0 with no requirepass')
    await running.stop()
    running = await start({ bind: '0.0.0.0', requirepass: 'pw' })
    expect(running.logs.some((line) => line.includes('no requirepass'))).toBe(false)
    await running.stop()
    running = await start({ bind: '127.0.0.1' })
    expect(running.logs.some((line) => line.includes('no requirepass'))).toBe(false)
  })

  it('isLoopbackAddress and openBindWarning', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1'])
      expect(isLoopbackAddress(address), address).toBe(true)
    for (const address of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', '128.0.0.1'])
      expect(isLoopbackAddress(address), address).toBe(false)
    // Only the open address is named.
    expect(openBindWarning(['127.0.0.1', '10.0.0.1'], '')).toContain('listening on 10.0.0.1 with no requirepass')
    expect(openBindWarning(['127.0.0.1'], '')).toBeUndefined()
    expect(openBindWarning(['10.0.0.1'], 'pw')).toBeUndefined()
  })

  it("too few file descriptors for maxclients: redis's warning, and maxclients reduced to fit", () => {
    const limits =
      'Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 4096                 files\n'
    expect(readOpenFilesLimit(limits)).toBe(1024)
    expect(
      readOpenFilesLimit('Max open files            unlimited            unlimited            files\n'),
    ).toBeUndefined()
    const check = checkOpenFiles(10_000, 1024)
    expect(check.maxclients).toBe(992)
    expect(check.warnings).toEqual([
      'You requested maxclients of 10000 requiring at least 10032 max file descriptors.',
      "Current maximum open files is 1024. maxclients has been reduced to 992 to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.",
    ])
    expect(checkOpenFiles(100, 1024)).toEqual({ maxclients: 100, warnings: [] })
    expect(checkOpenFiles(100, undefined)).toEqual({ maxclients: 100, warnings: [] })
  })
})
