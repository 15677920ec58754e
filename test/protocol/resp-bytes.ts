/** Hand-built request bytes and parser drivers shared by the protocol tests. */
import { RequestParser, type ParserLimits } from '../../src/protocol/request-parser.js'

/** `*N\r\n$len\r\n<arg>\r\n...` for the given arguments (strings as UTF-8). */
export function multibulk(...args: Array<string | Uint8Array>): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)]
  for (const arg of args) {
    const bytes = typeof arg === 'string' ? Buffer.from(arg) : Buffer.from(arg)
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n'))
  }
  return Buffer.concat(parts)
}

/** What feeding a parser produced: the commands (as fresh copies) and the error, if any. */
export interface Outcome {
  commands: Buffer[][]
  error?: Error
}

/** Feeds `chunks` in order to a new parser and records commands and the first error. */
export function feed(chunks: readonly Buffer[], limits?: Partial<ParserLimits>): Outcome {
  const parser = new RequestParser(limits)
  const commands: Buffer[][] = []
  try {
    for (const chunk of chunks) {
      parser.execute(chunk, (argv) => {
        commands.push(argv.map((item) => Buffer.from(item)))
      })
    }
  } catch (error) {
    return { commands, error: error as Error }
  }
  return { commands }
}

/** One chunk per byte. Each is a fresh Buffer so no test relies on a shared backing store. */
export function byteByByte(bytes: Buffer): Buffer[] {
  return Array.from(bytes, (b) => Buffer.from([b]))
}

/** Commands as arrays of latin1 strings, for readable assertions. */
export function asStrings(commands: Buffer[][]): string[][] {
  return commands.map((argv) => argv.map((item) => item.toString('latin1')))
}
