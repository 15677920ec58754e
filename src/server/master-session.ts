/**
 * The replica's client for its master's stream (redis server.master, flag CLIENT_MASTER): the
 * master's commands run through the real dispatch in it, its replies are read only to log an
 * error and are otherwise discarded (a master never reads them). It is exempt from -READONLY and
 * -MASTERDOWN (dispatch's checks look at its kind) and, as redis's replicas, from maxmemory and
 * max-filter-bytes: what the master accepted is applied. It is listed by CLIENT LIST (flag M),
 * and CLIENT KILL TYPE master drops the link (which reconnects and continues with PSYNC).
 *
 * A read of the stream runs as a client's read does: timed once, and its BF.ADD and BF.EXISTS
 * commands run together (read-batch.ts), settled before anything else runs and when the read's
 * commands are done.
 */
import { dispatch } from '../commands/kernel/dispatch.js'
import { timedRead } from '../commands/state/command-timer.js'
import { beginRead, endRead, settleBatch } from '../commands/kernel/read-batch.js'
import type { ClientSession, CommandContext, ServerContext } from '../commands/kernel/context.js'
import { internalSession } from './log-session.js'
import { ReplyValues } from '../protocol/reply-values.js'
import { RespReplyError } from '../protocol/reply-reader.js'
import type { MasterLinkInfo, MasterSession } from '../replication/replica-host.js'

/** The master link's session: the client it is in the list, and how the link runs a command in it. */
export interface MasterClient extends MasterSession {
  readonly client: ClientSession
}

export function createMasterSession(server: ServerContext, id: number, link: MasterLinkInfo): MasterClient {
  const reply = new ReplyValues()
  const client = internalSession({
    id,
    reply,
    addr: link.addr,
    laddr: link.laddr,
    name: '',
    kind: 'master',
    kill: () => link.kill(),
  })
  // Read live (CONFIG SET applies), but no limit refuses what the master accepted.
  const config = Object.create(server.config, { maxmemory: { value: 0 }, 'max-filter-bytes': { value: 0 } })
  const view: ServerContext = Object.create(server, { config: { value: config } })
  const ctx: CommandContext = { client, server: view }
  return {
    client,
    read(work) {
      // CLIENT LIST idle=: once per read, as a client's.
      ;(client as { lastInteractionMs: number }).lastInteractionMs = Date.now()
      timedRead(server, () => {
        beginRead(ctx)
        try {
          work()
        } finally {
          endRead()
        }
      })
      // The read's replies are dropped (its batch is settled: nothing is left open).
      reply.truncate(0)
    },
    run(argv) {
      const mark = reply.length
      dispatch(ctx, argv)
      // The command's first reply (a batched BF.ADD's is a placeholder 0, never an error).
      const first = reply.length === mark ? undefined : reply.replyAt(mark)
      return first instanceof RespReplyError ? first.message : undefined
    },
    settle: settleBatch,
    close() {},
  }
}
