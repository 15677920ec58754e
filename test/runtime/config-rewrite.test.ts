/**
 * CONFIG REWRITE's text (runtime/config-rewrite.ts) against goldens: the first was produced by a
 * real redis-server 7.0.15 from the same file and the same CONFIG SETs (its own lines for keys
 * bfs lacks left out, its appended lines in bfs's row order, bfs's defaults where they differ),
 * then round trips through loadConfig.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  CONFIG_ALIASES,
  CONFIG_KEYS,
  DEFAULT_CONFIG,
  parseConfigValue,
  type Config,
  type ConfigKey,
  type ConfigKeySpec,
} from '../../src/runtime/config.js'
import { loadConfig } from '../../src/runtime/config-load.js'
import {
  formatMemoryValue,
  quoteConfigValue,
  REWRITE_SIGNATURE,
  rewriteConfigText,
} from '../../src/runtime/config-rewrite.js'

const DIR = '/var/lib/bfs'

/** The configuration `text` loads to, with CONFIG SET-style changes on top. */
function configWith(text: string, changes: Partial<Record<ConfigKey, string>> = {}): Config {
  const config = loadConfig(text) as unknown as Record<string, unknown>
  for (const [name, value] of Object.entries(changes)) {
    const spec = CONFIG_KEYS.find((row) => row.name === name)!
    config[name] = parseConfigValue(spec, [value], config as unknown as Config)
  }
  return config as unknown as Config
}

describe('rewriteConfigText', () => {
  it('as redis 7.0.15 rewrote the same file after the same CONFIG SETs', () => {
    const old = [
      '# bfs test config',
      '   # indented comment',
      'port 17392',
      'save 900 1',
      'save 300 10',
      '',
      'slaveof 127.0.0.1 1',
      'slave-read-only no',
      'replica-read-only no',
      'timeout 0',
      'rename-command FLUSHALL ""',
      'maxmemory 1gb\t',
      'logfile ""',
      'client-output-buffer-limit pubsub 32mb 8mb 60',
      'appendonly no\r',
      'dir /tmp/x\r',
      '',
    ].join('\n')
    const config = configWith(old, {
      maxmemory: '3000',
      timeout: '7',
      requirepass: 'sec ret',
      masterauth: 'x"y',
      save: '60 5',
      'min-replicas-to-write': '2',
      'tcp-keepalive': '300',
      'replica-priority': '5',
      'client-output-buffer-limit': 'replica 1gb 100kb 10',
      loglevel: 'warning',
    })
    expect(rewriteConfigText(old, config, DIR)).toBe(
      [
        '# bfs test config',
        '# indented comment',
        'port 17392',
        'save 60 5',
        '',
        'replicaof 127.0.0.1 1',
        'replica-read-only no',
        '',
        'timeout 7',
        'rename-command FLUSHALL ""',
        'maxmemory 3000',
        'logfile ""',
        // The first class takes the key's first old line (redis wrote `normal 0 0 0`, its default).
        'client-output-buffer-limit normal 256mb 0 0',
        'appendonly no',
        `dir "${DIR}"`,
        '',
        REWRITE_SIGNATURE,
        'client-output-buffer-limit replica 1gb 100kb 10',
        'loglevel warning',
        'requirepass "sec ret"',
        'masterauth "x\\"y"',
        'min-replicas-to-write 2',
        'replica-priority 5',
        '',
      ].join('\n'),
    )
  })

  it('a master has no replicaof line: any is removed (redis, after SLAVEOF NO ONE)', () => {
    const old = 'port 1\nslaveof 127.0.0.1 1\nreplicaof 127.0.0.1 2\n'
    expect(rewriteConfigText(old, { ...configWith(old, { save: '' }), replicaof: '' }, DIR)).toBe(
      `port 1\n\n${REWRITE_SIGNATURE}\ndir "${DIR}"\nsave ""\n`,
    )
  })

  it('a replica always has one, appended if the file has none', () => {
    const config = { ...DEFAULT_CONFIG, replicaof: 'db-1.example 6390', save: '' }
    expect(rewriteConfigText('# mine\n', config, DIR)).toBe(
      `# mine\n\n${REWRITE_SIGNATURE}\ndir "${DIR}"\nsave ""\nreplicaof db-1.example 6390\n`,
    )
  })

  it('no file (or an empty one): dir and save always, other keys only when not at their default', () => {
    expect(rewriteConfigText('', DEFAULT_CONFIG, DIR)).toBe(
      `${REWRITE_SIGNATURE}\ndir "${DIR}"\nsave 3600 1\nsave 300 100\nsave 60 10000\n`,
    )
    const config = {
      ...DEFAULT_CONFIG,
      save: '',
      maxmemory: 2 * 1024 ** 3,
      appendonly: false,
      'default-error-rate': 0.001,
    }
    expect(rewriteConfigText('', config, DIR)).toBe(
      `${REWRITE_SIGNATURE}\ndir "${DIR}"\nmaxmemory 2gb\ndefault-error-rate 0.001\nsave ""\nappendonly no\n`,
    )
  })

  it('keys at their default that the file names stay, in place; unset strings and the default bind go', () => {
    const old =
      'bind 127.0.0.1\ntimeout 0\nrequirepass ""\nmasterauth ""\nreplica-announce-ip ""\nhttp-bind ""\nsave ""\n'
    expect(rewriteConfigText(old, configWith(old), DIR)).toBe(
      `\ntimeout 0\n\nhttp-bind ""\nsave ""\n\n${REWRITE_SIGNATURE}\ndir "${DIR}"\n`,
    )
    const bound = { ...configWith(old), bind: '127.0.0.1 ::1', 'replica-announce-ip': '10.0.0.5' }
    expect(rewriteConfigText(old, bound, DIR)).toBe(
      `bind "127.0.0.1 ::1"\ntimeout 0\n\nreplica-announce-ip "10.0.0.5"\nhttp-bind ""\nsave ""\n\n${REWRITE_SIGNATURE}\ndir "${DIR}"\n`,
    )
    expect(rewriteConfigText('bind 127.0.0.1\n', { ...DEFAULT_CONFIG, bind: '0.0.0.0' }, DIR)).toMatch(
      /^bind 0\.0\.0\.0\n/,
    )
  })

  it('a line naming no key bfs knows, or that does not split, is kept as a comment', () => {
    const old = 'no-such-key no\nport "1\nport 7000\n'
    expect(rewriteConfigText(old, { ...DEFAULT_CONFIG, port: 7000, save: '' }, DIR)).toBe(
      `# ??? no-such-key no\n# ??? port "1\nport 7000\n\n${REWRITE_SIGNATURE}\ndir "${DIR}"\nsave ""\n`,
    )
  })

  it("a stock redis.conf's directives that bfs ignores, and include lines, are kept as they are", () => {
    const old = 'hz 10\ndbfilename dump.rdb\ninclude /etc/bfs/local.conf\nport 7000\n'
    expect(rewriteConfigText(old, { ...DEFAULT_CONFIG, port: 7000, save: '' }, DIR)).toBe(
      `hz 10\ndbfilename dump.rdb\ninclude /etc/bfs/local.conf\nport 7000\n\n${REWRITE_SIGNATURE}\ndir "${DIR}"\nsave ""\n`,
    )
  })

  it('the signature is written once: a file that has it gets no second one', () => {
    const once = rewriteConfigText('port 7000\n', { ...DEFAULT_CONFIG, port: 7000, timeout: 5 }, DIR)
    const twice = rewriteConfigText(once, { ...DEFAULT_CONFIG, port: 7000, timeout: 5, maxclients: 10 }, DIR)
    expect(twice.split(REWRITE_SIGNATURE)).toHaveLength(2)
    // The file's last newline leaves a blank line before what is appended next, as redis does.
    expect(twice.endsWith('save 60 10000\n\nmaxclients 10\n')).toBe(true)
  })

  it("rewrites of its own output change nothing past one blank line at the end (redis: the file's last newline)", () => {
    const example = readFileSync(new URL('../../bfs.conf.example', import.meta.url), 'utf8')
    const config = { ...configWith(example), port: 7000, replicaof: 'h 1', 'repl-backlog-size': 3 * 1024 ** 2 }
    const once = rewriteConfigText(example, config, DIR)
    const twice = rewriteConfigText(once, config, DIR)
    expect(twice).toBe(`${once}\n`)
    expect(rewriteConfigText(twice, config, DIR)).toBe(twice)
  })

  it('bfs.conf.example rewritten at its defaults keeps every comment, in order', () => {
    const example = readFileSync(new URL('../../bfs.conf.example', import.meta.url), 'utf8')
    const comments = (text: string): string[] => text.split('\n').filter((line) => line.startsWith('#'))
    const rewritten = rewriteConfigText(example, configWith(example), DIR)
    expect(comments(rewritten)).toEqual([...comments(example), REWRITE_SIGNATURE])
    expect(loadConfig(rewritten)).toEqual({ ...DEFAULT_CONFIG, dir: DIR })
  })

  it('every key set away from its default reads back the same, into an empty file and into bfs.conf.example', () => {
    const config = Object.fromEntries(CONFIG_KEYS.map((spec) => [spec.name, otherValue(spec)])) as unknown as Config
    config.dir = DIR
    const back = { ...config, 'rename-command': DEFAULT_CONFIG['rename-command'], user: DEFAULT_CONFIG.user }
    expect(loadConfig(rewriteConfigText('', config, DIR))).toEqual(back)
    const example = readFileSync(new URL('../../bfs.conf.example', import.meta.url), 'utf8')
    expect(loadConfig(rewriteConfigText(example, config, DIR))).toEqual(back)
  })

  it("the aliases in a file are rewritten under the key's own name, in place", () => {
    const values: Record<string, string> = {
      slaveof: 'h 1',
      'slave-read-only': 'no',
      'slave-serve-stale-data': 'no',
      'repl-ping-slave-period': '3',
      'min-slaves-to-write': '3',
      'min-slaves-max-lag': '3',
      'slave-priority': '3',
      'slave-announce-ip': 'x',
      'slave-announce-port': '3',
    }
    expect(Object.keys(values)).toEqual([...CONFIG_ALIASES.keys()])
    const old = Object.entries(values)
      .map(([alias, value]) => `${alias} ${value}`)
      .join('\n')
    const lines = rewriteConfigText(old, configWith(old), DIR).split('\n')
    expect(lines.slice(0, CONFIG_ALIASES.size)).toEqual([
      'replicaof h 1',
      'replica-read-only no',
      'replica-serve-stale-data no',
      'repl-ping-replica-period 3',
      'min-replicas-to-write 3',
      'min-replicas-max-lag 3',
      'replica-priority 3',
      'replica-announce-ip "x"',
      'replica-announce-port 3',
    ])
  })
})

describe('quoteConfigValue and formatMemoryValue (sdscatrepr, rewriteConfigFormatMemory)', () => {
  it('escapes as redis, keeps text past ASCII, and reads back', () => {
    const value = 'a "b"\\c\n\r\t\x07\b\x01\x7f é 日本'
    expect(quoteConfigValue(value)).toBe('"a \\"b\\"\\\\c\\n\\r\\t\\a\\b\\x01\\x7f é 日本"')
    expect(loadConfig(`requirepass ${quoteConfigValue(value)}`).requirepass).toBe(value)
  })

  it('whole gb, mb and kb, else bytes', () => {
    expect([0, 1, 1000, 1024, 1536, 1024 ** 2, 5 * 1024 ** 3, 1024 ** 3 + 1024].map(formatMemoryValue)).toEqual([
      '0',
      '1',
      '1000',
      '1kb',
      '1536',
      '1mb',
      '5gb',
      '1048577kb',
    ])
  })
})

/** A value of the key other than its default, that its parser takes. */
function otherValue(spec: ConfigKeySpec): Config[ConfigKey] {
  const kind = spec.kind
  switch (kind.type) {
    case 'integer':
    case 'bytes':
      return (spec.default as number) + 1 <= kind.max ? (spec.default as number) + 1 : (spec.default as number) - 1
    case 'float':
      return 0.125
    case 'octal':
      return 0o700
    case 'string':
      return spec.name === 'bind' ? '127.0.0.1 ::1' : `${spec.name} "q"\\ \t é`
    case 'enum':
      return kind.values.find((value) => value !== spec.default)!
    case 'boolean':
      return !(spec.default as boolean)
    case 'save':
      return '10 1 20 2'
    case 'output-buffer-limit':
      return parseConfigValue(spec, ['normal 1mb 2000 3 replica 1gb 100kb 10 pubsub 0 0 0'])
    case 'replicaof':
      return 'db-1.example 6390'
    case 'rename':
    case 'user':
      return spec.default
  }
}
