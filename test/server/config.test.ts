/**
 * Configuration: loadConfig over bfs.conf text and --key value flags, bfs.conf.example against
 * CONFIG_KEYS, and the real command line (dist/main.js) starting, answering and stopping.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CONFIG_KEYS,
  CONFIG_ROWS,
  ConfigError,
  DEFAULT_CONFIG,
  formatConfigValue,
  parseConfigValue,
  type Config,
} from '../../src/runtime/config.js'
import { loadConfig } from '../../src/runtime/config-load.js'
import { splitConfigLine } from '../../src/runtime/config-line.js'
import { makeTempDir } from '../helpers/temp-dir.js'
import { RawClient, askOnce, encodeCommand } from '../helpers/resp.js'
import { runTool } from '../helpers/tools.js'
import { BFS_MAIN, startChildServer, type ChildServer } from '../helpers/child-server.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The ConfigError loadConfig throws, so that its message can be checked. */
function configError(fileText: string | undefined, flags: string[] = []): ConfigError {
  try {
    loadConfig(fileText, flags)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return error as ConfigError
  }
  throw new Error('loadConfig accepted it')
}

describe('loadConfig', () => {
  it('with nothing gives every default', () => {
    expect(loadConfig(undefined)).toEqual(DEFAULT_CONFIG)
    expect(loadConfig('')).toEqual(DEFAULT_CONFIG)
    expect(loadConfig(undefined, [])).toEqual(DEFAULT_CONFIG)
  })

  it('the defaults are the documented ones', () => {
    expect(DEFAULT_CONFIG).toMatchObject({
      port: 6381,
      bind: '127.0.0.1',
      'default-error-rate': 0.01,
      'default-capacity': 100,
      'default-expansion': 2,
      save: '3600 1 300 100 60 10000',
      appendonly: true,
      appendfsync: 'everysec',
      requirepass: '',
    })
  })

  it('reads file text with comments, blank lines, quotes and CRLF', () => {
    const text = [
      '# a comment line',
      '',
      'port 7000',
      '   # an indented comment',
      '  bind "127.0.0.1 ::1"  ',
      'logfile "/var/log/b fs.log"',
      "requirepass 'se cret'",
      'default-error-rate 0.001',
      'default-capacity 5000',
      'default-expansion 4',
      'max-filter-bytes 1gb',
      'maxclients 50',
      'appendonly no',
      'appendfsync always',
      'loglevel WARNING',
      'dir "data dir"',
    ].join('\r\n')
    expect(loadConfig(text)).toEqual({
      ...DEFAULT_CONFIG,
      port: 7000,
      bind: '127.0.0.1 ::1',
      logfile: '/var/log/b fs.log',
      requirepass: 'se cret',
      'default-error-rate': 0.001,
      'default-capacity': 5000,
      'default-expansion': 4,
      'max-filter-bytes': 1024 ** 3,
      maxclients: 50,
      appendonly: false,
      appendfsync: 'always',
      loglevel: 'warning',
      dir: 'data dir',
    })
  })

  it('double-quoted escapes and an empty quoted value', () => {
    expect(loadConfig('requirepass "a\\"b\\x41\\n"').requirepass).toBe('a"bA\n')
    expect(loadConfig('logfile ""').logfile).toBe('')
  })

  it('memory units as redis.conf: k=1000, kb=1024, m, mb, g, gb', () => {
    expect(loadConfig('max-filter-bytes 1k')['max-filter-bytes']).toBe(1000)
    expect(loadConfig('max-filter-bytes 1kb')['max-filter-bytes']).toBe(1024)
    expect(loadConfig('max-filter-bytes 2MB')['max-filter-bytes']).toBe(2 * 1024 * 1024)
    expect(loadConfig('max-filter-bytes 3m')['max-filter-bytes']).toBe(3_000_000)
    expect(loadConfig('max-filter-bytes 0')['max-filter-bytes']).toBe(0)
  })

  it('later lines win, and flags override the file', () => {
    expect(loadConfig('port 7000\nport 7001').port).toBe(7001)
    const config = loadConfig('port 7000\ndefault-capacity 10\nappendonly yes', [
      '--port',
      '7002',
      '--appendonly',
      'no',
    ])
    expect(config.port).toBe(7002)
    expect(config.appendonly).toBe(false)
    expect(config['default-capacity']).toBe(10)
    expect(loadConfig(undefined, ['--bind', '0.0.0.0']).bind).toBe('0.0.0.0')
  })

  it('save lines accumulate; save "" clears', () => {
    expect(loadConfig('save 900 1').save).toBe('900 1')
    expect(loadConfig('save 900 1\nsave 300 10').save).toBe('900 1 300 10')
    expect(loadConfig('save 900 1 300 10\nsave 60 10000').save).toBe('900 1 300 10 60 10000')
    expect(loadConfig('save ""').save).toBe('')
    expect(loadConfig('save 900 1\nsave ""').save).toBe('')
    expect(loadConfig('save 900 1\nsave ""\nsave 60 5').save).toBe('60 5')
  })

  it('a save flag replaces the file rules; save "" as a flag disables', () => {
    expect(loadConfig('save 900 1', ['--save', '60', '5']).save).toBe('60 5')
    expect(loadConfig('save 900 1', ['--save', '60 5', '--save', '10 1']).save).toBe('60 5 10 1')
    expect(loadConfig('save 900 1', ['--save', '']).save).toBe('')
    expect(loadConfig(undefined, ['--save', '']).save).toBe('')
  })

  it('save rules as redis 7.0 reads them: seconds at least 1, so "0 0" (a save on every check) is refused', () => {
    expect(configError('save 0 0').message).toBe('config line 1 (save): Invalid save parameters')
    expect(configError(undefined, ['--save', '0 0']).message).toBe('--save: Invalid save parameters')
    expect(configError(undefined, ['--save', '60 -1']).message).toBe('--save: Invalid save parameters')
    expect(loadConfig(undefined, ['--save', '+60 05']).save).toBe('60 5')
  })

  it('an unknown key names the key (file and flag)', () => {
    expect(configError('bogus 1').message).toMatch(/'bogus'/)
    expect(configError('port 1\nbogus-key yes').message).toMatch(/line 2.*bogus-key|bogus-key.*line 2/)
    expect(configError(undefined, ['--bogus', '1']).message).toMatch(/bogus/)
  })

  it('a bad value names the key', () => {
    const cases: [string, string][] = [
      ['port abc', 'port'],
      ['port 70000', 'port'],
      ['port -1', 'port'],
      ['maxclients 0', 'maxclients'],
      ['default-error-rate 1', 'default-error-rate'],
      ['default-error-rate 0', 'default-error-rate'],
      ['default-error-rate x', 'default-error-rate'],
      ['default-capacity 0', 'default-capacity'],
      ['default-capacity 1.5', 'default-capacity'],
      ['default-expansion 0', 'default-expansion'],
      ['max-filter-bytes lots', 'max-filter-bytes'],
      ['appendonly maybe', 'appendonly'],
      ['appendfsync sometimes', 'appendfsync'],
      ['loglevel loud', 'loglevel'],
      ['save 900', 'save'],
      ['save 900 x', 'save'],
      ['port 1 2', 'port'],
    ]
    for (const [line, key] of cases) {
      expect(configError(line).message, line).toContain(key)
    }
    expect(configError(undefined, ['--port', 'x']).message).toContain('port')
  })

  it('unbalanced quotes and a bare argument are errors', () => {
    expect(configError('requirepass "abc').message).toMatch(/line 1/)
    expect(configError(undefined, ['port', '1']).message).toMatch(/port/)
  })
})

describe('bfs.conf.example', () => {
  const text = readFileSync(path.join(ROOT, 'bfs.conf.example'), 'utf8')

  it('parses to exactly the defaults', () => {
    expect(loadConfig(text)).toEqual(DEFAULT_CONFIG)
  })

  it('lists every key of CONFIG_KEYS once, in the same order', () => {
    const keys = text
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'))
      .map((line) => line.split(/\s+/)[0])
    expect(keys).toEqual(CONFIG_KEYS.map((spec) => spec.name))
  })

  it('every key is documented by a comment above it', () => {
    const lines = text.split(/\r?\n/)
    for (const spec of CONFIG_KEYS) {
      const at = lines.findIndex((line) => line.startsWith(`${spec.name} `) || line === spec.name)
      expect(at, spec.name).toBeGreaterThan(0)
      // Walk up over sibling keys (a group shares one comment) to the comment.
      let above = at - 1
      while (above > 0 && lines[above]!.trim() !== '' && !lines[above]!.startsWith('#')) above--
      expect(lines[above]!.startsWith('#'), spec.name).toBe(true)
    }
    // rename-command and user, no CONFIG GET keys, have no default line: their comments show them.
    expect(lines.some((line) => line.startsWith('# rename-command '))).toBe(true)
    expect(lines.some((line) => line.startsWith('# user '))).toBe(true)
  })

  it.each(CONFIG_KEYS.map((spec) => [spec.name, spec] as const))(
    "the value of %s is its row's default, as CONFIG GET shows it",
    (name, spec) => {
      const line = text.split(/\r?\n/).find((line) => line.startsWith(`${name} `))!
      const value = parseConfigValue(spec, splitConfigLine(line)!.slice(1), DEFAULT_CONFIG)
      const config: Config = { ...DEFAULT_CONFIG, [name]: value }
      expect(formatConfigValue(config, name)).toBe(formatConfigValue(DEFAULT_CONFIG, name))
    },
  )
})

describe('CONFIG_ROWS', () => {
  it('holds every key of CONFIG_KEYS, in its order, then user and rename-command', () => {
    expect(CONFIG_ROWS.map((row) => row.name)).toEqual([
      ...CONFIG_KEYS.map((spec) => spec.name),
      'user',
      'rename-command',
    ])
  })

  it.each(CONFIG_ROWS.filter((row) => row.unit !== undefined).map((row) => [row.name, row] as const))(
    'the doc line of %s names its unit',
    (_name, row) => {
      expect(row.description).toContain(row.unit)
    },
  )

  it.each(
    CONFIG_ROWS.flatMap((row) =>
      row.kind.type === 'enum' ? [[row.name, row.kind.values, row.description] as const] : [],
    ),
  )('the doc line of %s names every value it takes', (_name, values, description) => {
    for (const value of values) expect(description).toContain(value)
  })

  it("DEFAULT_CONFIG is frozen, and each row's default passes its own parser unchanged", () => {
    expect(Object.isFrozen(DEFAULT_CONFIG)).toBe(true)
    for (const row of CONFIG_KEYS) {
      expect(parseConfigValue(row, [formatConfigValue(DEFAULT_CONFIG, row.name)]), row.name).toEqual(row.default)
    }
  })
})

describe('the bfs command line (dist/main.js)', () => {
  let dir: string

  beforeAll(() => {
    // `npm test` builds first (pretest); when vitest runs alone, build once here.
    if (!existsSync(BFS_MAIN)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'pipe' })
    dir = makeTempDir('bfs-cli-')
  }, 120_000)

  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  it('--bogus exits 1 with one stderr line naming the key', async () => {
    const result = await runTool(process.execPath, [BFS_MAIN, '--port', '0', '--bogus', '1'])
    expect(result.code).toBe(1)
    const lines = result.stderr.split('\n').filter((line) => line !== '')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain('bogus')
    expect(result.stdout).not.toContain('Ready to accept connections')
  })

  it('a bad value exits 1 naming the key', async () => {
    const result = await runTool(process.execPath, [BFS_MAIN, '--port', '0', '--default-error-rate', '2'])
    expect(result.code).toBe(1)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain('default-error-rate')
  })

  it('a missing config file exits 1 naming the file', async () => {
    const missing = path.join(dir, 'no-such.conf')
    const result = await runTool(process.execPath, [BFS_MAIN, missing])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('no-such.conf')
  })

  it('--version prints the version', async () => {
    const result = await runTool(process.execPath, [BFS_MAIN, '--version'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^bfs v\d+\.\d+\.\d+/)
  })

  /** Starts dist/main.js and waits for it to listen; returns the process and its port. */
  async function launch(args: string[]): Promise<ChildServer> {
    const started = await startChildServer(args)
    expect(started.port).toBeGreaterThan(0)
    return started
  }

  it('starts, logs Ready to accept connections, answers PING, and exits 0 on SIGTERM', async () => {
    const { bfs, port } = await launch(['--port', '0', '--dir', dir, '--appendonly', 'no', '--save', ''])
    try {
      expect(await askOnce(port, 'PING')).toBe('+PONG\r\n')
      expect(await askOnce(port, 'BF.ADD', 'cli', 'a')).toBe(':1\r\n')
      bfs.child.kill('SIGTERM')
      expect(await bfs.waitExit()).toBe(0)
      expect(bfs.stdout + bfs.stderr).toMatch(/SIGTERM/)
    } finally {
      bfs.kill()
    }
  })

  it('exits 0 on SIGINT too', async () => {
    const { bfs, port } = await launch(['--port', '0', '--dir', dir, '--appendonly', 'no', '--save', ''])
    try {
      expect(await askOnce(port, 'PING')).toBe('+PONG\r\n')
      bfs.child.kill('SIGINT')
      expect(await bfs.waitExit()).toBe(0)
    } finally {
      bfs.kill()
    }
  })

  it('reads a config file, and flags override it', async () => {
    const file = path.join(dir, 'test.conf')
    writeFileSync(
      file,
      ['# test', 'port 1', `dir "${dir}"`, 'appendonly no', 'save ""', 'default-capacity 777', ''].join('\n'),
    )
    const { bfs, port } = await launch([file, '--port', '0'])
    try {
      const reply = await askOnce(port, 'CONFIG', 'GET', 'default-capacity')
      expect(reply).toBe('*2\r\n$16\r\ndefault-capacity\r\n$3\r\n777\r\n')
      expect(await askOnce(port, 'BF.ADD', 'fromfile', 'x')).toBe(':1\r\n')
      const info = await askOnce(port, 'BF.INFO', 'fromfile', 'CAPACITY')
      expect(info).toBe('*1\r\n:777\r\n')
      bfs.child.kill('SIGTERM')
      expect(await bfs.waitExit()).toBe(0)
    } finally {
      bfs.kill()
    }
  })

  it('SHUTDOWN from a client stops the process with exit 0', async () => {
    const { bfs, port } = await launch(['--port', '0', '--dir', dir, '--appendonly', 'no', '--save', ''])
    try {
      const client = await RawClient.connect(port)
      client.write(encodeCommand(['SHUTDOWN', 'NOSAVE']))
      await client.waitClosed()
      expect(await bfs.waitExit()).toBe(0)
    } finally {
      bfs.kill()
    }
  })
})
