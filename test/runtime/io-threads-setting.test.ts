/**
 * The io-threads setting: the key as a file, flags and CONFIG GET take and show it (`auto` or
 * 1..128, kept as 0 for auto), io-threads-do-reads beside it, and how a start resolves it
 * against the cores and the Node.js version (runtime/io-threads-setting.ts).
 */
import { describe, expect, it } from 'vitest'
import { DEFAULT_CONFIG, configKeySpec, formatConfigValue, parseConfigValue } from '../../src/runtime/config.js'
import { loadConfig } from '../../src/runtime/config-load.js'
import { rewriteConfigText } from '../../src/runtime/config-rewrite.js'
import { nodeHasReusePort, resolveIoThreads } from '../../src/runtime/io-threads-setting.js'

const DIR = '/srv/bfs'

describe('nodeHasReusePort', () => {
  it.each([
    ['v22.12.0', true],
    ['22.12.0', true],
    ['v22.20.1', true],
    ['v23.1.0', true],
    ['v24.0.0', true],
    ['v26.3.1', true],
    ['v22.11.0', false],
    ['v23.0.0', false],
    ['v20.20.2', false],
    ['v18.19.0', false],
    ['not a version', false],
  ])('%s: %s', (version, has) => {
    expect(nodeHasReusePort(version)).toBe(has)
  })
})

describe('resolveIoThreads', () => {
  it('auto is one thread below 4 cores, else one less than the cores, at most 8', () => {
    const auto = (cores: number): number => resolveIoThreads(0, cores, 'v24.11.1').threads
    expect([1, 2, 3, 4, 5, 8, 9, 10, 64].map(auto)).toEqual([1, 1, 1, 3, 4, 7, 8, 8, 8])
  })

  it('a number is taken as is, whatever the cores', () => {
    expect(resolveIoThreads(1, 64, 'v24.11.1')).toEqual({ threads: 1 })
    expect(resolveIoThreads(6, 2, 'v22.12.0')).toEqual({ threads: 6 })
    expect(resolveIoThreads(128, 4, 'v23.1.0')).toEqual({ threads: 128 })
  })

  it('without reusePort a number above 1 is one thread, with a line to log', () => {
    expect(resolveIoThreads(4, 16, 'v20.20.2')).toEqual({
      threads: 1,
      warning: 'io-threads 4 needs Node.js 22.12 or later (this is 20.20.2): serving from one thread',
    })
    expect(resolveIoThreads(2, 16, 'v22.11.0').warning).toContain('(this is 22.11.0)')
  })

  it('without reusePort auto is one thread, silently; 1 asked for is no warning', () => {
    expect(resolveIoThreads(0, 16, 'v20.20.2')).toEqual({ threads: 1 })
    expect(resolveIoThreads(0, 2, 'v20.20.2')).toEqual({ threads: 1 })
    expect(resolveIoThreads(1, 16, 'v20.20.2')).toEqual({ threads: 1 })
  })
})

describe('the io-threads key', () => {
  it('defaults to auto (0), shown as auto', () => {
    expect(DEFAULT_CONFIG['io-threads']).toBe(0)
    expect(formatConfigValue(DEFAULT_CONFIG, 'io-threads')).toBe('auto')
  })

  it('takes auto (any case) or 1..128 from a file and from flags', () => {
    expect(loadConfig('io-threads 4')['io-threads']).toBe(4)
    expect(loadConfig('io-threads AUTO')['io-threads']).toBe(0)
    expect(loadConfig('io-threads 4', ['--io-threads', 'auto'])['io-threads']).toBe(0)
    expect(loadConfig(undefined, ['--io-threads', '128'])['io-threads']).toBe(128)
    expect(loadConfig(undefined, ['--io-threads', '1'])['io-threads']).toBe(1)
  })

  it.each(['0', '129', '-1', '2.5', 'x', '', '1e2', ' 3'])('refuses %j, naming the key', (value) => {
    expect(() => loadConfig(`io-threads "${value}"`)).toThrow(
      /\(io-threads\): argument must be auto or between 1 and 128 inclusive/,
    )
  })

  it('CONFIG GET and CONFIG REWRITE show the number a start put in its place', () => {
    const started = { ...DEFAULT_CONFIG, 'io-threads': 3 }
    expect(formatConfigValue(started, 'io-threads')).toBe('3')
    expect(rewriteConfigText('io-threads auto\n', started, DIR).split('\n')[0]).toBe('io-threads 3')
    // At auto (the default) a file's line is kept as auto, and none is added.
    expect(rewriteConfigText('io-threads auto\n', DEFAULT_CONFIG, DIR).split('\n')[0]).toBe('io-threads auto')
    expect(rewriteConfigText('', DEFAULT_CONFIG, DIR)).not.toContain('io-threads')
  })

  it('is read only at run time, as in redis 7.0', () => {
    expect(configKeySpec('io-threads')!.mutable).toBe(false)
  })
})

describe('io-threads-do-reads', () => {
  it('takes yes or no, no by default, read only at run time as in redis 7.0', () => {
    const spec = configKeySpec('io-threads-do-reads')!
    expect(formatConfigValue(DEFAULT_CONFIG, 'io-threads-do-reads')).toBe('no')
    expect(loadConfig('io-threads-do-reads yes')['io-threads-do-reads']).toBe(true)
    expect(loadConfig(undefined, ['--io-threads-do-reads', 'no'])['io-threads-do-reads']).toBe(false)
    expect(() => parseConfigValue(spec, ['maybe'])).toThrow("argument must be 'yes' or 'no'")
    expect(spec.mutable).toBe(false)
  })
})
