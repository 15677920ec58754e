/**
 * A master's side of the replication protocol, as a real TCP peer in the test process: it answers
 * the replica's handshake as redis's replconfCommand / syncCommand do, records every command the
 * replica sends (PSYNC, REPLCONF ACK, ...) and lets the test write the payload and the stream.
 * For testing bfs's replica side before (and independently of) bfs's master side.
 */
import net from 'node:net'
import { RequestParser } from '../../src/protocol/request-parser.js'
import { ScalableBloomFilter } from '../../src/core/scalable-filter.js'
import { encodeFilter } from '../../src/format/codec.js'
import { encodeCommand } from './resp.js'

/** One connection from the replica. */
export class FakeLink {
  /** Every command the replica sent, as strings. */
  readonly received: string[][] = []
  /** Raw bytes the replica sent. */
  bytes = Buffer.alloc(0)
  closed = false
  private waiters: (() => void)[] = []

  constructor(readonly socket: net.Socket) {
    socket.on('close', () => {
      this.closed = true
      this.wake()
    })
    socket.on('error', () => {})
  }

  record(argv: Buffer[]): void {
    this.received.push(argv.map((arg) => arg.toString('latin1')))
    this.wake()
  }

  wake(): void {
    const waiters = this.waiters
    this.waiters = []
    for (const waiter of waiters) waiter()
  }

  /** Resolves once `predicate` holds (checked at each command received), rejects after `timeoutMs`. */
  async waitFor(predicate: () => boolean, timeoutMs = 10_000, what = 'a condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!predicate()) {
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; received ${JSON.stringify(this.received)}`)
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve)
        setTimeout(resolve, 50)
      })
    }
  }

  /** The ACK offsets received so far. */
  acks(): number[] {
    return this.received.filter((argv) => argv[0] === 'REPLCONF' && argv[1] === 'ACK').map((argv) => Number(argv[2]))
  }

  async waitForAck(offset: number, timeoutMs = 10_000): Promise<void> {
    await this.waitFor(() => this.acks().includes(offset), timeoutMs, `REPLCONF ACK ${offset}`)
  }

  write(bytes: Buffer | string): void {
    this.socket.write(bytes)
  }

  /** Sends commands as the stream; returns their byte count. */
  send(...commands: (string | Buffer)[][]): number {
    const bytes = Buffer.concat(commands.map((argv) => encodeCommand(argv)))
    this.socket.write(bytes)
    return bytes.length
  }
}

export type PsyncAnswer = (link: FakeLink, replid: string, offset: string) => void

export class FakeMaster {
  readonly links: FakeLink[] = []
  /** What PSYNC gets; by default nothing (the test answers). */
  onPsync: PsyncAnswer = () => {}
  private waiters: (() => void)[] = []

  private constructor(
    readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(): Promise<FakeMaster> {
    const server = net.createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const master = new FakeMaster(server, (server.address() as net.AddressInfo).port)
    server.on('connection', (socket) => master.accept(socket))
    return master
  }

  private accept(socket: net.Socket): void {
    const link = new FakeLink(socket)
    const parser = new RequestParser()
    this.links.push(link)
    socket.on('data', (chunk) => {
      link.bytes = Buffer.concat([link.bytes, chunk])
      parser.execute(chunk, (argv) => {
        link.record(argv)
        this.answer(
          link,
          argv.map((arg) => arg.toString('latin1')),
        )
      })
    })
    const waiters = this.waiters
    this.waiters = []
    for (const waiter of waiters) waiter()
  }

  private answer(link: FakeLink, argv: string[]): void {
    const name = argv[0]!.toUpperCase()
    if (name === 'PING') link.write('+PONG\r\n')
    else if (name === 'AUTH') link.write('+OK\r\n')
    else if (name === 'REPLCONF' && argv[1]?.toUpperCase() !== 'ACK') link.write('+OK\r\n')
    else if (name === 'PSYNC') this.onPsync(link, argv[1]!, argv[2]!)
  }

  /** The `n`th connection (0-based), once it exists. */
  async link(n: number, timeoutMs = 10_000): Promise<FakeLink> {
    const deadline = Date.now() + timeoutMs
    while (this.links.length <= n) {
      if (Date.now() > deadline) throw new Error(`no connection #${n} from the replica`)
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve)
        setTimeout(resolve, 50)
      })
    }
    return this.links[n]!
  }

  async close(): Promise<void> {
    for (const link of this.links) link.socket.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

/** A full-sync payload (the sync-payload format) holding filters with the given items. */
export function buildPayload(filters: { name: string; items: string[]; capacity?: number }[]): Buffer {
  const parts: Buffer[] = [Buffer.from('BFSSYNC1')]
  for (const { name, items, capacity } of filters) {
    const filter = new ScalableBloomFilter({
      capacity: capacity ?? 100,
      errorRate: 0.01,
      expansion: 2,
      nonScaling: false,
    })
    for (const item of items) filter.add(Buffer.from(item))
    const file = Buffer.concat(encodeFilter({ name: Buffer.from(name), parts: filter.toParts() }))
    const header = Buffer.alloc(9)
    header[0] = 1
    header.writeBigUInt64LE(BigInt(file.length), 1)
    parts.push(header, file)
  }
  parts.push(Buffer.from([0]))
  return Buffer.concat(parts)
}

export const REPLID_A = 'a'.repeat(40)
export const REPLID_B = 'b'.repeat(40)
export const EOF_MARK = '0123456789abcdef0123456789abcdef01234567'

/** +FULLRESYNC then the payload in the diskless form ($EOF:<mark> ... <mark>), after `keepAlives` newlines. */
export function fullSyncDiskless(
  link: FakeLink,
  replid: string,
  offset: number,
  payload: Buffer,
  keepAlives = 0,
): void {
  link.write('\n'.repeat(keepAlives) + `+FULLRESYNC ${replid} ${offset}\r\n`)
  link.write(Buffer.concat([Buffer.from(`$EOF:${EOF_MARK}\r\n`), payload, Buffer.from(EOF_MARK)]))
}

/** +FULLRESYNC then the payload in the disk form ($<length> and the bytes, no CRLF), keep-alives before the `$`. */
export function fullSyncSized(link: FakeLink, replid: string, offset: number, payload: Buffer, keepAlives = 0): void {
  link.write(`+FULLRESYNC ${replid} ${offset}\r\n` + '\n'.repeat(keepAlives))
  link.write(Buffer.concat([Buffer.from(`$${payload.length}\r\n`), payload]))
}
