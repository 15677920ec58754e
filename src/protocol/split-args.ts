/**
 * Inline-command tokenizer: a byte-for-byte port of redis 7.0 `sdssplitargs` (src/sds.c), which
 * `processInlineBuffer` uses to turn a telnet-style line into argv.
 */

const NUL = 0x00 // \0
const BELL = 0x07 // \a
const BACKSPACE = 0x08 // \b
const TAB = 0x09 // \t
const LF = 0x0a // \n
const CR = 0x0d // \r
const SPACE = 0x20 // ' '
const DOUBLE_QUOTE = 0x22 // "
const SINGLE_QUOTE = 0x27 // '
const BACKSLASH = 0x5c // \
const LOWER_A = 0x61 // a
const LOWER_B = 0x62 // b
const LOWER_N = 0x6e // n
const LOWER_R = 0x72 // r
const LOWER_T = 0x74 // t
const LOWER_X = 0x78 // x

/** C `isspace` in the C locale: space, \t, \n, \v, \f, \r. */
function isSpace(c: number): boolean {
  return c === SPACE || (c >= TAB && c <= CR)
}

/** Value of an ASCII hex digit, or -1. */
function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30 // 0-9
  if (c >= 0x61 && c <= 0x66) return c - 0x57 // a-f
  if (c >= 0x41 && c <= 0x46) return c - 0x37 // A-F
  return -1
}

/** The byte a backslash escape inside "double quotes" stands for (sdssplitargs' switch). */
function unescape(c: number): number {
  switch (c) {
    case LOWER_N:
      return LF
    case LOWER_R:
      return CR
    case LOWER_T:
      return TAB
    case LOWER_B:
      return BACKSPACE
    case LOWER_A:
      return BELL
    default:
      return c
  }
}

/**
 * Splits `line[start, end)` into arguments exactly as redis's `sdssplitargs`: blanks (C isspace)
 * separate arguments; "double quotes" understand `\n \r \t \b \a \xHH` and `\<any>` escapes;
 * 'single quotes' understand only `\'`; a closing quote must be followed by a blank or the end.
 * As in C, a NUL byte ends the line. Empty quoted arguments (`""`) are kept, as redis 7.0 does.
 *
 * @returns the arguments as fresh Buffers (they never alias `line`), an empty array for a blank
 *   line, or `null` for unbalanced quotes (redis: "Protocol error: unbalanced quotes in request").
 */
export function splitArgs(line: Uint8Array, start: number, end: number): Buffer[] | null {
  for (let i = start; i < end; i++) {
    if (line[i] === NUL) {
      end = i
      break
    }
  }
  const args: Buffer[] = []
  let p = start
  while (p < end && isSpace(line[p]!)) p++
  if (p >= end) return args
  // Tokens never hold more bytes than the line, so one allocation serves them all.
  const out = Buffer.allocUnsafe(end - p)
  let w = 0
  for (;;) {
    while (p < end && isSpace(line[p]!)) p++
    if (p >= end) return args
    const tokenStart = w
    let inDouble = false
    let inSingle = false
    for (;;) {
      if (p >= end) {
        if (inDouble || inSingle) return null // unterminated quotes
        break
      }
      const c = line[p]!
      if (inDouble) {
        if (
          c === BACKSLASH &&
          p + 3 < end &&
          line[p + 1] === LOWER_X &&
          hexValue(line[p + 2]!) >= 0 &&
          hexValue(line[p + 3]!) >= 0
        ) {
          out[w++] = hexValue(line[p + 2]!) * 16 + hexValue(line[p + 3]!)
          p += 4
        } else if (c === BACKSLASH && p + 1 < end) {
          out[w++] = unescape(line[p + 1]!)
          p += 2
        } else if (c === DOUBLE_QUOTE) {
          // The closing quote must be followed by a space or nothing at all.
          if (p + 1 < end && !isSpace(line[p + 1]!)) return null
          p++
          break
        } else {
          out[w++] = c
          p++
        }
      } else if (inSingle) {
        if (c === BACKSLASH && p + 1 < end && line[p + 1] === SINGLE_QUOTE) {
          out[w++] = SINGLE_QUOTE
          p += 2
        } else if (c === SINGLE_QUOTE) {
          if (p + 1 < end && !isSpace(line[p + 1]!)) return null
          p++
          break
        } else {
          out[w++] = c
          p++
        }
      } else if (c === SPACE || c === LF || c === CR || c === TAB) {
        // Unlike the blank skipping above, only these four end an unquoted token (not \v \f).
        p++
        break
      } else if (c === DOUBLE_QUOTE) {
        inDouble = true
        p++
      } else if (c === SINGLE_QUOTE) {
        inSingle = true
        p++
      } else {
        out[w++] = c
        p++
      }
    }
    args.push(out.subarray(tokenStart, w))
  }
}
