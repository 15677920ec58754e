/**
 * Argument parsing with Redis's own rules, so the same input is accepted or refused as
 * redis-server would. Parsers return undefined on bad input; the caller names the error, because
 * RedisBloom words the same failure differently per command.
 */

import { isKeywordAt } from '../../protocol/command-args.js'

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
const HEX = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?\d+))?$/
const INFINITY = /^[+-]?inf(?:inity)?$/i
const NONZERO_DIGIT = /[1-9]/

/**
 * redis util.c string2d, which getDoubleFromObject and RedisModule_StringToDouble use: glibc
 * strtod over the whole string (decimal, hexadecimal `0x1.8p3`, `inf`/`infinity`), refused when
 * empty, with a leading space, with anything after the number, NaN, or out of range (ERANGE with
 * ±HUGE_VAL or zero: `1e400`, `1e-400`; a result that only loses precision, `1e-310`, is kept).
 */
export function parseDouble(bytes: Uint8Array): number | undefined {
  if (bytes.length === 0) return undefined
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')
  let value: number | undefined
  if (DECIMAL.test(text)) {
    value = Number(text)
    // strtod's underflow to zero (ERANGE): a nonzero mantissa that rounds to 0.
    if (value === 0 && NONZERO_DIGIT.test(text.replace(/[eE].*$/, ''))) return undefined
  } else if (INFINITY.test(text)) {
    return text.charCodeAt(0) === MINUS ? -Infinity : Infinity
  } else {
    value = parseHexDouble(text)
  }
  return value !== undefined && Number.isFinite(value) ? value : undefined // ERANGE → ±HUGE_VAL
}

/** A C99 hexadecimal floating literal, rounded to nearest-even as strtod does; undefined on underflow to zero. */
function parseHexDouble(text: string): number | undefined {
  const match = HEX.exec(text)
  if (match === null) return undefined
  const [, sign, whole = '', fraction = ''] = match
  if (whole === '' && fraction === '') return undefined // "0x" alone: strtod reads "0" and stops
  const digits = (whole + fraction).replace(/^0+/, '')
  const negative = sign === '-'
  if (digits === '') return negative ? -0 : 0
  // Exponents past any double's range only decide overflow or underflow: clamp them.
  const exponent = Math.max(-1e7, Math.min(1e7, Number(match[4] ?? '0')))
  const mantissa = BigInt('0x' + digits)
  const scale = exponent - 4 * fraction.length // value = mantissa × 2^scale
  const top = digits.length * 4 - Math.clz32(parseInt(digits[0]!, 16)) + 28 - 1 + scale // exponent of the leading bit
  if (top > 1023) return undefined
  const quantum = Math.max(top - 52, -1074) // the weight of the last bit kept
  const shift = quantum - scale
  if (shift > top - scale + 1) return undefined // every bit below half the last kept one: zero
  let kept: bigint
  if (shift <= 0) {
    kept = mantissa << BigInt(-shift)
  } else {
    const big = BigInt(shift)
    kept = mantissa >> big
    const rest = mantissa - (kept << big)
    const half = 1n << (big - 1n)
    if (rest > half || (rest === half && (kept & 1n) === 1n)) kept += 1n
  }
  if (kept === 0n) return undefined
  const value = Number(kept) * 2 ** quantum
  return negative ? -value : value
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
