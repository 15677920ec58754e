/**
 * ACL beside a real redis-server 7.0.15: the same commands to both, the same bytes back. One
 * user per rule kind (ACL GETUSER and ACL LIST describe it), every SETUSER error, every denial
 * kind (command, subcommand, key read/write, channel, pattern channel, first argument), ACL DRYRUN,
 * ACL LOG's fields, ACL CAT per category for the commands both have, and the subcommands' errors;
 * the keys checked are those COMMAND GETKEYS names, for every row of the table.
 */
import { describe, expect, it } from 'vitest'
import { besideRedis } from '../../helpers/beside-redis.js'
import { askRaw, type RawClient } from '../../helpers/resp.js'

const servers = besideRedis()

/** Both servers' replies to the same commands, on one connection each. */
async function both(commands: readonly (readonly string[])[]): Promise<[string[], string[]]> {
  const bfs = await servers.connect(servers.bfs.port)
  const redis = await servers.connect(servers.redis.port)
  const run = async (client: RawClient): Promise<string[]> => {
    const replies: string[] = []
    for (const command of commands) replies.push((await askRaw(client, ...command)).toString('latin1'))
    return replies
  }
  return [await run(bfs), await run(redis)]
}

async function same(...commands: (readonly string[])[]): Promise<string[]> {
  const [bfs, redis] = await both(commands)
  expect(bfs).toEqual(redis)
  return bfs
}

// Each rule kind on its own user (ACL GETUSER and ACL LIST show it as redis does).
const RULES: readonly (readonly string[])[] = [
  ['on'],
  ['off'],
  ['>p1', '>p2'],
  ['>p1', '<p1'],
  ['#' + 'a'.repeat(64)],
  ['#' + 'b'.repeat(64), '!' + 'b'.repeat(64)],
  ['>p', 'nopass'],
  ['nopass', 'resetpass'],
  ['~bf:*'],
  ['%R~ro:*'],
  ['%W~wo:*'],
  ['%RW~rw:*'],
  ['%R~x', '%W~x'],
  ['allkeys'],
  ['~a', 'resetkeys'],
  ['&news.*'],
  ['allchannels'],
  ['&*', 'resetchannels'],
  ['+ping'],
  ['+@all', '-flushall'],
  ['+@read'],
  ['+@all', '-@dangerous'],
  ['allcommands'],
  ['+@all', 'nocommands'],
  ['+config|get'],
  ['+@all', '-config|set'],
  ['+select|0'],
  ['+client', '-client|kill'],
  ['on', '>x', '~*', '+@all', 'reset'],
  ['+@pubsub', '&chan'],
  ['+@keyspace', '-del'],
  ['sanitize-payload'],
  // Selectors (Redis 7.0): in one argument, split over several, cleared.
  ['~root:*', '+type', '(~sel:* +exists &news)'],
  ['+@read', '(%R~a:*', '+del', '-type)', '(~b', '+@keyspace)'],
  ['(~a +type)', 'clearselectors'],
]

describe('ACL beside redis-server 7.0.15', () => {
  it.each(RULES.map((rules, i) => [rules.join(' '), i] as const))(
    'SETUSER %s: the same GETUSER and LIST line',
    async (_, i) => {
      const name = `rule${i}`
      const [, getuser, list] = await same(
        ['ACL', 'SETUSER', name, ...RULES[i]!],
        ['ACL', 'GETUSER', name],
        ['ACL', 'LIST'],
      )
      expect(getuser).toMatch(/^\*12\r\n/)
      expect(list).toContain(`user ${name} `)
    },
  )

  it('every SETUSER error as redis words it, and nothing changed', async () => {
    const bad = [
      ['('],
      ['(+@all'],
      ['foo'],
      ['+nosuch'],
      ['-nosuch'],
      ['+@nosuch'],
      ['~a', 'allkeys', '~b'],
      ['&*', '&x'],
      ['#abc'],
      ['!' + 'c'.repeat(64)],
      ['<nope'],
      ['+config|get|x'],
      ['+select|'],
      ['%X~a'],
      ['%R'],
      ['on', '+@all', 'bad-rule'],
      ['(~a', '+type'],
      ['(+nosuch)'],
      ['(on)'],
      ['(~a allkeys ~b)'],
    ]
    for (const rules of bad) await same(['ACL', 'SETUSER', 'bad', ...rules], ['ACL', 'GETUSER', 'bad'])
    await same(
      ['ACL', 'SETUSER', 'a b'],
      ['ACL', 'SETUSER', 'a\x00b'],
      ['ACL', 'DELUSER', 'default'],
      ['ACL', 'DELUSER', 'nobody', 'default'],
    )
  })

  it('each denial kind: the same NOPERM reply, DRYRUN text and ACL LOG entry', async () => {
    await same(
      ['ACL', 'LOG', 'RESET'],
      [
        'ACL',
        'SETUSER',
        'limited',
        'on',
        '>pw',
        '~bf:*',
        '%R~ro:*',
        '%W~wo:*',
        '&chan',
        '&news.*',
        '+@read',
        '+@connection',
        '+publish',
        '+subscribe',
        '+psubscribe',
        '+del',
        '-exists',
        '+config|get',
        '+select|0',
      ],
    )
    const commands = [
      ['AUTH', 'limited', 'pw'],
      ['EXISTS', 'bf:1'],
      ['CONFIG', 'SET', 'maxclients', '10'],
      ['CONFIG', 'GET', 'maxclients'],
      ['TYPE', 'zz'],
      ['TYPE', 'bf:1'],
      ['TYPE', 'ro:1'],
      ['TYPE', 'wo:1'],
      ['DEL', 'ro:1'],
      ['DEL', 'wo:1'],
      ['DEL', 'bf:1', 'zz'],
      ['PUBLISH', 'chan', 'm'],
      ['PUBLISH', 'other', 'm'],
      ['PUBLISH', 'news.today', 'm'],
      ['SELECT', '0'],
      ['FLUSHALL'],
      ['ACL', 'WHOAMI'],
    ]
    await same(...commands)
    // A pattern subscription must name one of the user's patterns as it is; a channel must match one.
    await same(['AUTH', 'limited', 'pw'], ['PSUBSCRIBE', 'news.x*'])
    await same(['AUTH', 'limited', 'pw'], ['SUBSCRIBE', 'chan', 'other'])
    await same(['AUTH', 'limited', 'pw'], ['PSUBSCRIBE', 'news.*'])
    for (const command of commands.slice(1)) await same(['ACL', 'DRYRUN', 'limited', ...command])
    await same(
      ['ACL', 'DRYRUN', 'limited', 'SELECT', '1'],
      ['ACL', 'DRYRUN', 'nobody', 'PING'],
      ['ACL', 'DRYRUN', 'limited', 'NOSUCH'],
      ['ACL', 'DRYRUN', 'limited', 'TYPE'],
    )
    const [bfsLog, redisLog] = await both([['ACL', 'LOG', '100']])
    // Only the age and the client's line differ (ids, addresses, buffer sizes).
    const strip = (reply: string): string =>
      reply
        .replace(/age-seconds\r\n\$\d+\r\n[^\r]*\r\n/g, 'age-seconds\r\n')
        .replace(/\$\d+\r\nid=[^\r]*\r\n/g, '$info\r\n')
    expect(strip(bfsLog![0]!)).toBe(strip(redisLog![0]!))
    for (const reason of ['command', 'key', 'channel'])
      expect(bfsLog![0]).toContain(`reason\r\n$${reason.length}\r\n${reason}\r\n`)
  })

  it('selectors: a command any selector allows runs; the denial reported is the one of highest reason', async () => {
    await same([
      'ACL',
      'SETUSER',
      'sel',
      'on',
      'nopass',
      '~root:*',
      '+type',
      '(~sel:* +exists +type &news)',
      '(%W~w:* +del)',
    ])
    const commands = [
      ['TYPE', 'root:1'],
      ['TYPE', 'sel:1'],
      ['EXISTS', 'sel:1'],
      ['EXISTS', 'root:1'],
      ['DEL', 'w:1'],
      ['DEL', 'root:1'],
      ['DEL', 'w:1', 'sel:1'],
      ['PUBLISH', 'news', 'm'],
      ['TYPE', 'other'],
    ]
    await same(['AUTH', 'sel', 'x'], ...commands)
    for (const command of commands) await same(['ACL', 'DRYRUN', 'sel', ...command])
  })

  it("keys as COMMAND GETKEYS finds them (MEMORY USAGE, MIGRATE ... KEYS), each checked for its own key spec's access (RENAME)", async () => {
    await same(
      ['ACL', 'LOG', 'RESET'],
      ['ACL', 'SETUSER', 'keyed', 'on', 'nopass', '~allowed:*', '+@all'],
      ['ACL', 'SETUSER', 'split', 'on', 'nopass', '%RW~src:*', '%W~dst:*', '%R~ro:*', '+@all'],
    )
    const migrate = ['MIGRATE', '127.0.0.1', '1']
    const keyed = [
      ['MEMORY', 'USAGE', 'secret'],
      ['MEMORY', 'USAGE', 'allowed:1'],
      ['MEMORY', 'USAGE', 'secret', 'SAMPLES', '5'],
      [...migrate, '', '0', '100', 'KEYS', 'allowed:1'],
      [...migrate, '', '0', '100', 'KEYS', 'allowed:1', 'secret'],
      [...migrate, '', '0', '100', 'AUTH', 'pw', 'KEYS', 'secret'],
      [...migrate, 'secret', '0', '100'],
      [...migrate, 'allowed:1', '0', '100'],
    ]
    // RENAME's source is RW access delete (read and write), its destination OW update (write only).
    const split = [
      ['RENAME', 'src:1', 'dst:1'],
      ['RENAMENX', 'src:1', 'dst:1'],
      ['RENAME', 'dst:1', 'src:1'],
      ['MEMORY', 'USAGE', 'dst:1'],
      ['TTL', 'dst:1'],
      ['DEL', 'ro:1'],
      ['EXISTS', 'dst:1'],
    ]
    await same(['AUTH', 'keyed', 'x'], ...keyed)
    await same(['AUTH', 'split', 'x'], ...split)
    for (const command of keyed) await same(['ACL', 'DRYRUN', 'keyed', ...command])
    for (const command of split) await same(['ACL', 'DRYRUN', 'split', ...command])
    const [bfsLog, redisLog] = await both([['ACL', 'LOG']])
    const objects = (reply: string): string[] =>
      [...reply.matchAll(/\$6\r\nobject\r\n\$\d+\r\n([^\r]*)/g)].map((m) => m[1]!)
    expect(objects(bfsLog![0]!)).toEqual(objects(redisLog![0]!))
    expect(objects(bfsLog![0]!)).toContain('secret')
    // BF.MERGE (bfs's own) by its key specs: the destination OW update, the sources RO access.
    const bfs = await servers.connect(servers.bfs.port)
    const dryrun = async (...line: string[]): Promise<string> =>
      (await askRaw(bfs, 'ACL', 'DRYRUN', 'split', ...line)).toString('latin1')
    expect(await dryrun('BF.MERGE', 'dst:1', 'src:1', 'ro:1')).toBe('+OK\r\n')
    expect(await dryrun('BF.MERGE', 'dst:1', 'ro:1', 'dst:2')).toBe(
      "$54\r\nThis user has no permissions to access the 'dst:2' key\r\n",
    )
    expect(await dryrun('BF.MERGE', 'ro:1', 'src:1')).toBe(
      "$53\r\nThis user has no permissions to access the 'ro:1' key\r\n",
    )
  })

  it('every command: a key argument is refused exactly where COMMAND GETKEYS finds one, as redis does for those it has', async () => {
    await same(['ACL', 'SETUSER', 'audit', 'on', 'nopass', '~allowed:*', 'allchannels', '+@all'])
    const bfs = await servers.connect(servers.bfs.port)
    const redis = await servers.connect(servers.redis.port)
    const text = async (client: RawClient, ...args: string[]): Promise<string> =>
      (await askRaw(client, ...args)).toString('latin1')
    const names = (reply: string): string[] => [...reply.matchAll(/\$\d+\r\n([^\r]*)\r\n/g)].map((m) => m[1]!)
    const lines: { name: string; line: string[] }[] = []
    const rows: string[] = []
    for (const name of names(await text(bfs, 'COMMAND', 'LIST'))) {
      const info = await text(bfs, 'COMMAND', 'INFO', name)
      // A container's subcommands appear in its row as `name|sub`.
      const subs = names(info)
        .filter((word) => word.startsWith(`${name}|`))
        .map((word) => word.split('|'))
      for (const head of subs.length > 0 ? subs : [[name]]) {
        rows.push(head.join('|'))
        // The shortest line (up to 5 more arguments) the row accepts, every argument a key name.
        for (let extra = 0; extra <= 5; extra++) {
          const line = [...head, ...Array.from({ length: extra }, (_, i) => `allowed:${i}`)]
          if ((await text(bfs, 'ACL', 'DRYRUN', 'audit', ...line)) !== '+OK\r\n') continue
          lines.push({ name: head.join('|'), line })
          break
        }
      }
    }
    const checked: string[] = []
    for (const { name, line } of lines) {
      const secret = line.map((word) => word.replace(/^allowed:/, 'secret:'))
      const keys = names(await text(bfs, 'COMMAND', 'GETKEYS', ...secret)).filter((word) => word.startsWith('secret:'))
      const denial = `This user has no permissions to access the '${keys[0]}' key`
      const expected = keys.length === 0 ? '+OK\r\n' : `$${denial.length}\r\n${denial}\r\n`
      expect(await text(bfs, 'ACL', 'DRYRUN', 'audit', ...secret), secret.join(' ')).toBe(expected)
      const redisHas = (await text(redis, 'COMMAND', 'INFO', name)) !== '*1\r\n$-1\r\n'
      if (redisHas)
        expect(expected, `redis: ${secret.join(' ')}`).toBe(await text(redis, 'ACL', 'DRYRUN', 'audit', ...secret))
      if (keys.length > 0) checked.push(name)
    }
    // Every row of the table was tried.
    expect(rows.filter((row) => !lines.some((line) => line.name === row))).toEqual([])
    expect(checked).toEqual(
      expect.arrayContaining([
        'memory|usage',
        'migrate',
        'rename',
        'bf.merge',
        'bf.add',
        'apbf.add',
        'bfs.restore-part',
      ]),
    )
  })

  it('a denied command inside MULTI fails the EXEC; AUTH failures are logged with their user', async () => {
    await same(['ACL', 'LOG', 'RESET'], ['ACL', 'SETUSER', 'txn', 'on', 'nopass', '~*', '+@transaction', '+type'])
    await same(['AUTH', 'txn', 'any'], ['MULTI'], ['TYPE', 'k'], ['DEL', 'k'], ['EXEC'])
    await same(['AUTH', 'nobody', 'x'], ['AUTH', 'txn', 'y'], ['ACL', 'SETUSER', 'txn', 'off'], ['AUTH', 'txn', 'y'])
    const [bfsLog, redisLog] = await both([['ACL', 'LOG']])
    const fields = (reply: string): string[] =>
      [...reply.matchAll(/\$(?:6|7|8)\r\n(reason|context|object|username)\r\n\$\d+\r\n([^\r]*)/g)].map(
        (m) => `${m[1]}=${m[2]}`,
      )
    expect(fields(bfsLog![0]!)).toEqual(fields(redisLog![0]!))
    expect(fields(bfsLog![0]!)).toContain('context=multi')
  })

  it('ACL CAT: the categories, and for each one the same commands among those both servers have', async () => {
    const [[bfsCats], [redisCats]] = await both([['ACL', 'CAT']])
    const names = (reply: string): string[] => [...reply.matchAll(/\$\d+\r\n([^\r]*)\r\n/g)].map((m) => m[1]!)
    expect(names(bfsCats!)).toEqual([...names(redisCats!), 'bloom', 'cuckoo'])
    // Every command and subcommand each server has: each is in @fast or @slow.
    const all = async (port: number): Promise<Set<string>> => {
      const client = await servers.connect(port)
      const found = new Set<string>()
      for (const category of ['fast', 'slow'])
        for (const name of names((await askRaw(client, 'ACL', 'CAT', category)).toString('latin1'))) found.add(name)
      return found
    }
    const [bfsAll, redisAll] = [await all(servers.bfs.port), await all(servers.redis.port)]
    for (const category of names(redisCats!)) {
      const [[bfs], [redis]] = await both([['ACL', 'CAT', category]])
      expect(
        names(bfs!)
          .filter((name) => redisAll.has(name))
          .sort(),
        category,
      ).toEqual(
        names(redis!)
          .filter((name) => bfsAll.has(name))
          .sort(),
      )
    }
  })

  it('ACL subcommands: HELP, GENPASS, LOG, CAT, WHOAMI, USERS and the errors', async () => {
    await same(
      ['ACL', 'HELP'],
      ['ACL', 'NOSUCH'],
      ['ACL'],
      ['ACL', 'GENPASS', '0'],
      ['ACL', 'GENPASS', '4097'],
      ['ACL', 'GENPASS', 'x'],
      ['ACL', 'LOG', 'x'],
      ['ACL', 'LOG', '-1'],
      ['ACL', 'CAT', 'nosuch'],
      ['ACL', 'CAT', 'a', 'b'],
      ['ACL', 'WHOAMI'],
      ['ACL', 'LOAD'],
      ['ACL', 'SAVE'],
      ['ACL', 'GETUSER', 'nobody'],
      ['ACL', 'GETUSER'],
      ['ACL', 'DELUSER', 'nobody'],
      ['AUTH', 'x'],
      ['AUTH', 'default', 'x'],
      ['AUTH', 'a', 'b', 'c'],
    )
    const [[bfs], [redis]] = await both([['ACL', 'GENPASS', '10']])
    expect(bfs).toMatch(/^\$3\r\n[0-9a-f]{3}\r\n$/)
    expect(redis).toMatch(/^\$3\r\n[0-9a-f]{3}\r\n$/)
  })
})
