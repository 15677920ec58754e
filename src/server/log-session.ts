/**
 * Replaying the append-only log through the real dispatch, as redis loads its AOF with a fake
 * client: a session whose replies are read only to count errors, on a view of the server that
 * is not loading (so writes run) and does not propagate (so replay does not log itself again).
 */
import { dispatch } from '../commands/dispatch.js'
import type { ClientSession, CommandContext, ServerContext } from '../commands/context.js'
import { ReplyWriter } from '../protocol/reply-writer.js'
import { CommandArgs } from '../protocol/command-args.js'

const MINUS = 0x2d // -

export interface ReplaySession {
  /** Runs one logged command; returns its error text, if it answered with one. */
  run(argv: Buffer[]): string | undefined
}

export function createReplaySession(server: ServerContext): ReplaySession {
  const reply = new ReplyWriter()
  const args = new CommandArgs()
  const session: ClientSession = {
    id: 0,
    reply,
    addr: 'aof:0',
    laddr: 'aof:0',
    createdAtMs: Date.now(),
    lastInteractionMs: Date.now(),
    name: 'aof-loader',
    libName: '',
    libVersion: '',
    authenticated: true,
    lastCommand: 'NULL',
    closeAfterReply() {},
    kill() {},
    outputBytes: () => 0,
    queryBufferBytes: () => 0,
  }
  const view: ServerContext = Object.create(server, {
    loading: { value: false },
    propagate: { value: () => {} },
  })
  const ctx: CommandContext = { client: session, server: view }
  return {
    run(argv) {
      dispatch(ctx, args.assign(argv))
      const out = reply.take()
      if (out === undefined || out[0] !== MINUS) return undefined
      return out.subarray(1, out.indexOf(0x0d)).toString('latin1')
    },
  }
}
