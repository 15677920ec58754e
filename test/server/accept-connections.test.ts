/**
 * acceptConnections over real sockets: the shared read buffer (net.Socket `onread`) on this Node,
 * and the plain 'connection' / 'data' path it falls back to, deliver the same bytes per client.
 */
import net from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { acceptConnections, type ConnectionReader } from '../../src/server/accept-connections.js'

const servers: net.Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve))
})

/** A listener whose readers copy what they get (the chunk is only valid during the call). */
async function listen(
  sharedBuffer: boolean,
): Promise<{ port: number; received: Map<number, Buffer[]>; usesShared: boolean; sockets: net.Socket[] }> {
  const received = new Map<number, Buffer[]>()
  const sockets: net.Socket[] = []
  const server = net.createServer()
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  let next = 0
  const usesShared = acceptConnections(
    server,
    (socket) => {
      sockets.push(socket)
      const id = next++
      received.set(id, [])
      // Every third connection is refused: its bytes must go nowhere.
      if (id % 3 === 2) {
        socket.destroy()
        return undefined
      }
      const reader: ConnectionReader = {
        // A read is chunk[0, length): the shared buffer itself on the onread path.
        onData: (chunk, length) => {
          received.get(id)!.push(Buffer.from(chunk.subarray(0, length)))
          socket.write(`${length}\n`)
        },
      }
      return reader
    },
    sharedBuffer,
  )
  return { port: (server.address() as net.AddressInfo).port, received, usesShared, sockets }
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket))
    socket.on('error', reject)
  })
}

describe.each([true, false])('acceptConnections (shared buffer %s)', (sharedBuffer) => {
  it('gives each client exactly its own bytes, interleaved with others, and ignores a refused one', async () => {
    const { port, received, usesShared, sockets } = await listen(sharedBuffer)
    // On Node 20 and 24 the hook is there: the saving is in use whenever asked for.
    expect(usesShared).toBe(sharedBuffer)
    const clients = [await connect(port), await connect(port), await connect(port)]
    clients[2]!.on('error', () => {})
    const sent: Buffer[] = [Buffer.alloc(0), Buffer.alloc(0)]
    for (let round = 0; round < 20; round++) {
      for (const [i, client] of clients.slice(0, 2).entries()) {
        const piece = Buffer.alloc(1 + ((round * 37 + i * 11) % 3000), `${i}:${round};`)
        sent[i] = Buffer.concat([sent[i]!, piece])
        client.write(piece)
      }
      clients[2]!.write('ignored')
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
    // A 200 KB write arrives in several reads, each into the same shared memory.
    const large = Buffer.alloc(200_000, 'L')
    clients[0]!.write(large)
    sent[0] = Buffer.concat([sent[0]!, large])
    const deadline = Date.now() + 5000
    while (Date.now() < deadline && Buffer.concat(received.get(0)!).length < sent[0]!.length) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    expect(Buffer.concat(received.get(0)!).equals(sent[0]!)).toBe(true)
    expect(Buffer.concat(received.get(1)!).equals(sent[1]!)).toBe(true)
    expect(received.get(2)).toEqual([])
    expect(sockets).toHaveLength(3)
    for (const client of clients) client.destroy()
    for (const socket of sockets) socket.destroy()
  })
})
