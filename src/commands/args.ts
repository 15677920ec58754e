/**
 * Argument parsing with Redis's own rules, so the same input is accepted or refused as
 * redis-server would. Parsers return undefined on bad input; the caller names the error, because
 * RedisBloom words the same failure differently per command.
 */

import { isKeywordAt } from '../protocol/same-bytes.js'

const MINUS = 0x2d // -
const ZERO = 0x30 // 0
const NINE = 0x39 // 9
const INT64_MAX_DIGITS = '9223372036854775807'
const INT64_MIN_DIGITS = '9223372036854775808'

/**
 * redis util.c string2ll: an optional '-', then digits with no leading zero (or a lone "0"),
 * nothing else, within the signed 64-bit range. Values beyond 2^53 come back rounded.
 */
export function parseInteger(bytes: Uint8Array): number | undefined {
  const len = bytes.length
  if (len === 0 || len > 20) return undefined
  let i = 0
  let negative = false
  if (bytes[0] === MINUS) {
    negative = true
    i = 1
    if (len === 1) return undefined
  }
  if (bytes[i] === ZERO) return len === i + 1 && !negative ? 0 : undefined
  const digits = len - i
  if (digits > 19) return undefined
  let value = 0
  for (; i < len; i++) {
    const c = bytes[i]!
    if (c < ZERO || c > NINE) return undefined
    value = value * 10 + (c - ZERO)
  }
  // The signed 64-bit range, compared on the digits: doubles cannot tell 2^63 - 1 from 2^63.
  if (digits === 19) {
    const limit = negative ? INT64_MIN_DIGITS : INT64_MAX_DIGITS
    for (let k = 0; k < 19; k++) {
      const d = bytes[len - 19 + k]!
      const l = limit.charCodeAt(k)
      if (d !== l) {
        if (d > l) return undefined
        break
      }
    }
  }
  // Past 2^53 the running sum drifts; the string conversion rounds correctly.
  if (digits > 15) value = Number(Buffer.from(bytes.buffer, bytes.byteOffset + len - digits, digits).toString('latin1'))
  return negative ? -value : value
}

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/
const INFINITY = /^[+-]?inf(?:inity)?$/i

/**
 * redis object.c getDoubleFromObject (strtod, whole string, no leading space, not NaN, no
 * overflow to ±inf from a finite literal). Accepts "inf"/"infinity" as strtod does.
 */
export function parseDouble(bytes: Uint8Array): number | undefined {
  if (bytes.length === 0 || bytes.length > 256) return undefined
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')
  if (DECIMAL.test(text)) {
    const value = Number(text)
    if (!Number.isFinite(value)) return undefined // ERANGE → HUGE_VAL
    return value
  }
  if (INFINITY.test(text)) return text.charCodeAt(0) === MINUS ? -Infinity : Infinity
  return undefined
}

/** Case-insensitive comparison of an argument with an ASCII keyword given in upper case. */
export function isKeyword(bytes: Uint8Array, upperKeyword: string): boolean {
  return isKeywordAt(bytes, 0, bytes.length, upperKeyword)
}

/** Lower-cased ASCII copy of an argument, for subcommand and option names. */
export function lowerAscii(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1').toLowerCase()
}

/** An argument as text (UTF-8), for names and values that are text by nature. */
export function text(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')
}

