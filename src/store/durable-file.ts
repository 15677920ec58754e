/**
 * Writing files so that they survive a crash or a power loss: every byte written, the file
 * fsynced, a new name made durable by an fsync of its directory, and a file replaced atomically
 * (temp → fsync → rename → fsync of the directory).
 *
 * One error policy: whatever fails — a write, an fsync, a rename, opening or fsyncing a directory
 * — throws, and the operation that needed it fails. (A directory that cannot be fsynced means a
 * name just created may not survive a power loss: the operation is not durable, so it is not
 * reported done; redis 7.0 does the same: rdb.c rdbSave fails the save with "Failed to fsync
 * directory while saving DB" when fsyncFileDir fails.) Only {@link tryUnlinkSync} and
 * {@link tryUnlink}, for cleanup, swallow errors.
 */
import { closeSync, fsyncSync, openSync, promises as fsp, renameSync, unlinkSync, writeSync } from 'node:fs'
import path from 'node:path'
import { IO_CHUNK_BYTES } from './filter-file.js'

/** The suffix of a file being written, renamed to its final name once durable. */
export const TEMP_SUFFIX = '.tmp'

/** Writes all of `data` at `position` of the open file `fd`, in calls Node accepts. */
export function writeAllSync(fd: number, data: Uint8Array, position: number): void {
  let done = 0
  while (done < data.length) {
    done += writeSync(fd, data, done, Math.min(data.length - done, IO_CHUNK_BYTES), position + done)
  }
}

/** Writes all of `data` at `position` of the open file `handle`, in calls Node accepts. */
export async function writeAllAsync(handle: fsp.FileHandle, data: Uint8Array, position: number): Promise<void> {
  let done = 0
  while (done < data.length) {
    const length = Math.min(data.length - done, IO_CHUNK_BYTES)
    const { bytesWritten } = await handle.write(data, done, length, position + done)
    done += bytesWritten
  }
}

/**
 * Writes pieces one after another to a file, new unless `flags` says otherwise, and fsyncs it;
 * returns the file's size.
 */
export function writePiecesSync(file: string, pieces: readonly Uint8Array[], flags: 'wx' | 'w' = 'wx'): number {
  const fd = openSync(file, flags, 0o644)
  let total = 0
  try {
    for (const piece of pieces) {
      writeAllSync(fd, piece, total)
      total += piece.length
    }
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  return total
}

/** Writes `data` to `file` (created or emptied) and fsyncs it. */
export async function writeFileAsync(file: string, data: Uint8Array): Promise<void> {
  const handle = await fsp.open(file, 'w', 0o644)
  try {
    await writeAllAsync(handle, data, 0)
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** fsync of a directory, so a created, renamed or deleted name in it survives a power loss. Throws on failure. */
export function syncDirectorySync(dir: string): void {
  const fd = openSync(dir, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** {@link syncDirectorySync} without blocking. Rejects on failure. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/**
 * Replaces `target` atomically with the pieces: a temp file in the same directory → fsync →
 * rename → fsync of the directory. Returns the bytes written. The temp file is deleted when a
 * step before the rename fails. It is created exclusively unless `tempFlags` is 'w': a caller
 * whose temp name is fixed (its own file, which a kill may have left) has it written over.
 */
export function replaceFileSync(
  target: string,
  pieces: readonly Uint8Array[],
  temp: string,
  tempFlags: 'wx' | 'w' = 'wx',
): number {
  let total: number
  try {
    total = writePiecesSync(temp, pieces, tempFlags)
    renameSync(temp, target)
  } catch (error) {
    tryUnlinkSync(temp)
    throw error
  }
  syncDirectorySync(path.dirname(target))
  return total
}

/** Deletes a file if it can (cleanup: a file left behind is not an error). */
export function tryUnlinkSync(file: string): void {
  try {
    unlinkSync(file)
  } catch {
    // already gone, or left behind
  }
}

/** {@link tryUnlinkSync} without blocking; never rejects. */
export async function tryUnlink(file: string): Promise<void> {
  await fsp.rm(file, { force: true }).catch(() => {})
}
