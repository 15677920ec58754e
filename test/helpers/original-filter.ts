/**
 * The original C Bloom filter library, rebuilt from docs/FORMAT.md alone (its MurmurHash64A in
 * BigInt, its sizing, its 64-byte header): files exactly as that library writes them, for BF.LOAD.
 * Like the original, `add` never refuses: a filter can be filled past its capacity.
 */
const MASK64 = (1n << 64n) - 1n
const MURMUR_M = 0xc6a4a7935bd1e995n

function murmurHash64A(key: Buffer, seed: bigint): bigint {
  let h = (seed ^ ((BigInt(key.length) * MURMUR_M) & MASK64)) & MASK64
  const blocks = Math.floor(key.length / 8)
  for (let i = 0; i < blocks; i++) {
    let k = key.readBigUInt64LE(i * 8)
    k = (k * MURMUR_M) & MASK64
    k ^= k >> 47n
    k = (k * MURMUR_M) & MASK64
    h ^= k
    h = (h * MURMUR_M) & MASK64
  }
  const rest = key.length & 7
  if (rest > 0) {
    for (let j = rest - 1; j >= 0; j--) h ^= BigInt(key[blocks * 8 + j]!) << BigInt(8 * j)
    h = (h * MURMUR_M) & MASK64
  }
  h ^= h >> 47n
  h = (h * MURMUR_M) & MASK64
  h ^= h >> 47n
  return h
}

/** A filter exactly as the original C library builds and writes it. */
export class OriginalFilter {
  readonly m: number
  readonly k: number
  readonly bits: Uint8Array
  count = 0

  constructor(
    readonly n: number,
    readonly p: number,
    readonly seed: number,
  ) {
    let m = Math.ceil((-n * Math.log(p)) / 0.480453)
    m = m - (m % 64) + 64
    this.m = m
    this.k = Math.round((0.69314 * m) / n)
    this.bits = new Uint8Array(m / 8)
  }

  private positions(item: Buffer): number[] {
    const h1 = murmurHash64A(item, BigInt(this.seed))
    const h2 = murmurHash64A(item, ((h1 >> 32n) ^ h1) & 0xffffffffn)
    const out: number[] = []
    for (let i = 0n; i < BigInt(this.k); i++) out.push(Number(((h1 + i * h2) & MASK64) % BigInt(this.m)))
    return out
  }

  add(item: Buffer): void {
    for (const pos of this.positions(item)) this.bits[pos >> 3]! |= 1 << (pos & 7)
    this.count++
  }

  has(item: Buffer): boolean {
    return this.positions(item).every((pos) => (this.bits[pos >> 3]! & (1 << (pos & 7))) !== 0)
  }

  file(): Buffer {
    const header = Buffer.alloc(64)
    header.writeUInt32LE(0x01464c42, 0)
    header.writeUInt32LE(this.seed, 4)
    header.writeUInt32LE(this.count, 8)
    header.writeUInt32LE(this.n, 12)
    header.writeDoubleLE(this.p, 16)
    header.writeUInt32LE(this.m, 24)
    header.writeUInt32LE(this.k, 28)
    header.writeUInt32LE(this.m / 8, 60)
    return Buffer.concat([header, this.bits])
  }
}
