/**
 * Precomputed reply bytes for the most frequent answers, as redis keeps them in `shared.*`
 * (server.c createSharedObjects). Write them with `ReplyWriter.raw`; never mutate them.
 */

/** `+OK\r\n` */
export const OK = Buffer.from('+OK\r\n', 'latin1')
/** `+PONG\r\n` */
export const PONG = Buffer.from('+PONG\r\n', 'latin1')
/** `:0\r\n` */
export const ZERO = Buffer.from(':0\r\n', 'latin1')
/** `:1\r\n` */
export const ONE = Buffer.from(':1\r\n', 'latin1')
/** `*0\r\n` */
export const EMPTY_ARRAY = Buffer.from('*0\r\n', 'latin1')
/** `$-1\r\n`: the RESP2 null bulk string. */
export const NULL_BULK_RESP2 = Buffer.from('$-1\r\n', 'latin1')
/** `*-1\r\n`: the RESP2 null array. */
export const NULL_ARRAY_RESP2 = Buffer.from('*-1\r\n', 'latin1')
/** `_\r\n`: the RESP3 null. */
export const NULL_RESP3 = Buffer.from('_\r\n', 'latin1')

/** Integers 0..1023 are precomputed (redis OBJ_SHARED_BULKHDR_LEN-style cache). */
const CACHED_INTEGERS = 1024
const INTEGER_REPLIES: readonly Buffer[] = Array.from({ length: CACHED_INTEGERS }, (_, n) =>
  Buffer.from(`:${n}\r\n`, 'latin1'),
)

/**
 * `:n\r\n` as bytes: a shared Buffer for 0..1023 (do not mutate it), a fresh one otherwise.
 * @throws RangeError when `n` is not an integer.
 */
export function integerReply(n: number): Buffer {
  if (n >= 0 && n < CACHED_INTEGERS && Number.isInteger(n)) return INTEGER_REPLIES[n]!
  if (!Number.isInteger(n)) throw new RangeError(`integerReply needs an integer, got ${n}`)
  return Buffer.from(`:${n}\r\n`, 'latin1')
}
