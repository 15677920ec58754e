/**
 * Progress output the bfs tools share: a status line redrawn in place on a terminal, lines that
 * stay above it, redraws throttled to an interval, and the `[###...]  42%` bar.
 */

/** A bar on a terminal is redrawn at most this often. */
export const REDRAW_MS = 100
/** Characters between the bar's brackets. */
const BAR_WIDTH = 30
/** ESC [ K: erase from the cursor to the end of the line. */
const ERASE_TO_LINE_END = '\x1b[K'

/** `fraction` (0 to 1) as `[#########.....................]  30%`: a bar and a whole percentage padded to 3. */
export function formatBar(fraction: number): string {
  const filled = Math.round(fraction * BAR_WIDTH)
  return `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}%`
}

/** One stream's progress output: the throttle, the line redrawn in place, and lines printed above it. */
export class ProgressLine {
  private lastDrawMs = 0
  private drawn = false

  constructor(private readonly out: NodeJS.WritableStream) {}

  /**
   * Whether to show progress at `nowMs`: true with `force`, or when at least `intervalMs` has
   * passed since the last time it said true (always the first time); then that time is `nowMs`.
   */
  due(nowMs: number, intervalMs: number, force: boolean): boolean {
    if (!force && nowMs - this.lastDrawMs < intervalMs) return false
    this.lastDrawMs = nowMs
    return true
  }

  /** Replaces the status line with `text` (which must hold no newline). */
  draw(text: string): void {
    this.out.write(`\r${text}${ERASE_TO_LINE_END}`)
    this.drawn = true
  }

  /** Writes a line that stays: the status line, if any, is cleared first and must be drawn again. */
  print(line: string): void {
    if (this.drawn) this.out.write(`\r${ERASE_TO_LINE_END}`)
    this.out.write(`${line}\n`)
    this.drawn = false
  }

  /** Leaves the status line, if one is drawn, on screen and moves below it. */
  end(): void {
    if (this.drawn) this.out.write('\n')
    this.drawn = false
  }
}
