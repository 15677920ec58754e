/**
 * Server, keyspace and connection commands over a raw socket, byte for byte where redis 7.0's
 * reply is fixed: HELLO, AUTH, SELECT, CLIENT, COMMAND, INFO, CONFIG, DBSIZE/KEYS/SCAN, TYPE,
 * RENAME, DEL, FLUSHALL, MEMORY USAGE, MODULE LIST, TIME, QUIT, ECHO, RESET.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { RawClient, ask, encodeCommand } from '../helpers/resp.js'
import { BUILTIN_COMMANDS } from '../../src/commands/builtin.js'
import { CONFIG_NAMES } from '../../src/runtime/config.js'
import { INERT_CONFIG } from '../../src/runtime/config-inert.js'

/** One connection that sends a command and takes exactly one reply. */
class Conn {
  private constructor(readonly raw: RawClient) {}

  static async open(port: number): Promise<Conn> {
    return new Conn(await RawClient.connect(port))
  }

  /** The whole reply to one command, as latin1 text (bytes preserved). */
  async ask(...args: (string | Buffer)[]): Promise<string> {
    return ask(this.raw, ...args)
  }

  /** An integer reply's value. */
  async integer(...args: string[]): Promise<number> {
    const reply = await this.ask(...args)
    const match = /^:(-?\d+)\r\n$/.exec(reply)
    if (!match) throw new Error(`not an integer reply: ${JSON.stringify(reply)}`)
    return Number(match[1])
  }

  /** A flat array (or RESP3 set/map) of bulk strings, decoded. */
  async strings(...args: string[]): Promise<string[]> {
    return decodeFlat(await this.ask(...args))
  }

  close(): void {
    this.raw.close()
  }
}

/** The bulk/simple/integer elements of a reply, in order, ignoring the aggregate headers. */
function decodeFlat(reply: string): string[] {
  const out: string[] = []
  let pos = 0
  while (pos < reply.length) {
    const lineEnd = reply.indexOf('\r\n', pos)
    const type = reply[pos]
    const header = reply.slice(pos + 1, lineEnd)
    pos = lineEnd + 2
    if (type === '$' || type === '=') {
      const length = Number(header)
      if (length >= 0) {
        out.push(reply.slice(pos, pos + length))
        pos += length + 2
      }
    } else if (type === '+' || type === ':' || type === '-') {
      out.push(header)
    }
  }
  return out
}

/** A bulk string reply's text. */
function bulk(text: string): string {
  return `$${Buffer.byteLength(text, 'latin1')}\r\n${text}\r\n`
}

let running: RunningServer
let conn: Conn

beforeAll(async () => {
  running = await startServer()
})

afterAll(async () => {
  await running?.stop()
})

beforeEach(async () => {
  conn = await Conn.open(running.port)
})

afterEach(() => {
  conn?.close()
})

describe('HELLO', () => {
  const helloShape = (proto: 2 | 3, id: number): RegExp => {
    const open = (n: number) => (proto === 3 ? `%${n}` : `\\*${n * 2}`)
    return new RegExp(
      '^' +
        open(7) +
        '\\r\\n' +
        '\\$6\\r\\nserver\\r\\n\\$5\\r\\nredis\\r\\n' +
        '\\$7\\r\\nversion\\r\\n\\$\\d+\\r\\n7\\.0\\.\\d+\\r\\n' +
        `\\$5\\r\\nproto\\r\\n:${proto}\\r\\n` +
        `\\$2\\r\\nid\\r\\n:${id}\\r\\n` +
        '\\$4\\r\\nmode\\r\\n\\$10\\r\\nstandalone\\r\\n' +
        '\\$4\\r\\nrole\\r\\n\\$6\\r\\nmaster\\r\\n' +
        '\\$7\\r\\nmodules\\r\\n\\*1\\r\\n' +
        open(4) +
        '\\r\\n\\$4\\r\\nname\\r\\n\\$2\\r\\nbf\\r\\n\\$3\\r\\nver\\r\\n:20423\\r\\n' +
        '\\$4\\r\\npath\\r\\n\\$\\d+\\r\\n[^\\r]*\\r\\n\\$4\\r\\nargs\\r\\n\\*0\\r\\n$',
    )
  }

  it('HELLO 3 answers a map and switches the connection to RESP3', async () => {
    const id = await conn.integer('CLIENT', 'ID')
    expect(await conn.ask('HELLO', '3')).toMatch(helloShape(3, id))
    // RESP3 from now on: a null is _, CLIENT INFO a verbatim string.
    expect(await conn.ask('BF.RESERVE', 'hello-ns', '0.01', '2', 'NONSCALING')).toBe('+OK\r\n')
    expect(await conn.ask('BF.INFO', 'hello-ns')).toBe(
      '*10\r\n+Capacity\r\n:2\r\n+Size\r\n:104\r\n+Number of filters\r\n:1\r\n+Number of items inserted\r\n:0\r\n+Expansion rate\r\n_\r\n',
    )
    expect(await conn.ask('CLIENT', 'GETNAME')).toBe('_\r\n')
    expect(await conn.ask('CLIENT', 'INFO')).toMatch(/^=\d+\r\ntxt:id=\d+ .* resp=3 /)
    // HELLO without a version reports the current protocol and keeps it.
    expect(await conn.ask('HELLO')).toMatch(helloShape(3, id))
  })

  it('HELLO 2 answers the same fields as a flat array', async () => {
    const id = await conn.integer('CLIENT', 'ID')
    expect(await conn.ask('HELLO', '2')).toMatch(helloShape(2, id))
    expect(await conn.ask('HELLO')).toMatch(helloShape(2, id))
    expect(await conn.ask('HELLO', '3')).toMatch(helloShape(3, id))
    expect(await conn.ask('HELLO', '2')).toMatch(helloShape(2, id))
    expect(await conn.ask('CLIENT', 'GETNAME')).toBe('$-1\r\n')
  })

  it('unsupported and malformed versions', async () => {
    expect(await conn.ask('HELLO', '4')).toBe('-NOPROTO unsupported protocol version\r\n')
    expect(await conn.ask('HELLO', '1')).toBe('-NOPROTO unsupported protocol version\r\n')
    expect(await conn.ask('HELLO', 'abc')).toBe('-ERR Protocol version is not an integer or out of range\r\n')
    expect(await conn.ask('HELLO', '3', 'BOGUS')).toBe("-ERR Syntax error in HELLO option 'BOGUS'\r\n")
    // A refused HELLO leaves the protocol alone.
    expect(await conn.ask('CLIENT', 'GETNAME')).toBe('$-1\r\n')
  })

  it('HELLO 3 SETNAME names the connection; AUTH default with no password set is accepted', async () => {
    expect(await conn.ask('HELLO', '3', 'AUTH', 'default', 'anything', 'SETNAME', 'hello-client')).toMatch(/^%7\r\n/)
    expect(await conn.ask('CLIENT', 'GETNAME')).toBe(bulk('hello-client'))
  })

  it('RESET goes back to RESP2 and drops the name', async () => {
    await conn.ask('HELLO', '3', 'SETNAME', 'before-reset')
    expect(await conn.ask('RESET')).toBe('+RESET\r\n')
    expect(await conn.ask('CLIENT', 'GETNAME')).toBe('$-1\r\n')
    expect(await conn.ask('CLIENT', 'INFO')).toMatch(/ resp=2 /)
  })
})

describe('AUTH', () => {
  it('without a configured password: the exact redis 7.0 error', async () => {
    expect(await conn.ask('AUTH', 'secret')).toBe(
      '-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n',
    )
    expect(await conn.ask('AUTH', 'default', 'whatever')).toBe('+OK\r\n')
    expect(await conn.ask('AUTH', 'someone', 'whatever')).toBe(
      '-WRONGPASS invalid username-password pair or user is disabled.\r\n',
    )
    expect(await conn.ask('AUTH', 'a', 'b', 'c')).toBe('-ERR syntax error\r\n')
    expect(await conn.ask('AUTH')).toBe("-ERR wrong number of arguments for 'auth' command\r\n")
  })

  describe('with requirepass', () => {
    let guarded: RunningServer

    beforeAll(async () => {
      guarded = await startServer({ requirepass: 'sekret' })
    })

    afterAll(async () => {
      await guarded?.stop()
    })

    it('commands need AUTH first; a wrong password is WRONGPASS', async () => {
      const client = await Conn.open(guarded.port)
      try {
        expect(await client.ask('PING')).toBe('-NOAUTH Authentication required.\r\n')
        expect(await client.ask('BF.ADD', 'f', 'x')).toBe('-NOAUTH Authentication required.\r\n')
        expect(await client.ask('AUTH', 'wrong')).toBe(
          '-WRONGPASS invalid username-password pair or user is disabled.\r\n',
        )
        expect(await client.ask('PING')).toBe('-NOAUTH Authentication required.\r\n')
        expect(await client.ask('AUTH', 'sekret')).toBe('+OK\r\n')
        expect(await client.ask('PING')).toBe('+PONG\r\n')
        expect(await client.ask('BF.ADD', 'f', 'x')).toBe(':1\r\n')
      } finally {
        client.close()
      }
    })

    it('HELLO 3 AUTH default <password> authenticates and switches protocol at once', async () => {
      const client = await Conn.open(guarded.port)
      try {
        expect(await client.ask('HELLO', '3')).toMatch(
          /^-NOAUTH HELLO must be called with the client already authenticated/,
        )
        expect(await client.ask('HELLO', '3', 'AUTH', 'default', 'nope')).toBe(
          '-WRONGPASS invalid username-password pair or user is disabled.\r\n',
        )
        expect(await client.ask('HELLO', '3', 'AUTH', 'default', 'sekret')).toMatch(/^%7\r\n/)
        expect(await client.ask('BF.EXISTS', 'f', 'x')).toBe(':1\r\n')
        expect(await client.ask('AUTH', 'default', 'sekret')).toBe('+OK\r\n')
      } finally {
        client.close()
      }
    })
  })
})

describe('CLIENT', () => {
  it('SETNAME / GETNAME', async () => {
    expect(await conn.ask('CLIENT', 'GETNAME')).toBe('$-1\r\n')
    expect(await conn.ask('CLIENT', 'SETNAME', 'worker-1')).toBe('+OK\r\n')
    expect(await conn.ask('CLIENT', 'GETNAME')).toBe(bulk('worker-1'))
    expect(await conn.ask('CLIENT', 'SETNAME', 'has space')).toBe(
      '-ERR Client names cannot contain spaces, newlines or special characters.\r\n',
    )
    expect(await conn.ask('CLIENT', 'GETNAME')).toBe(bulk('worker-1'))
    // An empty name clears it.
    expect(await conn.ask('CLIENT', 'SETNAME', '')).toBe('+OK\r\n')
    expect(await conn.ask('CLIENT', 'GETNAME')).toBe('$-1\r\n')
    expect(await conn.ask('CLIENT', 'SETNAME')).toBe("-ERR wrong number of arguments for 'client|setname' command\r\n")
  })

  it('ID is distinct per connection and increasing', async () => {
    const first = await conn.integer('CLIENT', 'ID')
    const other = await Conn.open(running.port)
    try {
      const second = await other.integer('CLIENT', 'ID')
      expect(second).toBeGreaterThan(first)
      expect(await conn.integer('CLIENT', 'ID')).toBe(first)
    } finally {
      other.close()
    }
  })

  it('LIST shows every connection with its id, name and address; INFO shows this one', async () => {
    const other = await Conn.open(running.port)
    try {
      await other.ask('CLIENT', 'SETNAME', 'listed')
      const otherId = await other.integer('CLIENT', 'ID')
      const myId = await conn.integer('CLIENT', 'ID')
      const [list] = await conn.strings('CLIENT', 'LIST')
      const lines = list!.split('\n').filter((line) => line !== '')
      const ids = lines.map((line) => Number(/^id=(\d+) /.exec(line)?.[1]))
      expect(ids).toContain(otherId)
      expect(ids).toContain(myId)
      const otherLine = lines.find((line) => line.startsWith(`id=${otherId} `))!
      expect(otherLine).toContain(' name=listed ')
      expect(otherLine).toMatch(/ addr=127\.0\.0\.1:\d+ /)
      expect(otherLine).toContain(' cmd=client')
      const [mine] = await conn.strings('CLIENT', 'INFO')
      expect(mine).toMatch(new RegExp(`^id=${myId} addr=127\\.0\\.0\\.1:\\d+ `))
      expect(mine!.endsWith('\n')).toBe(true)
      expect(mine).toContain(' resp=2')
    } finally {
      other.close()
    }
  })

  it('KILL ID closes that connection; KILL addr too; unknown ones are reported', async () => {
    const victim = await Conn.open(running.port)
    const victimId = await victim.integer('CLIENT', 'ID')
    expect(await conn.ask('CLIENT', 'KILL', 'ID', String(victimId))).toBe(':1\r\n')
    await victim.raw.waitClosed()
    expect(victim.raw.closed).toBe(true)
    expect(await conn.ask('CLIENT', 'KILL', 'ID', String(victimId))).toBe(':0\r\n')

    const second = await Conn.open(running.port)
    const [info] = await second.strings('CLIENT', 'INFO')
    const addr = /addr=(\S+)/.exec(info!)![1]!
    expect(await conn.ask('CLIENT', 'KILL', addr)).toBe('+OK\r\n')
    await second.raw.waitClosed()
    expect(await conn.ask('CLIENT', 'KILL', '127.0.0.1:1')).toBe('-ERR No such client\r\n')
    // The killer is still connected.
    expect(await conn.ask('PING')).toBe('+PONG\r\n')
  })

  it('KILL with no filter is a wrong-arity error, not "kill every other client" (redis 7.0 arity -3)', async () => {
    const bystander = await Conn.open(running.port)
    expect(await conn.ask('CLIENT', 'KILL')).toBe("-ERR wrong number of arguments for 'client|kill' command\r\n")
    expect(await bystander.ask('PING')).toBe('+PONG\r\n')
    bystander.close()
  })

  it('LIST and KILL filters by TYPE, ID and USER as redis 7.0.15 answers them (every bfs client is normal)', async () => {
    const myId = await conn.integer('CLIENT', 'ID')
    const [mine] = await conn.strings('CLIENT', 'LIST', 'ID', String(myId), '0', '-5')
    expect(mine).toMatch(new RegExp(`^id=${myId} [^\n]*\n$`))
    expect((await conn.strings('CLIENT', 'LIST', 'TYPE', 'normal'))[0]).toContain(`id=${myId} `)
    expect(await conn.ask('CLIENT', 'LIST', 'TYPE', 'master')).toBe('$0\r\n\r\n')
    expect(await conn.ask('CLIENT', 'LIST', 'TYPE', 'bogus')).toBe("-ERR Unknown client type 'bogus'\r\n")
    expect(await conn.ask('CLIENT', 'LIST', 'ID', 'abc')).toBe('-ERR Invalid client ID\r\n')
    for (const args of [['foo'], ['ID'], ['TYPE'], ['TYPE', 'normal', 'x']]) {
      expect(await conn.ask('CLIENT', 'LIST', ...args)).toBe('-ERR syntax error\r\n')
    }
    expect(await conn.ask('CLIENT', 'KILL', 'TYPE', 'bogus')).toBe("-ERR Unknown client type 'bogus'\r\n")
    expect(await conn.ask('CLIENT', 'KILL', 'USER', 'nobody')).toBe("-ERR No such user 'nobody'\r\n")
    expect(await conn.ask('CLIENT', 'KILL', 'TYPE', 'pubsub', 'SKIPME', 'no')).toBe(':0\r\n')
    const victim = await Conn.open(running.port)
    const victimId = await victim.integer('CLIENT', 'ID')
    expect(await conn.ask('CLIENT', 'KILL', 'USER', 'default', 'TYPE', 'normal', 'ID', String(victimId))).toBe(':1\r\n')
    await victim.raw.waitClosed()
  })

  it('SETINFO and unknown subcommands', async () => {
    expect(await conn.ask('CLIENT', 'SETINFO', 'LIB-NAME', 'mylib')).toBe('+OK\r\n')
    expect(await conn.ask('CLIENT', 'SETINFO', 'LIB-VER', '1.2.3')).toBe('+OK\r\n')
    const [info] = await conn.strings('CLIENT', 'INFO')
    expect(info).toContain(' lib-name=mylib ')
    expect(info).toContain(' lib-ver=1.2.3')
    expect(await conn.ask('CLIENT', 'BOGUS')).toBe("-ERR unknown subcommand 'BOGUS'. Try CLIENT HELP.\r\n")
  })
})

describe('COMMAND', () => {
  it('COUNT equals the size of the command table', async () => {
    const count = await conn.integer('COMMAND', 'COUNT')
    expect(count).toBe(running.server.commands.size)
    expect(count).toBe(BUILTIN_COMMANDS.length)
    expect(await conn.ask('COMMAND')).toMatch(new RegExp(`^\\*${count}\\r\\n`))
    const names = await conn.strings('COMMAND', 'LIST')
    expect(names).toHaveLength(count)
    expect(new Set(names)).toEqual(new Set(BUILTIN_COMMANDS.map((spec) => spec.name.toLowerCase())))
  })

  it('INFO bf.add: name, arity, flags, key positions and key spec, as RedisBloom 2.4.23 reports them (arity -1)', async () => {
    const reply = await conn.ask('COMMAND', 'INFO', 'bf.add')
    // The key spec redis 7.0 derives from a module command's key positions (RW access update).
    const keySpec =
      '*6\r\n$5\r\nflags\r\n*3\r\n+RW\r\n+access\r\n+update\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n'
    expect(reply).toBe(
      `*1\r\n*10\r\n$6\r\nbf.add\r\n:-1\r\n*3\r\n+write\r\n+denyoom\r\n+module\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@write\r\n+@slow\r\n+@bloom\r\n*0\r\n*1\r\n${keySpec}*0\r\n`,
    )
    // Flags in redis's order: RedisBloom registers "readonly fast", redis lists module before fast.
    expect(await conn.ask('COMMAND', 'INFO', 'bf.exists')).toContain('*3\r\n+readonly\r\n+module\r\n+fast\r\n')
    const flat = decodeFlat(reply)
    expect(flat[0]).toBe('bf.add')
    expect(flat[1]).toBe('-1')
    expect(flat).toContain('write')
    expect(flat).toContain('denyoom')
    expect(flat).not.toContain('readonly')
    // The three key positions follow the flags.
    const afterFlags = reply.slice(reply.indexOf('+denyoom\r\n'))
    expect(afterFlags).toMatch(/:1\r\n:1\r\n:1\r\n/)
    expect(await conn.ask('COMMAND', 'INFO', 'BF.EXISTS')).toMatch(/^\*1\r\n\*10\r\n\$9\r\nbf\.exists\r\n:-1\r\n/)
    // Every BF.* command reports -1 and still checks its own count.
    for (const spec of BUILTIN_COMMANDS.filter((row) => row.group === 'bf')) {
      expect(decodeFlat(await conn.ask('COMMAND', 'INFO', spec.name))[1]).toBe('-1')
    }
    expect(await conn.ask('BF.ADD', 'k')).toBe("-ERR wrong number of arguments for 'bf.add' command\r\n")
    expect(await conn.ask('BF.CARD', 'k', 'x')).toBe("-ERR wrong number of arguments for 'bf.card' command\r\n")
    // redis 7.0.15 (addReplyCommandInfo → addReplyNull): a null bulk in RESP2, _ in RESP3.
    expect(await conn.ask('COMMAND', 'INFO', 'no-such-command')).toBe('*1\r\n$-1\r\n')
    expect(await conn.ask('COMMAND', 'INFO', 'ping', 'nope')).toMatch(
      /^\*2\r\n\*10\r\n\$4\r\nping\r\n:-1\r\n[\s\S]*\$-1\r\n$/,
    )
  })

  it('DOCS gives a summary, since and group per command', async () => {
    const reply = await conn.ask('COMMAND', 'DOCS', 'bf.add')
    expect(reply.startsWith('*2\r\n$6\r\nbf.add\r\n')).toBe(true)
    const flat = decodeFlat(reply)
    expect(flat).toContain('summary')
    expect(flat).toContain('since')
    expect(flat).toContain('group')
    expect(flat[flat.indexOf('summary') + 1]).toBe(BUILTIN_COMMANDS.find((spec) => spec.name === 'BF.ADD')!.summary)
    await conn.ask('HELLO', '3')
    // summary, since, group, complexity, arguments (test/commands/admin/command-docs.test.ts compares with redis)
    expect(await conn.ask('COMMAND', 'DOCS', 'ping')).toMatch(/^%1\r\n\$4\r\nping\r\n%5\r\n/)
  })

  it('LIST FILTERBY MODULE bf lists the BF commands', async () => {
    const names = await conn.strings('COMMAND', 'LIST', 'FILTERBY', 'MODULE', 'bf')
    expect(names.sort()).toEqual(
      BUILTIN_COMMANDS.filter((spec) => spec.group === 'bf')
        .map((spec) => spec.name.toLowerCase())
        .sort(),
    )
    expect(names).toEqual(
      expect.arrayContaining([
        'bf.add',
        'bf.card',
        'bf.exists',
        'bf.info',
        'bf.insert',
        'bf.madd',
        'bf.mexists',
        'bf.reserve',
      ]),
    )
    // RedisBloom's Cuckoo filters (CF.*, the same module), bfs's own: BFS.HEALTH, and the sliding-window filters' APBF.*
    expect(
      names.every(
        (name) =>
          name.startsWith('bf.') || name.startsWith('cf.') || name.startsWith('bfs.') || name.startsWith('apbf.'),
      ),
    ).toBe(true)
    expect(names).toEqual(expect.arrayContaining(['cf.reserve', 'cf.add', 'cf.del', 'cf.scandump', 'cf.loadchunk']))
    expect(names).toEqual(
      expect.arrayContaining(['apbf.reserve', 'apbf.add', 'apbf.addat', 'apbf.exists', 'apbf.info']),
    )
    expect(await conn.strings('COMMAND', 'LIST', 'FILTERBY', 'PATTERN', 'bf.m*')).toEqual(
      expect.arrayContaining(['bf.madd', 'bf.mexists']),
    )
  })
})

describe('INFO', () => {
  it('has the server fields redis clients look for', async () => {
    const [text] = await conn.strings('INFO')
    expect(text).toMatch(/^# Server\r\n/)
    expect(text).toMatch(/\r\nredis_version:7\.0\.\d+\r\n/)
    expect(text).toMatch(/\r\nbfs_version:\d+\.\d+\.\d+[^\r]*\r\n/)
    expect(text).toContain('\r\nloading:0\r\n')
    expect(text).toContain('\r\nredis_mode:standalone\r\n')
    expect(text).toContain('\r\nrole:master\r\n')
    expect(text).toContain(`\r\ntcp_port:${running.port}\r\n`)
    expect(text).toMatch(/\r\nmodule:name=bf,ver=20423,/)
    // Sentinel reads run_id (a line of at least 47 bytes) to notice a restart.
    expect(text).toMatch(/\r\nprocess_id:\d+\r\nrun_id:[0-9a-f]{40}\r\n/)
  })

  it('sections by name; the keyspace counts filters', async () => {
    await conn.ask('BF.ADD', 'info-key', 'x')
    const [keyspace] = await conn.strings('INFO', 'keyspace')
    expect(keyspace).toMatch(/^# Keyspace\r\ndb0:keys=\d+,expires=0,avg_ttl=0\r\n$/)
    const [persistence] = await conn.strings('INFO', 'PERSISTENCE')
    expect(persistence).toMatch(/^# Persistence\r\n/)
    expect(persistence).not.toContain('redis_version')
    const [stats] = await conn.strings('INFO', 'commandstats')
    expect(stats).toMatch(/\r\ncmdstat_bf\.add:calls=\d+,usec=\d+/)
  })

  it('is a verbatim string in RESP3', async () => {
    await conn.ask('HELLO', '3')
    expect(await conn.ask('INFO', 'server')).toMatch(/^=\d+\r\ntxt:# Server\r\n/)
  })
})

describe('CONFIG', () => {
  it('GET save, appendonly, a glob, several patterns', async () => {
    expect(await conn.ask('CONFIG', 'GET', 'save')).toBe('*2\r\n$4\r\nsave\r\n$0\r\n\r\n')
    expect(await conn.ask('CONFIG', 'GET', 'appendonly')).toBe('*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n')
    // The configured value (0 here: any free port), as redis reports its config, not the bound port.
    expect(await conn.ask('CONFIG', 'GET', 'port')).toMatch(/^\*2\r\n\$4\r\nport\r\n\$\d+\r\n\d+\r\n$/)
    const defaults = await conn.strings('CONFIG', 'GET', 'default-*')
    expect(defaults).toEqual(['default-error-rate', '0.01', 'default-capacity', '100', 'default-expansion', '2'])
    const all = await conn.strings('CONFIG', 'GET', '*')
    // Every name, the redis 7.0 aliases too (slave-read-only beside replica-read-only...).
    // Then the redis 7.0 keys bfs has no behaviour for, with redis's defaults (runtime/config-inert.ts).
    expect(all.filter((_, i) => i % 2 === 0)).toEqual([
      ...CONFIG_NAMES.map((entry) => entry.name),
      ...INERT_CONFIG.keys(),
    ])
    // A name without glob characters is answered under the name as given (redis 7.0 configGetCommand).
    const two = await conn.strings('CONFIG', 'GET', 'maxclients', 'APPENDFSYNC', 'appendfsync')
    expect(two).toEqual(['maxclients', '10000', 'APPENDFSYNC', 'everysec'])
    expect(await conn.ask('CONFIG', 'GET', 'nothing-matches')).toBe('*0\r\n')
    await conn.ask('HELLO', '3')
    expect(await conn.ask('CONFIG', 'GET', 'appendonly')).toBe('%1\r\n$10\r\nappendonly\r\n$2\r\nno\r\n')
  })

  it('SET default-capacity: the next auto-created filter uses it', async () => {
    try {
      expect(await conn.ask('CONFIG', 'SET', 'default-capacity', '555')).toBe('+OK\r\n')
      expect(await conn.strings('CONFIG', 'GET', 'default-capacity')).toEqual(['default-capacity', '555'])
      expect(await conn.ask('BF.ADD', 'cfg-auto', 'x')).toBe(':1\r\n')
      expect(await conn.ask('BF.INFO', 'cfg-auto', 'CAPACITY')).toBe('*1\r\n:555\r\n')
      expect(await conn.ask('BF.INSERT', 'cfg-auto2', 'ITEMS', 'x')).toBe('*1\r\n:1\r\n')
      expect(await conn.ask('BF.INFO', 'cfg-auto2', 'CAPACITY')).toBe('*1\r\n:555\r\n')
      expect(await conn.ask('CONFIG', 'SET', 'default-error-rate', '0.001', 'default-expansion', '4')).toBe('+OK\r\n')
      expect(await conn.ask('BF.MADD', 'cfg-auto3', 'x')).toBe('*1\r\n:1\r\n')
      expect(await conn.ask('BF.INFO', 'cfg-auto3', 'EXPANSION')).toBe('*1\r\n:4\r\n')
    } finally {
      await conn.ask('CONFIG', 'SET', 'default-capacity', '100', 'default-error-rate', '0.01', 'default-expansion', '2')
    }
  })

  it('SET errors: unknown, immutable, bad value (all or nothing)', async () => {
    expect(await conn.ask('CONFIG', 'SET', 'bogus', '1')).toBe(
      "-ERR Unknown option or number of arguments for CONFIG SET - 'bogus'\r\n",
    )
    expect(await conn.ask('CONFIG', 'SET', 'port', '1')).toBe(
      "-ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config\r\n",
    )
    const bad = await conn.ask('CONFIG', 'SET', 'default-capacity', '7', 'default-error-rate', '2')
    expect(bad).toMatch(/^-ERR CONFIG SET failed \(possibly related to argument 'default-error-rate'\) - /)
    expect(await conn.strings('CONFIG', 'GET', 'default-capacity')).toEqual(['default-capacity', '100'])
    expect(await conn.ask('CONFIG', 'SET', 'maxclients')).toBe(
      "-ERR wrong number of arguments for 'config|set' command\r\n",
    )
    expect(await conn.ask('CONFIG', 'GET')).toBe("-ERR wrong number of arguments for 'config|get' command\r\n")
  })

  it("SET errors in redis 7.0.15's order and words (bytes from redis-server 7.0.15)", async () => {
    const failed = (name: string, why: string): string =>
      `-ERR CONFIG SET failed (possibly related to argument '${name}') - ${why}\r\n`
    const unknown = (name: string): string =>
      `-ERR Unknown option or number of arguments for CONFIG SET - '${name}'\r\n`
    // Names first: the first unknown one wins unless an immutable or repeated name came before it.
    expect(await conn.ask('CONFIG', 'SET', 'timeout', '0', 'timeout', '1')).toBe(
      failed('timeout', 'duplicate parameter'),
    )
    expect(await conn.ask('CONFIG', 'SET', 'TIMEOUT', '3', 'Timeout', '4')).toBe(
      failed('Timeout', 'duplicate parameter'),
    )
    expect(await conn.ask('CONFIG', 'SET', 'timeout', '1', 'timeout', '2', 'foo', '1')).toBe(
      failed('timeout', 'duplicate parameter'),
    )
    expect(await conn.ask('CONFIG', 'SET', 'timeout', 'abc', 'foo', '1')).toBe(unknown('foo'))
    expect(await conn.ask('CONFIG', 'SET', 'timeout', '1', '2', '3')).toBe(unknown('2'))
    expect(await conn.ask('CONFIG', 'SET', 'foo', '1', 'logfile', 'x')).toBe(unknown('foo'))
    expect(await conn.ask('CONFIG', 'SET', 'logfile', 'x', 'foo', '1')).toBe(
      failed('logfile', "can't set immutable config"),
    )
    expect(await conn.ask('CONFIG', 'SET', 'timeout', '1', 'LogFile', 'x', 'timeout', '2')).toBe(
      failed('LogFile', "can't set immutable config"),
    )
    expect(await conn.ask('CONFIG', 'SET', 'timeout', '1', 'maxclients')).toBe('-ERR syntax error\r\n')
    // Then values, in order, named as the table spells them; nothing is applied.
    expect(await conn.ask('CONFIG', 'SET', 'timeout', '7', 'maxmemory', 'abc')).toBe(
      failed('maxmemory', 'argument must be a memory value'),
    )
    expect(await conn.ask('CONFIG', 'SET', 'MAXMEMORY', '-5', 'timeout', 'xyz')).toBe(
      failed('maxmemory', 'argument must be a memory value'),
    )
    expect(await conn.strings('CONFIG', 'GET', 'timeout')).toEqual(['timeout', '0'])
    for (const value of ['1.5mb', '+5', '5 ', '0x10']) {
      expect(await conn.ask('CONFIG', 'SET', 'maxmemory', value)).toBe(
        failed('maxmemory', 'argument must be a memory value'),
      )
    }
    expect(await conn.ask('CONFIG', 'SET', 'auto-aof-rewrite-min-size', 'abc')).toBe(
      failed('auto-aof-rewrite-min-size', 'argument must be a memory value'),
    )
    expect(await conn.ask('CONFIG', 'SET', 'maxmemory', '5Kb')).toBe('+OK\r\n')
    expect(await conn.strings('CONFIG', 'GET', 'maxmemory')).toEqual(['maxmemory', '5120'])
    expect(await conn.ask('CONFIG', 'SET', 'maxmemory', '')).toBe('+OK\r\n') // memtoull: no digits is 0
    expect(await conn.strings('CONFIG', 'GET', 'maxmemory')).toEqual(['maxmemory', '0'])
    for (const value of ['abc', '1.5', '+5', '007', '-0', '', '9999999999999999999999']) {
      expect(await conn.ask('CONFIG', 'SET', 'timeout', value)).toBe(
        failed('timeout', "argument couldn't be parsed into an integer"),
      )
    }
    expect(await conn.ask('CONFIG', 'SET', 'timeout', '-1')).toBe(
      failed('timeout', 'argument must be between 0 and 2147483647 inclusive'),
    )
    expect(await conn.ask('CONFIG', 'SET', 'appendonly', 'maybe')).toBe(
      failed('appendonly', "argument must be 'yes' or 'no'"),
    )
    expect(await conn.ask('CONFIG', 'SET', 'appendfsync', 'sometimes')).toBe(
      failed('appendfsync', 'argument(s) must be one of the following: everysec, always, no'),
    )
    expect(await conn.ask('CONFIG', 'SET', 'loglevel', 'loud')).toBe(
      failed('loglevel', 'argument(s) must be one of the following: debug, verbose, notice, warning'),
    )
  })

  it('SET save reads its rules as redis 7.0 does: seconds at least 1 (no save loop from "0 0")', async () => {
    const invalid = "-ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters\r\n"
    const before = await conn.strings('CONFIG', 'GET', 'save')
    try {
      for (const value of ['0 0', '0 1', '-1 1', '1 -1', '1', 'abc', '1x 1', '1  1', ' 1 1', '1 1 ']) {
        expect(await conn.ask('CONFIG', 'SET', 'save', value)).toBe(invalid)
      }
      expect(await conn.strings('CONFIG', 'GET', 'save')).toEqual(before)
      // strtoll per word: a sign and leading zeros are fine, an empty word is 0.
      expect(await conn.ask('CONFIG', 'SET', 'save', '+2 +3')).toBe('+OK\r\n')
      expect(await conn.strings('CONFIG', 'GET', 'save')).toEqual(['save', '2 3'])
      expect(await conn.ask('CONFIG', 'SET', 'save', '00005 07 4 ')).toBe('+OK\r\n')
      expect(await conn.strings('CONFIG', 'GET', 'save')).toEqual(['save', '5 7 4 0'])
    } finally {
      await conn.ask('CONFIG', 'SET', 'save', before[1]!)
    }
  })

  it('RESETSTAT zeroes the counters', async () => {
    await conn.ask('BF.ADD', 'stat', 'x')
    expect(await conn.ask('CONFIG', 'RESETSTAT')).toBe('+OK\r\n')
    const [stats] = await conn.strings('INFO', 'commandstats')
    expect(stats).not.toContain('cmdstat_bf.add:')
  })
})

describe('keyspace', () => {
  let fresh: RunningServer
  let db: Conn

  beforeAll(async () => {
    fresh = await startServer()
  })

  afterAll(async () => {
    await fresh?.stop()
  })

  beforeEach(async () => {
    db = await Conn.open(fresh.port)
    expect(await db.ask('FLUSHALL')).toBe('+OK\r\n')
  })

  afterEach(() => {
    db?.close()
  })

  async function fill(count: number, prefix = 'k:'): Promise<string[]> {
    const names = Array.from({ length: count }, (_, i) => `${prefix}${i}`)
    db.raw.write(Buffer.concat(names.map((name) => encodeCommand(['BF.ADD', name, 'x']))))
    await db.raw.read(names.length * 4)
    return names
  }

  it('DBSIZE and KEYS', async () => {
    expect(await db.integer('DBSIZE')).toBe(0)
    expect(await db.ask('KEYS', '*')).toBe('*0\r\n')
    await fill(250)
    await db.ask('BF.RESERVE', 'other:1', '0.01', '10')
    expect(await db.integer('DBSIZE')).toBe(251)
    expect((await db.strings('KEYS', '*')).sort()).toEqual(
      [...Array.from({ length: 250 }, (_, i) => `k:${i}`), 'other:1'].sort(),
    )
    expect((await db.strings('KEYS', 'k:1?')).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `k:1${i}`).sort())
    expect(await db.strings('KEYS', 'other*')).toEqual(['other:1'])
    // k:240…k:249; no k:25x exists.
    expect((await db.strings('KEYS', 'k:2[45]?')).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `k:24${i}`))
  })

  it('SCAN iterates every key exactly once, with COUNT, MATCH and TYPE', async () => {
    const names = await fill(237)
    const seen: string[] = []
    let cursor = '0'
    let rounds = 0
    do {
      const reply = await db.ask('SCAN', cursor, 'COUNT', '7')
      const [next, ...keys] = decodeFlat(reply)
      expect(reply).toMatch(/^\*2\r\n\$\d+\r\n\d+\r\n\*\d+\r\n/)
      seen.push(...keys)
      cursor = next!
      rounds++
    } while (cursor !== '0' && rounds < 1000)
    expect(cursor).toBe('0')
    expect(seen).toHaveLength(names.length)
    expect(new Set(seen)).toEqual(new Set(names))
    expect(rounds).toBeGreaterThan(10)

    const matched: string[] = []
    cursor = '0'
    do {
      const [next, ...keys] = decodeFlat(await db.ask('SCAN', cursor, 'MATCH', 'k:1?', 'COUNT', '50'))
      matched.push(...keys)
      cursor = next!
    } while (cursor !== '0')
    expect(matched.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `k:1${i}`).sort())

    const [, ...typed] = decodeFlat(await db.ask('SCAN', '0', 'COUNT', '1000', 'TYPE', 'MBbloom--'))
    expect(typed).toHaveLength(names.length)
    expect(await db.ask('SCAN', '0', 'COUNT', '1000', 'TYPE', 'string')).toBe('*2\r\n$1\r\n0\r\n*0\r\n')
  })

  it('SCAN keeps returning keys present throughout while others are deleted and added', async () => {
    const names = await fill(100)
    const seen = new Map<string, number>()
    let cursor = '0'
    let round = 0
    do {
      const [next, ...keys] = decodeFlat(await db.ask('SCAN', cursor, 'COUNT', '10'))
      for (const key of keys) seen.set(key, (seen.get(key) ?? 0) + 1)
      cursor = next!
      // Churn: delete one key not yet likely visited, add a brand new one.
      await db.ask('DEL', `k:${99 - round}`)
      await db.ask('BF.ADD', `new:${round}`, 'x')
      round++
    } while (cursor !== '0' && round < 1000)
    for (const name of names.slice(0, 50)) expect(seen.get(name), name).toBe(1)
    for (const count of seen.values()) expect(count).toBe(1)
  })

  it('SCAN errors', async () => {
    expect(await db.ask('SCAN', 'x')).toBe('-ERR invalid cursor\r\n')
    expect(await db.ask('SCAN', '0', 'COUNT', '0')).toBe('-ERR syntax error\r\n')
    expect(await db.ask('SCAN', '0', 'COUNT', 'x')).toBe('-ERR value is not an integer or out of range\r\n')
    expect(await db.ask('SCAN', '0', 'MATCH')).toBe('-ERR syntax error\r\n')
    expect(await db.ask('SCAN', '0', 'BOGUS', '1')).toBe('-ERR syntax error\r\n')
  })

  it('TYPE, EXISTS, TTL, PTTL', async () => {
    await db.ask('BF.ADD', 'typed', 'x')
    expect(await db.ask('TYPE', 'typed')).toBe('+MBbloom--\r\n')
    expect(await db.ask('TYPE', 'missing')).toBe('+none\r\n')
    expect(await db.integer('EXISTS', 'typed', 'typed', 'missing')).toBe(2)
    expect(await db.integer('TTL', 'typed')).toBe(-1)
    expect(await db.integer('PTTL', 'typed')).toBe(-1)
    expect(await db.integer('TTL', 'missing')).toBe(-2)
    expect(await db.integer('PTTL', 'missing')).toBe(-2)
  })

  it('RENAME and RENAMENX move the filter with its contents', async () => {
    await db.ask('BF.ADD', 'src', 'payload')
    expect(await db.ask('RENAME', 'src', 'dst')).toBe('+OK\r\n')
    expect(await db.integer('EXISTS', 'src')).toBe(0)
    expect(await db.integer('BF.EXISTS', 'dst', 'payload')).toBe(1)
    expect(await db.ask('RENAME', 'src', 'dst')).toBe('-ERR no such key\r\n')
    expect(await db.ask('RENAME', 'dst', 'dst')).toBe('+OK\r\n')
    expect(await db.integer('BF.EXISTS', 'dst', 'payload')).toBe(1)
    await db.ask('BF.ADD', 'other', 'o')
    // RENAME overwrites the destination.
    expect(await db.ask('RENAME', 'other', 'dst')).toBe('+OK\r\n')
    expect(await db.integer('BF.EXISTS', 'dst', 'o')).toBe(1)
    expect(await db.integer('BF.EXISTS', 'dst', 'payload')).toBe(0)
    await db.ask('BF.ADD', 'third', 't')
    expect(await db.ask('RENAMENX', 'third', 'dst')).toBe(':0\r\n')
    expect(await db.ask('RENAMENX', 'third', 'fourth')).toBe(':1\r\n')
    expect(await db.ask('RENAMENX', 'third', 'fifth')).toBe('-ERR no such key\r\n')
    expect(await db.integer('BF.EXISTS', 'fourth', 't')).toBe(1)
  })

  it('DEL and UNLINK count what they removed', async () => {
    await fill(5)
    expect(await db.integer('DEL', 'k:0', 'k:1', 'missing', 'k:1')).toBe(2)
    expect(await db.integer('UNLINK', 'k:2', 'nope')).toBe(1)
    expect(await db.integer('DBSIZE')).toBe(2)
    expect(await db.integer('BF.EXISTS', 'k:0', 'x')).toBe(0)
    expect(await db.integer('BF.CARD', 'k:0')).toBe(0)
    expect(await db.ask('DEL')).toBe("-ERR wrong number of arguments for 'del' command\r\n")
  })

  it('FLUSHALL / FLUSHDB empty everything', async () => {
    await fill(20)
    expect(await db.ask('FLUSHALL')).toBe('+OK\r\n')
    expect(await db.integer('DBSIZE')).toBe(0)
    await fill(3)
    expect(await db.ask('FLUSHDB', 'ASYNC')).toBe('+OK\r\n')
    expect(await db.integer('DBSIZE')).toBe(0)
    await fill(3)
    expect(await db.ask('FLUSHALL', 'SYNC')).toBe('+OK\r\n')
    expect(await db.integer('DBSIZE')).toBe(0)
    expect(await db.ask('FLUSHALL', 'BOGUS')).toBe('-ERR syntax error\r\n')
    expect(await db.ask('RANDOMKEY')).toBe('$-1\r\n')
  })

  it('RANDOMKEY returns an existing key', async () => {
    const names = await fill(10)
    for (let i = 0; i < 20; i++) {
      const [key] = decodeFlat(await db.ask('RANDOMKEY'))
      expect(names).toContain(key)
    }
  })

  it('MEMORY USAGE is at least the filter size; a missing key is null', async () => {
    await db.ask('BF.RESERVE', 'mem', '0.01', '1000')
    const size = Number(/:(\d+)\r\n$/.exec(await db.ask('BF.INFO', 'mem', 'SIZE'))![1])
    const usage = await db.integer('MEMORY', 'USAGE', 'mem')
    expect(usage).toBeGreaterThanOrEqual(size)
    expect(usage).toBeLessThan(size * 2 + 1024)
    expect(await db.integer('MEMORY', 'USAGE', 'mem', 'SAMPLES', '5')).toBe(usage)
    expect(await db.ask('MEMORY', 'USAGE', 'missing')).toBe('$-1\r\n')
    // redis 7.0.15: MEMORY USAGE has arity -3, so no key is an arity error; a dangling SAMPLES a syntax error.
    expect(await db.ask('MEMORY', 'USAGE')).toBe("-ERR wrong number of arguments for 'memory|usage' command\r\n")
    expect(await db.ask('MEMORY', 'USAGE', 'mem', 'SAMPLES')).toBe('-ERR syntax error\r\n')
    await db.ask('BF.RESERVE', 'mem-big', '0.001', '100000')
    expect(await db.integer('MEMORY', 'USAGE', 'mem-big')).toBeGreaterThan(usage * 50)
  })

  it('binary key names survive KEYS, SCAN and RENAME', async () => {
    const key = Buffer.from([0x00, 0x0d, 0x0a, 0xff, 0x20])
    expect(await db.ask('BF.ADD', key, 'x')).toBe(':1\r\n')
    const expected = `*1\r\n$5\r\n${key.toString('latin1')}\r\n`
    expect(await db.ask('KEYS', '*')).toBe(expected)
    expect(await db.ask('SCAN', '0')).toBe(`*2\r\n$1\r\n0\r\n${expected}`)
    const renamed = Buffer.from([0xfe, 0x00])
    expect(await db.ask('RENAME', key, renamed)).toBe('+OK\r\n')
    expect(await db.ask('TYPE', renamed)).toBe('+MBbloom--\r\n')
  })
})

describe('server and connection odds and ends', () => {
  it('MODULE LIST has name bf', async () => {
    const reply = await conn.ask('MODULE', 'LIST')
    expect(reply.startsWith('*1\r\n*8\r\n$4\r\nname\r\n$2\r\nbf\r\n$3\r\nver\r\n:20423\r\n')).toBe(true)
    await conn.ask('HELLO', '3')
    expect((await conn.ask('MODULE', 'LIST')).startsWith('*1\r\n%4\r\n$4\r\nname\r\n$2\r\nbf\r\n')).toBe(true)
    expect(await conn.ask('MODULE', 'BOGUS')).toBe("-ERR unknown subcommand 'BOGUS'. Try MODULE HELP.\r\n")
  })

  it('TIME is [seconds, microseconds] near the local clock', async () => {
    const reply = await conn.ask('TIME')
    const match = /^\*2\r\n\$\d+\r\n(\d+)\r\n\$\d+\r\n(\d+)\r\n$/.exec(reply)
    expect(match).not.toBeNull()
    const seconds = Number(match![1])
    const micros = Number(match![2])
    expect(Math.abs(seconds - Date.now() / 1000)).toBeLessThan(300)
    expect(micros).toBeGreaterThanOrEqual(0)
    expect(micros).toBeLessThan(1_000_000)
    expect(await conn.ask('TIME', 'x')).toBe("-ERR wrong number of arguments for 'time' command\r\n")
  })

  it('PING and ECHO, binary safe', async () => {
    expect(await conn.ask('PING')).toBe('+PONG\r\n')
    expect(await conn.ask('PING', 'hi')).toBe('$2\r\nhi\r\n')
    expect(await conn.ask('PING', 'a', 'b')).toBe("-ERR wrong number of arguments for 'ping' command\r\n")
    const binary = Buffer.from([0x00, 0x01, 0x0d, 0x0a, 0xff, 0x24, 0x2a, 0x00])
    const reply = await conn.ask('ECHO', binary)
    expect(
      Buffer.from(reply, 'latin1').equals(Buffer.concat([Buffer.from('$8\r\n'), binary, Buffer.from('\r\n')])),
    ).toBe(true)
    expect(await conn.ask('ECHO', '')).toBe('$0\r\n\r\n')
    expect(await conn.ask('ECHO', 'a', 'b')).toBe("-ERR wrong number of arguments for 'echo' command\r\n")
  })

  it('QUIT answers +OK and closes the connection', async () => {
    conn.raw.write(encodeCommand(['QUIT']))
    await conn.raw.waitClosed()
    expect((await conn.raw.readUntil(() => true)).toString()).toBe('+OK\r\n')
    expect(conn.raw.closed).toBe(true)
  })

  it('HELP of each container, generated from its subcommand rows, as before the rows', async () => {
    const help = (lines: string[]): string => `*${lines.length}\r\n${lines.map((line) => `+${line}\r\n`).join('')}`
    const header = (name: string): string => `${name} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:`
    expect(await conn.ask('CONFIG', 'HELP')).toBe(
      help([
        header('CONFIG'),
        'GET <pattern>',
        '    Return parameters matching the glob-like <pattern> and their values.',
        'SET <directive> <value>',
        '    Set the configuration <directive> to <value>.',
        'RESETSTAT',
        '    Reset statistics reported by the INFO command.',
        'REWRITE',
        '    Rewrite the configuration file.',
        'HELP',
        '    Prints this help.',
      ]),
    )
    // redis 7.0's texts, word for word (CLIENT HELP's is compared with a real redis-server's in operator-tools.test.ts).
    const allDetails = [
      '    If no command names are given, documentation details for all',
      '    commands are returned.',
    ]
    expect(await conn.ask('command', 'help')).toBe(
      help([
        header('COMMAND'),
        '(no subcommand)',
        '    Return details about all Redis commands.',
        'COUNT',
        '    Return the total number of commands in this Redis server.',
        'LIST',
        '    Return a list of all commands in this Redis server.',
        'INFO [<command-name> ...]',
        '    Return details about multiple Redis commands.',
        ...allDetails,
        'DOCS [<command-name> ...]',
        '    Return documentation details about multiple Redis commands.',
        ...allDetails,
        'GETKEYS <full-command>',
        '    Return the keys from a full Redis command.',
        'GETKEYSANDFLAGS <full-command>',
        '    Return the keys and the access flags from a full Redis command.',
        'HELP',
        '    Prints this help.',
      ]),
    )
    expect(await conn.ask('CLIENT', 'HELP')).toMatch(
      /^\*48\r\n\+CLIENT <subcommand> .*\r\n\+CACHING \(YES\|NO\)\r\n[^]*\+NO-EVICT \(ON\|OFF\)\r\n\+ {4}Protect current client connection from eviction.\r\n\+HELP\r\n\+ {4}Prints this help.\r\n$/,
    )
    expect(await conn.ask('MEMORY', 'HELP')).toBe(
      help([
        header('MEMORY'),
        'USAGE <key> [SAMPLES <count>]',
        '    Return memory in bytes used by <key> and its value.',
        'DOCTOR',
        '    Return memory problems reports.',
        'HELP',
        '    Prints this help.',
      ]),
    )
  })

  it("a container alone, or a subcommand with a wrong count, answers with redis 7.0's texts", async () => {
    for (const name of ['config', 'client', 'memory', 'module']) {
      expect(await conn.ask(name.toUpperCase())).toBe(`-ERR wrong number of arguments for '${name}' command\r\n`)
    }
    for (const [args, name] of [
      [['CONFIG', 'GET'], 'config|get'],
      [['CONFIG', 'SET', 'a'], 'config|set'],
      [['CONFIG', 'RESETSTAT', 'x'], 'config|resetstat'],
      [['COMMAND', 'COUNT', 'x'], 'command|count'],
      [['CLIENT', 'ID', 'x'], 'client|id'],
      [['CLIENT', 'SETNAME'], 'client|setname'],
      [['CLIENT', 'SETINFO', 'a'], 'client|setinfo'],
      [['CLIENT', 'KILL'], 'client|kill'],
      [['CLIENT', 'NO-TOUCH'], 'client|no-touch'],
      [['MEMORY', 'USAGE'], 'memory|usage'],
      [['MODULE', 'LIST', 'x'], 'module|list'],
    ] as const) {
      expect(await conn.ask(...args)).toBe(`-ERR wrong number of arguments for '${name}' command\r\n`)
    }
  })

  it('unknown subcommands of container commands', async () => {
    expect(await conn.ask('CONFIG', 'BOGUS')).toBe("-ERR unknown subcommand 'BOGUS'. Try CONFIG HELP.\r\n")
    expect(await conn.ask('COMMAND', 'BOGUS')).toBe("-ERR unknown subcommand 'BOGUS'. Try COMMAND HELP.\r\n")
    expect(await conn.ask('MEMORY', 'BOGUS')).toBe("-ERR unknown subcommand 'BOGUS'. Try MEMORY HELP.\r\n")
  })

  it('error replies quote non-UTF-8 argument bytes as they came, as redis does', async () => {
    const ff = Buffer.from([0xff, 0xe9])
    const raw = async (...args: (string | Buffer)[]): Promise<Buffer> => Buffer.from(await conn.ask(...args), 'latin1')
    expect(
      (await raw(ff, 'x')).equals(
        Buffer.concat([
          Buffer.from("-ERR unknown command '"),
          ff,
          Buffer.from("', with args beginning with: 'x' \r\n"),
        ]),
      ),
    ).toBe(true)
    expect(
      (await raw('CONFIG', ff)).equals(
        Buffer.concat([Buffer.from("-ERR unknown subcommand '"), ff, Buffer.from("'. Try CONFIG HELP.\r\n")]),
      ),
    ).toBe(true)
    expect(
      (await raw('HELLO', '2', ff)).equals(
        Buffer.concat([Buffer.from("-ERR Syntax error in HELLO option '"), ff, Buffer.from("'\r\n")]),
      ),
    ).toBe(true)
  })

  it('SHUTDOWN ABORT does not shut down: no shutdown is in progress (redis 7.0)', async () => {
    expect(await conn.ask('SHUTDOWN', 'ABORT')).toBe('-ERR No shutdown in progress.\r\n')
    expect(await conn.ask('SHUTDOWN', 'ABORT', 'NOSAVE')).toBe('-ERR syntax error\r\n')
    expect(await conn.ask('SHUTDOWN', 'NOW', 'ABORT')).toBe('-ERR syntax error\r\n')
    expect(await conn.ask('PING')).toBe('+PONG\r\n')
  })
})
