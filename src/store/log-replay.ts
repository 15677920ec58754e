/**
 * Reading the append-only log back: a strict framer finds each record's bounds (so damage is
 * reported at its byte offset), and the request parser — the same one clients go through —
 * turns each whole record into argv. No fs here: callers hand in the bytes of one segment. A
 * record is a command as a client sends it, written by protocol/command-encoder.ts.
 */
import { RequestParser } from '../protocol/request-parser.js'

const ARRAY = 0x2a // *
const BULK = 0x24 // $
const CR = 0x0d // \r
const LF = 0x0a // \n
const DIGIT_0 = 0x30 // 0
const DIGIT_9 = 0x39 // 9

/** Longest count line the framer accepts (digits only; far above any real record). */
const MAX_COUNT_DIGITS = 18

/** Where and why a segment stops being readable. */
export interface LogDamage {
  /** 'truncated': the bytes end inside a record that was valid so far (a crash mid-write). */
  readonly kind: 'truncated' | 'corrupt'
  /** Byte offset in the segment: the start of the cut record, or the first bad byte. */
  readonly offset: number
  /** Start of the record holding the damage: everything before it loads. */
  readonly recordOffset: number
  readonly reason: string
}

export interface ScanResult {
  /** Whole records delivered. */
  readonly records: number
  /** Bytes of whole records from the start: the length to keep when the rest is dropped. */
  readonly validBytes: number
  readonly damage?: LogDamage
}

type Frame = { end: number } | { incomplete: true } | { bad: number; reason: string }

/**
 * Calls `onRecord(argv, offset)` for every whole record of `bytes`, in order, and stops at the
 * first damage, which it describes rather than throws. Trailing zero bytes (a file extended by
 * the file system but never written, after a power loss) count as a truncated tail.
 */
export function scanLog(bytes: Buffer, onRecord: (argv: Buffer[], offset: number) => void): ScanResult {
  const parser = new RequestParser({ maxBulkBytes: Number.MAX_SAFE_INTEGER, maxArrayLength: Number.MAX_SAFE_INTEGER })
  let pos = 0
  let records = 0
  while (pos < bytes.length) {
    const frame = frameRecord(bytes, pos)
    if ('incomplete' in frame) {
      return {
        records,
        validBytes: pos,
        damage: { kind: 'truncated', offset: pos, recordOffset: pos, reason: 'unexpected end of file' },
      }
    }
    if ('bad' in frame) {
      const kind = allZero(bytes, frame.bad) ? 'truncated' : 'corrupt'
      return { records, validBytes: pos, damage: { kind, offset: frame.bad, recordOffset: pos, reason: frame.reason } }
    }
    let argv: Buffer[] | undefined
    parser.execute(bytes.subarray(pos, frame.end), (parsed) => {
      argv = parsed
    })
    onRecord(argv!, pos)
    records++
    pos = frame.end
  }
  return { records, validBytes: pos }
}

/** Bounds of the record at `pos`: `*<n>\r\n` then n times `$<len>\r\n<len bytes>\r\n`. */
function frameRecord(buf: Buffer, pos: number): Frame {
  if (buf[pos] !== ARRAY) return { bad: pos, reason: `expected '*', got byte 0x${hex(buf[pos]!)}` }
  const count = readCount(buf, pos + 1)
  if (!('value' in count)) return count
  if (count.value < 1) return { bad: pos + 1, reason: 'empty command' }
  let at = count.next
  for (let i = 0; i < count.value; i++) {
    if (at >= buf.length) return { incomplete: true }
    if (buf[at] !== BULK) return { bad: at, reason: `expected '$', got byte 0x${hex(buf[at]!)}` }
    const length = readCount(buf, at + 1)
    if (!('value' in length)) return length
    at = length.next + length.value
    if (at + 2 > buf.length) {
      // A cut inside the payload or its CRLF; a present but wrong CR or LF is still damage.
      if (at < buf.length && buf[at] !== CR) return { bad: at, reason: 'bulk not followed by CRLF' }
      return { incomplete: true }
    }
    if (buf[at] !== CR || buf[at + 1] !== LF) return { bad: at, reason: 'bulk not followed by CRLF' }
    at += 2
  }
  return { end: at }
}

/** Digits then CRLF at `pos`. */
function readCount(
  buf: Buffer,
  pos: number,
): { value: number; next: number } | { incomplete: true } | { bad: number; reason: string } {
  let value = 0
  let at = pos
  while (at < buf.length && buf[at]! >= DIGIT_0 && buf[at]! <= DIGIT_9) {
    value = value * 10 + (buf[at]! - DIGIT_0)
    at++
    if (at - pos > MAX_COUNT_DIGITS) return { bad: pos, reason: 'count too long' }
  }
  if (at >= buf.length) return { incomplete: true }
  if (at === pos) return { bad: at, reason: `expected a digit, got byte 0x${hex(buf[at]!)}` }
  if (buf[at] !== CR) return { bad: at, reason: `expected CR, got byte 0x${hex(buf[at]!)}` }
  if (at + 1 >= buf.length) return { incomplete: true }
  if (buf[at + 1] !== LF) return { bad: at + 1, reason: `expected LF, got byte 0x${hex(buf[at + 1]!)}` }
  return { value, next: at + 2 }
}

function allZero(buf: Buffer, from: number): boolean {
  for (let i = from; i < buf.length; i++) if (buf[i] !== 0) return false
  return true
}

function hex(byte: number): string {
  return byte.toString(16).padStart(2, '0')
}
