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
  if (n === Infinity) return 'inf'
  if (n === -Infinity) return '-inf'
  if (Number.isNaN(n)) return 'nan'
  if (n === 0) return Object.is(n, -0) ? '-0' : '0'
  const scientific = n.toExponential(PRECISION - 1) // d.dddddddddddddddde±X, correctly rounded
  const e = scientific.indexOf('e')
  const exponent = Number(scientific.slice(e + 1))
  if (exponent < -4 || exponent >= PRECISION) {
    const sign = exponent < 0 ? '-' : '+'
    const magnitude = Math.abs(exponent)
    return `${trimFraction(scientific.slice(0, e))}e${sign}${magnitude < 10 ? '0' : ''}${magnitude}`
  }
  return trimFraction(n.toFixed(PRECISION - 1 - exponent))
}
