/**
 * Outcomes of the core that are not successes. They are returned as values, never thrown: the
 * command layer maps each code to RedisBloom's wire text in one catalogue.
 */

/**
 * Why an add did not store its item.
 * - `non-scaling-full`: the filter cannot grow (NONSCALING, EXPANSION 0, or a single-layer filter
 *   loaded from an original-library file) and its newest layer holds `capacity` items already.
 * - `too-large`: growing would need a layer larger than the filter's `maxLayerBytes` (or larger than
 *   the runtime can allocate, or its capacity/error rate can no longer be represented).
 */
export type FilterErrorCode = 'non-scaling-full' | 'too-large'

/** A failed add, as returned by {@link ScalableBloomFilter.add}. */
export interface FilterError {
  /** What went wrong; see {@link FilterErrorCode}. */
  readonly code: FilterErrorCode
}

/** The shared, frozen `non-scaling-full` outcome (returned without allocating). */
export const NON_SCALING_FULL: FilterError = Object.freeze({ code: 'non-scaling-full' })

/** The shared, frozen `too-large` outcome (returned without allocating). */
export const TOO_LARGE: FilterError = Object.freeze({ code: 'too-large' })

/**
 * Tells a {@link FilterError} apart from the numeric outcomes of an add.
 *
 * @returns true when `x` is a non-null object whose `code` is one of the {@link FilterErrorCode}s.
 */
export function isFilterError(x: unknown): x is FilterError {
  if (typeof x !== 'object' || x === null) return false
  const code = (x as { code?: unknown }).code
  return code === 'non-scaling-full' || code === 'too-large'
}
