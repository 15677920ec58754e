/**
 * DEBUG, the subcommands test suites use, as redis 7.0 debug.c answers them: SLEEP, RELOAD,
 * SET-ACTIVE-EXPIRE, OBJECT, CHANGE-REPL-ID, LOG, ERROR, HELP. DEBUG runs only as
 * `enable-debug-command` allows (no by default, as redis 7.0; local: loopback connections).
 * The other redis subcommands (crashes, allocator and encoding internals, DIGEST, POPULATE, ...)
 * answer redis's unknown-subcommand error.
 */
import { keyspace, type ClientSession, type CommandContext } from '../kernel/context.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { ERR, ReplyError, subcommandSyntaxText } from '../kernel/reply-error.js'
import { FilterRegistry } from '../../store/registry.js'
import { newReplid } from '../../replication/replication-state.js'

/** redis 7.0 debug.c debugCommand's HELP lines for the subcommands bfs has, in its order. */
const HELP = [
  'CHANGE-REPL-ID',
  '    Change the replication IDs of the instance.',
  '    Dangerous: should be used only for testing the replication subsystem.',
  'ERROR <string>',
  '    Return a Redis protocol error with <string> as message. Useful for clients',
  '    unit tests to simulate Redis errors.',
  'LOG <message>',
  '    Write <message> to the server log.',
  'OBJECT <key>',
  '    Show low level info about `key` and associated value.',
  'RELOAD [option ...]',
  '    Save the RDB on disk and reload it back to memory. Valid <option> values:',
  '    * NOSAVE: the database will be loaded from an existing RDB file.',
  '    Examples:',
  '    * DEBUG RELOAD: verify that the server is able to persist, flush and reload',
  '      the database.',
  '    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an',
  '      existing RDB file.',
  'SET-ACTIVE-EXPIRE <0|1>',
  '    Setting it to 0 disables expiring keys in background when they are not',
  '    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the',
  '    default.',
  'SLEEP <seconds>',
  '    Stop the server for <seconds>. Decimals allowed.',
]

/** redis allowProtectedAction: yes, or local and the client on a loopback address (networking.c islocalClient). */
function allowed(ctx: CommandContext): boolean {
  const setting = ctx.server.config['enable-debug-command']
  if (setting === 'yes') return true
  if (setting !== 'local') return false
  if (ctx.client.unixSocket === true) return true
  const host = hostOf(ctx.client)
  return host === '127.0.0.1' || host === '::1' || host === '::ffff:127.0.0.1'
}

function hostOf(client: ClientSession): string {
  return client.addr.slice(0, client.addr.lastIndexOf(':'))
}

/** DEBUG subcommand [arg ...] */
export function debug(ctx: CommandContext, argv: CommandArgs): void {
  if (!allowed(ctx)) throw new ReplyError(ERR.DEBUG_NOT_ALLOWED)
  const reply = ctx.client.reply
  const argc = argv.length
  if (argc === 2 && argv.isKeyword(1, 'HELP')) {
    const lines = [
      'DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:',
      ...HELP,
      'HELP',
      '    Prints this help.',
    ]
    reply.array(lines.length)
    for (const line of lines) reply.simple(line)
  } else if (argc === 3 && argv.isKeyword(1, 'SLEEP')) debugSleep(ctx, argv)
  else if (argv.isKeyword(1, 'RELOAD')) debugReload(ctx, argv)
  else if (argc === 3 && argv.isKeyword(1, 'SET-ACTIVE-EXPIRE')) {
    ctx.server.activeExpireEnabled = atoi(argv.get(2).toString('latin1')) !== 0
    reply.simple('OK')
  } else if (argc === 3 && argv.isKeyword(1, 'OBJECT')) debugObject(ctx, argv)
  else if (argc === 2 && argv.isKeyword(1, 'CHANGE-REPL-ID')) {
    ctx.server.log.warning('Changing replication IDs after receiving DEBUG change-repl-id')
    ctx.server.replication.replid = newReplid()
    ctx.server.replication.clearId2()
    reply.simple('OK')
  } else if (argc === 3 && argv.isKeyword(1, 'LOG')) {
    ctx.server.log.warning(`DEBUG LOG: ${argv.get(2).toString('latin1')}`)
    reply.simple('OK')
  } else if (argc === 3 && argv.isKeyword(1, 'ERROR')) {
    // redis sends the string as the whole error line, newlines turned into spaces.
    throw new ReplyError(
      argv
        .get(2)
        .toString('latin1')
        .replace(/[\r\n]/g, ' '),
      'latin1',
    )
  } else throw new ReplyError(subcommandSyntaxText(argv.get(0), argv.get(1)), 'latin1')
}

/** C atoi: leading blanks, a sign, digits; anything else ends it (0 when none). */
function atoi(text: string): number {
  const match = /^\s*([+-]?\d+)/.exec(text)
  return match === null ? 0 : Number.parseInt(match[1]!, 10)
}

/** C strtod, enough for DEBUG SLEEP: the longest leading number, 0 when none. */
function strtod(text: string): number {
  const value = Number.parseFloat(text.trimStart())
  return Number.isNaN(value) ? 0 : value
}

/** The thread sleeps here, as redis's nanosleep does: nothing else runs meanwhile. */
const SLEEPER = new Int32Array(new SharedArrayBuffer(4))

/** DEBUG SLEEP seconds → +OK after the whole server stood still that long (decimals allowed) */
function debugSleep(ctx: CommandContext, argv: CommandArgs): void {
  const micros = Math.trunc(strtod(argv.get(2).toString('latin1')) * 1_000_000)
  if (micros > 0) Atomics.wait(SLEEPER, 0, 0, micros / 1000)
  ctx.client.reply.simple('OK')
}

/**
 * DEBUG OBJECT key → redis's line for a module value (bfs's filters are RedisBloom's type):
 * `Value at:<address> refcount:1 encoding:raw serializedlength:<bytes> lru:0 lru_seconds_idle:<s>`,
 * serializedlength being the filter's bytes (BF.INFO Size) and the idle time since the client's
 * start of the server (bfs keeps no access times). A key past its expiry is still found, as redis's
 * dictFind does.
 */
function debugObject(ctx: CommandContext, argv: CommandArgs): void {
  const entry = keyspace(ctx).peek(FilterRegistry.nameOf(argv.get(2)))
  // redis shared.nokeyerr.
  if (entry === undefined) throw new ReplyError(ERR.NO_SUCH_KEY)
  const address = `0x${(entry.seq + 0x7f0000000000).toString(16)}`
  ctx.client.reply.simple(
    `Value at:${address} refcount:1 encoding:raw serializedlength:${entry.filter.sizeBytes()} lru:0 lru_seconds_idle:0`,
  )
}

/**
 * DEBUG RELOAD [NOSAVE] → +OK once the snapshot was saved (unless NOSAVE), the dataset emptied and
 * loaded back from the snapshot, through the persistence's own save and load. The load reads the
 * files asynchronously: meanwhile every other client's commands wait (a CLIENT PAUSE ALL of its
 * own, lifted at the end), the server counts as loading, and no save runs. MERGE and NOFLUSH
 * (loading over the data in memory) are refused: bfs loads a snapshot into an empty dataset only.
 */
function debugReload(ctx: CommandContext, argv: CommandArgs): void {
  let save = true
  for (let j = 2; j < argv.length; j++) {
    if (argv.isKeyword(j, 'NOSAVE')) save = false
    else if (argv.isKeyword(j, 'MERGE') || argv.isKeyword(j, 'NOFLUSH')) throw new ReplyError(ERR.DEBUG_RELOAD_MERGE)
    // redis debug.c, word for word.
    else throw new ReplyError(ERR.DEBUG_RELOAD_OPTIONS)
  }
  const { persistence, databases, log, pause } = ctx.server
  const peer = ctx.client.peer
  if (peer === undefined || persistence.inTransaction) throw new ReplyError(ERR.DEBUG_RELOAD_NEEDS_CONNECTION)
  // A background save or log rewrite would commit what it took before the reload over it: refused
  // as redis refuses the save while a child runs (shared.err).
  if (persistence.snapshots.inProgress || persistence.logRewriter.inProgress) throw new ReplyError(ERR.BARE)
  if (save) {
    try {
      persistence.snapshots.saveSync(databases)
    } catch {
      // redis replies shared.err when rdbSave fails.
      throw new ReplyError(ERR.BARE)
    }
  }
  // Every database is reloaded (redis emptyData(-1, ...)): each one's watchers are touched.
  for (const registry of databases.made())
    for (const name of registry.names()) ctx.server.watchedKeys.touch(registry.index, name)
  databases.clear()
  persistence.loading = true
  pause.pause('reload', Number.MAX_SAFE_INTEGER, 'all')
  peer.block()
  persistence.snapshots
    .loadAll(databases)
    .then(
      () => {
        log.warning('DB reloaded by DEBUG RELOAD')
        peer.reply.simple('OK')
      },
      (error: unknown) => {
        log.warning(`DEBUG RELOAD: ${(error as Error).message}`)
        peer.reply.error(ERR.DEBUG_RELOAD_LOAD_FAILED)
      },
    )
    .finally(() => {
      persistence.loading = false
      pause.unpause('reload')
      peer.unblock()
    })
}
