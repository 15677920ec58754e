/**
 * The clock behind INFO commandstats' usec and the SLOWLOG: one clock read per command. A read
 * of commands starts the clock ({@link start}); each command that ran takes the time since the
 * previous one ended ({@link lap}), so a command's time includes the parsing of its own bytes,
 * which redis leaves out. A refused command restarts the clock, so its time counts for nobody.
 */
import { performance } from 'node:perf_hooks'

export class CommandTimer {
  /** performance.now() when the last command ended or the current read began. */
  private mark = 0

  /** A read of commands (or one command from the log, the master link, HTTP) begins. */
  start(): void {
    this.mark = performance.now()
  }

  /** Microseconds since the mark (fractional); the mark moves to now. */
  lap(): number {
    const now = performance.now()
    const micros = (now - this.mark) * 1000
    this.mark = now
    return micros
  }

  /** Microseconds since the mark, leaving it: what a command that ran others (EXEC) took in all. */
  since(mark: number): number {
    return (performance.now() - mark) * 1000
  }

  /** The current mark, for {@link since}. */
  get current(): number {
    return this.mark
  }
}
