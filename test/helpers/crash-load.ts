/**
 * Load for the kill -9 tests: clients that pipeline BF.ADD until the server dies, recording what
 * was acknowledged, and a check of which acknowledged items a restarted server no longer has.
 */
import net from 'node:net'
import { expect } from 'vitest'
import { RawClient, encodeCommand } from './resp.js'

/** BF.ADDs sent in one write; the next batch goes once all of their replies are in. */
const PIPELINE = 16
/** Items per BF.MEXISTS when checking. */
const CHECK_BATCH = 1000

/**
 * One client adding items named `c<clientIndex>-<batch>-<i>` to `key` in pipelined batches,
 * calling `onAck(item, added)` for each item answered :1 (added: true) or :0 (in order); resolves
 * when the socket closes.
 */
export function loadUntilDeath(
  port: number,
  key: string,
  clientIndex: number,
  onAck: (item: string, added: boolean) => void,
): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' })
    socket.setNoDelay(true)
    let batch = 0
    let items: string[] = []
    let received = ''
    let answered = 0
    const sendBatch = (): void => {
      items = Array.from({ length: PIPELINE }, (_, i) => `c${clientIndex}-${batch}-${i}`)
      batch++
      answered = 0
      socket.write(Buffer.concat(items.map((item) => encodeCommand(['BF.ADD', key, item]))))
    }
    socket.on('connect', sendBatch)
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1')
      let end: number
      while ((end = received.indexOf('\r\n')) >= 0) {
        const line = received.slice(0, end)
        received = received.slice(end + 2)
        if (line === ':1' || line === ':0') onAck(items[answered]!, line === ':1')
        answered++
      }
      if (answered === PIPELINE) sendBatch()
    })
    socket.on('error', () => {})
    socket.on('close', () => resolve())
  })
}

/** The `items` of `key` that BF.MEXISTS on the server at `port` does not answer 1 for, in order. */
export async function lostItems(port: number, key: string, items: readonly string[]): Promise<string[]> {
  const lost: string[] = []
  const checker = await RawClient.connect(port)
  try {
    for (let at = 0; at < items.length; at += CHECK_BATCH) {
      const chunk = items.slice(at, at + CHECK_BATCH)
      checker.write(encodeCommand(['BF.MEXISTS', key, ...chunk]))
      const header = `*${chunk.length}\r\n`
      const reply = (await checker.read(header.length + chunk.length * 4)).toString('latin1')
      expect(reply.startsWith(header)).toBe(true)
      chunk.forEach((item, i) => {
        if (reply.slice(header.length + i * 4, header.length + i * 4 + 4) !== ':1\r\n') lost.push(item)
      })
    }
  } finally {
    checker.close()
  }
  return lost
}
