/**
 * The list of bfs's own files (store/owned-files.ts) at start: two of them at one path, or one
 * where bfs keeps others, is refused before anything is written, with what clashes.
 */
import { describe, expect, it } from 'vitest'
import path from 'node:path'
import { DEFAULT_CONFIG, type Config } from '../../src/runtime/config.js'
import { ownedFiles, ownFileClash } from '../../src/store/owned-files.js'
import { startServer } from '../helpers/start-server.js'
import { tempDirsRemovedAfterEach } from '../helpers/temp-dir.js'

const tempDir = tempDirsRemovedAfterEach('bfs-owned-')

function configIn(overrides: Partial<Config>): Config {
  const dir = tempDir()
  return { ...DEFAULT_CONFIG, dir, ...overrides }
}

describe('ownedFiles', () => {
  it('lists the config file and each file a config key names, the snapshot directory and the log and sync prefixes', () => {
    const config = configIn({ logfile: 'bfs.log', aclfile: 'users.acl' })
    const own = ownedFiles(config, '/etc/bfs.conf')
    expect(own.files.map((file) => file.what)).toEqual(['config file', 'logfile', 'aclfile', 'cluster config file'])
    expect(own.files.find((file) => file.what === 'cluster config file')?.path).toBe(
      path.resolve(config.dir, 'nodes.conf'),
    )
    expect(own.directories).toEqual(['snapshot'])
    expect(own.prefixes).toEqual(['appendonly.aof.', 'temp-sync-'])
  })
})

describe('ownFileClash', () => {
  it('accepts distinct files', () => {
    const config = configIn({})
    expect(
      ownFileClash(
        { ...config, logfile: path.join(config.dir, 'bfs.log'), aclfile: path.join(config.dir, 'users.acl') },
        path.join(config.dir, 'bfs.conf'),
      ),
    ).toBeUndefined()
  })

  it('refuses two files at one path, one in the snapshot directory, one named as a log segment', () => {
    const config = configIn({})
    const inDir = (name: string): string => path.join(config.dir, name)
    expect(ownFileClash({ ...config, aclfile: inDir('bfs.conf') }, inDir('bfs.conf'))).toBe(
      `the config file and the aclfile are the same file: ${inDir('bfs.conf')}`,
    )
    expect(ownFileClash({ ...config, logfile: inDir('nodes.conf') }, '')).toBe(
      `the logfile and the cluster config file are the same file: ${inDir('nodes.conf')}`,
    )
    expect(ownFileClash({ ...config, logfile: inDir('snapshot/bfs.log') }, '')).toMatch(
      /^the logfile \(.*\) is inside bfs's own 'snapshot' directory$/,
    )
    expect(ownFileClash({ ...config, aclfile: inDir('appendonly.aof.1.incr.aof') }, '')).toMatch(
      /^the aclfile \(.*\) is named as bfs's own files in dir \(appendonly\.aof\.\*\)$/,
    )
  })

  it('a server whose logfile is its nodes.conf does not start', async () => {
    const config = configIn({})
    await expect(startServer({ dir: config.dir, logfile: path.join(config.dir, 'nodes.conf') })).rejects.toThrow(
      "bfs's own files clash: the logfile and the cluster config file are the same file",
    )
  })
})
