/**
 * The master's full sync with the real capture: the payload a replica receives over the socket
 * decodes (SyncPayloadDecoder) to the filters as they were when +FULLRESYNC was sent; writes made
 * while it is sent reach the replica in the stream after it, not in the payload.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { RawClient, askLine, encodeCommand } from '../helpers/resp.js'
import { SyncPayloadDecoder } from '../../src/store/sync-payload-decoder.js'
import { bloomFilter } from '../helpers/bloom-of.js'

let running: RunningServer | undefined
afterEach(async () => {
  await running?.stop()
  running = undefined
})

describe.each([true, false])('full sync with the real capture (diskless %s)', (diskless) => {
  it('decodes to the filters at the capture point; later writes come in the stream', async () => {
    running = await startServer({ 'repl-diskless-sync-delay': 0, 'repl-diskless-sync': diskless })
    const { port } = running
    const writer = await RawClient.connect(port)
    expect(await askLine(writer, 'BF.RESERVE', 'big', '0.001', '2000000')).toBe('+OK\r\n')
    for (let i = 0; i < 2000; i += 100) {
      const items = Array.from({ length: 100 }, (_, k) => `item-${i + k}`)
      expect(await askLine(writer, 'BF.MADD', 'big', ...items)).toMatch(/^\*100\r\n/)
    }
    expect(await askLine(writer, 'BF.ADD', 'small', 'a')).toBe(':1\r\n')
    const link = await RawClient.connect(port)
    link.write(Buffer.concat([encodeCommand(['REPLCONF', 'capa', 'eof', 'capa', 'psync2'])]))
    expect((await link.read(5)).toString('latin1')).toBe('+OK\r\n')
    link.write(encodeCommand(['PSYNC', '?', '-1']))
    let head = (await link.readUntil((bytes) => bytes.includes('+FULLRESYNC'))).toString('latin1')
    // After the capture point (+FULLRESYNC is sent when it is taken), while the payload goes out.
    expect(await askLine(writer, 'BF.ADD', 'big', 'late')).toBe(':1\r\n')
    if (!/\$(EOF:[0-9a-f]{40}|\d+)\r\n/.test(head.slice(0, 200))) {
      head += (
        await link.readUntil((bytes) =>
          /\$(EOF:[0-9a-f]{40}|\d+)\r\n/.test((head + bytes.subarray(0, 200).toString('latin1')).slice(0, 300)),
        )
      ).toString('latin1')
    }
    const match = /^\n*\+FULLRESYNC [0-9a-f]{40} (\d+)\r\n\n*\$(EOF:([0-9a-f]{40})|(\d+))\r\n/.exec(head)!
    expect(match).not.toBeNull()
    let body = Buffer.from(head.slice(match[0].length), 'latin1')
    const decoder = new SyncPayloadDecoder({ maxFilterBytes: 0 })
    const want = (bytes: number): Promise<void> =>
      body.length >= bytes
        ? Promise.resolve()
        : link.read(bytes - body.length).then((more) => void (body = Buffer.concat([body, more])))
    if (match[4] !== undefined) {
      await want(Number(match[4]))
      decoder.push(body.subarray(0, Number(match[4])))
    } else {
      const mark = match[3]!
      while (body.length < 40 || body.subarray(body.length - 40).toString('latin1') !== mark) {
        body = Buffer.concat([body, await link.readUntil((bytes) => bytes.length > 0)])
      }
      decoder.push(body.subarray(0, body.length - 40))
    }
    expect(decoder.done).toBe(true)
    const filters = new Map([...decoder.filters()].map(({ name, filter }) => [name.toString(), bloomFilter(filter)]))
    expect([...filters.keys()].sort()).toEqual(['big', 'small'])
    for (let i = 0; i < 2000; i++) expect(filters.get('big')!.has(Buffer.from(`item-${i}`))).toBe(true)
    expect(filters.get('big')!.has(Buffer.from('late'))).toBe(false)
    link.close()
    writer.close()
  })
})
