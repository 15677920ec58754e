/** safe-path: BF.SAVE / BF.LOAD paths stay inside dir, whatever the client sends. */
import { mkdirSync, symlinkSync, writeFileSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveSafePath, UnsafePathError } from '../../src/store/safe-path.js'
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.js'

let root: string
let dir: string
let outside: string

beforeAll(() => {
  root = realpathSync(makeTempDir('bfs-safe-path-'))
  dir = path.join(root, 'data')
  outside = path.join(root, 'outside')
  mkdirSync(path.join(dir, 'sub'), { recursive: true })
  mkdirSync(path.join(dir, 'snapshot'), { recursive: true })
  mkdirSync(outside)
  writeFileSync(path.join(dir, 'sub', 'f.bf'), 'x')
  writeFileSync(path.join(outside, 'secret'), 'x')
  symlinkSync(outside, path.join(dir, 'escape-dir'))
  symlinkSync(path.join(outside, 'secret'), path.join(dir, 'escape-file'))
  symlinkSync(path.join(dir, 'sub', 'f.bf'), path.join(dir, 'inside-link'))
  symlinkSync(path.join(dir, 'snapshot'), path.join(dir, 'snap-link'))
})

afterAll(() => removeTempDir(root))

const check = (p: string | Buffer, mode: 'read' | 'write' = 'read') =>
  resolveSafePath(dir, typeof p === 'string' ? Buffer.from(p) : p, mode, ['snapshot'], ['appendonly.aof.'])

describe('resolveSafePath', () => {
  it('accepts relative paths inside dir', () => {
    expect(check('sub/f.bf').absolute).toBe(path.join(dir, 'sub', 'f.bf'))
    expect(check('./sub//f.bf').relative).toBe(path.join('sub', 'f.bf'))
    expect(check('new.bf', 'write').absolute).toBe(path.join(dir, 'new.bf'))
    expect(check('inside-link').absolute).toBe(path.join(dir, 'sub', 'f.bf'))
  })

  it.each([
    ['/etc/passwd', /relative/],
    ['/tmp/x.bf', /relative/],
    ['../outside/secret', /'\.\.'/],
    ['sub/../../outside/secret', /'\.\.'/],
    ['sub/..', /'\.\.'/],
    ['', /empty/],
    ['a\0b', /NUL/],
    ['escape-dir/secret', /symlink/],
    ['escape-file', /symlink/],
    ['snapshot/MANIFEST', /own/],
    ['snap-link/MANIFEST', /own/],
    ['appendonly.aof.1.incr.aof', /own/],
    ['sub/', /directory/],
    ['missing.bf', /no such file/],
    ['nodir/x.bf', /no such directory/],
  ])('refuses %j', (p, message) => {
    const mode = p === 'appendonly.aof.1.incr.aof' || p === 'nodir/x.bf' ? 'write' : 'read'
    expect(() => check(p, mode)).toThrow(UnsafePathError)
    expect(() => check(p, mode)).toThrow(message)
  })

  it('refuses writing through a symlinked directory that leaves dir', () => {
    expect(() => check('escape-dir/new.bf', 'write')).toThrow(/symlink/)
  })

  it('refuses invalid UTF-8', () => {
    expect(() => check(Buffer.from([0x66, 0xff, 0x66]))).toThrow(/UTF-8/)
  })
})
