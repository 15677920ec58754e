/**
 * Error replies: one class thrown by argument parsing and handlers, caught once in dispatch. The
 * wire texts are the error catalogue, protocol/error-texts.ts (every layer that replies with an
 * error takes its text there), re-exported here so that a handler imports both from one place.
 */
export * from '../../protocol/error-texts.js'

/**
 * An error reply. `message` is the whole text after the '-', code word included. `encoding` is
 * 'latin1' when the text quotes a client's argument decoded one character per byte, so that the
 * reply carries those bytes unchanged, as redis does (non-UTF-8 bytes included).
 */
export class ReplyError extends Error {
  constructor(
    message: string,
    readonly encoding: 'utf8' | 'latin1' = 'utf8',
  ) {
    super(message)
    this.name = 'ReplyError'
  }
}
