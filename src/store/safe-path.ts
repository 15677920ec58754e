/**
 * Path checks for BF.SAVE and BF.LOAD: a client names a file relative to the data directory and
 * must not reach anything outside it. Refused: an empty path, a NUL byte, invalid UTF-8, an
 * absolute path, any `..` component, the snapshot's own directory, and a path whose existing part
 * resolves (through symlinks) outside the data directory. Every file bfs reads or writes is
 * refused too: an existing one by identity (device and inode, so also through a symlink or a
 * hard link), one not created yet by its resolved path (the next log segment, a temp file).
 * Which files are bfs's is store/owned-files.ts's list.
 */
import { realpathSync, lstatSync, readdirSync, readlinkSync, statSync, type Stats } from 'node:fs'
import path from 'node:path'
import { UNSAFE_PATH, ownDirectoryPathText, ownFilePathText } from '../protocol/error-texts.js'

/** Why a path was refused; the message is the reply text after "ERR ". */
export class UnsafePathError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UnsafePathError'
  }
}

/** A file of bfs's own that may live anywhere (the config file, the logfile: store/owned-files.ts lists them). */
export interface OwnFile {
  /** As configured: absolute, or relative to the working directory. '' for none. */
  readonly path: string
  /** What it is, for the refusal: 'config file'. */
  readonly what: string
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
  ownFiles: readonly OwnFile[] = [],
): SafePath {
  const rawBytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
  const text = rawBytes.toString('utf8')
  if (!Buffer.from(text, 'utf8').equals(rawBytes)) {
    throw new UnsafePathError(UNSAFE_PATH.NOT_UTF8)
  }
  if (text === '') throw new UnsafePathError(UNSAFE_PATH.EMPTY)
  if (text.includes('\0')) throw new UnsafePathError(UNSAFE_PATH.NUL_BYTE)
  if (path.isAbsolute(text) || /^[A-Za-z]:/.test(text) || text.startsWith('\\')) {
    throw new UnsafePathError(UNSAFE_PATH.ABSOLUTE)
  }
  const parts = text.split(/[\\/]+/)
  if (parts.includes('..')) throw new UnsafePathError(UNSAFE_PATH.DOT_DOT)
  const relative = path.normalize(text)
  if (
    relative === '.' ||
    relative.endsWith(path.sep) ||
    parts[parts.length - 1] === '' ||
    parts[parts.length - 1] === '.'
  ) {
    throw new UnsafePathError(UNSAFE_PATH.DIRECTORY)
  }
  const top = relative.split(path.sep)[0]!
  if (reserved.includes(top)) throw new UnsafePathError(ownDirectoryPathText(top))

  const root = realpathSync(dir)
  const joined = path.join(root, relative)
  // The deepest existing directory on the way must resolve inside dir (a symlinked directory
  // pointing elsewhere is an escape), and so must the file itself when it exists.
  let parent: string
  try {
    parent = realpathSync(path.dirname(joined))
  } catch {
    throw new UnsafePathError(UNSAFE_PATH.NO_SUCH_DIRECTORY)
  }
  if (!isInside(root, parent)) throw new UnsafePathError(UNSAFE_PATH.SYMLINK_ESCAPES)
  const inReserved = (resolved: string): boolean =>
    reserved.some((name) => isInside(path.join(root, name), resolved)) ||
    (path.dirname(resolved) === root && reservedPrefixes.some((prefix) => path.basename(resolved).startsWith(prefix)))
  const target = path.join(parent, path.basename(joined))
  if (inReserved(parent) || inReserved(target)) throw new UnsafePathError(UNSAFE_PATH.OWN_FILES)
  const own = ownFiles
    .filter((file) => file.path !== '')
    .map((file) => ({ what: file.what, at: resolveOwnPath(file.path) }))
  refuseOwnPath(own, target)
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
      // Through a symlink to an own file not created yet (the logfile): say so.
      const pointee = readLinkOrUndefined(target)
      if (pointee !== undefined) refuseOwnPath(own, resolveOwnPath(path.resolve(parent, pointee)))
      throw new UnsafePathError(UNSAFE_PATH.DANGLING_SYMLINK)
    }
    if (!isInside(root, resolved)) throw new UnsafePathError(UNSAFE_PATH.SYMLINK_ESCAPES)
    if (inReserved(resolved) || inReserved(target)) throw new UnsafePathError(UNSAFE_PATH.OWN_FILES)
    refuseOwnPath(own, resolved)
    refuseOwnIdentity(resolved, own, root, reserved, reservedPrefixes)
    if (mode === 'read') return { absolute: resolved, relative }
    // Writing replaces the name (rename does not follow a symlink), so the directory entry is the target.
    return { absolute: target, relative }
  }
  if (mode === 'read') throw new UnsafePathError(UNSAFE_PATH.NO_SUCH_FILE)
  return { absolute: target, relative }
}

/** Where an own file is, or would be once created: symlinks on the way resolved. */
export function resolveOwnPath(file: string): string {
  const absolute = path.resolve(file)
  try {
    return realpathSync(absolute)
  } catch {
    try {
      return path.join(realpathSync(path.dirname(absolute)), path.basename(absolute))
    } catch {
      return absolute
    }
  }
}

/** Refuses an own file by path, and its temporaries: `<name>.<anything>` in the same directory. */
function refuseOwnPath(own: readonly { what: string; at: string }[], resolved: string): void {
  for (const file of own) {
    if (file.at === resolved) throw new UnsafePathError(ownFilePathText(file.what, false))
    if (
      path.dirname(resolved) === path.dirname(file.at) &&
      path.basename(resolved).startsWith(`${path.basename(file.at)}.`)
    ) {
      throw new UnsafePathError(ownFilePathText(file.what, true))
    }
  }
}

function readLinkOrUndefined(link: string): string | undefined {
  try {
    return readlinkSync(link)
  } catch {
    return undefined
  }
}

function statOrUndefined(file: string): Stats | undefined {
  try {
    return statSync(file)
  } catch {
    return undefined
  }
}

/**
 * Refuses an existing file that is one of bfs's own under another name (a hard link). The own
 * files named by path are compared always; the snapshot's and the log's files (a directory of
 * them) only when the file has more than one name: otherwise its resolved path, already checked,
 * is its only name.
 */
function refuseOwnIdentity(
  resolved: string,
  own: readonly { what: string; at: string }[],
  root: string,
  reserved: readonly string[],
  reservedPrefixes: readonly string[],
): void {
  const stats = statOrUndefined(resolved)
  if (stats === undefined) return
  const same = (other: Stats | undefined): boolean =>
    other !== undefined && other.dev === stats.dev && other.ino === stats.ino
  for (const file of own)
    if (same(statOrUndefined(file.at))) throw new UnsafePathError(ownFilePathText(file.what, false))
  if (stats.nlink < 2) return
  const candidates: string[] = []
  for (const name of reserved) {
    const inner = path.join(root, name)
    for (const entry of readdirOrEmpty(inner)) candidates.push(path.join(inner, entry))
  }
  for (const entry of readdirOrEmpty(root)) {
    if (reservedPrefixes.some((prefix) => entry.startsWith(prefix))) candidates.push(path.join(root, entry))
  }
  if (candidates.some((file) => same(statOrUndefined(file)))) throw new UnsafePathError(UNSAFE_PATH.OWN_FILES)
}

function readdirOrEmpty(directory: string): string[] {
  try {
    return readdirSync(directory)
  } catch {
    return []
  }
}
