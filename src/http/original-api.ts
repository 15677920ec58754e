/**
 * The original HTTP API (godka/BloomFilterServer, C on libevent), kept exactly for its users:
 *   GET /add=<item>      → 200 `ok`            (BF.ADD <http-filter> <item>)
 *   GET /contain=<item>  → 200 `true`/`false`  (BF.EXISTS <http-filter> <item>)
 * The original parsed everything after the leading `/` as a query string
 * (evhttp_parse_query_str) and answered its first pair; so does this: the item is the first
 * pair's value, percent-decoded with `+` as a space, and anything after an `&` is ignored.
 * An unknown name or a missing value is a bad request.
 */
import type { ServerContext } from '../commands/kernel/context.js'
import { decodeQueryValue } from './query-value.js'
import type { HttpSession } from './http-session.js'

export type OriginalVerb = 'add' | 'contain'

/** A request of the original API, parsed. */
export interface OriginalRequest {
  verb: OriginalVerb
  item: Buffer
}

const ADD_PREFIX = '/add='
const CONTAIN_PREFIX = '/contain='

/**
 * Parses a request target of the original API. Returns undefined for any other target, and
 * 'bad-request' for `/add=` or `/contain=` without a value.
 */
export function parseOriginalTarget(target: string): OriginalRequest | 'bad-request' | undefined {
  let verb: OriginalVerb
  let start: number
  if (target.startsWith(ADD_PREFIX)) {
    verb = 'add'
    start = ADD_PREFIX.length
  } else if (target.startsWith(CONTAIN_PREFIX)) {
    verb = 'contain'
    start = CONTAIN_PREFIX.length
  } else {
    return undefined
  }
  let end = target.indexOf('&', start)
  if (end < 0) end = target.length
  if (end === start) return 'bad-request'
  return { verb, item: decodeQueryValue(target, start, end) }
}

/** What the HTTP layer sends back: a status and a short text body. */
export interface OriginalResponse {
  status: number
  body: string
}

const BF_ADD = Buffer.from('BF.ADD')
const BF_EXISTS = Buffer.from('BF.EXISTS')

/** Answers one original-API request by running BF.ADD / BF.EXISTS through the real dispatch. */
export class OriginalApi {
  private filterName = ''
  private filterKey = Buffer.alloc(0)

  constructor(
    private readonly server: ServerContext,
    private readonly session: HttpSession,
  ) {}

  /**
   * Runs the request. `mutate` false (HEAD) checks instead of adding, so a HEAD never changes
   * data, yet answers with the headers the GET would have.
   */
  answer(request: OriginalRequest, mutate = true): OriginalResponse {
    const add = request.verb === 'add'
    // CLIENT PAUSE: a request cannot wait as a client's command does; the write (or, under ALL,
    // any request) is turned away, so the dataset stays as it is.
    if (this.server.pause.paused() && (this.server.pause.type === 'all' || (add && mutate))) {
      return { status: 503, body: 'PAUSED clients are paused (CLIENT PAUSE); try again later\n' }
    }
    const argv = [add && mutate ? BF_ADD : BF_EXISTS, this.key(), request.item]
    const outcome = this.session.run(argv)
    if (outcome.kind === 'integer') {
      if (add) return { status: 200, body: 'ok' }
      return { status: 200, body: outcome.value === 1 ? 'true' : 'false' }
    }
    if (outcome.kind === 'error') {
      // LOADING (the dataset is not there yet), MISCONF (writes refused while the disk fails),
      // READONLY (/add= on a replica) and MASTERDOWN (a replica without its master) pass: 503;
      // anything else is the server's failure.
      // NOPERM: the request's ACL user may not run the command (403, the text as the body).
      if (outcome.text.startsWith('NOPERM')) return { status: 403, body: `${outcome.text}\n` }
      const status = /^(LOADING|MISCONF|READONLY|MASTERDOWN)/.test(outcome.text) ? 503 : 500
      return { status, body: `${outcome.text}\n` }
    }
    return { status: 500, body: 'unexpected reply\n' }
  }

  /** The filter's name as bytes; follows CONFIG SET http-filter. */
  private key(): Buffer {
    const name = this.server.config['http-filter']
    if (name !== this.filterName) {
      this.filterName = name
      this.filterKey = Buffer.from(name, 'utf8')
    }
    return this.filterKey
  }
}
