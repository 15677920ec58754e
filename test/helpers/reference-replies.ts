/**
 * Reads a reference file of test/fixtures/ (redisbloom-2.4-replies.txt for BF.*,
 * redisbloom-2.4-cf-replies.txt for CF.*): commands with their exact RESP2/RESP3 replies.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from './start-server.js'
import { RawClient, encodeCommand } from './resp.js'

export interface ReferenceCase {
  line: number
  /** The command line's words as written (a quoted argument keeps its quotes and escapes). */
  command: string[]
  /** The arguments as sent: quoted ones unquoted and unescaped. */
  args: Buffer[]
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

/** A command line's words: separated by spaces, a "quoted" one holding the file's escapes. */
function splitWords(line: string): string[] {
  const words: string[] = []
  const pattern = /"((?:[^"\\]|\\.)*)"|(\S+)/g
  for (const match of line.matchAll(pattern)) words.push(match[0])
  return words
}

function argOf(word: string): Buffer {
  return word.startsWith('"') ? unescapeBytes(word.slice(1, -1)) : Buffer.from(word, 'latin1')
}

export function loadReferenceCases(fixture = 'redisbloom-2.4-replies.txt'): ReferenceCase[] {
  const file = fileURLToPath(new URL(`../fixtures/${fixture}`, import.meta.url))
  const cases: ReferenceCase[] = []
  readFileSync(file, 'latin1')
    .split('\n')
    .forEach((raw, index) => {
      if (raw.startsWith('#') || raw.trim() === '') return
      const reply = /^\s+(RESP2|RESP3) (.*)$/.exec(raw)
      if (reply) {
        const current = cases[cases.length - 1]!
        if (reply[1] === 'RESP2') current.resp2 = unescapeBytes(reply[2]!)
        else current.resp3 = unescapeBytes(reply[2]!)
        return
      }
      const command = splitWords(raw.trim())
      cases.push({ line: index + 1, command, args: command.map(argOf), resp2: Buffer.alloc(0) })
    })
  return cases
}

/**
 * Sends every case over a real socket, in order on one connection, and expects the same bytes
 * back: once in RESP2, once after HELLO 3 on a fresh server; then nothing more than the reference.
 */
export function replayReferenceCases(title: string, cases: readonly ReferenceCase[]): void {
  describe.each([2, 3] as const)(`${title} over RESP%i`, (protocol) => {
    let running: RunningServer
    let client: RawClient

    beforeAll(async () => {
      running = await startServer()
      client = await RawClient.connect(running.port)
      if (protocol === 3) {
        client.write(encodeCommand(['HELLO', '3']))
        const greeting = await client.readUntil((bytes) => bytes.includes('args'))
        expect(greeting.subarray(0, 2).toString()).toBe('%7')
        await new Promise((resolve) => setTimeout(resolve, 50))
        await client.readUntil(() => true, 100)
      }
    })

    afterAll(async () => {
      client.close()
      await running.stop()
    })

    for (const reference of cases) {
      const expected = protocol === 3 && reference.resp3 !== undefined ? reference.resp3 : reference.resp2
      it(`line ${reference.line}: ${reference.command.join(' ').slice(0, 120)}`, async () => {
        client.write(encodeCommand(reference.args))
        const got = await client.read(expected.length)
        expect(got.toString('latin1')).toBe(expected.toString('latin1'))
      })
    }

    it('sent nothing more than the reference', async () => {
      client.write(encodeCommand(['PING']))
      expect((await client.read(7)).toString()).toBe('+PONG\r\n')
    })
  })
}
