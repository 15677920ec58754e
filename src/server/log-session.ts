/**
 * Replaying the append-only log through the real dispatch, as redis loads its AOF with a fake
 * client: a session whose replies are read only to count errors, on a view of the server that
 * is not loading (so writes run), does not propagate (so replay does not log itself again) and
 * applies neither maxmemory nor max-filter-bytes (so no acknowledged write is refused).
 */
import { dispatch } from '../commands/kernel/dispatch.js'
import { timedRead } from '../commands/state/command-timer.js'
import type { ClientSession, CommandContext, CommandTableView, ServerContext } from '../commands/kernel/context.js'
import { ReplyValues } from '../protocol/reply-values.js'
import { RespReplyError } from '../protocol/reply-reader.js'
import { CommandArgs } from '../protocol/command-args.js'

export interface ReplaySession {
  /** The commands a replay runs: by their original names, whatever rename-command says (see run). */
  readonly commands: CommandTableView
  /** Runs one logged command of segment `file`; returns its error text, if it answered with one. */
  run(argv: Buffer[], file: string): string | undefined
  /**
   * The end of the log: a MULTI left open there (its EXEC never written, so never answered) is
   * dropped, as at the end of each segment. Returns the segment it was in, if there was one.
   */
  finish(): string | undefined
}

/**
 * A client of the server's own (the log's replay, the master link of a replica): authenticated,
 * no transaction, nothing buffered; `kill` is what CLIENT KILL and QUIT do to it.
 */
export function internalSession(
  fields: Pick<ClientSession, 'id' | 'reply' | 'addr' | 'laddr' | 'name' | 'kind'> & { kill: () => void },
): ClientSession {
  const now = Date.now()
  return {
    ...fields,
    createdAtMs: now,
    lastInteractionMs: now,
    libName: '',
    libVersion: '',
    authenticated: true,
    // No user: it runs anything (redis's master and AOF clients have none: CLIENT LIST's (superuser)).
    user: '',
    db: 0,
    transaction: undefined,
    watch: undefined,
    lastCommand: 'NULL',
    replOffset: 0,
    subscriptionCount: () => 0,
    closeAfterReply: fields.kill,
    outputBytes: () => 0,
    queryBufferBytes: () => 0,
  }
}

export function createReplaySession(server: ServerContext): ReplaySession {
  const reply = new ReplyValues()
  const args = new CommandArgs()
  const session = internalSession({
    id: 0,
    reply,
    addr: 'aof:0',
    laddr: 'aof:0',
    name: 'aof-loader',
    kind: 'normal',
    kill: () => {},
  })
  // bfs names every record by the command's original name (server.propagate), so that a log
  // replays whatever is renamed or disabled (redis 7.0 fails on a renamed MULTI).
  const commands = server.commands.withOriginalNames()
  const view: ServerContext = Object.create(server, {
    commands: { value: commands },
    loading: { value: false },
    propagate: { value: () => {} },
    // Every record was acknowledged: none is refused for a limit lowered since (redis applies no
    // maxmemory while loading). The start warns about a dataset over its limits afterwards.
    config: { value: { ...server.config, maxmemory: 0, 'max-filter-bytes': 0 } },
  })
  const ctx: CommandContext = { client: session, server: view }
  let currentFile = ''
  /** redis loadSingleAppendOnlyFile: "Revert incomplete MULTI/EXEC transaction in AOF file". */
  const revertOpenTransaction = (): string | undefined => {
    if (session.transaction === undefined) return undefined
    session.transaction = undefined
    server.log.warning(`Revert incomplete MULTI/EXEC transaction in AOF file ${currentFile}`)
    return currentFile
  }
  return {
    commands,
    run(argv, file) {
      if (file !== currentFile) {
        revertOpenTransaction()
        currentFile = file
        // Every segment starts in database 0 (store/append-log.ts writes a SELECT before any other).
        session.db = 0
      }
      timedRead(server, () => dispatch(ctx, args.assign(argv)))
      const [first] = reply.take()
      return first instanceof RespReplyError ? first.message : undefined
    },
    finish: revertOpenTransaction,
  }
}
