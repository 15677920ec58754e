/**
 * Doubles as redis 7.0's `addReplyDouble` prints them: C `printf("%.17g")`, with infinities
 * spelled `inf` / `-inf` (redis special-cases them) and NaN as glibc's `nan`.
 */

/** printf %g's precision as redis uses it. */
const PRECISION = 17

/** Drops trailing zeros of a fraction, then a bare point ("1.500" → "1.5", "2.000" → "2"). */
function trimFraction(digits: string): string {
  if (!digits.includes('.')) return digits
  let end = digits.length
  while (digits.charCodeAt(end - 1) === 0x30) end-- // 0
  if (digits.charCodeAt(end - 1) === 0x2e) end-- // .
  return digits.slice(0, end)
}

/**
 * Formats `n` exactly as C's `%.17g`: 17 significant digits, trailing zeros removed, exponent
 * notation (`e+NN`, at least two exponent digits) when the exponent is below -4 or at least 17.
 * @returns e.g. "3.1415926535897931", "0.10000000000000001", "1e+100", "-0", "inf", "nan".
 */
export function formatDouble(n: number): string {
  return formatG(n, PRECISION)
}

/**
 * `n` (finite, not 0) rounded to `digits` significant digits: its digits and decimal exponent.
 * As C's printf on an exact tie, to even: JavaScript's toExponential rounds a tie away from
 * zero (0.0009765625 to 6 digits: glibc 9.76562e-04, JavaScript 9.76563e-04).
 */
function roundDigits(n: number, digits: number): { digits: string; exponent: number } {
  const parse = (text: string): { digits: string; exponent: number } => {
    const e = text.indexOf('e')
    return { digits: text.slice(0, e).replace('-', '').replace('.', ''), exponent: Number(text.slice(e + 1)) }
  }
  const rounded = parse(n.toExponential(digits - 1))
  // A tie needs the exact expansion to end at digit digits + 1 with a 5: cheap test first.
  if (digits >= 100 || !n.toExponential(digits).slice(0, n.toExponential(digits).indexOf('e')).endsWith('5'))
    return rounded
  const exact = parse(n.toExponential(99)) // exact: an expansion that short fits in 100 digits
  const tie = exact.digits[digits] === '5' && /^0*$/.test(exact.digits.slice(digits + 1))
  if (!tie || (Number(exact.digits[digits - 1]) & 1) === 1) return rounded
  return { digits: exact.digits.slice(0, digits), exponent: exact.exponent }
}

/**
 * Formats `n` as C's `%.<precision>g` (`%g` is precision 6: "0.005", "6.25e-05", "1e+06"): what
 * redis prints doubles with (17) and RedisBloom's BF.DEBUG a layer's ratio (6). `precision` is an
 * integer in [1, 100].
 */
export function formatG(n: number, precision = 6): string {
  if (n === Infinity) return 'inf'
  if (n === -Infinity) return '-inf'
  if (Number.isNaN(n)) return 'nan'
  if (n === 0) return Object.is(n, -0) ? '-0' : '0'
  const { digits, exponent } = roundDigits(n, precision)
  const sign = n < 0 ? '-' : ''
  if (exponent < -4 || exponent >= precision) {
    const magnitude = Math.abs(exponent)
    const mantissa = trimFraction(digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits)
    return `${sign}${mantissa}e${exponent < 0 ? '-' : '+'}${magnitude < 10 ? '0' : ''}${magnitude}`
  }
  if (exponent < 0) return `${sign}${trimFraction(`0.${'0'.repeat(-exponent - 1)}${digits}`)}`
  const whole = digits.slice(0, exponent + 1)
  const fraction = digits.slice(exponent + 1)
  return `${sign}${fraction === '' ? whole : trimFraction(`${whole}.${fraction}`)}`
}
