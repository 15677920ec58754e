/**
 * A layer in pieces (core/pieced-bitmap.ts, arena.ts allocatePieces): the layers larger than one
 * WebAssembly memory are split so, and the kernel runs once per piece. Here with tiny pieces (64
 * bytes up), so every boundary is crossed with little memory: answers, counts and bytes must be
 * those of the same filter in one array, on the kernel's path and on the JavaScript loops.
 */
import { describe, expect, it } from 'vitest'
import { allocatePieces, limitPiecedLayers, piecedLayerLimit } from '../../src/core/arena.js'
import { allocateBitmap, allocateLayerBitmap, countSetBits } from '../../src/core/bitmap.js'
import type { ItemList } from '../../src/core/filter-batch.js'
import { isFilterError } from '../../src/core/filter-error.js'
import { bitmapRange, bitmapSlices, copyBitmap, PiecedBitmap, writeBitmap } from '../../src/core/pieced-bitmap.js'
import type { Bitmap } from '../../src/core/pieced-bitmap.js'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'
import { decodeFilter, encodeFilter } from '../../src/format/codec.js'
import { applyDumpChunk, dumpChunkAt } from '../../src/format/dump-chunk.js'
import { utf8 } from './vectors.js'

function list(items: readonly Uint8Array[]): ItemList {
  return { bytes: (i) => items[i]!, start: () => 0, end: (i) => items[i]!.length }
}

/** The whole bitmap as one array. */
function whole(bitmap: Bitmap): Uint8Array {
  return Uint8Array.from(bitmapRange(bitmap, 0, bitmap.length))
}

/** BF.MADD as bloom.ts runs it: the kernel while it serves, one item the JavaScript way when not. */
function addAll(filter: ScalableBloomFilter, items: readonly Uint8Array[]): { results: number[]; kernel: number } {
  const out = new Uint8Array(items.length)
  const results: number[] = []
  let kernel = 0
  for (let i = 0; i < items.length;) {
    const next = filter.addMany(list(items), i, items.length, out, i)
    for (let j = i; j < next; j++) results.push(out[j]!)
    kernel += next - i
    if (next > i) {
      i = next
      continue
    }
    const outcome = filter.add(items[i]!)
    results.push(isFilterError(outcome) ? -1 : outcome)
    i++
  }
  return { results, kernel }
}

function hasAll(filter: ScalableBloomFilter, items: readonly Uint8Array[]): number[] {
  const out = new Uint8Array(items.length)
  const done = filter.hasMany(list(items), 0, items.length, out, 0)
  for (let i = done; i < items.length; i++) out[i] = filter.has(items[i]!) ? 1 : 0
  return Array.from(out)
}

/** A filter like `options` makes, its first layer's bitmap replaced by `pieces(bytes)`. */
function withPieces(
  options: ConstructorParameters<typeof ScalableBloomFilter>[0],
  pieces: (bytes: number) => Bitmap,
): ScalableBloomFilter {
  const parts = new ScalableBloomFilter(options).toParts()
  const layer = parts.layers[0]!
  return ScalableBloomFilter.fromParts({ ...parts, layers: [{ ...layer, bitmap: pieces(layer.bitmap.length) }] })
}

const items = Array.from({ length: 1500 }, (_, i) => utf8(`item-${i % 1200}`)) // 300 repeats
const absent = Array.from({ length: 1500 }, (_, i) => utf8(`absent-${i}`))

describe('a layer in pieces', () => {
  // 1000 items at 1 %: a 1200-byte layer. Pieces of 64 bytes (19 of them), 192 and 1024 (the
  // last piece shorter), and one piece holding it all.
  for (const pieceBytes of [64, 192, 1024, 2048]) {
    for (const path of ['kernel', 'javascript'] as const) {
      it(`answers, counts and holds the bits of one array: pieces of ${pieceBytes} bytes, ${path} path`, () => {
        const options = { capacity: 1000, errorRate: 0.01, expansion: 2, nonScaling: false }
        const reference = withPieces(options, (bytes) => allocateBitmap(bytes))
        const pieced = withPieces(options, (bytes) =>
          path === 'kernel' ? allocatePieces(bytes, pieceBytes)! : plainPieces(bytes, pieceBytes),
        )
        expect(pieced.layers[0]!.pieces === undefined).toBe(path === 'javascript')
        // Past the capacity: the pieced layer fills (the kernel's rounds of at most `room` items)
        // and a second, plain layer follows; the pieced one is then an older layer to check.
        const want = addAll(reference, items)
        const got = addAll(pieced, items)
        expect(got.results).toEqual(want.results)
        if (path === 'kernel') expect(got.kernel).toBeGreaterThan(1000)
        expect(pieced.layers.length).toBe(2)
        expect(pieced.info()).toEqual(reference.info())
        for (let l = 0; l < 2; l++) {
          expect(whole(pieced.layers[l]!.bitmap)).toEqual(whole(reference.layers[l]!.bitmap))
          expect(pieced.layers[l]!.setBits).toBe(reference.layers[l]!.setBits)
          expect(countSetBits(pieced.layers[l]!.bitmap)).toBe(pieced.layers[l]!.setBits)
        }
        expect(hasAll(pieced, items)).toEqual(hasAll(reference, items))
        expect(hasAll(pieced, absent)).toEqual(hasAll(reference, absent))
        for (const item of absent.slice(0, 200)) expect(pieced.has(item)).toBe(reference.has(item))
      })
    }
  }

  it('adds one by one in a non-scaling layer of pieces until it is full, as one array does', () => {
    const options = { capacity: 300, errorRate: 0.001, expansion: 2, nonScaling: true }
    const reference = withPieces(options, (bytes) => allocateBitmap(bytes))
    const pieced = withPieces(options, (bytes) => allocatePieces(bytes, 128)!)
    for (const item of items.slice(0, 400)) {
      const out = new Uint8Array(1)
      const want = reference.addMany(list([item]), 0, 1, out, 0) === 1 ? out[0] : reference.add(item)
      const got = pieced.addMany(list([item]), 0, 1, out, 0) === 1 ? out[0] : pieced.add(item)
      expect(got).toEqual(want)
    }
    expect(pieced.info()).toEqual(reference.info())
    expect(whole(pieced.layers[0]!.bitmap)).toEqual(whole(reference.layers[0]!.bitmap))
  })

  it('writes the same file and SCANDUMP chunks as one array, and loads chunks back across pieces', () => {
    const options = { capacity: 2000, errorRate: 0.01, expansion: 2, nonScaling: true }
    const reference = withPieces(options, (bytes) => allocateBitmap(bytes))
    const pieced = withPieces(options, (bytes) => allocatePieces(bytes, 320)!)
    addAll(reference, items)
    addAll(pieced, items)
    const name = utf8('k')
    const file = (filter: ScalableBloomFilter): Uint8Array =>
      Buffer.concat(encodeFilter({ name, parts: filter.toParts() }))
    expect(file(pieced)).toEqual(file(reference))
    expect(whole(decodeFilter(file(pieced)).parts.layers[0]!.bitmap)).toEqual(whole(reference.layers[0]!.bitmap))
    // Chunks of 100 bytes: many cross a piece boundary (320 is not a multiple of 100).
    const target = withPieces(options, (bytes) => allocatePieces(bytes, 320)!)
    for (let iterator = 1; ;) {
      const want = dumpChunkAt(reference.toParts(), iterator, 100)
      const got = dumpChunkAt(pieced.toParts(), iterator, 100)
      expect(got.next).toBe(want.next)
      expect(Uint8Array.from(got.data)).toEqual(Uint8Array.from(want.data))
      if (got.next === 0) break
      const layers = target.layers
      expect(
        applyDumpChunk(target.toParts(), got.next, got.data, (index, offset, bytes) =>
          layers[index]!.writeBytes(bytes, offset),
        ),
      ).toBe('ok')
      iterator = got.next
    }
    expect(whole(target.layers[0]!.bitmap)).toEqual(whole(reference.layers[0]!.bitmap))
    expect(target.layers[0]!.setBits).toBe(reference.layers[0]!.setBits)
  })

  it('slices, ranges, writes and copies across pieces', () => {
    const bitmap = new PiecedBitmap([new Uint8Array(64), new Uint8Array(64), new Uint8Array(10)], 64)
    expect(bitmap.length).toBe(138)
    expect(bitmapSlices(bitmap, 60, 130).map((s) => s.length)).toEqual([4, 64, 2])
    writeBitmap(
      bitmap,
      Uint8Array.from({ length: 70 }, (_, i) => i + 1),
      60,
    )
    expect(bitmap.pieces[0]![63]).toBe(4)
    expect(bitmap.pieces[1]![0]).toBe(5)
    expect(bitmap.pieces[2]![1]).toBe(70)
    expect(Array.from(bitmapRange(bitmap, 62, 66))).toEqual([3, 4, 5, 6])
    expect(bitmapRange(bitmap, 64, 70).buffer).toBe(bitmap.pieces[1]!.buffer) // a view inside one piece
    const copy = copyBitmap(bitmap)
    bitmap.setByteAt(64, 0)
    expect(bitmapRange(copy, 64, 65)[0]).toBe(5)
    expect(() => writeBitmap(bitmap, new Uint8Array(2), 137)).toThrow(RangeError)
    expect(() => new PiecedBitmap([new Uint8Array(64), new Uint8Array(32)], 48)).toThrow(RangeError)
    expect(() => new PiecedBitmap([new Uint8Array(32), new Uint8Array(64)], 64)).toThrow(RangeError)
  })
})

/** Pieces that are plain arrays: a layer outside the arenas, which the JavaScript loops serve. */
function plainPieces(bytes: number, pieceBytes: number): PiecedBitmap {
  const pieces: Uint8Array[] = []
  for (let at = 0; at < bytes; at += pieceBytes) pieces.push(new Uint8Array(Math.min(pieceBytes, bytes - at)))
  return new PiecedBitmap(pieces, pieceBytes)
}

describe('a layer larger than the machine', () => {
  it('is refused with an error that says so, before any memory is taken', () => {
    const before = piecedLayerLimit()
    limitPiecedLayers(8 * 2 ** 30)
    try {
      expect(() => allocateLayerBitmap(9 * 2 ** 30)).toThrow(
        /^a layer of 9663676416 bytes is larger than this machine's memory \(8589934592 bytes\)$/,
      )
      expect(
        () => new ScalableBloomFilter({ capacity: 5_000_000_000, errorRate: 0.001, expansion: 2, nonScaling: true }),
      ).toThrow(RangeError)
    } finally {
      limitPiecedLayers(before)
    }
  })
})
