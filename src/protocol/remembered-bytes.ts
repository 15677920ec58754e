/** The last bytes a lookup saw, compared without a call into C++ each (see {@link RememberedBytes}). */

/** Above this length, Buffer#compare (memcmp) beats a JavaScript loop. */
const LOOP_BYTES = 64

/** Longest bytes a {@link RememberedBytes} keeps; longer ones are not remembered. */
const REMEMBER_BYTES = 1024

/**
 * A copy of the last bytes a lookup saw (a command name, a key), in a buffer reused from one to
 * the next, so that a run of commands on the same name compares bytes instead of making a string.
 */
export class RememberedBytes {
  private copy = new Uint8Array(32)
  /** Bytes held, or -1 when nothing is remembered. */
  private length = -1

  /** Whether `bytes[start, end)` are the remembered bytes. */
  matches(bytes: Uint8Array, start: number, end: number): boolean {
    const length = end - start
    if (length !== this.length) return false
    const copy = this.copy
    if (length > LOOP_BYTES) {
      return Buffer.compare(Buffer.from(bytes.buffer, bytes.byteOffset + start, length), copy.subarray(0, length)) === 0
    }
    for (let i = 0; i < length; i++) if (bytes[start + i] !== copy[i]) return false
    return true
  }

  /** Remembers a copy of `bytes[start, end)` (forgets instead when they are too long to keep). */
  remember(bytes: Uint8Array, start: number, end: number): void {
    const length = end - start
    if (length > REMEMBER_BYTES) {
      this.length = -1
      return
    }
    if (length > this.copy.length) this.copy = new Uint8Array(Math.max(length, this.copy.length * 2))
    const copy = this.copy
    if (length > LOOP_BYTES) copy.set(bytes.subarray(start, end))
    else for (let i = 0; i < length; i++) copy[i] = bytes[start + i]!
    this.length = length
  }

  forget(): void {
    this.length = -1
  }
}
