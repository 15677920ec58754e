/**
 * Sizing of an age-partitioned Bloom filter (Shtul, Baquero, Almeida, "Age-Partitioned Bloom
 * Filters", 2020, arXiv:2001.03147): how many hash functions `k` (the slices an item is written
 * to) and how many extra generations `l` (the slices that hold its past) meet a target
 * false-positive rate with the fewest bits per item of the window.
 *
 * As the paper's false-positive analysis (and its table of (k, l) configurations, which
 * RedisBloom's age-partitioned branch copies into agingBloom.c APBF_createHighLevelAPI), this treats each slice as an independent Bernoulli source: a query answers 1
 * when some k consecutive slices all have the item's bit set. With slices sized so that one that
 * took k generations of g items is half full (m = k·g / ln 2 bits, the optimum of a classic Bloom
 * filter), the slice at age p (0 = newest) took min(p + 1, k) generations, so its fill is
 * 1 − 2^(−min(p+1, k)/k) when the current generation is complete (the worst case). The chance of
 * a run of k set bits among k + l slices of those fills is computed exactly by a small dynamic
 * program over the length of the current run ({@link windowFalsePositiveRate}), and
 * {@link chooseWindowShape} searches (k, l) for the least memory under the target.
 *
 * Memory per item of the window: (k + l) slices of k·g/ln 2 bits for l·g items, that is
 * k·(k + l) / (l · ln 2) bits per item.
 */

/** The shape of an age-partitioned filter. */
export interface WindowShape {
  /** Hash functions: the slices each add writes to, and the run a query looks for. */
  readonly k: number
  /** Generations kept beyond the k newest slices: the window is l generations. */
  readonly l: number
}

/** Largest k searched: 0.5^k must be able to reach the smallest error rate accepted. */
export const MAX_HASHES = 48
/** Largest l searched: past it a query's work (about (k + l) / k slices probed) outgrows the gain. */
export const MAX_GENERATIONS = 64
/** The smallest error rate a window filter takes (2^-40: k ≤ 48 reaches it with room). */
export const MIN_WINDOW_ERROR_RATE = 1e-12
/**
 * The model's rate must be this far under the target: it takes each slice at its expected fill,
 * and the spread of real fills around it raises the rate of a run of k (the chance of a run is
 * convex in the fills). Measured in bench/window.ts: without it a 1% COUNT window answered 1.02%.
 */
export const MODEL_MARGIN = 0.85

/**
 * The chance that k consecutive slices out of `fills.length` all have a given bit set, each
 * slice independently with probability `fills[p]`: 1 − P(no run of k), by a dynamic program over
 * the length of the run ending at each slice.
 */
export function runProbability(fills: readonly number[], k: number): number {
  // noRun[r]: probability that no run of k occurred so far and the current run has length r.
  let noRun = new Float64Array(k)
  noRun[0] = 1
  for (const fill of fills) {
    const next = new Float64Array(k)
    for (let r = 0; r < k; r++) {
      const p = noRun[r]!
      if (p === 0) continue
      next[0]! += p * (1 - fill)
      if (r + 1 < k) next[r + 1]! += p * fill
    }
    noRun = next
  }
  let none = 0
  for (let r = 0; r < k; r++) none += noRun[r]!
  return Math.min(1, Math.max(0, 1 - none))
}

/** The slice fills of a filter of shape (k, l) in its steady state with complete generations. */
export function steadyFills(k: number, l: number): number[] {
  const fills: number[] = []
  for (let p = 0; p < k + l; p++) fills.push(1 - 2 ** (-Math.min(p + 1, k) / k))
  return fills
}

/** The false-positive rate of shape (k, l) in its steady state (see the module comment). */
export function windowFalsePositiveRate(k: number, l: number): number {
  return runProbability(steadyFills(k, l), k)
}

/** Bits per item of the window for shape (k, l): k·(k + l) / (l · ln 2). */
export function bitsPerWindowItem(k: number, l: number): number {
  return (k * (k + l)) / (l * Math.LN2)
}

const shapes = new Map<string, WindowShape>()

/**
 * The (k, l) of least memory per item whose modelled false-positive rate is at most `errorRate`
 * times {@link MODEL_MARGIN}, with
 * l ≤ `maxGenerations` (a window of fewer items than generations has generations of one item).
 * Memoized: a server reserves many filters at the same few rates.
 *
 * @throws RangeError for an error rate outside [{@link MIN_WINDOW_ERROR_RATE}, 1)
 */
export function chooseWindowShape(errorRate: number, maxGenerations = MAX_GENERATIONS): WindowShape {
  if (!(errorRate >= MIN_WINDOW_ERROR_RATE && errorRate < 1))
    throw new RangeError(`error rate must be in [${MIN_WINDOW_ERROR_RATE}, 1)`)
  const lMax = Math.max(1, Math.min(MAX_GENERATIONS, Math.floor(maxGenerations)))
  const key = `${errorRate}:${lMax}`
  const known = shapes.get(key)
  if (known !== undefined) return known
  let best: WindowShape | undefined
  let bestBits = Infinity
  for (let k = 1; k <= MAX_HASHES; k++) {
    // Smallest bits for this k come from the largest l that still meets the rate (bits fall as l grows).
    let l = 0
    for (let candidate = 1; candidate <= lMax; candidate++) {
      if (windowFalsePositiveRate(k, candidate) <= errorRate * MODEL_MARGIN) l = candidate
      else break
    }
    if (l === 0) continue
    const bits = bitsPerWindowItem(k, l)
    if (bits < bestBits) {
      bestBits = bits
      best = { k, l }
    }
  }
  if (best === undefined) throw new RangeError(`no shape reaches error rate ${errorRate}`)
  shapes.set(key, best)
  return best
}
