/**
 * The one error every decoder in format/ throws. A decoder either returns a whole, validated
 * value or throws this; it never returns part of a file.
 */

/**
 * Why bytes were refused:
 * - `bad-magic`: the file does not start with the header magic `42 4C 46 01` ("BLF\x01");
 * - `unknown-version`: a header names a format version this build does not know;
 * - `checksum`: a stored CRC-32 does not match the bytes it covers;
 * - `truncated`: the bytes end before the sizes in their headers say they should;
 * - `corrupt`: anything else: inconsistent or absurd fields, trailing bytes, unsupported options.
 */
export type DecodeErrorCode = 'bad-magic' | 'unknown-version' | 'checksum' | 'truncated' | 'corrupt'

/** Thrown by every decoder in format/ when its input is not a whole, valid encoding. */
export class DecodeError extends Error {
  /** The machine-readable reason; the message adds the detail (offsets, values). */
  readonly code: DecodeErrorCode

  /** Creates an error with a reason `code` and a human-readable `message`. */
  constructor(code: DecodeErrorCode, message: string) {
    super(message)
    this.name = 'DecodeError'
    this.code = code
  }
}
