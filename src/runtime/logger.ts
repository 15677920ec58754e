/**
 * A redis-server style log: `pid:M 22 Nov 2026 10:00:00.123 * message`, with its levels
 * (. debug, - verbose, * notice, # warning), to standard output or a file.
 */
import { appendFileSync } from 'node:fs'
import type { LogLevel } from './config.js'

/** The leveled logger every part of the server writes to (redis-server's levels); createLogger below makes it. */
export interface Logger {
  debug(message: string): void
  verbose(message: string): void
  notice(message: string): void
  warning(message: string): void
}

const LEVELS: Record<LogLevel, number> = { debug: 0, verbose: 1, notice: 2, warning: 3 }
const MARKS = ['.', '-', '*', '#'] as const
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

export interface LogTarget {
  level: () => LogLevel
  /** File to append to; '' or undefined for standard output. */
  file?: string
  /** Collects lines instead of printing them (tests, embedding programs). */
  sink?: (line: string) => void
}

export function createLogger(target: LogTarget): Logger {
  const write = (rank: number, message: string): void => {
    if (rank < LEVELS[target.level()]) return
    const line = `${process.pid}:M ${timestamp(new Date())} ${MARKS[rank]} ${message}`
    if (target.sink) target.sink(line)
    else if (target.file) appendFileSync(target.file, line + '\n')
    else process.stdout.write(line + '\n')
  }
  return {
    debug: (message) => write(0, message),
    verbose: (message) => write(1, message),
    notice: (message) => write(2, message),
    warning: (message) => write(3, message),
  }
}

function timestamp(date: Date): string {
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0')
  return (
    `${pad(date.getDate())} ${MONTHS[date.getMonth()]} ${date.getFullYear()} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`
  )
}
