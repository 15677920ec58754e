/**
 * BF.SAVE and BF.LOAD refuse every file bfs itself reads or writes (issue 15): the config file,
 * the logfile, the snapshot's files, the append-only log's segments (those not created yet too),
 * by name and through a symlink or a hard link inside dir. A BF.SAVE over bfs.conf used to answer
 * OK, and the next start failed.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { makeTempDir } from '../helpers/temp-dir.js'
import { until } from '../helpers/replication-info.js'
import { childClient, killChildServer, startChildServer } from '../helpers/child-server.js'

const CONFIG_TEXT = '# bfs.conf of this test\n'

let running: RunningServer | undefined
const dirs: string[] = []
const clients: Redis[] = []
afterEach(async () => {
  for (const client of clients.splice(0)) client.disconnect()
  await running?.stop()
  running = undefined
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/**
 * A server whose config file and logfile live in dir (the logfile is never created: the test's
 * log sink takes the lines), and a second config file outside dir; one filter `f`, saved in a
 * snapshot, and its log segment.
 */
async function serverWithOwnFiles(): Promise<{ redis: Redis; dir: string; outsideConfig: string }> {
  const dir = makeTempDir('bfs-own-')
  const outside = makeTempDir('bfs-own-outside-')
  dirs.push(dir, outside)
  const configFile = path.join(dir, 'bfs.conf')
  writeFileSync(configFile, CONFIG_TEXT)
  running = await startServer({ dir, appendonly: true, logfile: path.join(dir, 'bfs.log') }, { configFile })
  const redis = new Redis({ port: running.port })
  clients.push(redis)
  expect(await redis.call('BF.ADD', 'f', 'a')).toBe(1)
  expect(await redis.call('SAVE')).toBe('OK')
  expect(await redis.call('BF.ADD', 'f', 'b')).toBe(1)
  return { redis, dir, outsideConfig: path.join(outside, 'other.conf') }
}

/** Both commands on `file` get `-ERR <refusal>`. */
async function expectRefused(redis: Redis, file: string, refusal: string): Promise<void> {
  await expect(redis.call('BF.SAVE', 'f', file), `BF.SAVE ${file}`).rejects.toThrow(`ERR ${refusal}`)
  await expect(redis.call('BF.LOAD', 'g', file), `BF.LOAD ${file}`).rejects.toThrow(`ERR ${refusal}`)
}

function logSegment(dir: string): string {
  const segment = readdirSync(dir).find((name) => /^appendonly\.aof\.\d+\.incr\.aof$/.test(name))
  expect(segment).toBeDefined()
  return path.join(dir, segment!)
}

function snapshotFilterFile(dir: string): string {
  const manifest = readFileSync(path.join(dir, 'snapshot', 'MANIFEST'), 'latin1')
  const file = /\b(\S+\.bf)\b/.exec(manifest)?.[1]
  expect(file).toBeDefined()
  return path.join(dir, 'snapshot', file!)
}

describe("BF.SAVE and BF.LOAD refuse bfs's own files", () => {
  it('the config file and the logfile by name, the latter not created yet; the file untouched', async () => {
    const { redis, dir } = await serverWithOwnFiles()
    await expectRefused(redis, 'bfs.conf', "path is bfs's own config file")
    await expectRefused(redis, './bfs.conf', "path is bfs's own config file")
    expect(existsSync(path.join(dir, 'bfs.log'))).toBe(false)
    await expect(redis.call('BF.SAVE', 'f', 'bfs.log')).rejects.toThrow("ERR path is bfs's own logfile")
    expect(readFileSync(path.join(dir, 'bfs.conf'), 'latin1')).toBe(CONFIG_TEXT)
  })

  it('snapshot files, MANIFEST and log segments (the next one too), by name', async () => {
    const { redis, dir } = await serverWithOwnFiles()
    await expectRefused(redis, 'snapshot/MANIFEST', "path is inside bfs's own 'snapshot' directory")
    await expectRefused(
      redis,
      `snapshot/${path.basename(snapshotFilterFile(dir))}`,
      "path is inside bfs's own 'snapshot' directory",
    )
    await expectRefused(redis, path.basename(logSegment(dir)), "path is inside bfs's own files")
    await expect(redis.call('BF.SAVE', 'f', 'appendonly.aof.9.incr.aof')).rejects.toThrow(
      "ERR path is inside bfs's own files",
    )
  })

  it('through symlinks and hard links inside dir: to the config file (in dir and outside), logfile, a snapshot file, MANIFEST, a segment', async () => {
    const { redis, dir, outsideConfig } = await serverWithOwnFiles()
    const configFile = path.join(dir, 'bfs.conf')
    mkdirSync(path.join(dir, 'links'))
    const link = (name: string, to: string, kind: 'hard' | 'sym'): string => {
      if (kind === 'hard') linkSync(to, path.join(dir, 'links', name))
      else symlinkSync(to, path.join(dir, 'links', name))
      return `links/${name}`
    }
    for (const kind of ['hard', 'sym'] as const) {
      await expectRefused(redis, link(`conf-${kind}`, configFile, kind), "path is bfs's own config file")
      await expectRefused(
        redis,
        link(`manifest-${kind}`, path.join(dir, 'snapshot', 'MANIFEST'), kind),
        "path is inside bfs's own",
      )
      await expectRefused(redis, link(`filter-${kind}`, snapshotFilterFile(dir), kind), "path is inside bfs's own")
      await expectRefused(redis, link(`segment-${kind}`, logSegment(dir), kind), "path is inside bfs's own files")
    }
    await expect(redis.call('BF.SAVE', 'f', link('log-sym', path.join(dir, 'bfs.log'), 'sym'))).rejects.toThrow(
      "ERR path is bfs's own logfile",
    )
    writeFileSync(path.join(dir, 'bfs.log'), '')
    await expectRefused(redis, link('log-hard', path.join(dir, 'bfs.log'), 'hard'), "path is bfs's own logfile")
    expect(readFileSync(configFile, 'latin1')).toBe(CONFIG_TEXT)
    // A config file outside dir, hard-linked into it.
    await running!.stop()
    writeFileSync(outsideConfig, CONFIG_TEXT)
    running = await startServer({ dir: makeTempDir('bfs-own-') }, { configFile: outsideConfig })
    dirs.push(running.dir)
    linkSync(outsideConfig, path.join(running.dir, 'innocent.bf'))
    const other = new Redis({ port: running.port })
    clients.push(other)
    expect(await other.call('BF.ADD', 'f', 'a')).toBe(1)
    await expectRefused(other, 'innocent.bf', "path is bfs's own config file")
  })

  it("the aclfile, the cluster config file (nodes.conf), their temporaries and a full sync's temporary: refused, the files unchanged", async () => {
    const dir = makeTempDir('bfs-own-')
    dirs.push(dir)
    const aclText = 'user default on nopass ~* &* +@all\n'
    writeFileSync(path.join(dir, 'users.acl'), aclText)
    running = await startServer({ dir, aclfile: path.join(dir, 'users.acl'), 'cluster-enabled': true })
    const redis = new Redis({ port: running.port })
    clients.push(redis)
    expect(await redis.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383')).toBe('OK')
    await until(
      async () => String(await redis.call('CLUSTER', 'INFO')).includes('cluster_state:ok'),
      'cluster_state:ok',
    )
    expect(await redis.call('BF.ADD', 'f', 'a')).toBe(1)
    const nodesConf = path.join(dir, 'nodes.conf')
    const nodesText = readFileSync(nodesConf, 'latin1')
    expect(nodesText).toContain('myself')
    await expectRefused(redis, 'users.acl', "path is bfs's own aclfile")
    await expectRefused(redis, 'nodes.conf', "path is bfs's own cluster config file")
    await expect(redis.call('BF.SAVE', 'f', 'users.acl.tmp-1-2')).rejects.toThrow(
      "ERR path is a temporary of bfs's own aclfile",
    )
    await expect(redis.call('BF.SAVE', 'f', 'nodes.conf.tmp')).rejects.toThrow(
      "ERR path is a temporary of bfs's own cluster config file",
    )
    await expect(redis.call('BF.SAVE', 'f', 'temp-sync-1-1.bfssync')).rejects.toThrow(
      "ERR path is inside bfs's own files",
    )
    expect(readFileSync(path.join(dir, 'users.acl'), 'latin1')).toBe(aclText)
    expect(readFileSync(nodesConf, 'latin1')).toBe(nodesText)
    expect(existsSync(path.join(dir, 'users.acl.tmp-1-2'))).toBe(false)
    expect(existsSync(path.join(dir, 'nodes.conf.tmp'))).toBe(false)
    // What they are for still works: ACL LOAD reads the aclfile, the node keeps its identity.
    expect(await redis.call('ACL', 'LOAD')).toBe('OK')
    expect(await redis.call('BF.SAVE', 'f', 'users.bf')).toBe('OK')
  })

  it('an ordinary file, and an ordinary hard link, still work', async () => {
    const { redis, dir } = await serverWithOwnFiles()
    expect(await redis.call('BF.SAVE', 'f', 'mine.bf')).toBe('OK')
    linkSync(path.join(dir, 'mine.bf'), path.join(dir, 'mine-too.bf'))
    expect(await redis.call('BF.LOAD', 'g', 'mine-too.bf')).toBe('OK')
    expect(await redis.call('BF.EXISTS', 'g', 'b')).toBe(1)
    expect(await redis.call('BF.SAVE', 'g', 'mine.bf')).toBe('OK')
  })

  it('a real bfs started with a config file in dir: BF.SAVE over it is refused, and the next start works', async () => {
    const dir = makeTempDir('bfs-own-child-')
    dirs.push(dir)
    const configFile = path.join(dir, 'bfs.conf')
    writeFileSync(configFile, `dir ${dir}\nappendonly yes\nsave ""\n`)
    for (let run = 0; run < 2; run++) {
      const { bfs, port } = await startChildServer([configFile, '--port', '0'])
      const redis = childClient(port)
      try {
        expect(await redis.call('BF.ADD', 'f', 'a')).toBe(run === 0 ? 1 : 0)
        expect(await redis.info('server')).toContain(`config_file:${configFile}\r\n`) // as redis: the absolute path
        await expect(redis.call('BF.SAVE', 'f', 'bfs.conf')).rejects.toThrow("ERR path is bfs's own config file")
      } finally {
        redis.disconnect()
        await killChildServer(bfs)
      }
    }
  }, 30_000)
})
