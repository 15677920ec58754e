// Helpers for feeding the decoders damaged bytes and naming the DecodeError they answer with.
import { DecodeError } from '../../src/format/decode-error.js'

/** The code of the DecodeError `fn` throws, or 'no error'; any other exception is rethrown. */
export function codeOf(fn: () => unknown): string {
  try {
    fn()
  } catch (error) {
    if (error instanceof DecodeError) return error.code
    throw error
  }
  return 'no error'
}

/** The DecodeError `fn` throws; any other exception is rethrown, and no error at all is one. */
export function decodeErrorOf(fn: () => unknown): DecodeError {
  try {
    fn()
  } catch (error) {
    if (error instanceof DecodeError) return error
    throw error
  }
  throw new Error('no error')
}

/** A copy of `bytes` changed by `edit` through a DataView over the copy (`bytes` is left as it was). */
export function edited(bytes: Uint8Array, edit: (view: DataView) => void): Uint8Array {
  const copy = bytes.slice()
  edit(new DataView(copy.buffer))
  return copy
}
