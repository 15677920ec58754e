/**
 * Path checks for BF.SAVE and BF.LOAD: a client names a file relative to the data directory and
 * must not reach anything outside it. Refused: an empty path, a NUL byte, invalid UTF-8, an
 * absolute path, any `..` component, the snapshot's own directory, and a path whose existing part
 * resolves (through symlinks) outside the data directory.
 */
import { realpathSync, lstatSync } from 'node:fs'
import path from 'node:path'

/** Why a path was refused; the message is the reply text after "ERR ". */
export class UnsafePathError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UnsafePathError'
  }
}

/** A checked path: `absolute` is what to open; `relative` is the normalised client path. */
export interface SafePath {
  readonly absolute: string
  readonly relative: string
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate)
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))
}

/**
 * Resolves a client's path against `dir`. `reserved` names top-level entries of `dir` a client may
 * not touch (the snapshot directory), `reservedPrefixes` top-level file name prefixes (the
 * append-only log's segments). For `mode: 'read'` the file must exist; for `'write'` its
 * parent directory must. Throws {@link UnsafePathError}.
 */
export function resolveSafePath(
  dir: string,
  raw: Uint8Array,
  mode: 'read' | 'write',
  reserved: readonly string[] = [],
  reservedPrefixes: readonly string[] = [],
): SafePath {
  const rawBytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
  const text = rawBytes.toString('utf8')
  if (!Buffer.from(text, 'utf8').equals(rawBytes)) {
    throw new UnsafePathError('path is not valid UTF-8')
  }
  if (text === '') throw new UnsafePathError('path is empty')
  if (text.includes('\0')) throw new UnsafePathError('path contains a NUL byte')
  if (path.isAbsolute(text) || /^[A-Za-z]:/.test(text) || text.startsWith('\\')) {
    throw new UnsafePathError('path must be relative to dir')
  }
  const parts = text.split(/[\\/]+/)
  if (parts.includes('..')) throw new UnsafePathError("path must not contain '..'")
  const relative = path.normalize(text)
  if (relative === '.' || relative.endsWith(path.sep) || parts[parts.length - 1] === '' || parts[parts.length - 1] === '.') {
    throw new UnsafePathError('path names a directory, not a file')
  }
  const top = relative.split(path.sep)[0]!
  if (reserved.includes(top)) throw new UnsafePathError(`path is inside bfs's own '${top}' directory`)

  const root = realpathSync(dir)
  const joined = path.join(root, relative)
  // The deepest existing directory on the way must resolve inside dir (a symlinked directory
  // pointing elsewhere is an escape), and so must the file itself when it exists.
  let parent: string
  try {
    parent = realpathSync(path.dirname(joined))
  } catch {
    throw new UnsafePathError('no such directory under dir')
  }
  if (!isInside(root, parent)) throw new UnsafePathError('path escapes dir through a symlink')
  const inReserved = (resolved: string): boolean =>
    reserved.some((name) => isInside(path.join(root, name), resolved)) ||
    (path.dirname(resolved) === root && reservedPrefixes.some((prefix) => path.basename(resolved).startsWith(prefix)))
  const target = path.join(parent, path.basename(joined))
  if (inReserved(parent) || inReserved(target)) throw new UnsafePathError("path is inside bfs's own files")
  let exists = true
  try {
    lstatSync(target)
  } catch {
    exists = false
  }
  if (exists) {
    let resolved: string
    try {
      resolved = realpathSync(target)
    } catch {
      throw new UnsafePathError('path is a dangling symlink')
    }
    if (!isInside(root, resolved)) throw new UnsafePathError('path escapes dir through a symlink')
    if (inReserved(resolved) || inReserved(target)) throw new UnsafePathError("path is inside bfs's own files")
    if (mode === 'read') return { absolute: resolved, relative }
    // Writing replaces the name (rename does not follow a symlink), so the directory entry is the target.
    return { absolute: target, relative }
  }
  if (mode === 'read') throw new UnsafePathError('no such file under dir')
  return { absolute: target, relative }
}
