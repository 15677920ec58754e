/**
 * Where users are kept: the aclfile (ACL SAVE writes it atomically, ACL LOAD reads it all or
 * nothing, as redis 7.0 acl.c does) and `user` lines in the config file (CONFIG REWRITE writes the
 * users back, one line each, as redis rewriteConfigUserOption); both together refuse to start.
 */
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { serverPerTest } from '../../helpers/server-hooks.js'
import { tempDirsRemovedAfterAll } from '../../helpers/temp-dir.js'
import { ask, type RawClient } from '../../helpers/resp.js'
import { loadConfig } from '../../../src/runtime/config-load.js'

const { start, connect } = serverPerTest()
const tempDir = tempDirsRemovedAfterAll('bfs-acl-')

/** ACL LIST's lines. */
async function aclList(client: RawClient): Promise<string[]> {
  return [...(await ask(client, 'ACL', 'LIST')).matchAll(/\$\d+\r\n(user [^\r]*)\r\n/g)].map((m) => m[1]!)
}

describe('aclfile', () => {
  it("ACL SAVE writes ACL LIST's lines (no temp file left); ACL LOAD reads them back after a change", async () => {
    const dir = tempDir()
    const file = path.join(dir, 'users.acl')
    writeFileSync(file, 'user default on nopass ~* &* +@all\n')
    const running = await start({ aclfile: file })
    const client = await connect(running.port)
    expect(await ask(client, 'ACL', 'SETUSER', 'web', 'on', '>web-pass', '%R~http-filter', '+bf.exists', '+ping')).toBe(
      '+OK\r\n',
    )
    const before = await aclList(client)
    expect(await ask(client, 'ACL', 'SAVE')).toBe('+OK\r\n')
    expect(readFileSync(file, 'latin1')).toBe(before.map((line) => `${line}\n`).join(''))
    expect(readdirSync(dir)).toEqual(['users.acl'])
    expect(await ask(client, 'ACL', 'DELUSER', 'web')).toBe(':1\r\n')
    expect(await ask(client, 'ACL', 'LOAD')).toBe('+OK\r\n')
    expect(await aclList(client)).toEqual(before)
    const web = await connect(running.port)
    expect(await ask(web, 'AUTH', 'web', 'web-pass')).toBe('+OK\r\n')
    expect(await ask(web, 'BF.EXISTS', 'http-filter', 'x')).toBe(':0\r\n')
    // ACL LOAD closes the connections of every user but default, as redis's does.
    expect(await ask(client, 'ACL', 'LOAD')).toBe('+OK\r\n')
    await web.waitClosed()
  })

  it("a bad aclfile: ACL LOAD says what is wrong in redis's words and changes nothing; at start, the server refuses", async () => {
    const dir = tempDir()
    const file = path.join(dir, 'users.acl')
    writeFileSync(file, 'user alice on >a ~* +@all\n')
    const running = await start({ aclfile: file })
    const client = await connect(running.port)
    const alice = `user alice on #${createHash('sha256').update('a').digest('hex')} ~* resetchannels +@all`
    expect(await aclList(client)).toEqual([alice, 'user default on nopass ~* &* +@all'])
    writeFileSync(file, 'user bob on +nosuch\nnot-a-user line\nuser bob off\n')
    expect(await ask(client, 'ACL', 'LOAD')).toBe(
      `-ERR ${file}:1: Error in applying operation '+nosuch': Unknown command or category name in ACL. ${file}:2 should start with user keyword followed by the username. WARNING: Duplicate user 'bob' found on line 3. WARNING: ACL errors detected, no change to the previously active ACL rules was performed\r\n`,
    )
    expect((await aclList(client))[0]).toBe(alice)
    await expect(start({ aclfile: file })).rejects.toThrow(/^Aborting Redis startup because of ACL errors: /)
    await expect(start({ aclfile: path.join(dir, 'missing.acl') })).rejects.toThrow(
      /Error loading ACLs, opening file '.*missing\.acl': No such file or directory/,
    )
  })

  it('without an aclfile, ACL SAVE and LOAD answer as redis does', async () => {
    const running = await start({})
    const client = await connect(running.port)
    expect(await ask(client, 'ACL', 'SAVE')).toMatch(/^-ERR This Redis instance is not configured to use an ACL file\./)
  })
})

describe('user lines in the config file', () => {
  it('start the users; CONFIG REWRITE writes every user back, and a restart from the file has the same users', async () => {
    const dir = tempDir()
    const file = path.join(dir, 'bfs.conf')
    const text = [
      'port 0',
      `dir ${dir}`,
      'save ""',
      'appendonly no',
      'user crawler on >c ~crawl:* +@bloom',
      'user web on >w %R~http-filter +bf.exists',
      '',
    ].join('\n')
    writeFileSync(file, text)
    const running = await start(loadConfig(text), { configFile: file })
    const client = await connect(running.port)
    const users = await aclList(client)
    expect(users.map((line) => line.split(' ')[1])).toEqual(['crawler', 'default', 'web'])
    expect(await ask(client, 'ACL', 'SETUSER', 'admin', 'on', '>adm', '~*', '&*', '+@all')).toBe('+OK\r\n')
    expect(await ask(client, 'ACL', 'DELUSER', 'crawler')).toBe(':1\r\n')
    expect(await ask(client, 'CONFIG', 'REWRITE')).toBe('+OK\r\n')
    const rewritten = readFileSync(file, 'utf8')
    const after = await aclList(client)
    expect(rewritten.split('\n').filter((line) => line.startsWith('user '))).toEqual(after)
    // The first user line was rewritten in place; crawler's is gone.
    expect(rewritten.split('\n').indexOf(after[0]!)).toBe(
      text.split('\n').indexOf('user crawler on >c ~crawl:* +@bloom'),
    )
    await running.stop()
    const again = await start(loadConfig(rewritten), { configFile: file })
    // A `user default` line resets the user first, which sets sanitize-payload: redis-server 7.0.15 lists it so too.
    const defaultAfterRestart = 'user default on nopass sanitize-payload ~* &* +@all'
    expect(await aclList(await connect(again.port))).toEqual(
      after.map((line) => (line.startsWith('user default ') ? defaultAfterRestart : line)),
    )
  })

  it('user lines and an aclfile together: the server refuses to start (redis ACLLoadUsersAtStartup)', async () => {
    const dir = tempDir()
    const file = path.join(dir, 'users.acl')
    writeFileSync(file, '')
    await expect(start({ aclfile: file, user: [['x', 'on']] })).rejects.toThrow(
      'Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid.',
    )
    await expect(start({ user: [['x', '+nosuch']] })).rejects.toThrow(
      "Error in user declaration 'x': Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL",
    )
  })
})
