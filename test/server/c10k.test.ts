/**
 * c1k: 1,000 connections open at once, each sending PING and BF.EXISTS in one write; every one is
 * served. (bench/c10k.sh does 10,000 against a separate server process.)
 */
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { RawClient, encodeCommand } from '../helpers/resp.js'

const CONNECTIONS = 1000
/** Connections opened at a time (below the listen backlog of 511). */
const WAVE = 250
const REQUEST = Buffer.concat([encodeCommand(['PING']), encodeCommand(['BF.EXISTS', 'c10k', 'present'])])
const EXPECTED = '+PONG\r\n:1\r\n'

let running: RunningServer

beforeAll(async () => {
  running = await startServer()
  const setup = await RawClient.connect(running.port)
  setup.write(encodeCommand(['BF.ADD', 'c10k', 'present']))
  expect((await setup.read(4)).toString()).toBe(':1\r\n')
  setup.close()
})

afterAll(async () => {
  await running?.stop()
})

function openSocket(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' }, () => resolve(socket))
    socket.once('error', reject)
  })
}

/** Sends the request and resolves with whatever arrived once the expected length did. */
function serve(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let received = ''
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1')
      if (received.length >= EXPECTED.length) resolve(received)
    })
    socket.on('close', () => resolve(received))
    socket.write(REQUEST)
  })
}

describe('c1k', () => {
  it(`holds ${CONNECTIONS} connections at once and serves each PING + BF.EXISTS`, async () => {
    const sockets: net.Socket[] = []
    try {
      for (let i = 0; i < CONNECTIONS; i += WAVE) {
        sockets.push(
          ...(await Promise.all(
            Array.from({ length: Math.min(WAVE, CONNECTIONS - i) }, () => openSocket(running.port)),
          )),
        )
      }
      const deadline = Date.now() + 10_000
      while (running.server.clientCount < CONNECTIONS && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 10))
      expect(running.server.clientCount).toBe(CONNECTIONS)
      const replies = await Promise.all(sockets.map(serve))
      const served = replies.filter((reply) => reply === EXPECTED).length
      expect(served).toBe(CONNECTIONS)
    } finally {
      for (const socket of sockets) socket.destroy()
    }
    const deadline = Date.now() + 10_000
    while (running.server.clientCount > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10))
    expect(running.server.clientCount).toBe(0)
  })
})
