/** One command's arguments, located in the bytes they arrived in (see {@link CommandArgs}). */

/**
 * Whether `bytes[start, end)` is an ASCII keyword, given in upper case, in any letter case
 * (`nonscaling`, `NonScaling` and `NONSCALING` all match `'NONSCALING'`).
 */
export function isKeywordAt(bytes: Uint8Array, start: number, end: number, upperKeyword: string): boolean {
  const length = upperKeyword.length
  if (end - start !== length) return false
  for (let k = 0; k < length; k++) {
    let c = bytes[start + k]!
    if (c >= 0x61 && c <= 0x7a) c -= 0x20 // a-z → A-Z
    if (c !== upperKeyword.charCodeAt(k)) return false
  }
  return true
}

/** Slots kept between commands; a command with more arguments grows them, and they shrink back after. */
const KEEP_SLOTS = 1024

/**
 * The arguments of one command, where the request parser found them: for each, the Buffer that
 * holds it (the read chunk, or the one copy of an argument split across reads) and its
 * `[start, end)` there. A parser refills one instance for every command, so parsing allocates
 * nothing per command: handlers read bytes in place (`bytes`/`start`/`end`, `isKeyword`) and ask
 * for a Buffer view (`get`) or an array (`toArray`) only when they need one.
 *
 * An instance is valid only until the handler returns: the parser refills it for the next
 * command, and the server reads the next bytes into the same buffer (accept-connections.ts), so
 * whatever outlives the command must be copied; the append log encodes its record before
 * `propagate` returns.
 */
export class CommandArgs {
  /** Number of arguments, the command name included. */
  length = 0
  private sources: Buffer[] = []
  private starts = new Uint32Array(16)
  private ends = new Uint32Array(16)

  /** Arguments from separate byte arrays (HTTP, the append log, tests). */
  static of(items: readonly Uint8Array[]): CommandArgs {
    return new CommandArgs().assign(items)
  }

  /** Replaces the arguments with `items`, each whole. */
  assign(items: readonly Uint8Array[]): this {
    this.clear()
    for (const item of items) {
      const buffer = Buffer.isBuffer(item) ? item : Buffer.from(item.buffer, item.byteOffset, item.byteLength)
      this.push(buffer, 0, buffer.length)
    }
    return this
  }

  /** Appends an argument: `source[start, end)`. */
  push(source: Buffer, start: number, end: number): void {
    const i = this.length
    if (i === this.starts.length) this.grow()
    // Nearly always the same read buffer as the last command's: no store, so no write barrier.
    if (this.sources[i] !== source) this.sources[i] = source
    this.starts[i] = start
    this.ends[i] = end
    this.length = i + 1
  }

  /**
   * Copies arguments `from` to the last into one Buffer of their own and points them there, so
   * that they outlive the read they arrived in (a command whose rest comes in a later read).
   */
  copyFrom(from: number): void {
    let total = 0
    for (let i = from; i < this.length; i++) total += this.ends[i]! - this.starts[i]!
    const copy = Buffer.allocUnsafe(total)
    let at = 0
    for (let i = from; i < this.length; i++) {
      const start = this.starts[i]!
      const end = this.ends[i]!
      this.sources[i]!.copy(copy, at, start, end)
      this.sources[i] = copy
      this.starts[i] = at
      this.ends[i] = at + (end - start)
      at += end - start
    }
  }

  /** Forgets all arguments (and the memory of an unusually long command). */
  clear(): void {
    if (this.sources.length > KEEP_SLOTS) {
      this.sources = []
      this.starts = new Uint32Array(16)
      this.ends = new Uint32Array(16)
    }
    this.length = 0
  }

  /** The Buffer holding argument `i`, which is `bytes(i)[start(i), end(i))`. */
  bytes(i: number): Buffer {
    return this.sources[i]!
  }

  start(i: number): number {
    return this.starts[i]!
  }

  end(i: number): number {
    return this.ends[i]!
  }

  /** Length of argument `i` in bytes. */
  byteLength(i: number): number {
    return this.ends[i]! - this.starts[i]!
  }

  /** Argument `i` as a Buffer: a view of the read buffer, made on each call. */
  get(i: number): Buffer {
    const source = this.sources[i]!
    const start = this.starts[i]!
    return Buffer.from(source.buffer, source.byteOffset + start, this.ends[i]! - start)
  }

  /** All arguments as views (see {@link get}), in a fresh array. */
  toArray(): Buffer[] {
    const items: Buffer[] = new Array(this.length)
    for (let i = 0; i < this.length; i++) items[i] = this.get(i)
    return items
  }

  /** The arguments as views, in order (see {@link get}). */
  *[Symbol.iterator](): IterableIterator<Buffer> {
    for (let i = 0; i < this.length; i++) yield this.get(i)
  }

  /** Whether argument `i` equals an ASCII keyword given in upper case, in any letter case. */
  isKeyword(i: number, upperKeyword: string): boolean {
    return isKeywordAt(this.sources[i]!, this.starts[i]!, this.ends[i]!, upperKeyword)
  }

  /** Argument `i` as a latin1 string (one character per byte): names, keys. */
  latin1(i: number): string {
    return this.sources[i]!.toString('latin1', this.starts[i]!, this.ends[i]!)
  }

  private grow(): void {
    const starts = new Uint32Array(this.starts.length * 2)
    starts.set(this.starts)
    this.starts = starts
    const ends = new Uint32Array(this.ends.length * 2)
    ends.set(this.ends)
    this.ends = ends
  }
}
