/**
 * When to take a snapshot: redis.conf's `save <seconds> <changes>` rules, checked as redis 7.0's
 * serverCron does. Pure: no clock, no I/O; the caller passes the time.
 */

/** One `save <seconds> <changes>` rule: save when `changes` writes are older than `seconds`. */
export interface SaveRule {
  readonly seconds: number
  readonly changes: number
}

/** After a failed background save, wait this long before the rules may start another (redis CONFIG_BGSAVE_RETRY_DELAY). */
export const SAVE_RETRY_DELAY_MS = 5_000

/**
 * Parses the rules as the `save` config key holds them: "3600 1 300 100" (pairs of whole numbers)
 * or "" for none. Throws RangeError on an odd count or a word that is not a whole number.
 */
export function parseSaveRules(text: string): SaveRule[] {
  const words = text.split(/\s+/).filter((word) => word !== '')
  if (words.length % 2 !== 0) throw new RangeError(`save rules come in <seconds> <changes> pairs, got '${text}'`)
  const rules: SaveRule[] = []
  for (let i = 0; i < words.length; i += 2) {
    const seconds = Number(words[i])
    const changes = Number(words[i + 1])
    if (!/^\d+$/.test(words[i]!) || !/^\d+$/.test(words[i + 1]!)) {
      throw new RangeError(`save rules take whole numbers, got '${words[i]} ${words[i + 1]}'`)
    }
    rules.push({ seconds, changes })
  }
  return rules
}

/** What shouldSave looks at besides the rules. */
export interface SaveState {
  /** The time now, in ms since the epoch. */
  readonly nowMs: number
  /** When the last successful save finished (or the server started), in ms since the epoch. */
  readonly lastSaveMs: number
  /** Changes since the last successful save. */
  readonly dirty: number
  /** When the last save attempt started, and whether it failed: a failure holds back retries. */
  readonly lastAttemptMs?: number
  readonly lastAttemptFailed?: boolean
}

/**
 * Whether a rule fires: at least `changes` changes and more than `seconds` since the last save
 * (redis server.c serverCron: `dirty >= changes && unixtime - lastsave > seconds`), unless the
 * last attempt failed less than {@link SAVE_RETRY_DELAY_MS} ago. No rules: never.
 */
export function shouldSave(rules: readonly SaveRule[], state: SaveState): boolean {
  if (
    state.lastAttemptFailed &&
    state.lastAttemptMs !== undefined &&
    state.nowMs - state.lastAttemptMs <= SAVE_RETRY_DELAY_MS
  ) {
    return false
  }
  const elapsedMs = state.nowMs - state.lastSaveMs
  return rules.some((rule) => state.dirty >= rule.changes && elapsedMs > rule.seconds * 1000)
}
