/**
 * The session HTTP requests run their commands in. An HTTP request becomes the argv a RESP client
 * would send (`BF.ADD bfs <item>`) and goes through the real dispatch, so it gets the same checks
 * (loading, arity), the same auto-creation with the configured defaults, the same persistence
 * (`propagate`, `registry.touch`) and the same INFO commandstats as RESP; the reply comes back
 * as a value (protocol/reply-values.ts).
 */
import type { ClientSession, CommandContext, ServerContext, Transaction } from '../commands/kernel/context.js'
import { dispatch } from '../commands/kernel/dispatch.js'
import { timedRead } from '../commands/state/command-timer.js'
import { ReplyValues } from '../protocol/reply-values.js'
import { RespReplyError, type RespValue } from '../protocol/reply-reader.js'
import { CommandArgs } from '../protocol/command-args.js'
import type { WatchState } from '../commands/state/watched-keys.js'

/** What one command answered: an integer, an error's text, or something else (its value, if any). */
export type CommandOutcome =
  { kind: 'integer'; value: number } | { kind: 'error'; text: string } | { kind: 'other'; value: RespValue | undefined }

/** A client with no socket: dispatch answers into its ReplyValues and `run` takes the reply. */
export class HttpSession implements ClientSession {
  /** Error texts as UTF-8: one quoting the request's item shows it as sent. */
  readonly reply = new ReplyValues({ lineEncoding: 'utf8' })
  readonly createdAtMs = Date.now()
  readonly lastInteractionMs = this.createdAtMs
  readonly addr = 'http'
  readonly laddr = 'http'
  name = 'http'
  libName = ''
  libVersion = ''
  // Authenticated by the listener, which sets `user` for each request (http-acl.ts).
  authenticated = true
  user = 'default'
  /** The HTTP API's database (config http-db): /add= and /contain= run in it. */
  db: number
  transaction: Transaction | undefined = undefined
  watch: WatchState | undefined = undefined
  lastCommand = 'NULL'
  readonly kind = 'normal'
  replOffset = 0
  private readonly context: CommandContext
  private readonly args = new CommandArgs()

  constructor(
    server: ServerContext,
    /** 0: never a RESP client's id (those start at 1). */
    readonly id = 0,
  ) {
    this.context = { client: this, server }
    this.db = server.config['http-db']
  }

  subscriptionCount(): number {
    return 0
  }

  get commandContext(): CommandContext {
    return this.context
  }

  /** Runs one command synchronously through the server's dispatch and returns its reply. */
  run(argv: Buffer[]): CommandOutcome {
    timedRead(this.context.server, () => dispatch(this.context, this.args.assign(argv)))
    const [value] = this.reply.take()
    // Only 0 and 1 come back from BF.ADD / BF.EXISTS; any integer is one all the same.
    if (typeof value === 'number' || typeof value === 'bigint') return { kind: 'integer', value: Number(value) }
    if (value instanceof RespReplyError) return { kind: 'error', text: value.message }
    return { kind: 'other', value }
  }

  closeAfterReply(): void {}

  kill(): void {}

  /** Nothing waits to be sent: `run` takes each reply as the command ends. */
  outputBytes(): number {
    return 0
  }

  queryBufferBytes(): number {
    return 0
  }
}
