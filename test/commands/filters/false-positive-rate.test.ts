/**
 * The false-positive rate over the wire: a filter reserved for 100,000 items at 1% is filled to
 * capacity with pipelined BF.MADD, then asked about 100,000 items it never saw. No false negatives,
 * and a rate near 1% — low enough to be a Bloom filter at that size, high enough not to be a set.
 */
import { describe, expect, it } from 'vitest'
import { encodeCommand } from '../../helpers/resp.js'
import { serverPerSuite } from '../../helpers/server-hooks.js'

const CAPACITY = 100_000
const BATCH = 1_000
const ERROR_RATE = 0.01

const suite = serverPerSuite()

/** Reads `count` replies of the form *n followed by n integers, each :0 or :1; returns the ones. */
async function readIntegerArrays(count: number, size: number): Promise<{ ones: number; zeros: number }> {
  const header = `*${size}\r\n`
  const replyBytes = header.length + size * 4
  const bytes = (await suite.client.read(count * replyBytes, 60_000)).toString('latin1')
  expect(bytes.length).toBe(count * replyBytes)
  let ones = 0
  let zeros = 0
  for (let r = 0; r < count; r++) {
    const at = r * replyBytes
    expect(bytes.slice(at, at + header.length)).toBe(header)
    for (let i = 0; i < size; i++) {
      const value = bytes.slice(at + header.length + i * 4, at + header.length + i * 4 + 4)
      if (value === ':1\r\n') ones++
      else if (value === ':0\r\n') zeros++
      else throw new Error(`unexpected reply element ${JSON.stringify(value)} in reply ${r}`)
    }
  }
  return { ones, zeros }
}

/** Sends all batches of `command` in one pipelined write. */
function sendBatches(command: string, key: string, itemOf: (i: number) => string): void {
  const commands: Buffer[] = []
  for (let start = 0; start < CAPACITY; start += BATCH) {
    const items = Array.from({ length: BATCH }, (_, i) => itemOf(start + i))
    commands.push(encodeCommand([command, key, ...items]))
  }
  suite.client.write(Buffer.concat(commands))
}

describe('false-positive rate over the wire', () => {
  it(`BF.RESERVE fp ${ERROR_RATE} ${CAPACITY}, filled to capacity, stays near ${ERROR_RATE}`, async () => {
    suite.client.write(encodeCommand(['BF.RESERVE', 'fp', String(ERROR_RATE), String(CAPACITY)]))
    expect((await suite.client.read(5)).toString()).toBe('+OK\r\n')

    sendBatches('BF.MADD', 'fp', (i) => `member:${i}`)
    const added = await readIntegerArrays(CAPACITY / BATCH, BATCH)
    // An add answers :0 only when the item looked present already: a false positive while filling.
    expect(added.ones + added.zeros).toBe(CAPACITY)
    expect(added.zeros).toBeLessThan(CAPACITY * ERROR_RATE)

    // Every added item answers 1: a Bloom filter has no false negatives.
    sendBatches('BF.MEXISTS', 'fp', (i) => `member:${i}`)
    const members = await readIntegerArrays(CAPACITY / BATCH, BATCH)
    expect(members.zeros).toBe(0)
    expect(members.ones).toBe(CAPACITY)

    // 100,000 items never added.
    sendBatches('BF.MEXISTS', 'fp', (i) => `stranger:${i}`)
    const strangers = await readIntegerArrays(CAPACITY / BATCH, BATCH)
    const rate = strangers.ones / CAPACITY
    expect(rate).toBeLessThan(0.015)
    expect(rate).toBeGreaterThan(0.002)

    // The filter never needed a second layer and counted what it took in.
    suite.client.write(encodeCommand(['BF.INFO', 'fp', 'FILTERS']))
    expect((await suite.client.read(8)).toString()).toBe('*1\r\n:1\r\n')
    suite.client.write(encodeCommand(['BF.CARD', 'fp']))
    const card = (await suite.client.readUntil((bytes) => bytes.includes('\r\n'))).toString()
    expect(card).toBe(`:${added.ones}\r\n`)
  }, 120_000)

  it('a scaling filter grown far past its capacity keeps its overall rate near the target', async () => {
    // Capacity 1,000, expansion 2, filled with 20,000: several layers, each tighter (RedisBloom
    // tightens each new layer's error rate), so the compound rate stays bounded.
    suite.client.write(encodeCommand(['BF.RESERVE', 'grow', '0.01', '1000']))
    expect((await suite.client.read(5)).toString()).toBe('+OK\r\n')
    const total = 20_000
    const commands: Buffer[] = []
    for (let start = 0; start < total; start += BATCH) {
      commands.push(encodeCommand(['BF.MADD', 'grow', ...Array.from({ length: BATCH }, (_, i) => `g:${start + i}`)]))
    }
    suite.client.write(Buffer.concat(commands))
    const added = await readIntegerArrays(total / BATCH, BATCH)
    expect(added.ones + added.zeros).toBe(total)

    const checks: Buffer[] = []
    for (let start = 0; start < total; start += BATCH) {
      checks.push(encodeCommand(['BF.MEXISTS', 'grow', ...Array.from({ length: BATCH }, (_, i) => `g:${start + i}`)]))
    }
    for (let start = 0; start < total; start += BATCH) {
      checks.push(encodeCommand(['BF.MEXISTS', 'grow', ...Array.from({ length: BATCH }, (_, i) => `h:${start + i}`)]))
    }
    suite.client.write(Buffer.concat(checks))
    const members = await readIntegerArrays(total / BATCH, BATCH)
    expect(members.zeros).toBe(0)
    const strangers = await readIntegerArrays(total / BATCH, BATCH)
    expect(strangers.ones / total).toBeLessThan(0.02)

    suite.client.write(encodeCommand(['BF.INFO', 'grow', 'FILTERS']))
    const layers = Number(
      /:(\d+)\r\n$/.exec(
        (await suite.client.readUntil((bytes) => bytes.toString().endsWith('\r\n') && bytes.length > 5)).toString(),
      )?.[1],
    )
    expect(layers).toBeGreaterThanOrEqual(4)
  }, 120_000)
})
