/** formatG against C's printf %g (glibc's output, recorded), exact ties included. */
import { describe, expect, it } from 'vitest'
import { formatDouble, formatG } from '../../src/protocol/format-double.js'

// value, printf("%g"), printf("%.3g"), as glibc prints them.
const CASES: readonly [number, string, string][] = [
  [0.005, '0.005', '0.005'],
  [6.25e-5, '6.25e-05', '6.25e-05'],
  [1.52587890625e-6, '1.52588e-06', '1.53e-06'],
  [1e6, '1e+06', '1e+06'],
  [123456.5, '123456', '1.23e+05'], // an exact tie: to even
  [0.0009765625, '0.000976562', '0.000977'], // 2^-10, a BF.DEBUG ratio: a tie to even
  [999999.5, '1e+06', '1e+06'],
  [1234567, '1.23457e+06', '1.23e+06'],
  [0.00012345678, '0.000123457', '0.000123'],
  [0.0001, '0.0001', '0.0001'],
  [1 / 3, '0.333333', '0.333'],
  [-2.5, '-2.5', '-2.5'],
  [5e-324, '4.94066e-324', '4.94e-324'],
  [1.7976931348623157e308, '1.79769e+308', '1.8e+308'],
]

describe('formatG', () => {
  it.each(CASES)('%s prints as glibc prints it', (value, g, g3) => {
    expect(formatG(value)).toBe(g)
    expect(formatG(value, 3)).toBe(g3)
  })

  it('is formatDouble at precision 17', () => {
    expect(formatDouble(123456.5)).toBe('123456.5')
    expect(formatDouble(0.1 + 0.2)).toBe('0.30000000000000004')
    expect(formatDouble(1e17)).toBe('1e+17')
    expect([formatG(0), formatG(-0), formatG(Infinity), formatG(NaN)]).toEqual(['0', '-0', 'inf', 'nan'])
  })
})
