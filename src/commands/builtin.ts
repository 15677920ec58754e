/**
 * Every built-in command, declared once, with a container's subcommands (CONFIG GET, ...) as rows
 * of their own. Dispatch checks arity, authentication, loading and transaction roles from these
 * rows; COMMAND, HELP and INFO commandstats are generated from them. Flags as redis 7.0 and
 * RedisBloom 2.4 register them ("write deny-oom" / "readonly fast" for BF.*).
 */
import type { CommandSpec, SubcommandSpec } from './kernel/context.js'
import { containerOnly, helpSubcommand } from './kernel/table.js'
import { bfAdd, bfCard, bfExists, bfInfo, bfInsert, bfMadd, bfMexists, bfReserve } from './filters/bloom.js'
import { bfLoadchunk, bfScandump } from './filters/dump.js'
import { bfDebug, bfsHealth } from './filters/health.js'
import { bfMerge } from './filters/merge.js'
import { bfLoad, bfSave, bgrewriteaof, bgsave, lastsave, save } from './admin/persistence.js'
import { dbsize, del, exists, keys, memoryDoctor, memoryUsage, randomkey, rename, renamenx, scan, type } from './keyspace/keyspace.js'
import { flushall, flushdb, move, select, swapdb } from './keyspace/databases.js'
import { EXPIRY_COMMANDS } from './keyspace/expiry.js'
import {
  auth, CLIENT_HELP, clientCaching, clientGetname, clientGetredir, clientId, clientInfo, clientKill, clientList, clientNoEvict,
  clientReply, clientSetinfo, clientSetname, clientTrackinginfo, clientTracking, clientUnblock, echo, hello, ping, quit, reset,
} from './connection/connection.js'
import {
  command, commandCount, commandDocs, commandGetkeys, commandGetkeysandflags, commandInfo, commandList, configGet, configResetstat,
  configRewrite, configSet, info, moduleList, moduleLoad, shutdown, time,
} from './admin/server.js'
import { discard, multi, unwatch, watch } from './transactions/transactions.js'
import {
  psubscribe, publish, pubsubChannels, pubsubNumpat, pubsubNumsub, pubsubShardchannels, pubsubShardnumsub, punsubscribe, spublish,
  ssubscribe, subscribe, sunsubscribe, unsubscribe,
} from './connection/pubsub.js'
import { psync, replconf, sync, wait } from './replication/replication.js'
import { replicaof, role } from './replication/replicaof.js'
import { slowlogGet, slowlogLen, slowlogReset } from './admin/slowlog-commands.js'
import { monitor } from './connection/monitor.js'
import { ACL_COMMAND } from './acl/acl.js'
import { clientPause, clientUnpause } from './connection/client-pause-commands.js'
import { debug } from './admin/debug.js'
import { latencyDoctor, latencyGraph, latencyHistogram, latencyHistory, latencyLatest, latencyReset } from './admin/latency.js'
import { WINDOW_COMMANDS } from './filters/window.js'
import { CUCKOO_COMMANDS } from './filters/cuckoo-commands.js'
import { CLUSTER_COMMANDS } from './cluster/cluster.js'
import { MIGRATION_COMMANDS } from './migration/migration-commands.js'

const BF_WRITE = ['write', 'denyoom', 'module'] as const
const BF_READ = ['readonly', 'fast', 'module'] as const
const BF_KEYS = [1, 1, 1] as const
const NO_KEYS = [0, 0, 0] as const
/** RedisBloom registers its commands with arity -1 (COMMAND INFO), and checks the count in each handler. */
const BF = { keys: BF_KEYS, group: 'bf', reportedArity: -1 } as const
const PRINT_HELP = ['HELP', '    Prints this help.']

// Subcommands (redis 7.0 commands.def), in the order of their container's HELP. An arity counts
// the container's name and the subcommand's.
const CONFIG_SUBCOMMANDS: readonly SubcommandSpec[] = [
  { name: 'GET', arity: -3, help: ['GET <pattern>', '    Return parameters matching the glob-like <pattern> and their values.'], handler: configGet },
  // redis configSetCommand checks the pairs in its handler.
  { name: 'SET', arity: -4, help: ['SET <directive> <value>', '    Set the configuration <directive> to <value>.'], handler: configSet },
  { name: 'RESETSTAT', arity: 2, help: ['RESETSTAT', '    Reset statistics reported by the INFO command.'], handler: configResetstat },
  { name: 'REWRITE', arity: 2, help: ['REWRITE', '    Rewrite the configuration file.'], handler: configRewrite },
  { ...helpSubcommand(PRINT_HELP), arity: 2 },
]

const COMMAND_SUBCOMMANDS: readonly SubcommandSpec[] = [
  { name: 'COUNT', arity: 2, help: ['COUNT', '    Return the total number of commands in this Redis server.'], handler: commandCount },
  { name: 'LIST', arity: -2, help: ['LIST', '    Return a list of all commands in this Redis server.'], handler: commandList },
  {
    name: 'INFO', arity: -2, handler: commandInfo,
    help: ['INFO [<command-name> ...]', '    Return details about multiple Redis commands.', '    If no command names are given, documentation details for all', '    commands are returned.'],
  },
  {
    name: 'DOCS', arity: -2, handler: commandDocs,
    help: ['DOCS [<command-name> ...]', '    Return documentation details about multiple Redis commands.', '    If no command names are given, documentation details for all', '    commands are returned.'],
  },
  { name: 'GETKEYS', arity: -4, help: ['GETKEYS <full-command>', '    Return the keys from a full Redis command.'], handler: commandGetkeys },
  { name: 'GETKEYSANDFLAGS', arity: -4, help: ['GETKEYSANDFLAGS <full-command>', '    Return the keys and the access flags from a full Redis command.'], handler: commandGetkeysandflags },
  { ...helpSubcommand(PRINT_HELP), arity: 2 },
]

// redis 7.0 networking.c clientCommand's HELP order (SETINFO and NO-TOUCH are 7.2's, with no HELP lines there).
const CLIENT_SUBCOMMANDS: readonly SubcommandSpec[] = [
  { name: 'CACHING', arity: 3, help: CLIENT_HELP.CACHING, handler: clientCaching },
  { name: 'GETREDIR', arity: 2, help: CLIENT_HELP.GETREDIR, handler: clientGetredir },
  { name: 'GETNAME', arity: 2, help: CLIENT_HELP.GETNAME, handler: clientGetname },
  { name: 'ID', arity: 2, help: CLIENT_HELP.ID, handler: clientId },
  { name: 'INFO', arity: 2, help: CLIENT_HELP.INFO, handler: clientInfo },
  { name: 'KILL', arity: -3, help: CLIENT_HELP.KILL, handler: clientKill },
  { name: 'LIST', arity: -2, help: CLIENT_HELP.LIST, handler: clientList },
  { name: 'UNPAUSE', arity: 2, help: CLIENT_HELP.UNPAUSE, handler: clientUnpause },
  { name: 'PAUSE', arity: -3, help: CLIENT_HELP.PAUSE, handler: clientPause },
  { name: 'REPLY', arity: 3, help: CLIENT_HELP.REPLY, handler: clientReply },
  { name: 'SETNAME', arity: 3, help: CLIENT_HELP.SETNAME, handler: clientSetname },
  { name: 'UNBLOCK', arity: -3, help: CLIENT_HELP.UNBLOCK, handler: clientUnblock },
  { name: 'TRACKING', arity: -3, help: CLIENT_HELP.TRACKING, handler: clientTracking },
  { name: 'TRACKINGINFO', arity: 2, help: CLIENT_HELP.TRACKINGINFO, handler: clientTrackinginfo },
  { name: 'NO-EVICT', arity: 3, help: CLIENT_HELP['NO-EVICT'], handler: clientNoEvict },
  { name: 'SETINFO', arity: 4, handler: clientSetinfo },
  { name: 'NO-TOUCH', arity: 3, handler: clientNoEvict },
  { ...helpSubcommand(PRINT_HELP), arity: 2 },
]

const MEMORY_SUBCOMMANDS: readonly SubcommandSpec[] = [
  { name: 'USAGE', arity: -3, help: ['USAGE <key> [SAMPLES <count>]', '    Return memory in bytes used by <key> and its value.'], handler: memoryUsage },
  { name: 'DOCTOR', arity: 2, help: ['DOCTOR', '    Return memory problems reports.'], handler: memoryDoctor },
  { ...helpSubcommand(PRINT_HELP), arity: 2 },
]

// No HELP: MODULE HELP answers as an unknown subcommand.
const MODULE_SUBCOMMANDS: readonly SubcommandSpec[] = [
  { name: 'LIST', arity: 2, handler: moduleList },
  { name: 'LOAD', arity: -3, handler: moduleLoad },
  { name: 'UNLOAD', arity: 3, handler: moduleLoad },
  { name: 'LOADEX', arity: -3, handler: moduleLoad },
]

// redis 7.0 pubsub.c pubsubCommand's HELP order; its HELP takes no argument (arity 2).
const PUBSUB_SUBCOMMANDS: readonly SubcommandSpec[] = [
  { name: 'CHANNELS', arity: -2, help: ['CHANNELS [<pattern>]', "    Return the currently active channels matching a <pattern> (default: '*')."], handler: pubsubChannels },
  { name: 'NUMPAT', arity: 2, help: ['NUMPAT', '    Return number of subscriptions to patterns.'], handler: pubsubNumpat },
  { name: 'NUMSUB', arity: -2, help: ['NUMSUB [<channel> ...]', '    Return the number of subscribers for the specified channels, excluding', '    pattern subscriptions(default: no channels).'], handler: pubsubNumsub },
  { name: 'SHARDCHANNELS', arity: -2, help: ['SHARDCHANNELS [<pattern>]', "    Return the currently active shard level channels matching a <pattern> (default: '*')."], handler: pubsubShardchannels },
  { name: 'SHARDNUMSUB', arity: -2, help: ['SHARDNUMSUB [<shardchannel> ...]', '    Return the number of subscribers for the specified shard level channel(s)'], handler: pubsubShardnumsub },
  { ...helpSubcommand(PRINT_HELP.map((line) => line.replace('Print ', 'Prints '))), arity: 2 },
]
// redis 7.0 slowlog.c slowlogCommand's HELP; GET checks its count of arguments in the handler.
const SLOWLOG_SUBCOMMANDS: readonly SubcommandSpec[] = [
  {
    name: 'GET', arity: -2, handler: slowlogGet,
    help: ['GET [<count>]', '    Return top <count> entries from the slowlog (default: 10, -1 mean all).', '    Entries are made of:',
      '    id, timestamp, time in microseconds, arguments array, client IP and port,', '    client name'],
  },
  { name: 'LEN', arity: 2, help: ['LEN', '    Return the length of the slowlog.'], handler: slowlogLen },
  { name: 'RESET', arity: 2, help: ['RESET', '    Reset the slowlog.'], handler: slowlogReset },
  { ...helpSubcommand(PRINT_HELP), arity: 2 },
]
// redis 7.0 latency.c latencyCommand's HELP.
const LATENCY_SUBCOMMANDS: readonly SubcommandSpec[] = [
  { name: 'DOCTOR', arity: 2, help: ['DOCTOR', '    Return a human readable latency analysis report.'], handler: latencyDoctor },
  { name: 'GRAPH', arity: 3, help: ['GRAPH <event>', '    Return an ASCII latency graph for the <event> class.'], handler: latencyGraph },
  { name: 'HISTORY', arity: 3, help: ['HISTORY <event>', '    Return time-latency samples for the <event> class.'], handler: latencyHistory },
  { name: 'LATEST', arity: 2, help: ['LATEST', '    Return the latest latency samples for all events.'], handler: latencyLatest },
  { name: 'RESET', arity: -2, help: ['RESET [<event> ...]', '    Reset latency data of one or more <event> classes.', '    (default: reset all data for all event classes)'], handler: latencyReset },
  {
    name: 'HISTOGRAM', arity: -2, handler: latencyHistogram,
    help: ['HISTOGRAM [COMMAND ...]', '    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.',
      '    If no commands are specified then all histograms are replied.'],
  },
  { ...helpSubcommand(PRINT_HELP), arity: 2 },
]
const SUBSCRIBING = ['pubsub', 'noscript', 'loading', 'stale'] as const

export const BUILTIN_COMMANDS: readonly CommandSpec[] = [
  // RedisBloom 2.4 (src/rebloom.c RedisModule_OnLoad); arity as each handler checks it, reported as -1.
  { name: 'BF.RESERVE', arity: -4, maxArgs: 7, flags: BF_WRITE, ...BF, since: '1.0.0', summary: 'Creates a new Bloom Filter', handler: bfReserve },
  { name: 'BF.ADD', arity: 3, flags: BF_WRITE, ...BF, since: '1.0.0', summary: 'Adds an item to a Bloom Filter', handler: bfAdd, answersTogether: true },
  { name: 'BF.MADD', arity: -3, flags: BF_WRITE, ...BF, since: '1.0.0', summary: 'Adds one or more items to a Bloom Filter. A filter will be created if it does not exist', handler: bfMadd },
  { name: 'BF.INSERT', arity: -4, flags: BF_WRITE, ...BF, since: '1.0.0', summary: 'Adds one or more items to a Bloom Filter. A filter will be created if it does not exist', handler: bfInsert },
  { name: 'BF.EXISTS', arity: 3, flags: BF_READ, ...BF, since: '1.0.0', summary: 'Checks whether an item exists in a Bloom Filter', handler: bfExists, answersTogether: true },
  { name: 'BF.MEXISTS', arity: -3, flags: BF_READ, ...BF, since: '1.0.0', summary: 'Checks whether one or more items exist in a Bloom Filter', handler: bfMexists },
  { name: 'BF.INFO', arity: -2, maxArgs: 3, flags: BF_READ, ...BF, since: '1.0.0', summary: 'Returns information about a Bloom Filter', handler: bfInfo },
  { name: 'BF.CARD', arity: 2, flags: BF_READ, ...BF, since: '2.4.4', summary: 'Returns the cardinality of a Bloom filter', handler: bfCard },
  { name: 'BF.DEBUG', arity: 2, flags: BF_READ, ...BF, since: '1.0.0', summary: 'Returns the size and the layers of a Bloom Filter, one line each', handler: bfDebug },
  { name: 'BF.SCANDUMP', arity: 3, flags: BF_READ, ...BF, since: '1.0.0', summary: 'Begins an incremental save of the bloom filter', handler: bfScandump },
  { name: 'BF.LOADCHUNK', arity: 4, flags: BF_WRITE, ...BF, since: '1.0.0', summary: 'Restores a filter previously saved using SCANDUMP', handler: bfLoadchunk },
  // bfs's own (RedisBloom has none). Reported with arity -1 as every BF.* command. Not 'module':
  // WATCH then sees only the destination change (dispatch compares entries), where a module
  // command touches every key it names, its sources included.
  { name: 'BF.MERGE', arity: -3, reportedArity: -1, flags: ['write', 'denyoom'], keys: [1, -1, 1], group: 'bf', since: '2.4.0', summary: 'Merges Bloom filters reserved alike into a destination key (bfs)', handler: bfMerge },
  { name: 'BF.SAVE', arity: 3, flags: ['readonly', 'admin', 'module'], ...BF, since: '2.4.0', summary: 'Writes a filter to a header-plus-bitmap file under dir (bfs)', handler: bfSave },
  { name: 'BFS.HEALTH', arity: 2, flags: BF_READ, ...BF, since: '2.4.0', summary: "Returns a filter's fill, estimated false-positive rate and verdict (bfs)", handler: bfsHealth },
  { name: 'BF.LOAD', arity: -3, maxArgs: 4, flags: ['write', 'denyoom', 'admin', 'module'], ...BF, since: '2.4.0', summary: 'Reads a filter from a header-plus-bitmap file under dir (bfs)', handler: bfLoad },
  // bfs's sliding-window filters (commands/filters/window.ts): APBF.RESERVE, APBF.ADD, APBF.ADDAT, APBF.EXISTS, APBF.INFO
  ...WINDOW_COMMANDS,
  ...CUCKOO_COMMANDS,

  // Keyspace.
  { name: 'DEL', arity: -2, flags: ['write'], keys: [1, -1, 1], group: 'generic', since: '1.0.0', summary: 'Deletes one or more keys.', handler: del },
  { name: 'UNLINK', arity: -2, flags: ['write', 'fast'], keys: [1, -1, 1], group: 'generic', since: '4.0.0', summary: 'Asynchronously deletes one or more keys.', handler: del },
  { name: 'EXISTS', arity: -2, flags: ['readonly', 'fast'], keys: [1, -1, 1], group: 'generic', since: '1.0.0', summary: 'Determines whether one or more keys exist.', handler: exists },
  { name: 'TYPE', arity: 2, flags: ['readonly', 'fast'], keys: [1, 1, 1], group: 'generic', since: '1.0.0', summary: 'Determines the type of value stored at a key.', handler: type },
  ...EXPIRY_COMMANDS, // EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT, PERSIST, TTL, PTTL, EXPIRETIME, PEXPIRETIME
  { name: 'RENAME', arity: 3, flags: ['write'], keys: [1, 2, 1], group: 'generic', since: '1.0.0', summary: 'Renames a key and overwrites the destination.', handler: rename },
  { name: 'MOVE', arity: 3, flags: ['write', 'fast'], keys: [1, 1, 1], group: 'generic', since: '1.0.0', summary: 'Moves a key to another database.', handler: move },
  { name: 'RENAMENX', arity: 3, flags: ['write', 'fast'], keys: [1, 2, 1], group: 'generic', since: '1.0.0', summary: "Renames a key only when the target key name doesn't exist.", handler: renamenx },
  { name: 'KEYS', arity: 2, flags: ['readonly'], keys: NO_KEYS, group: 'generic', since: '1.0.0', summary: 'Returns all key names that match a pattern.', handler: keys },
  { name: 'SCAN', arity: -2, flags: ['readonly'], keys: NO_KEYS, group: 'generic', since: '2.8.0', summary: 'Iterates over the key names in the database.', handler: scan },
  { name: 'RANDOMKEY', arity: 1, flags: ['readonly'], keys: NO_KEYS, group: 'generic', since: '1.0.0', summary: 'Returns a random key name from the database.', handler: randomkey },
  { name: 'DBSIZE', arity: 1, flags: ['readonly', 'fast'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Returns the number of keys in the database.', handler: dbsize },
  { name: 'FLUSHALL', arity: -1, flags: ['write'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Removes all keys from all databases.', handler: flushall },
  { name: 'FLUSHDB', arity: -1, flags: ['write'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Remove all keys from the current database.', handler: flushdb },
  { name: 'SWAPDB', arity: 3, flags: ['write', 'fast'], keys: NO_KEYS, group: 'server', since: '4.0.0', summary: 'Swaps two Redis databases.', handler: swapdb },
  ...MIGRATION_COMMANDS, // DUMP, RESTORE, RESTORE-ASKING, MIGRATE, BFS.RESTORE-PART (commands/migration/migration-commands.ts)
  { name: 'MEMORY', arity: -2, flags: ['readonly'], keys: NO_KEYS, group: 'server', since: '4.0.0', summary: 'Memory usage of a key: MEMORY USAGE key.', handler: containerOnly, subcommands: MEMORY_SUBCOMMANDS },

  // Connection.
  { name: 'PING', arity: -1, maxArgs: 2, flags: ['fast', 'loading', 'stale'], keys: NO_KEYS, group: 'connection', since: '1.0.0', summary: 'Returns the server\'s liveliness response.', handler: ping },
  { name: 'ECHO', arity: 2, flags: ['fast', 'loading', 'stale'], keys: NO_KEYS, group: 'connection', since: '1.0.0', summary: 'Returns the given string.', handler: echo },
  { name: 'QUIT', arity: -1, flags: ['fast', 'loading', 'stale', 'no_auth'], keys: NO_KEYS, group: 'connection', since: '1.0.0', summary: 'Closes the connection.', roles: ['unqueued', 'oom_exempt'], handler: quit },
  { name: 'HELLO', arity: -1, flags: ['fast', 'loading', 'stale', 'no_auth'], keys: NO_KEYS, group: 'connection', since: '6.0.0', summary: 'Handshakes with the Redis server.', handler: hello },
  { name: 'AUTH', arity: -2, flags: ['fast', 'loading', 'stale', 'no_auth'], keys: NO_KEYS, group: 'connection', since: '1.0.0', summary: 'Authenticates the connection.', handler: auth },
  { name: 'SELECT', arity: 2, flags: ['fast', 'loading', 'stale'], keys: NO_KEYS, group: 'connection', since: '1.0.0', summary: 'Changes the selected database.', handler: select },
  { name: 'RESET', arity: 1, flags: ['fast', 'loading', 'stale', 'no_auth'], keys: NO_KEYS, group: 'connection', since: '6.2.0', summary: 'Resets the connection.', roles: ['unqueued', 'oom_exempt'], handler: reset },
  { name: 'CLIENT', arity: -2, flags: ['loading', 'stale'], keys: NO_KEYS, group: 'connection', since: '2.4.0', summary: 'A container for client connection commands.', handler: containerOnly, subcommands: CLIENT_SUBCOMMANDS },

  // Transactions (redis 7.0 multi.c). EXEC's handler is never called: dispatch runs it, since it
  // runs the queued commands as dispatch does.
  { name: 'MULTI', arity: 1, flags: ['noscript', 'loading', 'stale', 'fast', 'allow_busy'], keys: NO_KEYS, group: 'transactions', since: '1.2.0', summary: 'Starts a transaction.', roles: ['unqueued'], handler: multi },
  { name: 'EXEC', arity: 1, flags: ['noscript', 'loading', 'stale', 'skip_slowlog'], keys: NO_KEYS, group: 'transactions', since: '1.2.0', summary: 'Executes all commands in a transaction.', roles: ['unqueued', 'oom_exempt', 'exec'], handler: () => {} },
  { name: 'DISCARD', arity: 1, flags: ['noscript', 'loading', 'stale', 'fast', 'allow_busy'], keys: NO_KEYS, group: 'transactions', since: '2.0.0', summary: 'Discards a transaction.', roles: ['unqueued', 'oom_exempt'], handler: discard },
  { name: 'WATCH', arity: -2, flags: ['noscript', 'loading', 'stale', 'fast', 'allow_busy'], keys: [1, -1, 1], group: 'transactions', since: '2.2.0', summary: 'Monitors changes to keys to determine the execution of a transaction.', roles: ['unqueued'], handler: watch },
  { name: 'UNWATCH', arity: 1, flags: ['noscript', 'loading', 'stale', 'fast', 'allow_busy'], keys: NO_KEYS, group: 'transactions', since: '2.2.0', summary: 'Forgets about watched keys of a transaction.', handler: unwatch },

  // Pub/sub (redis 7.0 pubsub.c).
  { name: 'SUBSCRIBE', arity: -2, flags: SUBSCRIBING, keys: NO_KEYS, group: 'pubsub', since: '2.0.0', summary: 'Listen for messages published to the given channels', handler: subscribe },
  { name: 'PSUBSCRIBE', arity: -2, flags: SUBSCRIBING, keys: NO_KEYS, group: 'pubsub', since: '2.0.0', summary: 'Listen for messages published to channels matching the given patterns', handler: psubscribe },
  { name: 'SSUBSCRIBE', arity: -2, flags: SUBSCRIBING, keys: [1, -1, 1], group: 'pubsub', since: '7.0.0', summary: 'Listen for messages published to the given shard channels', handler: ssubscribe },
  { name: 'UNSUBSCRIBE', arity: -1, flags: SUBSCRIBING, keys: NO_KEYS, group: 'pubsub', since: '2.0.0', summary: 'Stop listening for messages posted to the given channels', handler: unsubscribe },
  { name: 'PUNSUBSCRIBE', arity: -1, flags: SUBSCRIBING, keys: NO_KEYS, group: 'pubsub', since: '2.0.0', summary: 'Stop listening for messages posted to channels matching the given patterns', handler: punsubscribe },
  { name: 'SUNSUBSCRIBE', arity: -1, flags: SUBSCRIBING, keys: [1, -1, 1], group: 'pubsub', since: '7.0.0', summary: 'Stop listening for messages posted to the given shard channels', handler: sunsubscribe },
  { name: 'PUBLISH', arity: 3, flags: ['pubsub', 'loading', 'stale', 'fast'], keys: NO_KEYS, group: 'pubsub', since: '2.0.0', summary: 'Post a message to a channel', handler: publish },
  { name: 'SPUBLISH', arity: 3, flags: ['pubsub', 'loading', 'stale', 'fast'], keys: [1, 1, 1], group: 'pubsub', since: '7.0.0', summary: 'Post a message to a shard channel', handler: spublish },
  { name: 'PUBSUB', arity: -2, flags: ['loading', 'stale'], keys: NO_KEYS, group: 'pubsub', since: '2.8.0', summary: 'A container for Pub/Sub commands', handler: containerOnly, subcommands: PUBSUB_SUBCOMMANDS },

  // Server.
  { name: 'COMMAND', arity: -1, flags: ['loading', 'stale'], keys: NO_KEYS, group: 'server', since: '2.8.13', summary: 'Returns detailed information about all commands.', handler: command, help: ['(no subcommand)', '    Return details about all Redis commands.'], subcommands: COMMAND_SUBCOMMANDS },
  { name: 'INFO', arity: -1, flags: ['loading', 'stale'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Returns information and statistics about the server.', handler: info },
  { name: 'CONFIG', arity: -2, flags: ['admin', 'loading', 'stale'], keys: NO_KEYS, group: 'server', since: '2.0.0', summary: 'A container for server configuration commands.', handler: containerOnly, subcommands: CONFIG_SUBCOMMANDS },
  { name: 'MONITOR', arity: 1, flags: ['admin', 'noscript', 'loading', 'stale'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Listen for all requests received by the server in real time', handler: monitor },
  { name: 'SLOWLOG', arity: -2, flags: ['admin', 'loading', 'stale'], keys: NO_KEYS, group: 'server', since: '2.2.12', summary: 'A container for slow log commands.', handler: containerOnly, subcommands: SLOWLOG_SUBCOMMANDS },
  { name: 'DEBUG', arity: -2, flags: ['admin', 'noscript', 'loading', 'stale'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'A container for debugging commands.', handler: debug },
  { name: 'LATENCY', arity: -2, flags: ['admin', 'noscript', 'loading', 'stale'], keys: NO_KEYS, group: 'server', since: '2.8.13', summary: 'A container for latency diagnostics commands.', handler: containerOnly, subcommands: LATENCY_SUBCOMMANDS },
  { name: 'TIME', arity: 1, flags: ['loading', 'stale', 'fast'], keys: NO_KEYS, group: 'server', since: '2.6.0', summary: 'Returns the server time.', handler: time },
  { name: 'MODULE', arity: -2, flags: ['admin', 'noscript'], keys: NO_KEYS, group: 'server', since: '4.0.0', summary: 'A container for module commands (LIST).', handler: containerOnly, subcommands: MODULE_SUBCOMMANDS },
  { name: 'BGREWRITEAOF', arity: 1, flags: ['admin', 'noscript'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Asynchronously rewrites the append-only file to disk.', handler: bgrewriteaof },
  { name: 'SAVE', arity: 1, flags: ['admin', 'noscript', 'no_multi'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Synchronously saves the database(s) to disk.', handler: save },
  { name: 'BGSAVE', arity: -1, maxArgs: 2, flags: ['admin', 'noscript'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Asynchronously saves the database(s) to disk.', handler: bgsave },
  { name: 'LASTSAVE', arity: 1, flags: ['loading', 'stale', 'fast'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Returns the Unix timestamp of the last successful save to disk.', handler: lastsave },
  // Replication (redis 7.0 commands/*.json).
  { name: 'REPLCONF', arity: -1, flags: ['admin', 'noscript', 'loading', 'stale', 'allow_busy'], keys: NO_KEYS, group: 'server', since: '3.0.0', summary: 'An internal command for configuring the replication stream.', handler: replconf },
  { name: 'PSYNC', arity: -3, flags: ['admin', 'noscript', 'no_multi'], keys: NO_KEYS, group: 'server', since: '2.8.0', summary: 'An internal command used in replication.', handler: psync },
  { name: 'SYNC', arity: 1, flags: ['admin', 'noscript', 'no_multi'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'An internal command used in replication.', handler: sync },
  { name: 'WAIT', arity: 3, flags: ['noscript'], keys: NO_KEYS, group: 'generic', since: '3.0.0', summary: 'Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed.', handler: wait },
  // Replication (redis 7.0 commands.def: REPLICAOF and SLAVEOF are the same command).
  { name: 'REPLICAOF', arity: 3, flags: ['admin', 'noscript', 'stale'], keys: NO_KEYS, group: 'server', since: '5.0.0', summary: 'Configures a server as replica of another, or promotes it to a master.', handler: replicaof },
  { name: 'SLAVEOF', arity: 3, flags: ['admin', 'noscript', 'stale'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Sets a Redis server as a replica of another, or promotes it to being a master.', handler: replicaof },
  { name: 'ROLE', arity: 1, flags: ['noscript', 'loading', 'stale', 'fast'], keys: NO_KEYS, group: 'server', since: '2.8.12', summary: 'Returns the replication role.', handler: role },
  // Access control (acl.ts).
  ACL_COMMAND,
  // Cluster mode (cluster.ts): CLUSTER, READONLY, READWRITE, ASKING.
  ...CLUSTER_COMMANDS,
  { name: 'SHUTDOWN', arity: -1, flags: ['admin', 'loading', 'stale', 'noscript', 'no_multi'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Synchronously saves the database(s) to disk and shuts down the server.', handler: shutdown },
]
