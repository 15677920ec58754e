/**
 * Where a command handler's replies go (what `ctx.client.reply` is): the calls of a RESP reply
 * without a commitment to bytes. A socket's client writes them as RESP (reply-writer.ts); a
 * session of the server's own (the HTTP API, the log's replay, a replica's master link) builds
 * them as values (reply-values.ts), the values a client's reader would make of the bytes.
 */
/** RESP version a client speaks: 2 by default, 3 after `HELLO 3`. */
export type Protocol = 2 | 3

export interface ReplySink {
  /** RESP version for the replies that differ between 2 and 3; set by HELLO. */
  protocol: Protocol
  /** A status reply; `text` must not hold CR or LF. */
  simple(text: string): void
  /**
   * An error reply, `text` starting with its code. `encoding` 'latin1': the text quotes a
   * client's raw bytes, one byte per character.
   */
  error(text: string, encoding?: 'utf8' | 'latin1'): void
  integer(n: number): void
  /** A bulk string; a string is its UTF-8 bytes. */
  bulk(data: Uint8Array | string): void
  /** The null bulk string (RESP3: the null). */
  nullBulk(): void
  /** The null array (RESP3: the null). */
  nullArray(): void
  /** An array of `length` replies, which the caller writes next. */
  array(length: number): void
  /** An out-of-band message of `length` elements (RESP2: an array). */
  push(length: number): void
  /** A map of `pairs` key/value pairs (RESP2: a flat array). */
  map(pairs: number): void
  /** A set of `length` members (RESP2: an array). */
  set(length: number): void
  /** A double (RESP2: a bulk string of its text). */
  double(n: number): void
  /** A boolean (RESP2: the integer 1 or 0). */
  boolean(b: boolean): void
  /** Verbatim text (RESP2: a bulk string). */
  verbatim(text: string, format?: string): void
  /** Precomputed reply bytes (shared-replies.ts): whole RESP elements. */
  raw(bytes: Uint8Array): void
  /** `count` integer replies, 1 where `values[from + i]` is 1 and 0 otherwise. */
  zeroOrOne(values: Uint8Array, from: number, count: number): void
  /**
   * An integer reply of 0 whose value {@link answer} may set to 1 later; `settle` answers it and
   * runs before the replies are next taken or truncated unless {@link settled} was called first.
   * @returns where it is, for {@link answer}
   */
  integerLater(settle: () => void): number
  /** Sets the reply {@link integerLater} left at `at` to 1 when `one`. */
  answer(at: number, one: boolean): void
  /**
   * Replaces the reply {@link integerLater} left at `at` with the error `text` (as {@link error}
   * takes it, starting with its code).
   * @returns how far the places of the later replies moved (add it to each later `at`)
   */
  answerError(at: number, text: string): number
  /** The replies left open are answered: nothing to run before a take. */
  settled(): void
  /** Where the next reply goes: a mark for {@link truncate}. */
  mark(): number
  /** Drops the replies after `mark` (CLIENT REPLY OFF / SKIP). */
  truncate(mark: number): void
}
