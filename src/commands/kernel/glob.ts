/**
 * redis util.c stringmatchlen: glob-style matching for KEYS, SCAN MATCH and CONFIG GET.
 * `*` any run, `?` any one byte, `[abc]`, `[^a]`, `[a-z]`, `\x` a literal x. Works on bytes.
 */
export function globMatch(pattern: Uint8Array, subject: Uint8Array, noCase = false): boolean {
  return match(pattern, 0, subject, 0, noCase, 0, { skipLongerMatches: false })
}

const STAR = 0x2a // *
const QUESTION = 0x3f // ?
const OPEN = 0x5b // [
const CLOSE = 0x5d // ]
const CARET = 0x5e // ^
const BACKSLASH = 0x5c // \
const DASH = 0x2d // -

function fold(c: number, noCase: boolean): number {
  return noCase && c >= 0x41 && c <= 0x5a ? c + 0x20 : c
}

/**
 * redis 7.0.9+ stringmatchlen_impl's `skipLongerMatches` (CVE-2022-36021): once the rest of the
 * pattern after a `*` matches nowhere in the rest of the subject, no earlier `*` can make it match
 * by taking more, so the search stops instead of trying every split (exponential time).
 */
interface MatchState {
  skipLongerMatches: boolean
}

function match(
  p: Uint8Array,
  pi: number,
  s: Uint8Array,
  si: number,
  noCase: boolean,
  depth: number,
  state: MatchState,
): boolean {
  // Like redis, bound the recursion that runs of stars can cause.
  if (depth > 1000) return false
  while (pi < p.length && si < s.length) {
    const c = p[pi]!
    if (c === STAR) {
      while (pi + 1 < p.length && p[pi + 1] === STAR) pi++
      if (pi + 1 === p.length) return true
      for (let k = si; k < s.length; k++) {
        if (match(p, pi + 1, s, k, noCase, depth + 1, state)) return true
        if (state.skipLongerMatches) return false
      }
      state.skipLongerMatches = true
      return false
    }
    if (c === QUESTION) {
      pi++
      si++
      continue
    }
    if (c === OPEN) {
      pi++
      const not = p[pi] === CARET
      if (not) pi++
      let matched = false
      while (pi < p.length) {
        if (p[pi] === BACKSLASH && pi + 1 < p.length) {
          pi++
          if (fold(p[pi]!, noCase) === fold(s[si]!, noCase)) matched = true
        } else if (p[pi] === CLOSE) {
          break
        } else if (pi + 2 < p.length && p[pi + 1] === DASH) {
          let start = fold(p[pi]!, noCase)
          let end = fold(p[pi + 2]!, noCase)
          if (start > end) [start, end] = [end, start]
          const x = fold(s[si]!, noCase)
          if (x >= start && x <= end) matched = true
          pi += 2
        } else if (fold(p[pi]!, noCase) === fold(s[si]!, noCase)) {
          matched = true
        }
        pi++
      }
      if (not) matched = !matched
      if (!matched) return false
      // Past ']'; a class left open at the end of the pattern ends there, as in redis.
      if (pi < p.length) pi++
      si++
      continue
    }
    if (c === BACKSLASH && pi + 1 < p.length) pi++
    if (fold(p[pi]!, noCase) !== fold(s[si]!, noCase)) return false
    pi++
    si++
  }
  if (si === s.length) {
    while (pi < p.length && p[pi] === STAR) pi++
    return pi === p.length
  }
  return false
}
