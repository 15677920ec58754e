/** Raw-bytes helpers: encode commands, and talk to a server over a plain socket. */
import net from 'node:net'
import tls from 'node:tls'
import { replyEnd } from './tools.js'

/** A command as RESP multibulk bytes. */
export function encodeCommand(args: readonly (string | Buffer)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)]
  for (const arg of args) {
    const bytes = typeof arg === 'string' ? Buffer.from(arg) : arg
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n'))
  }
  return Buffer.concat(parts)
}

/** A plain socket that collects everything the server sends. */
export class RawClient {
  private received = Buffer.alloc(0)
  private waiters: (() => void)[] = []
  closed = false

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk) => {
      this.received = Buffer.concat([this.received, chunk])
      this.wake()
    })
    socket.on('close', () => {
      this.closed = true
      this.wake()
    })
    socket.on('error', () => {})
  }

  static connect(port: number, host = '127.0.0.1'): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host }, () => resolve(new RawClient(socket)))
      socket.once('error', reject)
    })
  }

  /** A TLS connection (`options`: the CA, a client certificate); resolves once its handshake is done. */
  static connectTls(port: number, options: tls.ConnectionOptions, host = '127.0.0.1'): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = tls.connect({ port, host, ...options }, () => resolve(new RawClient(socket)))
      socket.once('error', reject)
    })
  }

  private wake(): void {
    const waiters = this.waiters
    this.waiters = []
    for (const waiter of waiters) waiter()
  }

  write(bytes: Buffer | string): void {
    this.socket.write(bytes)
  }

  /** Waits until at least `length` bytes arrived (or the socket closed), then takes them. */
  async read(length: number, timeoutMs = 10_000): Promise<Buffer> {
    await this.waitFor(() => this.received.length >= length || this.closed, timeoutMs)
    const out = this.received.subarray(0, length)
    this.received = this.received.subarray(out.length)
    return Buffer.from(out)
  }

  /** Waits until the received bytes satisfy `done` (or the socket closed), then takes them all. */
  async readUntil(done: (received: Buffer) => boolean, timeoutMs = 10_000): Promise<Buffer> {
    await this.waitFor(() => done(this.received) || this.closed, timeoutMs)
    const out = this.received
    this.received = Buffer.alloc(0)
    return out
  }

  /** Waits for the server to close the connection. */
  async waitClosed(timeoutMs = 10_000): Promise<void> {
    await this.waitFor(() => this.closed, timeoutMs)
  }

  private async waitFor(ready: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!ready()) {
      if (Date.now() > deadline)
        throw new Error(`timed out; received so far: ${JSON.stringify(this.received.toString('latin1'))}`)
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve)
        setTimeout(resolve, 50)
      })
    }
  }

  close(): void {
    this.socket.destroy()
  }
}

/** Sends the commands at once (one pipeline) and returns the replies once `expected`'s length arrived. */
export async function exchange(
  client: RawClient,
  commands: readonly (readonly string[])[],
  expected: string,
): Promise<string> {
  client.write(Buffer.concat(commands.map((command) => encodeCommand(command))))
  return (await client.read(Buffer.byteLength(expected, 'latin1'))).toString('latin1')
}

/** Sends one command and resolves with exactly the bytes of its reply (one whole reply, whatever its shape). */
export async function askRaw(client: RawClient, ...args: (string | Buffer)[]): Promise<Buffer> {
  client.write(encodeCommand(args))
  return client.readUntil((received) => received.length > 0 && replyEnd(received) === received.length)
}

/** {@link askRaw}'s reply as latin1 text (one character per byte, so binary replies compare exactly). */
export async function ask(client: RawClient, ...args: (string | Buffer)[]): Promise<string> {
  return (await askRaw(client, ...args)).toString('latin1')
}

/** Sends one command and resolves with what arrived once a CRLF did: for replies of one line. */
export async function askLine(client: RawClient, ...args: (string | Buffer)[]): Promise<string> {
  client.write(encodeCommand(args))
  return (await client.readUntil((received) => received.includes('\r\n'))).toString('latin1')
}

/** Connects to `port`, asks one command ({@link ask}), and closes the connection. */
export async function askOnce(port: number, ...args: (string | Buffer)[]): Promise<string> {
  const client = await RawClient.connect(port)
  try {
    return await ask(client, ...args)
  } finally {
    client.close()
  }
}
