/**
 * Setup file (vitest.config.ts): `toEqual` and the other deep equalities compare two byte arrays
 * of the same class (Uint8Array, Buffer) with one memcmp. vitest's own rule compares them element
 * by element and then again as lists of [index, value] entries, seconds for a megabyte. Same
 * verdict: same class, same length, same bytes (no test puts other properties on a byte array).
 * Anything else, a Buffer against a Uint8Array included, is left to vitest's own rules.
 */
import { expect } from 'vitest'

function bytesEqual(a: unknown, b: unknown): boolean | undefined {
  if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.constructor !== b.constructor) return undefined
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))
}

// The unit project runs its files in one process (isolate: false), this file before each of
// them: the tester is added once.
const added = Symbol.for('bfs.test.bytesEqual')
const state = globalThis as { [added]?: true }
if (state[added] !== true) {
  state[added] = true
  expect.addEqualityTesters([bytesEqual])
}
