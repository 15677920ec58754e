/**
 * The optional HTTP listener (config http-port): the original API (original-api.ts), GET /healthz,
 * GET /metrics, the status page GET / (status-page.ts) and its listing GET /filters
 * (filters-json.ts), each as the request's ACL user may see it (http-acl.ts). It shares the
 * process's one thread with RESP, so every way a client could hold it is bounded: the request
 * head's size (http-max-header-bytes, enforced by Node's parser), the target's length
 * (http-max-url-bytes → 414), the time to send a head (http-headers-timeout-ms), idle keep-alive
 * time and the number of connections. Handlers are synchronous and small; nothing
 * waits on a slow HTTP client except that client's own socket.
 */
import http from 'node:http'
import https from 'node:https'
import { TlsConfigError, tlsHttpsOptions } from '../runtime/tls-context.js'
import type { Config } from '../runtime/config.js'
import type net from 'node:net'
import type { ServerContext } from '../commands/kernel/context.js'
import { readableFilters, requestRefusal, requestUser } from './http-acl.js'
import { HttpSession } from './http-session.js'
import { OriginalApi, parseOriginalTarget, type OriginalResponse } from './original-api.js'
import { httpRegistry, ServerMetrics } from './metrics.js'
import { filtersJson, listFilters, ListingQueryError, parseListingQuery, type ListingQuery } from './filters-json.js'
import { OpsMeter, serverFigures } from './server-figures.js'
import { STATUS_PAGE_POLICY, statusPage } from './status-page.js'

const TEXT = 'text/plain; charset=utf-8'
/** How often Node checks requests against the header and request timeouts (its default is 30 s). */
const TIMEOUT_CHECK_INTERVAL_MS = 1000
const ALLOW = 'GET, HEAD'
const INFO = Buffer.from('INFO')
const SCAN = Buffer.from('SCAN')
const SCAN_CURSOR = Buffer.from('0')

/** Reason phrases for the statuses written by hand in clientError (Node's parser refused the bytes). */
const RAW_REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  414: 'URI Too Long',
  431: 'Request Header Fields Too Large',
}

/** The listener(s) on http-port, one per http-bind address. */
/** http-tls's options, or the start's error. */
function httpsOptions(config: Config): https.ServerOptions {
  try {
    return tlsHttpsOptions(config)
  } catch (error) {
    if (error instanceof TlsConfigError)
      throw new Error(`Failed to configure HTTPS: ${error.message}`, { cause: error })
    throw error
  }
}

export class HttpFrontend {
  private readonly listeners: http.Server[] = []
  private readonly sockets = new Set<net.Socket>()
  private readonly session: HttpSession
  private readonly api: OriginalApi
  private readonly metrics: ServerMetrics
  private readonly opsMeter = new OpsMeter()
  private boundPort = 0

  constructor(private readonly server: ServerContext) {
    this.session = new HttpSession(server)
    this.api = new OriginalApi(server, this.session)
    this.metrics = new ServerMetrics(this.session.commandContext, () => this.sockets.size)
  }

  /** The port bound (0 before listen). */
  get port(): number {
    return this.boundPort
  }

  /** Open HTTP connections. */
  get clientCount(): number {
    return this.sockets.size
  }

  /**
   * Listens on every address; port 0 or -1 picks a free port, which the later addresses share.
   * Resolves with the bound port.
   */
  async listen(addresses: readonly string[], port: number): Promise<number> {
    const config = this.server.config
    const tls = config['http-tls'] ? httpsOptions(config) : undefined
    let bindPort = port < 0 ? 0 : port
    for (const address of addresses) {
      const headersTimeoutMs = config['http-headers-timeout-ms']
      const create = (tls === undefined ? http.createServer : https.createServer) as typeof https.createServer
      const listener = create(
        {
          ...tls,
          maxHeaderSize: config['http-max-header-bytes'],
          headersTimeout: headersTimeoutMs,
          // GET carries no body: the whole request is due when its head is.
          requestTimeout: headersTimeoutMs,
          keepAliveTimeout: config['http-keepalive-timeout-ms'],
          connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, headersTimeoutMs),
          noDelay: true,
        },
        (request, response) => this.handle(request, response),
      )
      listener.maxConnections = config['http-maxclients']
      listener.on('connection', (socket: net.Socket) => {
        this.sockets.add(socket)
        socket.once('close', () => this.sockets.delete(socket))
      })
      listener.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: net.Socket) =>
        this.clientError(error, socket),
      )
      await new Promise<void>((resolve, reject) => {
        listener.once('error', reject)
        listener.listen({ port: bindPort, host: address }, () => {
          listener.off('error', reject)
          resolve()
        })
      })
      bindPort = (listener.address() as net.AddressInfo).port
      this.listeners.push(listener)
      this.server.log.notice(`HTTP${tls === undefined ? '' : 'S'} listening on ${address}:${bindPort}`)
    }
    this.boundPort = bindPort
    return bindPort
  }

  /**
   * CONFIG SET of a TLS key under http-tls: new HTTPS connections use `next`'s certificate.
   * @throws TlsConfigError, nothing changed
   */
  reconfigureTls(next: Config): void {
    if (!next['http-tls']) return
    const options = tlsHttpsOptions(next)
    for (const listener of this.listeners) (listener as https.Server).setSecureContext(options)
  }

  /** Stops listening and drops every HTTP connection (requests are answered synchronously, so none is mid-reply). */
  async close(): Promise<void> {
    await Promise.all(
      this.listeners.map(
        (listener) =>
          new Promise<void>((resolve) => {
            listener.close(() => resolve())
            listener.closeAllConnections()
          }),
      ),
    )
    this.listeners.length = 0
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    this.server.stats.httpRequests++
    const target = request.url ?? ''
    const method = request.method
    if (target.length > this.server.config['http-max-url-bytes']) {
      send(response, 414, 'URI too long\n', true)
      return
    }
    if (method !== 'GET' && method !== 'HEAD') {
      // RFC 9110 15.5.6: a 405 lists the allowed methods. Close: any body is not worth reading.
      response.setHeader('Allow', ALLOW)
      send(response, 405, 'method not allowed\n', true)
      return
    }
    const head = method === 'HEAD'
    if (targetPath(target) !== '/healthz' && !this.authorized(request)) {
      // RFC 9110 11.6.1 / RFC 7617: a 401 names the scheme; curl -u <user>:<password> answers it.
      response.setHeader('WWW-Authenticate', 'Basic realm="bfs", charset="UTF-8"')
      send(response, 401, 'unauthorized\n')
      return
    }
    const original = parseOriginalTarget(target)
    const refusal = original !== undefined ? undefined : this.refusal(targetPath(target))
    if (refusal !== undefined) {
      send(response, 403, `${refusal}\n`)
    } else if (original === 'bad-request') {
      send(response, 400, 'bad request\n')
    } else if (original !== undefined) {
      const log = this.server.persistence.appendLog
      const before = log.appendedBytes
      const answer = this.api.answer(original, !head)
      // As a RESP reply: not before the log holds, under the fsync policy, what it may show.
      const own = log.appendedBytes > before ? log.appendedBytes : 0
      void this.server.persistence.whenDurable(own).then((durable) => {
        // Not durable: the server is shutting down and the disk refused it; never acknowledged.
        if (durable) reply(response, answer)
        else response.destroy()
      })
    } else {
      const path = targetPath(target)
      if (path === '/healthz') {
        if (this.server.loading) send(response, 503, 'loading\n')
        else send(response, 200, 'ok')
      } else if (path === '/metrics') {
        this.sendMetrics(response)
      } else if (path === '/' || path === '/filters') {
        this.sendStatus(response, path, target)
      } else {
        // The original answered every other target with 400 "Error Command".
        send(response, 400, 'bad request\n')
      }
    }
  }

  /**
   * HTTP Basic credentials of any ACL user, or none for the default user while it needs no
   * password (http-acl.ts): the request then runs as that user. False: 401.
   */
  private authorized(request: http.IncomingMessage): boolean {
    const user = requestUser(this.session.commandContext, request.headers.authorization)
    if (user === undefined) return false
    this.session.user = user.name
    return true
  }

  /** The NOPERM text when the user may not see a page: /metrics as INFO, the listings as SCAN. */
  private refusal(path: string): string | undefined {
    if (path === '/metrics') return requestRefusal(this.session.commandContext, [INFO])
    if (path === '/' || path === '/filters') return requestRefusal(this.session.commandContext, [SCAN, SCAN_CURSOR])
    return undefined
  }

  private sendMetrics(response: http.ServerResponse): void {
    this.metrics.render(readableFilters(this.session.commandContext)).then(
      (text) => {
        const body = Buffer.from(text, 'utf8')
        response.writeHead(200, { 'Content-Type': this.metrics.contentType, 'Content-Length': body.length })
        response.end(body)
      },
      (error: unknown) => {
        this.server.log.warning(`/metrics failed: ${(error as Error)?.stack ?? String(error)}`)
        send(response, 500, 'internal error\n')
      },
    )
  }

  /** GET / (the status page) or GET /filters (its listing as JSON); a bad query string gets 400. */
  private sendStatus(response: http.ServerResponse, path: string, target: string): void {
    const queryAt = target.indexOf('?')
    let query: ListingQuery
    try {
      query = parseListingQuery(queryAt < 0 ? '' : target.slice(queryAt + 1))
    } catch (error) {
      if (!(error instanceof ListingQueryError)) throw error
      send(response, 400, `bad request: ${error.message}\n`)
      return
    }
    const listing = listFilters(httpRegistry(this.server), query, readableFilters(this.session.commandContext))
    const headers: http.OutgoingHttpHeaders = { 'Cache-Control': 'no-store', 'X-Total-Count': listing.total }
    let body: Buffer
    if (path === '/filters') {
      body = Buffer.from(filtersJson(listing), 'utf8')
      headers['Content-Type'] = 'application/json; charset=utf-8'
    } else {
      body = Buffer.from(statusPage(serverFigures(this.session.commandContext, this.opsMeter), listing, query), 'utf8')
      headers['Content-Type'] = 'text/html; charset=utf-8'
      headers['Content-Security-Policy'] = STATUS_PAGE_POLICY
    }
    headers['Content-Length'] = body.length
    response.writeHead(200, headers)
    response.end(body)
  }

  /**
   * Bytes Node's parser refused: answer with a status and close, as Node's default handler does,
   * but tell a huge request target (414) from huge headers (431). Both overflow the same limit
   * (the head's size), so the test is whether the request line ever ended within it.
   */
  private clientError(error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: net.Socket): void {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy()
      return
    }
    let status = 400
    if (error.code === 'HPE_HEADER_OVERFLOW')
      status = targetOverflowed(error.rawPacket, this.server.config['http-max-url-bytes']) ? 414 : 431
    else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') status = 408
    const body = `${RAW_REASONS[status]}\n`
    socket.end(
      `HTTP/1.1 ${status} ${RAW_REASONS[status]}\r\nConnection: close\r\nContent-Type: ${TEXT}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    )
  }
}

/**
 * Whether an overflowing request head overflowed in its request target (414) rather than in its
 * header fields (431), judged from the bytes the parser last saw: still inside the target (no line
 * end, no "name: value"), or the tail of a long request line ("...target HTTP/1.1\r\n").
 */
function targetOverflowed(packet: Buffer | undefined, maxTargetBytes: number): boolean {
  if (packet === undefined) return true
  const lineEnd = packet.indexOf('\r\n')
  const line = packet.toString('latin1', 0, lineEnd < 0 ? Math.min(packet.length, 64 * 1024) : lineEnd)
  // A header field has ": "; a request target never holds a space.
  if (line.includes(': ')) return false
  if (lineEnd < 0) return true
  if (!/ HTTP\/\d\.\d$/.test(line)) return false
  return !/^[A-Z]+ \S+ HTTP\/\d\.\d$/.test(line) || line.length > maxTargetBytes
}

/** The request target without its query string. */
function targetPath(target: string): string {
  const query = target.indexOf('?')
  return query < 0 ? target : target.slice(0, query)
}

function reply(response: http.ServerResponse, answer: OriginalResponse): void {
  send(response, answer.status, answer.body)
}

/** A short text answer; Node leaves the body out for HEAD but keeps Content-Length. */
function send(response: http.ServerResponse, status: number, body: string, close = false): void {
  const headers: http.OutgoingHttpHeaders = { 'Content-Type': TEXT, 'Content-Length': Buffer.byteLength(body) }
  if (close) headers.Connection = 'close'
  response.writeHead(status, headers)
  response.end(body)
}
