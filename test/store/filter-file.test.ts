/**
 * Filter files read piece by piece from real files: the same record as decoding the whole bytes,
 * each bitmap in its own array (no buffer of the whole file), every damage a DecodeError from the
 * same checks, and sizes checked against the file before anything is read: a sparse file of
 * 5 GiB past a valid filter is refused in a few reads, not loaded.
 */
import { closeSync, ftruncateSync, openSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { arenaOf } from '../../src/core/arena.js'
import { decodeFilter, encodeFilter, type FilterRecord } from '../../src/format/codec.js'
import { FileBytes, readFilterFile } from '../../src/store/filter-file.js'
import { nativeCrc32 } from '../../src/store/snapshot.js'
import { decodeErrorOf } from '../format/corrupt-bytes.js'
import { concat, makeScalable } from '../format/layer-fixtures.js'
import { makeTempDir } from '../helpers/temp-dir.js'

const dir = makeTempDir('bfs-filter-file-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const record: FilterRecord = { name: new TextEncoder().encode('file:1'), parts: makeScalable(4) }
const bytes = concat(encodeFilter(record))

function fileWith(name: string, content: Uint8Array): string {
  const file = path.join(dir, name)
  writeFileSync(file, content)
  return file
}

describe('readFilterFile', () => {
  it('gives the record decodeFilter gives for the whole bytes, each bitmap in its own array', () => {
    const file = fileWith('whole.bf', bytes)
    const fromFile = readFilterFile(file, nativeCrc32)
    const fromBytes = decodeFilter(bytes, nativeCrc32)
    expect(fromFile).toEqual(fromBytes)
    expect(fromFile.parts.layers).toHaveLength(4)
    // Each bitmap is a region of its own in WebAssembly memory (core/arena.ts), where the kernel
    // serves it, and never a view of one buffer of the whole file.
    for (const layer of fromFile.parts.layers) expect(arenaOf(layer.bitmap as Uint8Array)).toBeDefined()
    // Four regions: no two layers at the same place of the same memory (two arenas may each hold
    // one at the same offset).
    const places = fromFile.parts.layers.map(
      (layer) => [arenaOf(layer.bitmap as Uint8Array), (layer.bitmap as Uint8Array).byteOffset] as const,
    )
    expect(
      places.filter(([arena, offset], i) => places.some(([a, o], j) => j < i && a === arena && o === offset)),
    ).toEqual([])
    expect(places).toHaveLength(4)
    expect(readFilterFile(file, nativeCrc32, bytes.length)).toEqual(fromBytes)
  })

  it('refuses a file whose size is not the one the manifest recorded', () => {
    const file = fileWith('sized.bf', bytes)
    const error = decodeErrorOf(() => readFilterFile(file, nativeCrc32, bytes.length + 1))
    expect([error.code, error.message]).toEqual([
      'truncated',
      `file is ${bytes.length} bytes, the manifest says ${bytes.length + 1}`,
    ])
  })

  it('answers every cut of the file as decoding the same cut bytes does', () => {
    const cuts = [0, 3, 10, 63, 64, 65, 500, bytes.length - 30, bytes.length - 5, bytes.length - 1]
    for (const cut of cuts) {
      const file = fileWith(`cut-${cut}.bf`, bytes.subarray(0, cut))
      const fromFile = decodeErrorOf(() => readFilterFile(file, nativeCrc32))
      const fromBytes = decodeErrorOf(() => decodeFilter(bytes.subarray(0, cut), nativeCrc32))
      expect([cut, fromFile.code, fromFile.message]).toEqual([cut, fromBytes.code, fromBytes.message])
    }
  })

  it('answers a flipped byte anywhere as decoding the same bytes does', () => {
    for (const at of [5, 70, 200, bytes.length - 10, bytes.length - 2]) {
      const damaged = bytes.slice()
      damaged[at]! ^= 0x40
      const file = fileWith(`flip-${at}.bf`, damaged)
      const fromFile = decodeErrorOf(() => readFilterFile(file, nativeCrc32))
      const fromBytes = decodeErrorOf(() => decodeFilter(damaged, nativeCrc32))
      expect([at, fromFile.code, fromFile.message]).toEqual([at, fromBytes.code, fromBytes.message])
    }
  })

  it('refuses 5 GiB of bytes after the trailer without reading them (a sparse file)', () => {
    const file = fileWith('sparse.bf', bytes)
    const fd = openSync(file, 'r+')
    try {
      ftruncateSync(fd, bytes.length + 5 * 2 ** 30)
    } finally {
      closeSync(fd)
    }
    const error = decodeErrorOf(() => readFilterFile(file, nativeCrc32))
    expect([error.code, error.message]).toEqual(['corrupt', `${5 * 2 ** 30} bytes follow the file trailer`])
  })

  it('a file shorter than the size it was opened with ends in a truncated error, not a short array', () => {
    const file = fileWith('short.bf', bytes)
    const fd = openSync(file, 'r')
    try {
      const error = decodeErrorOf(() => new FileBytes(fd, bytes.length + 100).read(bytes.length - 10, 50))
      expect([error.code, error.message]).toEqual([
        'truncated',
        `file ended at ${bytes.length} of ${bytes.length + 100} bytes`,
      ])
    } finally {
      closeSync(fd)
    }
  })
})
