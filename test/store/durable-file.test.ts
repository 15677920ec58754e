/**
 * The durable file helpers against a real temporary directory: an atomic replace leaves the new
 * content and no temp file, a failed one leaves the old content and no temp file, and the one
 * error policy: a directory that cannot be opened for its fsync fails the operation (sync and
 * async alike) instead of being skipped.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  replaceFileSync,
  syncDirectory,
  syncDirectorySync,
  tryUnlink,
  tryUnlinkSync,
  writeFileAsync,
  writePiecesSync,
} from '../../src/store/durable-file.js'
import { makeTempDir } from '../helpers/temp-dir.js'

const dir = makeTempDir('bfs-durable-file-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)

describe('durable files', () => {
  it('replaces a file atomically, leaving no temp file', () => {
    const target = path.join(dir, 'replace-me')
    writeFileSync(target, 'old')
    expect(replaceFileSync(target, [bytes('new '), bytes('content')], `${target}.1.tmp`)).toBe(11)
    expect(readFileSync(target, 'utf8')).toBe('new content')
    expect(readdirSync(dir).filter((name) => name.startsWith('replace-me'))).toEqual(['replace-me'])
  })

  it('keeps the target and deletes the temp file when the rename fails', () => {
    // A rename over a non-empty directory fails after the temp file was written and fsynced.
    const target = path.join(dir, 'a-directory')
    mkdirSync(path.join(target, 'inside'), { recursive: true })
    const temp = `${target}.1.tmp`
    expect(() => replaceFileSync(target, [bytes('data')], temp)).toThrow(/EISDIR|ENOTEMPTY|EEXIST/)
    expect(existsSync(temp)).toBe(false)
    expect(existsSync(path.join(target, 'inside'))).toBe(true)
  })

  it('writes new files whole and fsynced, refusing to overwrite unless told', async () => {
    const file = path.join(dir, 'pieces')
    expect(writePiecesSync(file, [bytes('ab'), bytes('cd')])).toBe(4)
    expect(() => writePiecesSync(file, [bytes('x')])).toThrow(/EEXIST/)
    expect(writePiecesSync(file, [bytes('xyz')], 'w')).toBe(3)
    expect(readFileSync(file, 'utf8')).toBe('xyz')
    await writeFileAsync(file, bytes('async'))
    expect(readFileSync(file, 'utf8')).toBe('async')
  })

  it('fails the operation when the directory fsync fails, synchronously and not', async () => {
    const missing = path.join(dir, 'no-such-directory')
    expect(() => syncDirectorySync(missing)).toThrow(/ENOENT/)
    await expect(syncDirectory(missing)).rejects.toThrow(/ENOENT/)
    expect(() => syncDirectorySync(dir)).not.toThrow()
    await expect(syncDirectory(dir)).resolves.toBeUndefined()
  })

  it('cleans up without failing on a file that is gone', async () => {
    const file = path.join(dir, 'gone')
    writeFileSync(file, 'x')
    tryUnlinkSync(file)
    expect(existsSync(file)).toBe(false)
    expect(() => tryUnlinkSync(file)).not.toThrow()
    await expect(tryUnlink(file)).resolves.toBeUndefined()
  })
})
