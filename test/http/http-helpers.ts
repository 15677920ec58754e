/** A raw HTTP/1.1 connection for the tests that need to see the bytes: keep-alive, huge heads, slow heads. */
import net from 'node:net'

export interface RawResponse {
  status: number
  headers: Map<string, string>
  body: string
}

/** One TCP connection; `request` sends bytes and reads one response (by Content-Length). */
export class RawHttp {
  private buffer = Buffer.alloc(0)
  private waiter: (() => void) | undefined
  closed = false
  readonly closedPromise: Promise<void>

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk])
      this.waiter?.()
    })
    socket.on('error', () => {})
    this.closedPromise = new Promise((resolve) =>
      socket.on('close', () => {
        this.closed = true
        this.waiter?.()
        resolve()
      }),
    )
  }

  static connect(port: number): Promise<RawHttp> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host: '127.0.0.1' }, () => resolve(new RawHttp(socket)))
      socket.once('error', reject)
    })
  }

  write(bytes: string | Buffer): void {
    this.socket.write(bytes)
  }

  /** Sends `bytes` (if any) and resolves with the next whole response; `head` for a HEAD (no body). */
  async request(bytes?: string | Buffer, head = false): Promise<RawResponse> {
    if (bytes !== undefined) this.write(bytes)
    for (;;) {
      const parsed = this.parse(head)
      if (parsed !== undefined) return parsed
      if (this.closed) throw new Error(`connection closed; had ${JSON.stringify(this.buffer.toString('latin1'))}`)
      await new Promise<void>((resolve) => (this.waiter = resolve))
    }
  }

  private parse(head: boolean): RawResponse | undefined {
    const end = this.buffer.indexOf('\r\n\r\n')
    if (end < 0) return undefined
    const lines = this.buffer.toString('latin1', 0, end).split('\r\n')
    const status = Number(lines[0]!.split(' ')[1])
    const headers = new Map<string, string>()
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':')
      headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim())
    }
    const length = head ? 0 : Number(headers.get('content-length') ?? 0)
    if (this.buffer.length < end + 4 + length) return undefined
    const body = this.buffer.toString('utf8', end + 4, end + 4 + length)
    this.buffer = this.buffer.subarray(end + 4 + length)
    return { status, headers, body }
  }

  end(): void {
    this.socket.destroy()
  }
}

/** A GET request's bytes on a keep-alive connection. */
export function getRequest(target: string, method = 'GET'): string {
  return `${method} ${target} HTTP/1.1\r\nHost: bfs\r\n\r\n`
}

/** An HTTP Basic Authorization header for `user` and `password`. */
export function basicAuth(user: string, password: string): string {
  return 'Basic ' + Buffer.from(`${user}:${password}`, 'utf8').toString('base64')
}

/** GET `base + target` with fetch, with an Authorization header when given: the status, body text and headers. */
export async function fetchText(
  base: string,
  target: string,
  authorization?: string,
): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await fetch(base + target, authorization === undefined ? {} : { headers: { authorization } })
  return { status: response.status, body: await response.text(), headers: response.headers }
}
