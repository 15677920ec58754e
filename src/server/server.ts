/**
 * createServer(): the TCP listener(s), the clients, the filters and the command table, tied
 * together. Everything a handler reaches goes through the ServerContext this class implements.
 */
import net from 'node:net'
import { EventEmitter } from 'node:events'
import { mkdirSync } from 'node:fs'
import { Client, type ClientHost } from './client.js'
import { DEFAULT_CONFIG, type Config } from './config.js'
import { Stats } from './stats.js'
import { createLogger } from './logger.js'
import { FilterRegistry } from '../store/registry.js'
import { defineTable, type CommandSpec, type CommandTable } from '../commands/table.js'
import { BUILTIN_COMMANDS } from '../commands/builtin.js'
import type { Logger } from '../commands/context.js'
import { DEFAULT_PARSER_LIMITS, type ParserLimits } from '../protocol/request-parser.js'

export { BFS_VERSION, REDIS_VERSION } from './version.js'

export interface ServerOptions {
  /** Any configuration keys; the rest take DEFAULT_CONFIG's values. */
  config?: Partial<Config>
  /** Receives each log line instead of standard output. */
  logSink?: (line: string) => void
  /** Extra commands, added to the built-in table (an extension's own commands). */
  commands?: readonly CommandSpec[]
}

export interface ShutdownOptions {
  save?: boolean
  noSave?: boolean
}

/**
 * A bfs server. `await server.start()` listens (port 0 picks a free port; `server.port` tells
 * which); `await server.close()` stops it. Emits 'shutdown' when a client ran SHUTDOWN.
 */
export class BfsServer extends EventEmitter implements ClientHost {
  readonly config: Config
  readonly registry = new FilterRegistry()
  readonly stats = new Stats()
  readonly commands: CommandTable
  readonly log: Logger
  startedAtMs = Date.now()
  loading = false
  private readonly tcpServers: net.Server[] = []
  private readonly clientSet = new Set<Client>()
  private nextClientId = 1
  private boundPort = 0
  private closing: Promise<void> | undefined

  constructor(options: ServerOptions = {}) {
    super()
    this.config = { ...DEFAULT_CONFIG, ...options.config }
    this.log = createLogger({ level: () => this.config.loglevel, file: this.config.logfile, sink: options.logSink })
    this.commands = defineTable([...BUILTIN_COMMANDS, ...(options.commands ?? [])])
  }

  get port(): number {
    return this.boundPort
  }

  /** Creates the data directory, loads what is on disk, then accepts connections. */
  async start(): Promise<void> {
    this.startedAtMs = Date.now()
    mkdirSync(this.config.dir, { recursive: true })
    const addresses = this.config.bind.split(/\s+/).filter((address) => address !== '')
    let port = this.config.port
    for (const address of addresses) {
      const listener = net.createServer((socket) => this.accept(socket))
      await new Promise<void>((resolve, reject) => {
        listener.once('error', reject)
        listener.listen({ port, host: address }, () => {
          listener.off('error', reject)
          resolve()
        })
      })
      // With port 0 every address shares the port the first one got.
      port = (listener.address() as net.AddressInfo).port
      this.tcpServers.push(listener)
      this.log.notice(`Running mode=standalone, port=${port}.`)
      this.log.notice(`Listening on ${address}:${port}`)
    }
    this.boundPort = port
    this.log.notice('Ready to accept connections tcp')
  }

  private accept(socket: net.Socket): void {
    this.stats.connectionsReceived++
    if (this.closing !== undefined) {
      socket.destroy()
      return
    }
    if (this.clientSet.size >= this.config.maxclients) {
      // redis networking.c acceptCommonHandler
      this.stats.rejectedConnections++
      socket.on('error', () => {})
      socket.end('-ERR max number of clients reached\r\n')
      return
    }
    const client = new Client(this.nextClientId++, socket, this)
    this.clientSet.add(client)
  }

  clients(): Iterable<Client> {
    return this.clientSet
  }

  get clientCount(): number {
    return this.clientSet.size
  }

  removeClient(client: Client): void {
    this.clientSet.delete(client)
  }

  replyReady(client: Client): void {
    client.flush()
  }

  parserLimits(): Partial<ParserLimits> {
    return DEFAULT_PARSER_LIMITS
  }

  /** Hands a write to the persistence layer (the append-only log); a no-op until one is attached. */
  propagate(_argv: readonly Uint8Array[]): void {}

  shutdown(options: ShutdownOptions): string | undefined {
    void options
    this.log.warning('User requested shutdown...')
    void this.close().then(() => this.emit('shutdown'))
    return undefined
  }

  /** Stops listening, closes every client after its pending replies, and resolves when done. */
  close(): Promise<void> {
    if (this.closing === undefined) {
      this.closing = (async () => {
        await Promise.all(this.tcpServers.map((listener) => new Promise<void>((resolve) => listener.close(() => resolve()))))
        for (const client of this.clientSet) {
          client.flush()
          client.socket.end()
        }
        const deadline = setTimeout(() => {
          for (const client of this.clientSet) client.kill()
        }, 2000)
        deadline.unref()
        while (this.clientSet.size > 0) await new Promise((resolve) => setTimeout(resolve, 5))
        clearTimeout(deadline)
        this.log.notice('bfs is now ready to exit, bye bye...')
      })()
    }
    return this.closing
  }
}

/** Makes a server (not yet listening: call start()). */
export function createServer(options: ServerOptions = {}): BfsServer {
  return new BfsServer(options)
}
