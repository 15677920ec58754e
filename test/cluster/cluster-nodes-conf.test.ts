/**
 * nodes.conf at a start in cluster mode, as redis-server 7.0.15's clusterLoadConfig reads it: a
 * file that is there and not empty but that no node wrote whole (its myself line cut out, torn,
 * written over, a slot past 16383, an unknown flag, a second myself line, a vars line cut short)
 * refuses the start and is left as it was, never taken for no configuration (a new node id, no
 * slots, the damaged file written over); an empty file is a new node; a nodes.conf.tmp left by a
 * kill between its write and its rename does not stop the start. Real servers, real files; the
 * damaged files are also given to a real redis-server 7.0.15, which refuses them too.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer } from '../helpers/start-server.js'
import { makeTempDir } from '../helpers/temp-dir.js'
import { until } from '../helpers/replication-info.js'
import { BFS_MAIN, testIoThreadsArgs } from '../helpers/child-server.js'
import { InteractiveTool } from '../helpers/tools.js'
import { freePortBelow50000 } from '../helpers/cluster-mode.js'

const cleanups: (() => Promise<unknown> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const CLUSTER = { 'cluster-enabled': true, 'cluster-config-file': 'nodes.conf' } as const

/** A directory removed after the test. */
function tempDir(): string {
  const dir = makeTempDir('bfs-nodes-conf-')
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * The nodes.conf of a node that owns slots 0-99 and knows one peer, as bfs saved it (two nodes
 * met, both stopped), and the node's id.
 */
async function savedNodesConf(): Promise<{ text: string; id: string }> {
  const dir = tempDir()
  const mine = await startServer({ ...CLUSTER, dir })
  const peer = await startServer({ ...CLUSTER })
  const clients = [mine, peer].map((node) => new Redis({ port: node.port, host: '127.0.0.1' }))
  try {
    const [a, b] = clients as [Redis, Redis]
    await a.call('CLUSTER', 'ADDSLOTSRANGE', '0', '99')
    await a.call('CLUSTER', 'SET-CONFIG-EPOCH', '1')
    await b.call('CLUSTER', 'MEET', '127.0.0.1', String(mine.port))
    await until(
      async () =>
        String(await a.call('CLUSTER', 'NODES'))
          .trim()
          .split('\n').length === 2,
      'the node knows its peer',
    )
    const id = String(await a.call('CLUSTER', 'MYID'))
    await a.call('CLUSTER', 'SAVECONFIG')
    return { text: readFileSync(path.join(dir, 'nodes.conf'), 'utf8'), id }
  } finally {
    for (const client of clients) client.disconnect()
    await peer.stop()
    await mine.stop()
  }
}

/** Damaged copies of a whole nodes.conf; `redisWords`: redis-server logs its "corrupted" line (else it panics). */
function damaged(text: string): { name: string; text: string; redisWords: boolean }[] {
  const lines = text.split('\n')
  const myself = lines.find((line) => line.includes(' myself,'))!
  const peer = lines.find((line) => line !== myself && / master /.test(line))!
  return [
    { name: 'its myself line cut out', text: lines.filter((line) => line !== myself).join('\n'), redisWords: true },
    // Torn in the myself line: its first fields only, nothing after.
    {
      name: 'torn in its myself line',
      text: text.slice(0, text.indexOf(myself) + myself.indexOf(' myself,') + 5),
      redisWords: true,
    },
    { name: 'written over by other text', text: '# written over by another program\nport 7000\n', redisWords: true },
    { name: 'a slot range past 16383', text: text.replace(/ 0-99(\s)/, ' 0-99999$1'), redisWords: true },
    {
      name: 'a vars line cut short',
      text: text.replace(/ lastVoteEpoch \d+\n$/, ' lastVoteEpoch\n'),
      redisWords: true,
    },
    { name: 'an unknown flag', text: text.replace(' myself,master ', ' myself,mastr '), redisWords: false },
    {
      name: 'a second myself line',
      text: text.replace(peer, peer.replace(' master ', ' myself,master ')),
      redisWords: false,
    },
  ]
}

/** A redis-server 7.0.15 in cluster mode on `dir`'s nodes.conf: its log once it has exited, or undefined if it started. */
async function redisOn(dir: string): Promise<string | undefined> {
  const port = await freePortBelow50000()
  const redis = InteractiveTool.start('redis-server', [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    'nodes.conf',
    '--dir',
    dir,
  ])
  try {
    await redis.waitFor((output) => output.includes('Ready to accept connections'), 10_000)
  } catch {
    return redis.stdout + redis.stderr
  }
  redis.kill()
  await redis.waitExit()
  return undefined
}

describe('a damaged nodes.conf', () => {
  it('refuses the start as redis-server does, and is left as it was', async () => {
    const whole = await savedNodesConf()
    const variants = damaged(whole.text)
    for (const variant of variants) expect(variant.text, variant.name).not.toBe(whole.text)
    for (const variant of variants) {
      const dir = tempDir()
      const file = path.join(dir, 'nodes.conf')
      writeFileSync(file, variant.text)
      await expect(startServer({ ...CLUSTER, dir }), variant.name).rejects.toThrow(
        /^Unrecoverable error: corrupted cluster config file\./,
      )
      expect(readFileSync(file, 'utf8'), variant.name).toBe(variant.text)
      expect(readdirSync(dir), variant.name).toEqual(['nodes.conf'])
      // The reference refuses the same file and leaves it too.
      const reference = await redisOn(dir)
      expect(reference, variant.name).toBeDefined()
      if (variant.redisWords)
        expect(reference, variant.name).toContain('Unrecoverable error: corrupted cluster config file.')
      expect(readFileSync(file, 'utf8'), variant.name).toBe(variant.text)
    }
  })

  it('bfs exits 1 with the reason in its log', async () => {
    const whole = await savedNodesConf()
    const dir = tempDir()
    const text = whole.text
      .split('\n')
      .filter((line) => !line.includes(' myself,'))
      .join('\n')
    writeFileSync(path.join(dir, 'nodes.conf'), text)
    const bfs = InteractiveTool.start(process.execPath, [
      BFS_MAIN,
      ...testIoThreadsArgs(),
      '--port',
      '0',
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--cluster-enabled',
      'yes',
    ])
    cleanups.push(() => bfs.kill())
    expect(await bfs.waitExit()).toBe(1)
    expect(bfs.stdout + bfs.stderr).toContain(
      `Unrecoverable error: corrupted cluster config file. ${path.join(dir, 'nodes.conf')}: no myself line`,
    )
    expect(readFileSync(path.join(dir, 'nodes.conf'), 'utf8')).toBe(text)
  })

  it('an empty nodes.conf is a new node, as in redis 7.0', async () => {
    const dir = tempDir()
    writeFileSync(path.join(dir, 'nodes.conf'), '')
    const node = await startServer({ ...CLUSTER, dir })
    cleanups.push(() => node.stop())
    const client = new Redis({ port: node.port, host: '127.0.0.1' })
    cleanups.push(() => client.disconnect())
    const id = String(await client.call('CLUSTER', 'MYID'))
    expect(readFileSync(path.join(dir, 'nodes.conf'), 'utf8')).toMatch(
      new RegExp(`^${id} \\S*:${node.port}@\\d+ myself,master - `),
    )
  })
})

describe('a nodes.conf.tmp left by a kill', () => {
  it('does not stop the start: the node keeps its id and slots, and saves again', async () => {
    const whole = await savedNodesConf()
    const dir = tempDir()
    writeFileSync(path.join(dir, 'nodes.conf'), whole.text)
    // What a kill between the temp file's write and its rename leaves: a whole or a partial copy.
    writeFileSync(path.join(dir, 'nodes.conf.tmp'), whole.text.slice(0, 50))
    const node = await startServer({ ...CLUSTER, dir })
    cleanups.push(() => node.stop())
    const client = new Redis({ port: node.port, host: '127.0.0.1' })
    cleanups.push(() => client.disconnect())
    expect(await client.call('CLUSTER', 'MYID')).toBe(whole.id)
    expect(await client.call('CLUSTER', 'COUNTKEYSINSLOT', '5')).toBe(0)
    expect(String(await client.call('CLUSTER', 'NODES'))).toMatch(
      new RegExp(`^${whole.id} .* myself,master - 0 0 1 connected 0-99$`, 'm'),
    )
    expect(await client.call('CLUSTER', 'ADDSLOTS', '100')).toBe('OK')
    expect(await client.call('CLUSTER', 'SAVECONFIG')).toBe('OK')
    expect(readFileSync(path.join(dir, 'nodes.conf'), 'utf8')).toMatch(/ connected 0-100\n/)
    expect(readdirSync(dir)).not.toContain('nodes.conf.tmp')
  })
})
