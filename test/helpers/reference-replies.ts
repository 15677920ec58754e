/** Reads test/fixtures/redisbloom-2.4-replies.txt: commands with their exact RESP2/RESP3 replies. */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

export interface ReferenceCase {
  line: number
  command: string[]
  resp2: Buffer
  /** The RESP3 reply, where it differs from RESP2. */
  resp3?: Buffer
}

/** Turns the file's escapes (\r \n \t \\ \xNN) back into bytes. */
export function unescapeBytes(text: string): Buffer {
  const bytes: number[] = []
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c !== '\\') {
      bytes.push(c.charCodeAt(0))
      continue
    }
    const next = text[++i]!
    if (next === 'r') bytes.push(0x0d)
    else if (next === 'n') bytes.push(0x0a)
    else if (next === 't') bytes.push(0x09)
    else if (next === '\\') bytes.push(0x5c)
    else if (next === 'x') {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16))
      i += 2
    } else throw new Error(`unknown escape \\${next}`)
  }
  return Buffer.from(bytes)
}

export function loadReferenceCases(): ReferenceCase[] {
  const file = fileURLToPath(new URL('../fixtures/redisbloom-2.4-replies.txt', import.meta.url))
  const cases: ReferenceCase[] = []
  readFileSync(file, 'latin1').split('\n').forEach((raw, index) => {
    if (raw.startsWith('#') || raw.trim() === '') return
    const reply = /^\s+(RESP2|RESP3) (.*)$/.exec(raw)
    if (reply) {
      const current = cases[cases.length - 1]!
      if (reply[1] === 'RESP2') current.resp2 = unescapeBytes(reply[2]!)
      else current.resp3 = unescapeBytes(reply[2]!)
      return
    }
    cases.push({ line: index + 1, command: raw.trim().split(/\s+/), resp2: Buffer.alloc(0) })
  })
  return cases
}
