/**
 * Every file bfs owns, in one list: what a client's path (BF.SAVE, BF.LOAD) may never reach, and
 * what two settings may never share. Inside `dir`: the snapshot's directory, the append-only log's
 * segments, the temporary file of a full sync on disk. Anywhere: the config file and each file a
 * configuration key names ({@link FILE_KEYS}), with its temporaries (`<name>.<anything>` beside it:
 * CONFIG REWRITE's, ACL SAVE's, nodes.conf's). A new file is one row here, and every check that
 * consults the list covers it: a client's path ({@link resolveClientPath}) and the start
 * ({@link prepareDataDirectory}: no two of them one file).
 */
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import type { Config } from '../runtime/config.js'
import { resolveOwnPath, resolveSafePath, type OwnFile, type SafePath } from './safe-path.js'
import { SNAPSHOT_DIR } from './snapshot.js'

/** The name prefix of a full sync's temporary file in `dir` (replication/full-sync.ts, disk mode). */
export const SYNC_TEMP_PREFIX = 'temp-sync-'

/**
 * The configuration keys that name a file bfs reads or writes, what the refusal calls it, and what
 * a relative value is relative to (bfs does not chdir: the working directory, or `dir` for the ones
 * bfs joins to it). A key the configuration does not have yet (pidfile, unixsocket, the TLS files:
 * redis keys bfs only answers CONFIG GET for) is skipped, and covered once it is added there.
 */
const FILE_KEYS: readonly { readonly key: string; readonly what: string; readonly relativeTo: 'cwd' | 'dir' }[] = [
  { key: 'logfile', what: 'logfile', relativeTo: 'cwd' },
  { key: 'aclfile', what: 'aclfile', relativeTo: 'cwd' },
  { key: 'cluster-config-file', what: 'cluster config file', relativeTo: 'dir' },
  { key: 'pidfile', what: 'pidfile', relativeTo: 'cwd' },
  { key: 'unixsocket', what: 'unix socket', relativeTo: 'cwd' },
  { key: 'tls-cert-file', what: 'TLS certificate', relativeTo: 'cwd' },
  { key: 'tls-key-file', what: 'TLS key', relativeTo: 'cwd' },
  { key: 'tls-client-cert-file', what: 'TLS client certificate', relativeTo: 'cwd' },
  { key: 'tls-client-key-file', what: 'TLS client key', relativeTo: 'cwd' },
  { key: 'tls-ca-cert-file', what: 'TLS CA certificate', relativeTo: 'cwd' },
  { key: 'tls-dh-params-file', what: 'TLS DH parameters', relativeTo: 'cwd' },
]

/** bfs's own files for one configuration. */
export interface OwnedFiles {
  /** Top-level directories of `dir` that are bfs's (the snapshot's). */
  readonly directories: readonly string[]
  /** Top-level file name prefixes in `dir` (the log's segments, a full sync's temporary file). */
  readonly prefixes: readonly string[]
  /** Files anywhere, by configured path (temporaries beside each included). */
  readonly files: readonly OwnFile[]
}

/** The list for `config`, with the config file the server was started with ('' for none). */
export function ownedFiles(config: Config, configFile: string): OwnedFiles {
  const files: OwnFile[] = [{ path: configFile, what: 'config file' }]
  const values = config as unknown as Readonly<Record<string, unknown>>
  for (const { key, what, relativeTo } of FILE_KEYS) {
    const value = values[key]
    if (typeof value !== 'string' || value === '') continue
    files.push({ path: relativeTo === 'dir' ? path.resolve(config.dir, value) : value, what })
  }
  return { directories: [SNAPSHOT_DIR], prefixes: [`${config.appendfilename}.`, SYNC_TEMP_PREFIX], files }
}

/**
 * A client's path relative to `dir`, checked against {@link ownedFiles} (store/safe-path.ts).
 * @throws UnsafePathError with the reply text after "ERR "
 */
export function resolveClientPath(
  config: Config,
  configFile: string,
  raw: Uint8Array,
  mode: 'read' | 'write',
): SafePath {
  const own = ownedFiles(config, configFile)
  return resolveSafePath(
    config.dir,
    raw,
    mode,
    [...own.directories, ...caDirectoryInDir(config)],
    own.prefixes,
    own.files,
  )
}

/**
 * tls-ca-cert-dir when it is inside `dir`, relative to it: every file there is read as a CA
 * certificate at the next TLS reload, so a client's file written there would break it. (Not a
 * directory of {@link ownedFiles}: tls-ca-cert-file may well be inside it.)
 */
function caDirectoryInDir(config: Config): string[] {
  if (config['tls-ca-cert-dir'] === '') return []
  const relative = path.relative(resolveOwnPath(config.dir), resolveOwnPath(config['tls-ca-cert-dir']))
  return relative === '' || relative.startsWith('..') || path.isAbsolute(relative) ? [] : [relative]
}

/**
 * What makes two of bfs's files one, or undefined: two configured files at one path, or one
 * where bfs keeps others (inside the snapshot directory, named as a log segment in `dir`). Either
 * would overwrite the other.
 */
export function ownFileClash(config: Config, configFile: string): string | undefined {
  const own = ownedFiles(config, configFile)
  const root = resolveOwnPath(config.dir)
  const seen: { what: string; at: string }[] = []
  for (const file of own.files) {
    if (file.path === '') continue
    const at = resolveOwnPath(file.path)
    const same = seen.find((other) => other.at === at)
    if (same !== undefined) return `the ${same.what} and the ${file.what} are the same file: ${at}`
    seen.push({ what: file.what, at })
    const inside = own.directories.find((name) => !path.relative(path.join(root, name), at).startsWith('..'))
    if (inside !== undefined) return `the ${file.what} (${at}) is inside bfs's own '${inside}' directory`
    const prefix = own.prefixes.find((start) => path.dirname(at) === root && path.basename(at).startsWith(start))
    if (prefix !== undefined) return `the ${file.what} (${at}) is named as bfs's own files in dir (${prefix}*)`
  }
  return undefined
}

/** At start: creates `dir`, and refuses a configuration {@link ownFileClash} finds. @throws Error */
export function prepareDataDirectory(config: Config, configFile: string): void {
  mkdirSync(config.dir, { recursive: true })
  const clash = ownFileClash(config, configFile)
  if (clash !== undefined) throw new Error(`bfs's own files clash: ${clash}`)
}
