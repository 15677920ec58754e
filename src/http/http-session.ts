/**
 * The session HTTP requests run their commands in. An HTTP request becomes the argv a RESP client
 * would send (`BF.ADD bfs <item>`) and goes through the real dispatch, so it gets the same checks
 * (loading, arity), the same auto-creation with the configured defaults, the same persistence
 * (`propagate`, `registry.touch`) and the same INFO commandstats as RESP; the reply is read back
 * from the RESP bytes the handler wrote.
 */
import type { ClientSession, CommandContext, ServerContext } from '../commands/kernel/context.js'
import { dispatch } from '../commands/kernel/dispatch.js'
import { timedRead } from '../commands/state/command-timer.js'
import { ReplyWriter } from '../protocol/reply-writer.js'
import { CommandArgs } from '../protocol/command-args.js'
import type { Transaction } from '../commands/kernel/table.js'
import type { WatchState } from '../commands/state/watched-keys.js'

const INTEGER = 0x3a // :
const ERROR = 0x2d // -
const DIGIT_0 = 0x30 // 0

/** What one command answered: an integer, an error's text, or something else (its raw bytes). */
export type CommandOutcome =
  | { kind: 'integer'; value: number }
  | { kind: 'error'; text: string }
  | { kind: 'other'; bytes: Buffer | undefined }

/** A client with no socket: dispatch writes into its ReplyWriter and `run` reads the reply back. */
export class HttpSession implements ClientSession {
  readonly reply = new ReplyWriter()
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
    const bytes = this.reply.take()
    if (bytes !== undefined && bytes.length >= 3) {
      if (bytes[0] === INTEGER) {
        // Only :0 and :1 come back from BF.ADD / BF.EXISTS; parse generally all the same.
        if (bytes.length === 4 && (bytes[1] === DIGIT_0 || bytes[1] === DIGIT_0 + 1)) return { kind: 'integer', value: bytes[1]! - DIGIT_0 }
        return { kind: 'integer', value: Number(bytes.toString('latin1', 1, bytes.length - 2)) }
      }
      if (bytes[0] === ERROR) return { kind: 'error', text: bytes.toString('utf8', 1, bytes.length - 2) }
    }
    return { kind: 'other', bytes }
  }

  closeAfterReply(): void {}

  kill(): void {}

  outputBytes(): number {
    return this.reply.pendingBytes
  }

  queryBufferBytes(): number {
    return 0
  }
}
