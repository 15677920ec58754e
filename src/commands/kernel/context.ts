/**
 * What a command handler sees: the client that sent it and the server it runs in. These are
 * interfaces so that commands/ does not depend on the socket layer; server/ implements them.
 */
import type { FilterRegistry } from '../../store/registry.js'
import type { CommandContext } from './table.js'

// The context and the command table refer to each other (a handler takes a CommandContext, whose
// server holds the table): both are declared in table.ts, so that no two files import each other.
export type { ClientKind, ClientSession, CommandContext, ServerContext } from './table.js'

/**
 * The keyspace a command's keys live in: the client's selected database. Every command that reads
 * or writes keys goes through here; server-wide views (INFO, memory limits, saves) use
 * `server.databases`.
 */
export function keyspace(ctx: CommandContext): FilterRegistry {
  return ctx.server.databases.db(ctx.client.db)
}
