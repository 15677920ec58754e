/**
 * Every file bfs owns, in one list: what a client's path (BF.SAVE, BF.LOAD) may never reach, and
 * what two settings may never share. Inside `dir`: the snapshot's directory, the append-only log's
 * segments, the temporary file of a full sync on disk. Anywhere: the config file and each file a
 * configuration key names ({@link FILE_KEYS}), with its temporaries (`<name>.<anything>` beside it:
 * CONFIG REWRITE's, ACL SAVE's, nodes.conf's). A new file is one row here, and every check that
 * consults the list covers it.
 */
import path from 'node:path'
import type { Config } from '../runtime/config.js'
import { resolveSafePath, type OwnFile, type SafePath } from './safe-path.js'
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
export function resolveClientPath(config: Config, configFile: string, raw: Uint8Array, mode: 'read' | 'write'): SafePath {
  const own = ownedFiles(config, configFile)
  return resolveSafePath(config.dir, raw, mode, own.directories, own.prefixes, own.files)
}
