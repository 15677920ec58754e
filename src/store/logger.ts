/** The leveled logger every part of the server writes to (redis-server's levels); server/logger.ts makes it. */
export interface Logger {
  debug(message: string): void
  verbose(message: string): void
  notice(message: string): void
  warning(message: string): void
}
