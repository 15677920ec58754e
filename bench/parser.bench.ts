/**
 * In process: the request parser on what redis-benchmark sends: one command per chunk (-P 1) and
 * 16 per chunk (-P 16), for BF.ADD and for BF.MADD with 10 items. Counts commands per second.
 *
 * Run: npm run bench:parser
 */
import { RequestParser } from '../src/protocol/request-parser.js'
import type { CommandArgs } from '../src/protocol/command-args.js'
import { runSuite, type BenchCase } from './run-suite.js'

function encode(argv: string[]): string {
  return `*${argv.length}\r\n${argv.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`
}

/** `count` commands in one chunk, each with `items` 12-digit items (redis-benchmark's __rand_int__). */
function chunk(command: string, items: number, count: number): Buffer {
  let text = ''
  for (let i = 0; i < count; i++) {
    const argv = [command, 'bench']
    for (let j = 0; j < items; j++) argv.push(String(i * 1000 + j).padStart(12, '0'))
    text += encode(argv)
  }
  return Buffer.from(text, 'latin1')
}

const parser = new RequestParser()
let commands = 0
const onCommand = (args: CommandArgs): void => {
  commands += args.length > 0 ? 1 : 0
}

const cases: BenchCase[] = []
for (const [command, items] of [
  ['BF.ADD', 1],
  ['BF.MADD', 10],
] as const) {
  for (const depth of [1, 16]) {
    const input = chunk(command, items, depth)
    cases.push({
      name: `${command} ×${items}, ${depth} per chunk (${input.length} B)`,
      items: depth,
      fn: () => parser.parse(input, onCommand),
    })
  }
}
// The same 16 commands arriving in 100-byte pieces: commands split across reads.
const whole = chunk('BF.ADD', 1, 16)
const pieces: Buffer[] = []
for (let i = 0; i < whole.length; i += 100) pieces.push(whole.subarray(i, i + 100))
cases.push({
  name: `BF.ADD ×1, 16 commands in ${pieces.length} pieces of 100 B`,
  items: 16,
  fn: () => {
    for (const piece of pieces) parser.parse(piece, onCommand)
  },
})
runSuite('Request parser (items/s = commands/s)', cases)
if (commands === 0) throw new Error('the parser delivered nothing')
