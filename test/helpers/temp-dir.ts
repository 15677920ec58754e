/** Temporary directories for tests: made under the system's temporary directory, removed with all they hold. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, afterEach } from 'vitest'

/** A fresh, empty directory whose name starts with `prefix`. */
export function makeTempDir(prefix = 'bfs-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix))
}

/** Removes `dir` and everything in it (nothing if it is gone already). */
export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true })
}

/** A directory made now and removed after all the tests of the enclosing file or describe block. */
export function tempDirRemovedAfterAll(prefix?: string): string {
  const dir = makeTempDir(prefix)
  afterAll(() => removeTempDir(dir))
  return dir
}

/**
 * Registers an afterAll (where it is called: a file or a describe block) that removes every
 * directory the returned function made; for directories that outlive a test.
 */
export function tempDirsRemovedAfterAll(defaultPrefix?: string): (prefix?: string) => string {
  const dirs: string[] = []
  afterAll(() => {
    for (const dir of dirs.splice(0)) removeTempDir(dir)
  })
  return (prefix = defaultPrefix) => {
    const dir = makeTempDir(prefix)
    dirs.push(dir)
    return dir
  }
}

/** Registers an afterEach that removes every directory the returned function made during the test. */
export function tempDirsRemovedAfterEach(defaultPrefix?: string): (prefix?: string) => string {
  const dirs: string[] = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) removeTempDir(dir)
  })
  return (prefix = defaultPrefix) => {
    const dir = makeTempDir(prefix)
    dirs.push(dir)
    return dir
  }
}
