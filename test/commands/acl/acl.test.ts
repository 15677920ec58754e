/**
 * ACL users with real clients (ioredis with a username and password, raw bytes): the Bloom
 * commands' categories (@bloom, @read/@write by their flags: a `+@read` user runs BF.EXISTS, a
 * difference from RedisBloom 2.4), requirepass as the default user's password, what changes to a
 * user do to its connections, CLIENT LIST's user, EXEC's second check, acllog-max-len, and what
 * MONITOR and SLOWLOG show of AUTH and ACL SETUSER.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createHash } from 'node:crypto'
import { Redis } from 'ioredis'
import { serverPerTest } from '../../helpers/server-hooks.js'
import { ask } from '../../helpers/resp.js'

const { start, connect } = serverPerTest()

const NOPERM_KEY = 'NOPERM this user has no permissions to access one of the keys used as arguments'

/** An ioredis client as `username`, closed after the test. */
function userClient(port: number, username: string, password: string): Redis {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    username,
    password,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  clients.push(client)
  return client
}
const clients: Redis[] = []
// ioredis clients of one test, closed after it (serverPerTest closes the raw ones and the servers).
afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect()
})

describe('ACL with ioredis users', () => {
  it('a reader runs BF.EXISTS and BF.MEXISTS (@read) but not BF.ADD; a writer with +@bloom runs both', async () => {
    const running = await start({})
    const admin = await connect(running.port)
    expect(
      await ask(admin, 'ACL', 'SETUSER', 'reader', 'on', '>r-pass', '%R~*', '+@read', '+@connection', '+acl|whoami'),
    ).toBe('+OK\r\n')
    expect(await ask(admin, 'ACL', 'SETUSER', 'crawler', 'on', '>c-pass', '~crawl:*', '+@bloom')).toBe('+OK\r\n')
    const crawler = userClient(running.port, 'crawler', 'c-pass')
    await crawler.connect()
    expect(await crawler.call('BF.ADD', 'crawl:seen', 'https://a')).toBe(1)
    expect(await crawler.call('BF.EXISTS', 'crawl:seen', 'https://a')).toBe(1)
    await expect(crawler.call('BF.ADD', 'other', 'x')).rejects.toThrow(NOPERM_KEY)
    await expect(crawler.call('FLUSHALL')).rejects.toThrow(
      "NOPERM this user has no permissions to run the 'flushall' command",
    )
    const reader = userClient(running.port, 'reader', 'r-pass')
    await reader.connect()
    expect(await reader.call('BF.EXISTS', 'crawl:seen', 'https://a')).toBe(1)
    expect(await reader.call('BF.MEXISTS', 'crawl:seen', 'https://a', 'b')).toEqual([1, 0])
    await expect(reader.call('BF.ADD', 'crawl:seen', 'x')).rejects.toThrow(
      "NOPERM this user has no permissions to run the 'bf.add' command",
    )
    expect(await reader.call('ACL', 'WHOAMI')).toBe('reader')
  })

  it('a wrong password or a disabled user: ioredis gets WRONGPASS', async () => {
    const running = await start({})
    const admin = await connect(running.port)
    await ask(admin, 'ACL', 'SETUSER', 'someone', 'off', '>pw', '+@all', '~*')
    const wrong = userClient(running.port, 'someone', 'pw')
    const failure = new Promise<Error>((resolve) => wrong.once('error', resolve))
    wrong.connect().catch(() => {})
    expect((await failure).message).toBe('WRONGPASS invalid username-password pair or user is disabled.')
    expect(await ask(admin, 'ACL', 'LOG', '1')).toContain(
      'reason\r\n$4\r\nauth\r\n$7\r\ncontext\r\n$8\r\ntoplevel\r\n$6\r\nobject\r\n$4\r\nauth\r\n',
    )
  })

  it('ACL CAT bloom lists every BF command; COMMAND INFO gives BF.ADD @write @bloom, BF.EXISTS @read @fast @bloom', async () => {
    const running = await start({})
    const client = await connect(running.port)
    const bloom = await ask(client, 'ACL', 'CAT', 'bloom')
    for (const name of [
      'bf.add',
      'bf.madd',
      'bf.exists',
      'bf.mexists',
      'bf.reserve',
      'bf.insert',
      'bf.info',
      'bf.card',
      'bf.scandump',
      'bf.loadchunk',
    ]) {
      expect(bloom).toContain(`\r\n${name}\r\n`)
    }
    expect(bloom).not.toContain('\r\nping\r\n')
    expect(await ask(client, 'COMMAND', 'INFO', 'BF.ADD')).toContain('*3\r\n+@write\r\n+@slow\r\n+@bloom\r\n')
    expect(await ask(client, 'COMMAND', 'INFO', 'BF.EXISTS')).toContain('*3\r\n+@read\r\n+@fast\r\n+@bloom\r\n')
    expect(await ask(client, 'COMMAND', 'LIST', 'FILTERBY', 'ACLCAT', 'bloom')).toContain('bf.add')
  })
})

describe('the default user', () => {
  it('requirepass is its password (SHA-256 in ACL GETUSER); CONFIG SET requirepass "" makes it nopass again', async () => {
    const running = await start({ requirepass: 'Sesame' })
    const client = await connect(running.port)
    expect(await ask(client, 'PING')).toBe('-NOAUTH Authentication required.\r\n')
    expect(await ask(client, 'AUTH', 'default', 'Sesame')).toBe('+OK\r\n')
    const hash = createHash('sha256').update('Sesame').digest('hex')
    const line = `user default on #${hash} ~* &* +@all`
    expect(await ask(client, 'ACL', 'LIST')).toBe(`*1\r\n$${line.length}\r\n${line}\r\n`)
    expect(await ask(client, 'CONFIG', 'SET', 'requirepass', '')).toBe('+OK\r\n')
    expect(await ask(client, 'ACL', 'LIST')).toContain('user default on nopass ~* &* +@all')
    const fresh = await connect(running.port)
    expect(await ask(fresh, 'PING')).toBe('+PONG\r\n')
    expect(await ask(fresh, 'AUTH', 'x')).toMatch(/^-ERR AUTH <password> called without any password configured/)
    // ACL SETUSER default >pw: new connections must authenticate, CONFIG GET requirepass is unchanged (as redis).
    expect(await ask(client, 'ACL', 'SETUSER', 'default', 'resetpass', '>other')).toBe('+OK\r\n')
    const third = await connect(running.port)
    expect(await ask(third, 'PING')).toBe('-NOAUTH Authentication required.\r\n')
    expect(await ask(third, 'AUTH', 'other')).toBe('+OK\r\n')
  })
})

describe('logging in', () => {
  it('HELLO 3 AUTH <user> <password> logs in as that user (RESP3), RESET goes back to default', async () => {
    const running = await start({ requirepass: 'def' })
    const client = await connect(running.port)
    await ask(client, 'AUTH', 'def')
    await ask(client, 'ACL', 'SETUSER', 'h', 'on', '>hp', '+@connection', '+acl|whoami')
    const other = await connect(running.port)
    expect(await ask(other, 'HELLO', '3', 'AUTH', 'h', 'wrong')).toBe(
      '-WRONGPASS invalid username-password pair or user is disabled.\r\n',
    )
    expect(await ask(other, 'HELLO', '3', 'AUTH', 'h', 'hp')).toMatch(/^%7\r\n/)
    expect(await ask(other, 'ACL', 'WHOAMI')).toBe('$1\r\nh\r\n')
    expect(await ask(other, 'CLIENT', 'INFO')).toMatch(/ user=h /)
    expect(await ask(other, 'RESET')).toBe('+RESET\r\n')
    expect(await ask(other, 'ACL', 'WHOAMI')).toBe('-NOAUTH Authentication required.\r\n')
  })

  it('acl-pubsub-default allchannels: a new user may use every channel (&*), as redis 7.0 with that setting', async () => {
    const running = await start({ 'acl-pubsub-default': 'allchannels' })
    const client = await connect(running.port)
    await ask(client, 'ACL', 'SETUSER', 'p')
    expect(await ask(client, 'ACL', 'LIST')).toContain('user p off &* -@all')
    expect(await ask(client, 'CONFIG', 'SET', 'acl-pubsub-default', 'resetchannels')).toBe('+OK\r\n')
    await ask(client, 'ACL', 'SETUSER', 'q')
    expect(await ask(client, 'ACL', 'LIST')).toContain('user q off resetchannels -@all')
  })
})

describe('connections of a changed user', () => {
  it('ACL DELUSER closes its connections; SETUSER off keeps them (redis 7.0) but refuses a new AUTH', async () => {
    const running = await start({})
    const admin = await connect(running.port)
    await ask(admin, 'ACL', 'SETUSER', 'temp', 'on', '>t', '+@all', '~*')
    const one = await connect(running.port)
    expect(await ask(one, 'AUTH', 'temp', 't')).toBe('+OK\r\n')
    const list = await ask(admin, 'CLIENT', 'LIST')
    expect(list).toMatch(/ user=temp /)
    expect(await ask(admin, 'ACL', 'SETUSER', 'temp', 'off')).toBe('+OK\r\n')
    expect(await ask(one, 'PING')).toBe('+PONG\r\n')
    const two = await connect(running.port)
    expect(await ask(two, 'AUTH', 'temp', 't')).toBe(
      '-WRONGPASS invalid username-password pair or user is disabled.\r\n',
    )
    expect(await ask(admin, 'CLIENT', 'KILL', 'USER', 'nobody')).toBe("-ERR No such user 'nobody'\r\n")
    expect(await ask(admin, 'ACL', 'DELUSER', 'temp', 'nobody')).toBe(':1\r\n')
    await one.waitClosed()
    expect(await ask(admin, 'ACL', 'USERS')).toBe('*1\r\n$7\r\ndefault\r\n')
  })

  it('SETUSER that takes channels away closes the subscribers that used them (redis ACLKillPubsubClientsIfNeeded)', async () => {
    const running = await start({})
    const admin = await connect(running.port)
    await ask(admin, 'ACL', 'SETUSER', 'sub', 'on', 'nopass', '+@pubsub', '+ping', '&news.*', '&sport.*')
    const news = await connect(running.port)
    const sport = await connect(running.port)
    await ask(news, 'AUTH', 'sub', 'x')
    await ask(sport, 'AUTH', 'sub', 'x')
    expect(await ask(news, 'SUBSCRIBE', 'news.today')).toBe('*3\r\n$9\r\nsubscribe\r\n$10\r\nnews.today\r\n:1\r\n')
    expect(await ask(sport, 'PSUBSCRIBE', 'sport.*')).toBe('*3\r\n$10\r\npsubscribe\r\n$7\r\nsport.*\r\n:1\r\n')
    expect(await ask(admin, 'ACL', 'SETUSER', 'sub', 'resetchannels', '&news.*')).toBe('+OK\r\n')
    await sport.waitClosed()
    expect(await ask(news, 'PING')).toBe('*2\r\n$4\r\npong\r\n$0\r\n\r\n')
  })

  it("CLIENT KILL USER closes that user's connections", async () => {
    const running = await start({})
    const admin = await connect(running.port)
    await ask(admin, 'ACL', 'SETUSER', 'k', 'on', 'nopass', '+@all', '~*')
    const victim = await connect(running.port)
    expect(await ask(victim, 'AUTH', 'k', 'anything')).toBe('+OK\r\n')
    expect(await ask(admin, 'CLIENT', 'KILL', 'USER', 'k')).toBe(':1\r\n')
    await victim.waitClosed()
  })

  it("EXEC checks again: a command queued before its permission was removed fails with redis 7.0's words", async () => {
    const running = await start({})
    const admin = await connect(running.port)
    await ask(admin, 'ACL', 'SETUSER', 'q', 'on', 'nopass', '~*', '+@transaction', '+type', '+dbsize')
    const user = await connect(running.port)
    await ask(user, 'AUTH', 'q', 'x')
    expect(await ask(user, 'MULTI')).toBe('+OK\r\n')
    expect(await ask(user, 'TYPE', 'k')).toBe('+QUEUED\r\n')
    expect(await ask(user, 'DBSIZE')).toBe('+QUEUED\r\n')
    await ask(admin, 'ACL', 'SETUSER', 'q', '-type')
    expect(await ask(user, 'EXEC')).toBe(
      '*2\r\n-NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: no permission to execute the command or subcommand\r\n:0\r\n',
    )
    expect(await ask(admin, 'ACL', 'LOG', '1')).toContain('context\r\n$5\r\nmulti\r\n$6\r\nobject\r\n$4\r\ntype\r\n')
  })
})

describe('ACL LOG and SLOWLOG', () => {
  it('acllog-max-len bounds the log; ACL LOG RESET empties it', async () => {
    const running = await start({ 'acllog-max-len': 2 })
    const client = await connect(running.port)
    for (const user of ['a', 'b', 'c']) await ask(client, 'AUTH', user, 'x')
    const log = await ask(client, 'ACL', 'LOG')
    expect(log.startsWith('*2\r\n')).toBe(true)
    expect(log).toContain('username\r\n$1\r\nc\r\n')
    expect(log).not.toContain('username\r\n$1\r\na\r\n')
    expect(await ask(client, 'ACL', 'LOG', 'RESET')).toBe('+OK\r\n')
    expect(await ask(client, 'ACL', 'LOG')).toBe('*0\r\n')
  })

  it('MONITOR shows AUTH with (redacted) arguments and ACL SETUSER (an admin subcommand) not at all, as redis 7.0', async () => {
    const running = await start({})
    const monitor = await connect(running.port)
    expect(await ask(monitor, 'MONITOR')).toBe('+OK\r\n')
    const client = await connect(running.port)
    await ask(client, 'ACL', 'SETUSER', 'm', 'on', '>hunter2', '+@all', '~*')
    await ask(client, 'AUTH', 'm', 'hunter2')
    await ask(client, 'HELLO', '2', 'AUTH', 'm', 'hunter2')
    await ask(client, 'ACL', 'WHOAMI')
    const lines = (await monitor.readUntil((bytes) => bytes.includes('"WHOAMI"'))).toString('latin1')
    expect(lines).toContain('"AUTH" "(redacted)" "(redacted)"\r\n')
    expect(lines).toContain('"HELLO" "2" "AUTH" "(redacted)" "(redacted)"\r\n')
    expect(lines).not.toContain('SETUSER')
    expect(lines).not.toContain('hunter2')
  })

  it("SLOWLOG shows ACL SETUSER's user and rules as (redacted), as redis 7.0 does", async () => {
    const running = await start({ 'slowlog-log-slower-than': 0 })
    const client = await connect(running.port)
    await ask(client, 'ACL', 'SETUSER', 'secretive', 'on', '>hunter2')
    const slowlog = await ask(client, 'SLOWLOG', 'GET', '1')
    expect(slowlog).toContain(
      '$3\r\nACL\r\n$7\r\nSETUSER\r\n$10\r\n(redacted)\r\n$10\r\n(redacted)\r\n$10\r\n(redacted)\r\n',
    )
    expect(slowlog).not.toContain('hunter2')
  })
})
