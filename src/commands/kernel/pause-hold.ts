/**
 * Whether a command waits for a pause (state/client-pause.ts: CLIENT PAUSE, DEBUG RELOAD, MIGRATE's
 * key hold), decided from the command table and the client's transaction.
 */
import type { CommandArgs } from '../../protocol/command-args.js'
import type { CommandContext, CommandEntry } from './context.js'
import { commandKeyPositions } from './key-positions.js'
import type { ClientPause } from '../state/client-pause.js'

/** Commands a key hold lets through (see touchesHeldKeys). */
const RESTORES: ReadonlySet<string> = new Set(['RESTORE', 'RESTORE-ASKING', 'BFS.RESTORE-PART'])

/** Whether the command must wait: run only while the pause's type is not 'off'. */
export function pauseHolds(pause: ClientPause, ctx: CommandContext, argv: CommandArgs): boolean {
  if (!pause.paused() || ctx.client.kind === 'replica') return false
  const entry = ctx.server.commands.lookup(argv.bytes(0), argv.start(0), argv.end(0))
  // An unknown command is refused before redis looks at the pause.
  if (entry === undefined) return false
  if (pause.type === 'all') return true
  if (pause.type === 'keys')
    return (
      (entry.writes && touchesHeldKeys(pause, ctx, entry, argv.toArray())) ||
      (entry.isExec &&
        (ctx.client.transaction?.queued.some((queued) => touchesHeldKeys(pause, ctx, queued.entry, queued.argv)) ??
          false))
    )
  return (
    mayReplicate(entry) ||
    (entry.isExec && (ctx.client.transaction?.queued.some((queued) => mayReplicate(queued.entry)) ?? false))
  )
}

/**
 * Whether a write touches a held key, or has no key (FLUSHALL, FLUSHDB, SWAPDB). RESTORE and its
 * kin are not held: one aimed at a key moving away answers BUSYKEY (a MIGRATE to this node
 * itself, as redis), or replaces it, and then MIGRATE leaves the new filter in place.
 */
function touchesHeldKeys(
  pause: ClientPause,
  ctx: CommandContext,
  entry: CommandEntry,
  args: readonly Buffer[],
): boolean {
  if (!entry.writes || RESTORES.has(entry.spec.name)) return false
  const positions = commandKeyPositions(ctx.server.commands, args)
  if (positions === undefined || positions.length === 0) return true
  for (const { pos } of positions) if (pause.holdsKey(`${ctx.client.db}:${args[pos]!.toString('latin1')}`)) return true
  return false
}

/** redis is_may_replicate_command: a write, or PUBLISH / SPUBLISH (CMD_MAY_REPLICATE). */
function mayReplicate(entry: CommandEntry): boolean {
  return entry.writes || entry.spec.name === 'PUBLISH' || entry.spec.name === 'SPUBLISH'
}
