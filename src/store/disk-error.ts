/**
 * Writes refused while persistence fails, as redis 7.0 does (server.c
 * `writeCommandsDeniedByDiskError`, checked in `processCommand`): commands flagged `write`, and
 * PING so that health checks notice, get -MISCONF while
 * - the last background save failed, save rules are set and `stop-writes-on-bgsave-error` is yes
 *   (lifted by the next successful save), or
 * - the append-only log is on and its last write or fsync failed (lifted once a retry succeeds,
 *   or once a snapshot that holds what the log could not take is on disk).
 * Reads keep working. Records the log already holds keep being retried; their replies wait for them.
 */
import type { PersistenceParts } from './persistence-parts.js'
import { ERR, aofWriteErrorText } from '../protocol/error-texts.js'

/** glibc's strerror for the errors opening, writing or fsyncing a file can give (redis prints strerror). */
const STRERROR: Readonly<Record<string, string>> = {
  ENOSPC: 'No space left on device',
  EDQUOT: 'Disk quota exceeded',
  EIO: 'Input/output error',
  EROFS: 'Read-only file system',
  EFBIG: 'File too large',
  EBADF: 'Bad file descriptor',
  EINVAL: 'Invalid argument',
  EPERM: 'Operation not permitted',
  EACCES: 'Permission denied',
  EISDIR: 'Is a directory',
  ENOENT: 'No such file or directory',
  ENOTDIR: 'Not a directory',
  ENAMETOOLONG: 'File name too long',
  EINTR: 'Interrupted system call',
  EAGAIN: 'Resource temporarily unavailable',
}

/** The text of an errno code as strerror words it; the code itself for one not listed. */
export function strerror(code: string): string {
  return STRERROR[code] ?? (code === '' ? 'Unknown error' : code)
}

/** @returns the -MISCONF text a write must be refused with now, or undefined when writes may run */
export function diskErrorRefusal(
  server: Pick<PersistenceParts, 'snapshots' | 'appendLog' | 'config'>,
): string | undefined {
  // Runs before every write: the usual answer is two field reads.
  if (server.snapshots.lastBgsaveStatus === 'err') {
    const config = server.config
    if (config['stop-writes-on-bgsave-error'] && config.save.trim() !== '') return ERR.MISCONF_BGSAVE
  }
  const log = server.appendLog
  if (log.isOpen && log.failing) {
    return aofWriteErrorText(strerror(log.lastErrorCode))
  }
  return undefined
}
