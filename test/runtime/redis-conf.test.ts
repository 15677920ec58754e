/**
 * A stock redis.conf read as redis-server 7.0.15 reads it (config.c): the two vendored files
 * (redis 7.0.15's own and Debian's), several values on a line, include, the directives bfs
 * ignores (one warning) or refuses (a clear error), and the pieces of the process keys that need
 * no running server: the bind words, protected mode's decision, npm start's staleness check.
 */
import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError, DEFAULT_CONFIG, configFileName, formatConfigValue } from '../../src/runtime/config.js'
import { loadConfig, readConfig } from '../../src/runtime/config-load.js'
import { ignoredWarning } from '../../src/runtime/config-ignored.js'
import { INERT_CONFIG } from '../../src/runtime/config-inert.js'
import { bindAddresses } from '../../src/server/listeners.js'
import { isLocalPeer, protectedModeRefuses } from '../../src/server/startup-checks.js'
import { tempDirsRemovedAfterAll } from '../helpers/temp-dir.js'
// @ts-expect-error: a plain .mjs build script, without type declarations
import { staleReason } from '../../scripts/start.mjs'

const FIXTURES = new URL('../fixtures/', import.meta.url)
const UPSTREAM = readFileSync(new URL('redis-7.0.15.conf', FIXTURES), 'utf8')
const DEBIAN = readFileSync(new URL('redis-7.0.15-debian.conf', FIXTURES), 'utf8')

function configError(fileText: string | undefined, flags: string[] = []): string {
  try {
    loadConfig(fileText, flags)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as ConfigError).message
  }
  throw new Error('loadConfig accepted it')
}

const tempDir = tempDirsRemovedAfterAll()

describe('the vendored redis.conf files', () => {
  it("are redis 7.0.15's, license header and all", () => {
    for (const text of [UPSTREAM, DEBIAN]) {
      expect(text.startsWith('# Redis configuration file example.')).toBe(true)
      expect(text).toContain('bind 127.0.0.1 -::1')
    }
    expect(DEBIAN).toContain('pidfile /run/redis/redis-server.pid')
    expect(UPSTREAM).toContain('pidfile /var/run/redis_6379.pid')
  })

  it.each([
    ['redis 7.0.15', UPSTREAM],
    ['Debian', DEBIAN],
  ])('%s: every directive is read, as redis-server reads it', (_name, text) => {
    const { config, ignored } = readConfig(text)
    expect(config.bind).toBe('127.0.0.1 -::1')
    expect(config.port).toBe(6379)
    expect(config['protected-mode']).toBe(true)
    expect(config.save).toBe('3600 1 300 100 60 10000')
    expect(config.appendonly).toBe(false)
    expect(config['client-output-buffer-limit']).toEqual({
      normal: { hard: 0, soft: 0, softSeconds: 0 },
      replica: { hard: 256 * 1024 ** 2, soft: 64 * 1024 ** 2, softSeconds: 60 },
      pubsub: { hard: 32 * 1024 ** 2, soft: 8 * 1024 ** 2, softSeconds: 60 },
    })
    expect(ignored).toEqual(
      expect.arrayContaining([
        'dbfilename',
        'rdbcompression',
        'aof-use-rdb-preamble',
        'appenddirname',
        'tcp-backlog',
        'hz',
      ]),
    )
    // One line, naming each ignored directive once, with why.
    const warning = ignoredWarning(ignored)!
    expect(warning.split('\n')).toHaveLength(1)
    for (const name of new Set(ignored))
      expect(warning.match(new RegExp(`(^|[ :,]) ?${name}[,( ]`, 'g')), name).toHaveLength(1)
    expect(warning).toContain("(Redis's own files and encodings: bfs keeps its own layout in dir)")
  })

  it("Debian's: daemonize, pidfile, logfile and dir as Debian sets them", () => {
    const config = loadConfig(DEBIAN)
    expect([config.daemonize, config.pidfile, config.logfile, config.dir]).toEqual([
      true,
      '/run/redis/redis-server.pid',
      '/var/log/redis/redis-server.log',
      '/var/lib/redis',
    ])
  })

  it("every directive its comments show (uncommented) is accepted too, with redis 7.0's defaults", () => {
    for (const name of INERT_CONFIG.keys()) {
      const value = INERT_CONFIG.get(name)!
      if (configFileName(name) !== undefined) continue
      expect(() => readConfig(`${name} "${value}"`), name).not.toThrow()
    }
  })
})

describe('several values on a line, as redis config.c', () => {
  it('bind takes several addresses, `-` marking the optional ones; CONFIG GET shows them as given', () => {
    const config = loadConfig('bind 127.0.0.1 -::1')
    expect(formatConfigValue(config, 'bind')).toBe('127.0.0.1 -::1')
    expect(loadConfig(undefined, ['--bind', '127.0.0.1', '::1']).bind).toBe('127.0.0.1 ::1')
    expect(bindAddresses('127.0.0.1 -::1 * -::*')).toEqual([
      { host: '127.0.0.1', optional: false },
      { host: '::1', optional: true },
      { host: '0.0.0.0', optional: false },
      { host: '::', optional: true },
    ])
  })

  it('save with several pairs, repeated lines, and "" clearing', () => {
    expect(loadConfig('save 900 1 300 10').save).toBe('900 1 300 10')
    expect(loadConfig('save 900 1\nsave 300 10').save).toBe('900 1 300 10')
    expect(loadConfig('save 900 1\nsave ""').save).toBe('')
  })

  it('rename-command and user lines repeat', () => {
    const config = loadConfig(
      'rename-command FLUSHALL ""\nrename-command DEBUG dbg\nuser alice on >pw ~* +@all\nuser bob off',
    )
    expect(config['rename-command']).toEqual([
      { from: 'FLUSHALL', to: '' },
      { from: 'DEBUG', to: 'dbg' },
    ])
    expect(config.user).toEqual([
      ['alice', 'on', '>pw', '~*', '+@all'],
      ['bob', 'off'],
    ])
  })

  it('unixsocketperm is octal, as CONFIG GET shows it', () => {
    const config = loadConfig('unixsocket /run/bfs.sock\nunixsocketperm 770')
    expect(config.unixsocketperm).toBe(0o770)
    expect(formatConfigValue(config, 'unixsocketperm')).toBe('770')
    expect(configError('unixsocketperm 778')).toContain('unixsocketperm')
    expect(configError('unixsocketperm 1000')).toContain('unixsocketperm')
  })

  it("supervised takes redis's four modes", () => {
    for (const mode of ['no', 'upstart', 'systemd', 'auto'])
      expect(loadConfig(`supervised ${mode}`).supervised).toBe(mode)
    expect(configError('supervised launchd')).toContain('supervised')
  })

  it('protected-mode is on by default, as in redis 7.0', () => {
    expect(DEFAULT_CONFIG['protected-mode']).toBe(true)
    expect(loadConfig('protected-mode no')['protected-mode']).toBe(false)
  })
})

describe('include', () => {
  it('reads a file where it stands, and wildcards in alphabetical order; a wildcard matching nothing is no error', () => {
    const dir = tempDir('bfs-include-')
    mkdirSync(path.join(dir, 'conf.d'))
    writeFileSync(path.join(dir, 'conf.d', 'b.conf'), 'port 7002\nhz 50\n')
    writeFileSync(path.join(dir, 'conf.d', 'a.conf'), 'port 7001\nmaxclients 77\n')
    writeFileSync(path.join(dir, 'one.conf'), 'timeout 9\n')
    const text = `port 7000\ninclude ${path.join(dir, 'one.conf')}\ninclude ${path.join(dir, 'conf.d', '*.conf')}\ninclude ${path.join(dir, 'none', '*.conf')}\n`
    const { config, ignored } = readConfig(text)
    expect([config.port, config.maxclients, config.timeout]).toEqual([7002, 77, 9])
    expect(ignored).toEqual(['hz'])
    // A line after the include wins over it.
    expect(loadConfig(`include ${path.join(dir, 'one.conf')}\ntimeout 3`).timeout).toBe(3)
  })

  it('a missing file, or a file that includes itself, stops the start naming it', () => {
    const dir = tempDir('bfs-include-')
    expect(configError(`include ${path.join(dir, 'missing.conf')}`)).toContain('missing.conf')
    const self = path.join(dir, 'self.conf')
    writeFileSync(self, `include ${self}\n`)
    expect(configError(`include ${self}`)).toContain('nested')
    writeFileSync(path.join(dir, 'bad.conf'), 'port 7000\nbogus-key 1\n')
    expect(configError(`include ${path.join(dir, 'bad.conf')}`)).toMatch(/line 2 of .*bad\.conf.*bogus-key/)
  })
})

describe('directives bfs ignores or refuses', () => {
  it('ignored ones are listed once each, grouped, in one line; none: no warning', () => {
    const { ignored } = readConfig('hz 100\ndbfilename x.rdb\ntcp-backlog 511', ['--lazyfree-lazy-expire', 'yes'])
    expect(ignored).toEqual(['hz', 'dbfilename', 'tcp-backlog', 'lazyfree-lazy-expire'])
    const warning = ignoredWarning(ignored)!
    expect(warning).toMatch(/^Ignoring redis\.conf directives bfs has no use for: dbfilename \(Redis's own files/)
    expect(warning).toContain('hz, tcp-backlog (process tuning')
    expect(ignoredWarning([])).toBeUndefined()
  })

  it('io-threads and io-threads-do-reads are keys of bfs, not ignored', () => {
    const { config, ignored } = readConfig('io-threads 4\nio-threads-do-reads yes')
    expect(ignored).toEqual([])
    expect([config['io-threads'], config['io-threads-do-reads']]).toEqual([4, true])
  })

  it.each([
    ['maxmemory-policy allkeys-lru', 'never evicts'],
    ['syslog-enabled yes', 'syslog'],
    ['notify-keyspace-events Ex', 'keyspace notifications'],
    ['shutdown-on-sigterm nosave', 'SIGTERM'],
    ['shutdown-on-sigint force', 'SIGINT'],
    ['loadmodule /usr/lib/redis/modules/redisbloom.so', 'modules'],
  ])('`%s` stops the start: %s', (line, why) => {
    const message = configError(line)
    expect(message).toContain(line.split(' ')[0])
    expect(message).toContain(why)
  })

  it('the values bfs can honour pass: tls-port (a key of its own), noeviction, syslog-enabled no, ""', () => {
    expect(() =>
      loadConfig(
        'tls-port 6380\ntls-replication yes\ntls-cluster no\nmaxmemory-policy noeviction\nsyslog-enabled no\nnotify-keyspace-events ""\nshutdown-on-sigterm default',
      ),
    ).not.toThrow()
  })

  it('a key neither bfs nor redis 7.0 has is still unknown', () => {
    expect(configError('no-such-directive 1')).toContain("unknown config key 'no-such-directive'")
  })
})

describe('protected mode (redis 7.0.15 networking.c)', () => {
  it('refuses a client that is not local while the default user has no password, whatever bind says', () => {
    expect(protectedModeRefuses(true, true, isLocalPeer('192.0.2.7', false))).toBe(true)
    expect(protectedModeRefuses(true, true, isLocalPeer('10.1.2.3', false))).toBe(true)
    for (const local of [
      isLocalPeer('127.0.0.1', false),
      isLocalPeer('::1', false),
      isLocalPeer('::ffff:127.0.0.1', false),
      isLocalPeer(undefined, true),
    ]) {
      expect(protectedModeRefuses(true, true, local)).toBe(false)
    }
    // A password, or protected-mode no: served.
    expect(protectedModeRefuses(true, false, false)).toBe(false)
    expect(protectedModeRefuses(false, true, false)).toBe(false)
    // islocalClient compares the text: another 127/8 address is not local.
    expect(isLocalPeer('127.0.0.2', false)).toBe(false)
  })
})

describe('npm start builds only when the build is stale (scripts/start.mjs)', () => {
  it('no dist: build; dist newer than every source: none; a source or tsconfig newer: build', () => {
    const root = tempDir('bfs-stale-')
    mkdirSync(path.join(root, 'src', 'server'), { recursive: true })
    mkdirSync(path.join(root, 'dist'))
    const at = (file: string, seconds: number): void => utimesSync(path.join(root, file), seconds, seconds)
    writeFileSync(path.join(root, 'src', 'main.ts'), '')
    writeFileSync(path.join(root, 'src', 'server', 'server.ts'), '')
    writeFileSync(path.join(root, 'tsconfig.json'), '{}')
    expect(staleReason(root)).toBe('no build yet')
    writeFileSync(path.join(root, 'dist', 'main.js'), '')
    at('src/main.ts', 1000)
    at('src/server/server.ts', 1000)
    at('tsconfig.json', 1000)
    at('dist/main.js', 2000)
    expect(staleReason(root)).toBeUndefined()
    at('src/server/server.ts', 3000)
    expect(staleReason(root)).toBe('sources changed since the last build')
    at('src/server/server.ts', 1000)
    at('tsconfig.json', 3000)
    expect(staleReason(root)).toBe('sources changed since the last build')
  })

  it('npm start runs it under the node flags and glibc tunables it always had', () => {
    const scripts = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).scripts as Record<
      string,
      string
    >
    expect(scripts.start).toBe(
      'GLIBC_TUNABLES=glibc.malloc.mmap_threshold=16384 node --max-semi-space-size=1 --optimize-for-size scripts/start.mjs',
    )
  })
})
