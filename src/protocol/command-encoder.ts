/**
 * A command as a client sends it: a RESP array of bulk strings (`*<n>\r\n` then n times
 * `$<len>\r\n<bytes>\r\n`). One encoder for every part of bfs that speaks to another server or
 * writes commands down: the append-only log's records and the replication stream (written in
 * place, from the command's own CommandArgs), the replica's handshake, cluster links, MIGRATE and
 * the tools. The reply side is reply-reader.ts.
 */
import { CommandArgs } from './command-args.js'
import { copyBytes, decimalDigits, writeCountLine } from './reply-writer.js'

const ARRAY = 0x2a // *
const BULK = 0x24 // $
const CR = 0x0d // \r
const LF = 0x0a // \n

/** An argument as sent: strings as UTF-8, numbers in decimal, bytes as they are. */
export type CommandArg = string | number | Uint8Array

/**
 * An argument of {@link encodeCommandPieces}: a {@link CommandArg}, or one bulk string given as
 * pieces (written one after the other, never joined: a large payload gathered in parts).
 */
export type CommandPart = CommandArg | readonly Uint8Array[]

/** Arguments up to this size are copied into the command's buffer; larger ones are sent as they are. */
export const INLINE_ARG_BYTES = 16 * 1024

/** Bytes of one command as RESP (see {@link writeCommand}). */
export function commandSize(args: CommandArgs): number {
  const count = args.length
  let size = 1 + decimalDigits(count) + 2
  for (let i = 0; i < count; i++) {
    const length = args.byteLength(i)
    size += 1 + decimalDigits(length) + 2 + length + 2
  }
  return size
}

/**
 * Writes one command at `out[at]`, which must have {@link commandSize} bytes of room. Arguments
 * are copied from where they are (the command's own CommandArgs: no view per argument, no
 * allocation): the append-only log and the replication stream encode each record this way, once.
 * Returns the offset after it.
 */
export function writeCommand(args: CommandArgs, out: Uint8Array, at: number): number {
  const count = args.length
  at = writeCountLine(out, at, ARRAY, count)
  for (let i = 0; i < count; i++) {
    const bytes = args.bytes(i)
    const start = args.start(i)
    const end = args.end(i)
    at = writeCountLine(out, at, BULK, end - start)
    at = copyBytes(bytes, start, end, out, at)
    out[at++] = CR
    out[at++] = LF
  }
  return at
}

/** One command in a Buffer of its own. */
export function encodeCommand(argv: CommandArgs | readonly CommandArg[]): Buffer {
  if (argv instanceof CommandArgs) {
    const out = Buffer.allocUnsafe(commandSize(argv))
    writeCommand(argv, out, 0)
    return out
  }
  return encodeCommandPieces(argv, Infinity)[0]!
}

/**
 * One command as a list of buffers to write in order: one buffer, except that an argument larger
 * than `inlineBytes` (and every piece of an argument given in pieces) is its own buffer, not
 * copied. The caller must not change those bytes until they are written.
 */
export function encodeCommandPieces(argv: readonly CommandPart[], inlineBytes = INLINE_ARG_BYTES): Buffer[] {
  // One pass to size what is copied, one to write it.
  const args: (Uint8Array | readonly Uint8Array[])[] = new Array(argv.length)
  let size = 1 + decimalDigits(argv.length) + 2
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const bytes =
      typeof arg === 'string'
        ? Buffer.from(arg, 'utf8')
        : typeof arg === 'number'
          ? Buffer.from(String(arg), 'latin1')
          : arg
    args[i] = bytes
    const length = byteLength(bytes)
    size += 1 + decimalDigits(length) + 2 + (isPieces(bytes) || length > inlineBytes ? 0 : length) + 2
  }
  const out: Buffer[] = []
  let buffer = Buffer.allocUnsafe(size)
  let at = writeCountLine(buffer, 0, ARRAY, argv.length)
  for (const bytes of args) {
    const length = byteLength(bytes)
    at = writeCountLine(buffer, at, BULK, length)
    if (isPieces(bytes) || length > inlineBytes) {
      out.push(buffer.subarray(0, at))
      for (const piece of isPieces(bytes) ? bytes : [bytes]) if (piece.length > 0) out.push(asBuffer(piece))
      size -= at
      buffer = Buffer.allocUnsafe(size)
      at = 0
    } else {
      at = copyBytes(bytes, 0, length, buffer, at)
    }
    buffer[at++] = CR
    buffer[at++] = LF
  }
  out.push(buffer.subarray(0, at))
  return out
}

function isPieces(arg: Uint8Array | readonly Uint8Array[]): arg is readonly Uint8Array[] {
  return Array.isArray(arg)
}

function byteLength(arg: Uint8Array | readonly Uint8Array[]): number {
  if (!isPieces(arg)) return arg.length
  let length = 0
  for (const piece of arg) length += piece.length
  return length
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}
