/**
 * redis-benchmark against a real bfs: it opens 50 connections, sends inline and multibulk PINGs,
 * and pipelines BF.ADD 16 at a time. Only completion and the absence of errors are checked;
 * throughput on a shared machine says nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { RawClient, encodeCommand } from '../helpers/resp.js'
import { hasTool, runTool } from '../helpers/tools.js'

/** Parses redis-benchmark --csv: the header row, then one row per test. */
function parseCsv(text: string): Record<string, string>[] {
  const rows = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('"'))
    .map((line) => line.split(',').map((cell) => cell.replace(/^"|"$/g, '')))
  const [header, ...body] = rows
  return body.map((cells) => Object.fromEntries(header!.map((name, i) => [name, cells[i] ?? ''])))
}

async function command(port: number, args: string[]): Promise<string> {
  const client = await RawClient.connect(port)
  try {
    client.write(encodeCommand(args))
    return (await client.readUntil((bytes) => bytes.includes('\r\n'))).toString('latin1')
  } finally {
    client.close()
  }
}

describe.skipIf(!hasTool('redis-benchmark'))('redis-benchmark', () => {
  let running: RunningServer
  const bench = (...args: string[]) =>
    runTool('redis-benchmark', ['-h', '127.0.0.1', '-p', String(running.port), ...args], undefined, 180_000)

  beforeAll(async () => {
    running = await startServer()
  })

  afterAll(async () => {
    await running?.stop()
  })

  it('-t ping (PING_INLINE and PING_MBULK) completes without errors', async () => {
    const result = await bench('-t', 'ping', '-n', '20000', '--csv')
    expect(result.code).toBe(0)
    expect(result.stdout + result.stderr).not.toMatch(/ERR|rror/)
    const rows = parseCsv(result.stdout)
    expect(rows.map((row) => row.test)).toEqual(['PING_INLINE', 'PING_MBULK'])
    for (const row of rows) expect(Number(row.rps)).toBeGreaterThan(0)
  }, 200_000)

  it('-q -P 16 -r 100000 BF.ADD bench __rand_int__ completes without errors', async () => {
    const result = await bench('-n', '20000', '-q', '-P', '16', '-r', '100000', 'BF.ADD', 'bench', '__rand_int__')
    expect(result.code).toBe(0)
    expect(result.stdout + result.stderr).not.toMatch(/ERR|rror/)
    expect(result.stdout).toMatch(/BF\.ADD bench __rand_int__: [\d.]+ requests per second/)
    const card = await command(running.port, ['BF.CARD', 'bench'])
    const items = Number(/^:(\d+)\r\n$/.exec(card)?.[1])
    // 20,000 draws from 100,000 keys: several thousand distinct, never more than 20,000.
    expect(items).toBeGreaterThan(1000)
    expect(items).toBeLessThanOrEqual(20_000)
    expect(await command(running.port, ['TYPE', 'bench'])).toBe('+MBbloom--\r\n')
  }, 200_000)

  it('BF.EXISTS and BF.MADD under -c 20 pipelined load', async () => {
    const exists = await bench(
      '-n',
      '10000',
      '-q',
      '-c',
      '20',
      '-P',
      '8',
      '-r',
      '100000',
      'BF.EXISTS',
      'bench',
      '__rand_int__',
    )
    expect(exists.code).toBe(0)
    expect(exists.stdout + exists.stderr).not.toMatch(/ERR|rror/)
    const madd = await bench(
      '-n',
      '5000',
      '-q',
      '-c',
      '20',
      '-r',
      '1000',
      'BF.MADD',
      'bench2',
      '__rand_int__',
      'x__rand_int__',
    )
    expect(madd.code).toBe(0)
    expect(madd.stdout + madd.stderr).not.toMatch(/ERR|rror/)
    const card = Number(/^:(\d+)\r\n$/.exec(await command(running.port, ['BF.CARD', 'bench2']))?.[1])
    expect(card).toBeGreaterThan(0)
    expect(card).toBeLessThanOrEqual(2000)
  }, 200_000)
})
