/**
 * Accepting client connections, with every read landing in one shared buffer.
 *
 * By default Node gives each socket read a new 64 KiB allocation, a Buffer object and a trip
 * through the stream machinery before a 'data' listener sees it. A socket built with the `onread`
 * option instead reads into a buffer it is given and calls back with the byte count: no
 * allocation and no stream work per read, which halves the JavaScript time per read of a
 * one-command-per-read client (redis-benchmark -P 1; see bench/README.md).
 *
 * Node applies `onread` only to sockets built with that option, and a net.Server builds the
 * sockets it accepts without it. So the listener's accept callback (the `onconnection` of its
 * handle, which net.Server itself sets) is replaced by one that builds the socket as Node does,
 * with `onread` added. Should a future Node lack that hook, connections are accepted through the
 * 'connection' event and 'data' instead: same behaviour, without the saving.
 *
 * One buffer serves every client: a read's bytes are parsed and its commands run before the
 * callback returns, and the request parser copies whatever it keeps for later.
 */
import net from 'node:net'
import { getSystemErrorName } from 'node:util'

/** What reads go to: a client. A read's bytes are `chunk[0, length)`. */
export interface ConnectionReader {
  onData(chunk: Buffer, length: number): void
}

/** Size of the shared read buffer: libuv's usual read size. */
const READ_BUFFER_BYTES = 64 * 1024
const sharedReadBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES)

interface ListenerHandle {
  onconnection?: (status: number, clientHandle?: object) => void
}

/**
 * Routes the listener's connections to `accept`, which returns the reader for the socket's bytes
 * (or undefined when it refused the socket: then its bytes are ignored).
 *
 * @param sharedBuffer false forces the 'connection' / 'data' path (for tests)
 * @returns whether the shared buffer is in use
 */
export function acceptConnections(
  listener: net.Server,
  accept: (socket: net.Socket) => ConnectionReader | undefined,
  sharedBuffer = true,
): boolean {
  const handle = (listener as unknown as { _handle?: ListenerHandle | null })._handle
  if (!sharedBuffer || handle == null || typeof handle.onconnection !== 'function') {
    listener.on('connection', (socket) => {
      const reader = accept(socket)
      if (reader !== undefined) socket.on('data', (chunk: Buffer) => reader.onData(chunk, chunk.length))
    })
    return false
  }
  handle.onconnection = (status, clientHandle) => {
    if (status < 0 || clientHandle === undefined) {
      // As net.Server's own onconnection: an accept error (EMFILE past `ulimit -n`) is an 'error'.
      const code = status < 0 ? getSystemErrorName(status) : 'EINVAL'
      listener.emit('error', Object.assign(new Error(`accept ${code}`), { code, syscall: 'accept' }))
      return
    }
    let reader: ConnectionReader | undefined
    const options = {
      handle: clientHandle,
      readable: true,
      writable: true,
      onread: {
        buffer: sharedReadBuffer,
        // The shared buffer and the count, not a view of it: no object made per read.
        callback: (bytes: number): void => reader?.onData(sharedReadBuffer, bytes),
      },
    }
    reader = accept(new net.Socket(options as net.SocketConstructorOpts))
  }
  return true
}
