/**
 * One slice of an age-partitioned filter (window-filter.ts): a bitmap (bitmap.ts) probed by one
 * of the item's k double-hashing positions, the index of that hash function, and its counters.
 *
 * Position i of an item in a slice of m bits is `(a + i·b) mod 2^64 mod m`, with (a, b)
 * RedisBloom's MurmurHash64A pair (hashing.ts) and i the slice's `hashIndex`: the positions of
 * BF.ADD's filters, one per slice instead of k in one bitmap (the partitioned Bloom filter the
 * APBF paper builds on).
 */
import { allocateBitmap, allocateBitmaps, countSetBits, setBit, testBit } from './bitmap.js'
import { carryOut, mod64 } from './hashing.js'

/** A slice's state as stored (snapshot files, the full-sync payload). */
export interface SliceParts {
  /** Which of the k hash functions it uses, in [0, k). */
  hashIndex: number
  /** Adds that set a bit in it while it was among the k newest (its fill's measure). */
  count: number
  /** Adds made while it was the newest: its generation's items. */
  added: number
  /** When it last took an add (unix ms), or -1 when it never did. */
  lastAdd: number
  /** Its bits: `bitmap.length * 8` of them. */
  bitmap: Uint8Array
}

/** A slice: {@link SliceParts} plus its bit count. */
export class WindowSlice implements SliceParts {
  count = 0
  added = 0
  lastAdd = -1
  readonly bitCount: number

  constructor(
    public hashIndex: number,
    readonly bitmap: Uint8Array,
  ) {
    this.bitCount = bitmap.length * 8
  }

  /**
   * A zeroed slice of `bytes` bytes, in the arena of `near` (another slice of its filter) when it
   * has room. @throws RangeError when they cannot be allocated
   */
  static allocate(hashIndex: number, bytes: number, near?: Uint8Array): WindowSlice {
    return new WindowSlice(hashIndex, allocateBitmap(bytes, near))
  }

  /** A new filter's `count` zeroed slices of `bytes` bytes, hash indexes 0..k-1 in turn, in one arena when they fit. */
  static allocateAll(count: number, k: number, bytes: number): WindowSlice[] {
    return allocateBitmaps(bytes, count).map((bitmap, p) => new WindowSlice(p % k, bitmap))
  }

  static fromParts(parts: SliceParts): WindowSlice {
    const slice = new WindowSlice(parts.hashIndex, parts.bitmap)
    slice.count = parts.count
    slice.added = parts.added
    slice.lastAdd = parts.lastAdd
    return slice
  }

  /** Items it can take before it is half full (the classic Bloom optimum): m · ln 2. */
  get capacity(): number {
    return Math.floor(this.bitCount * Math.LN2)
  }

  /** Whether its bit for the item whose positions `hashes` holds is set. */
  test(hashes: Uint32Array): boolean {
    const at = this.hashIndex * 2
    return testBit(this.bitmap, mod64(hashes[at]!, hashes[at + 1]!, this.bitCount))
  }

  /** Sets its bit for the item; whether the bit was clear. */
  set(hashes: Uint32Array): boolean {
    const at = this.hashIndex * 2
    return setBit(this.bitmap, mod64(hashes[at]!, hashes[at + 1]!, this.bitCount))
  }

  /** Empties it for reuse. */
  clear(): void {
    this.bitmap.fill(0)
    this.count = 0
    this.added = 0
    this.lastAdd = -1
  }

  /** Set bits (tests and the bench). */
  setBits(): number {
    return countSetBits(this.bitmap)
  }

  toParts(): SliceParts {
    return {
      hashIndex: this.hashIndex,
      count: this.count,
      added: this.added,
      lastAdd: this.lastAdd,
      bitmap: this.bitmap,
    }
  }
}

/**
 * Writes the k 64-bit values `a + i·b mod 2^64` (i in [0, k)) of a hashed pair `[aHi, aLo, bHi,
 * bLo]` into `out` as `[hi0, lo0, hi1, lo1, ...]`: a slice takes its own one modulo its size.
 */
export function expandHashes(pair: Uint32Array, k: number, out: Uint32Array): void {
  const bHi = pair[2]!
  const bLo = pair[3]!
  let xHi = pair[0]!
  let xLo = pair[1]!
  for (let i = 0; i < k; i++) {
    out[2 * i] = xHi
    out[2 * i + 1] = xLo
    const lo = (xLo + bLo) >>> 0
    xHi = (xHi + bHi + carryOut(xLo, bLo, lo)) >>> 0
    xLo = lo
  }
}
