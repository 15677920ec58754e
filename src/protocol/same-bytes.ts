/** Byte equality for short arguments (command names, keys), without a call into C++ for each compare. */

/** Above this length, Buffer#equals (memcmp) beats a JavaScript loop. */
const LOOP_BYTES = 64

/** @returns whether `a` and `b` hold the same bytes. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  const length = a.length
  if (length !== b.length) return false
  if (length > LOOP_BYTES) return Buffer.compare(a, b) === 0
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return false
  return true
}
