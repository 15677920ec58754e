/**
 * Unsigned 64-bit little-endian fields read and written as JavaScript numbers. Every size bfs
 * keeps fits in 2^53, so a field whose value does not is refused rather than rounded.
 */

const TWO_32 = 0x1_0000_0000

/**
 * Reads the u64 at `offset` (little-endian). Returns the value as a number, or `undefined` when it
 * exceeds `Number.MAX_SAFE_INTEGER` (callers turn that into a `corrupt` error).
 */
export function readUint64(view: DataView, offset: number): number | undefined {
  const low = view.getUint32(offset, true)
  const high = view.getUint32(offset + 4, true)
  if (high >= 0x20_0000) return undefined // 2^21 * 2^32 = 2^53
  return join64(high, low)
}

/** Writes `value` (a safe non-negative integer; not checked here) as a little-endian u64 at `offset`. */
export function writeUint64(view: DataView, offset: number, value: number): void {
  view.setUint32(offset, low32(value), true)
  view.setUint32(offset + 4, high32(value), true)
}

/** The high 32 bits of a safe non-negative integer. */
export function high32(value: number): number {
  return Math.floor(value / TWO_32)
}

/** The low 32 bits of a safe non-negative integer. */
export function low32(value: number): number {
  return value % TWO_32
}

/** Joins two u32 halves into a number (the caller keeps `high` below 2^21). */
export function join64(high: number, low: number): number {
  return high * TWO_32 + low
}
