/**
 * Decoding of one query-string value into the exact bytes of an item, as libevent's
 * evhttp_parse_query_str (evhttp_decode_uri_internal with decode_plus) did for the original
 * server: `+` is a space, `%XX` is the byte XX, and anything else, a malformed `%` included, is
 * kept as it is. Pure: no node:* imports beyond Buffer, no state.
 */

const PLUS = 0x2b // +
const PERCENT = 0x25 // %
const SPACE = 0x20 // ' '

/** Value of one hexadecimal digit, or -1. */
function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30 // 0-9
  if (code >= 0x41 && code <= 0x46) return code - 0x37 // A-F
  if (code >= 0x61 && code <= 0x66) return code - 0x57 // a-f
  return -1
}

/**
 * The bytes of `text[start..end)`, percent-decoded. `text` is a request target as Node gives it:
 * one char per received byte (latin1), so raw bytes above 0x7f come back unchanged.
 */
export function decodeQueryValue(text: string, start = 0, end = text.length): Buffer {
  const out = Buffer.allocUnsafe(end - start)
  let length = 0
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i)
    if (code === PLUS) {
      out[length++] = SPACE
    } else if (code === PERCENT && i + 2 < end) {
      const high = hexValue(text.charCodeAt(i + 1))
      const low = hexValue(text.charCodeAt(i + 2))
      if (high < 0 || low < 0) {
        out[length++] = code
      } else {
        out[length++] = (high << 4) | low
        i += 2
      }
    } else {
      out[length++] = code & 0xff
    }
  }
  return out.subarray(0, length)
}
