/**
 * COMMAND DOCS against a real redis-server 7.0.15 started here: every Redis command in bfs's table
 * (the ones other parts add included, as soon as their rows exist) is documented byte for byte as
 * redis documents it, in RESP2 and RESP3; a container's subcommands are the ones bfs has, each as
 * redis documents it. BF.* go beyond RedisBloom 2.4 (which documents none): their arguments as
 * RedisBloom's commands.json gives them, so redis-cli can show hints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../helpers/start-server.js'
import { askRaw, RawClient } from '../../helpers/resp.js'
import { hasTool } from '../../helpers/tools.js'
import { startRedisServer, type ReferenceServer } from '../../helpers/redis-server.js'
import { COMMAND_DOCS } from '../../../src/commands/data/command-docs/by-name.js'
import type { CommandEntry } from '../../../src/commands/kernel/context.js'

/** A reply with its RESP types kept: a map or a RESP2 array of pairs alike as [key, value][] where asked. */
interface Node {
  readonly type: string
  readonly value: string | Node[]
}

function parse(bytes: Buffer, at = 0): [Node, number] {
  const eol = bytes.indexOf('\r\n', at)
  const type = String.fromCharCode(bytes[at]!)
  const head = bytes.toString('utf8', at + 1, eol)
  let pos = eol + 2
  if (type === '$') return [{ type, value: bytes.toString('utf8', pos, pos + Number(head)) }, pos + Number(head) + 2]
  if (!'*~%'.includes(type)) return [{ type, value: head }, pos]
  const items: Node[] = []
  for (let i = 0; i < Number(head) * (type === '%' ? 2 : 1); i++) {
    const [item, next] = parse(bytes, pos)
    items.push(item)
    pos = next
  }
  return [{ type, value: items }, pos]
}

/** A command's docs with its subcommands narrowed to `keep` and sorted (redis lists them in hash order). */
function narrowSubcommands(docs: Node, keep: readonly string[]): Node {
  const fields = docs.value as Node[]
  const out: Node[] = []
  for (let i = 0; i < fields.length; i += 2) {
    out.push(fields[i]!)
    if (fields[i]!.value !== 'subcommands') {
      out.push(fields[i + 1]!)
      continue
    }
    const subs = fields[i + 1]!.value as Node[]
    const pairs: [Node, Node][] = []
    for (let j = 0; j < subs.length; j += 2)
      if (keep.includes(subs[j]!.value as string)) pairs.push([subs[j]!, subs[j + 1]!])
    pairs.sort((a, b) => (a[0].value < b[0].value ? -1 : 1))
    out.push({ type: `${fields[i + 1]!.type}${pairs.length}`, value: pairs.flat() })
  }
  return { type: docs.type, value: out }
}

/** Subcommands bfs has from redis 7.2, documented as 7.2 does. */
const REDIS_72_ONLY = ['client|setinfo', 'client|no-touch']
const isRedisCommand = (entry: CommandEntry) => entry.spec.group !== 'bf'
const subcommandNames = (entry: CommandEntry) => [...(entry.subcommands?.values() ?? [])].map((row) => row.fullName)

describe.skipIf(!hasTool('redis-server'))('COMMAND DOCS', () => {
  let bfs: RunningServer
  let redis: ReferenceServer
  const clients: Record<string, { bfs: RawClient; redis: RawClient }> = {}

  beforeAll(async () => {
    ;[bfs, redis] = await Promise.all([startServer(), startRedisServer()])
    for (const protocol of ['2', '3']) {
      clients[protocol] = { bfs: await RawClient.connect(bfs.port), redis: await RawClient.connect(redis.port) }
      await askRaw(clients[protocol]!.bfs, 'HELLO', protocol)
      await askRaw(clients[protocol]!.redis, 'HELLO', protocol)
    }
  })

  afterAll(async () => {
    for (const pair of Object.values(clients)) {
      pair.bfs.close()
      pair.redis.close()
    }
    await Promise.all([bfs?.stop(), redis?.stop()])
  })

  it('the reference is redis-server 7.0.15 (the docs differ from one version to another)', async () => {
    expect((await askRaw(clients['2']!.redis, 'INFO', 'server')).toString()).toContain('redis_version:7.0.15\r\n')
  })

  for (const protocol of ['2', '3']) {
    const both = async (...args: string[]) => {
      const { bfs: ours, redis: theirs } = clients[protocol]!
      return { ours: await askRaw(ours, ...args), theirs: await askRaw(theirs, ...args) }
    }

    it(`RESP${protocol}: every Redis command without subcommands, byte for byte`, async () => {
      const plain = [...bfs.server.commands].filter((entry) => isRedisCommand(entry) && entry.subcommands === undefined)
      expect(plain.length).toBeGreaterThan(30)
      for (const entry of plain) {
        const { ours, theirs } = await both('COMMAND', 'DOCS', entry.lowerName)
        expect(ours.toString('latin1'), entry.lowerName).toBe(theirs.toString('latin1'))
      }
    })

    it(`RESP${protocol}: every subcommand by its name, byte for byte (those redis 7.0 lacks as redis 7.2 documents them)`, async () => {
      const containers = [...bfs.server.commands].filter(
        (entry) => isRedisCommand(entry) && entry.subcommands !== undefined,
      )
      expect(containers.map((entry) => entry.lowerName)).toEqual(
        expect.arrayContaining(['config', 'client', 'command', 'memory', 'module']),
      )
      for (const fullName of containers.flatMap(subcommandNames)) {
        const { ours, theirs } = await both('COMMAND', 'DOCS', fullName)
        if (theirs.equals(Buffer.from(protocol === '3' ? '%0\r\n' : '*0\r\n'))) {
          expect(REDIS_72_ONLY, `${fullName} is unknown to redis 7.0`).toContain(fullName)
          expect(ours.toString()).toContain('7.2.0')
        } else {
          expect(ours.toString('latin1'), fullName).toBe(theirs.toString('latin1'))
        }
      }
    })

    it(`RESP${protocol}: a container's docs are redis's with the subcommands bfs has`, async () => {
      for (const entry of [...bfs.server.commands].filter(
        (entry) => isRedisCommand(entry) && entry.subcommands !== undefined,
      )) {
        const { ours, theirs } = await both('COMMAND', 'DOCS', entry.lowerName)
        const keep = subcommandNames(entry)
        const [ourDocs, theirDocs] = [ours, theirs].map((bytes) => (parse(bytes)[0].value as Node[])[1]!)
        const known = keep.filter((name) => !REDIS_72_ONLY.includes(name))
        expect(narrowSubcommands(ourDocs!, known), entry.lowerName).toEqual(narrowSubcommands(theirDocs!, known))
        const ourSubcommands = (ourDocs!.value as Node[]).at(-1)!.value as Node[]
        expect(
          ourSubcommands.filter((_, i) => i % 2 === 0).map((name) => name.value),
          entry.lowerName,
        ).toEqual(keep)
      }
    })

    it(`RESP${protocol}: COMMAND INFO's tips and key specs of every Redis command as redis's`, async () => {
      for (const entry of [...bfs.server.commands].filter(isRedisCommand)) {
        const { ours, theirs } = await both('COMMAND', 'INFO', entry.lowerName)
        const [ourInfo, theirInfo] = [ours, theirs].map(
          (bytes) => (parse(bytes)[0].value as Node[])[0]!.value as Node[],
        )
        expect(ourInfo!.slice(7, 9), entry.lowerName).toEqual(theirInfo!.slice(7, 9))
        if (entry.subcommands === undefined) expect(ourInfo![9], entry.lowerName).toEqual(theirInfo![9])
      }
    })

    it(`RESP${protocol}: COMMAND INFO's subcommand rows (element 10) of every container as redis's, for the subcommands bfs has`, async () => {
      for (const entry of [...bfs.server.commands].filter(
        (entry) => isRedisCommand(entry) && entry.subcommands !== undefined,
      )) {
        const { ours, theirs } = await both('COMMAND', 'INFO', entry.lowerName)
        const [ourRows, theirRows] = [ours, theirs].map(
          (bytes) => ((parse(bytes)[0].value as Node[])[0]!.value as Node[])[9]!.value as Node[],
        )
        const known = subcommandNames(entry).filter((name) => !REDIS_72_ONLY.includes(name))
        const rowName = (row: Node) => (row.value as Node[])[0]!.value as string
        const narrowed = (rows: Node[]) =>
          rows.filter((row) => known.includes(rowName(row))).sort((a, b) => (rowName(a) < rowName(b) ? -1 : 1))
        expect(narrowed(ourRows!).map(rowName), entry.lowerName).toEqual([...known].sort())
        expect(narrowed(ourRows!), entry.lowerName).toEqual(narrowed(theirRows!))
      }
    })

    it(`RESP${protocol}: names redis does not know are left out, in the order asked`, async () => {
      const { ours, theirs } = await both(
        'COMMAND',
        'DOCS',
        'nosuch',
        'PING',
        'config|GET',
        'config|nosuch',
        'a|b|c',
        'dbsize',
      )
      expect(ours.toString('latin1')).toBe(theirs.toString('latin1'))
    })
  }

  it('COMMAND DOCS alone: every command, each as asked by name', async () => {
    const client = clients['3']!.bfs
    const [all] = parse(await askRaw(client, 'COMMAND', 'DOCS'))
    const items = all.value as Node[]
    expect(items.length / 2).toBe(bfs.server.commands.size)
    for (let i = 0; i < items.length; i += 2) {
      const name = items[i]!.value as string
      const [one] = parse(await askRaw(client, 'COMMAND', 'DOCS', name))
      expect(items[i + 1], name).toEqual((one.value as Node[])[1])
    }
  })

  it('a Redis command in the table without documentation fails here (the data covers every row)', () => {
    const missing = [...bfs.server.commands].filter(
      (entry) => isRedisCommand(entry) && !COMMAND_DOCS.has(entry.spec.name.toLowerCase()),
    )
    expect(missing.map((entry) => entry.lowerName)).toEqual([])
  })

  describe('BF.* (RedisBloom 2.4 documents none: redis 7.0 with it answers only group and module)', () => {
    const bulk = (text: string) => `$${Buffer.byteLength(text)}\r\n${text}\r\n`
    const map = (...pairs: string[]) => `%${pairs.length / 2}\r\n${pairs.join('')}`

    it("BF.ADD: the row's summary and since, group module and module bf as redis reports a module's, then key and item", async () => {
      const complexity = 'O(k), where k is the number of hash functions used by the last sub-filter'
      const args = `*2\r\n${map(bulk('name'), bulk('key'), bulk('type'), bulk('key'))}${map(bulk('name'), bulk('item'), bulk('type'), bulk('string'))}`
      const docs = map(
        ...[
          ['summary', 'Adds an item to a Bloom Filter'],
          ['since', '1.0.0'],
          ['group', 'module'],
          ['complexity', complexity],
          ['module', 'bf'],
        ].flatMap(([key, value]) => [bulk(key!), bulk(value!)]),
        bulk('arguments'),
        args,
      )
      expect((await askRaw(clients['3']!.bfs, 'COMMAND', 'DOCS', 'bf.add')).toString()).toBe(map(bulk('bf.add'), docs))
    })

    it("every BF command and bfs's own are documented with arguments, the key first", async () => {
      for (const entry of [...bfs.server.commands].filter((entry) => !isRedisCommand(entry))) {
        const doc = COMMAND_DOCS.get(entry.lowerName)
        expect(doc?.arguments?.[0]?.type, entry.lowerName).toBe('key')
        const [reply] = parse(await askRaw(clients['2']!.bfs, 'COMMAND', 'DOCS', entry.lowerName))
        const fields = ((reply.value as Node[])[1]!.value as Node[]).map((node) => node.value)
        expect(fields.slice(0, 10), entry.lowerName).toEqual([
          'summary',
          entry.spec.summary,
          'since',
          entry.spec.since,
          'group',
          'module',
          'complexity',
          doc!.complexity,
          'module',
          'bf',
        ])
        expect(fields[10]).toBe('arguments')
      }
    })
  })
})
