/**
 * Every built-in command, declared once. Dispatch checks arity, authentication and loading from
 * these rows; COMMAND and INFO commandstats are generated from them. Flags as redis 7.0 and
 * RedisBloom 2.4 register them ("write deny-oom" / "readonly fast" for BF.*).
 */
import type { CommandSpec } from './table.js'
import { bfAdd, bfCard, bfExists, bfInfo, bfInsert, bfMadd, bfMexists, bfReserve } from './bloom.js'
import { bfLoadchunk, bfScandump } from './dump.js'
import { bgrewriteaof } from './append-log.js'
import { bfLoad, bfSave, bgsave, lastsave, save } from './persistence.js'
import { dbsize, del, exists, flushall, keys, memory, randomkey, rename, renamenx, scan, ttl, type } from './keyspace.js'
import { auth, client, echo, hello, ping, quit, reset, select } from './connection.js'
import { command, config, info, module, shutdown, time } from './server.js'
import { discard, multi, unwatch, watch } from './transaction.js'

const BF_WRITE = ['write', 'denyoom', 'module'] as const
const BF_READ = ['readonly', 'fast', 'module'] as const
const BF_KEYS = [1, 1, 1] as const
const NO_KEYS = [0, 0, 0] as const

export const BUILTIN_COMMANDS: readonly CommandSpec[] = [
  // RedisBloom 2.4 (src/rebloom.c RedisModule_OnLoad); arity as each handler checks it.
  { name: 'BF.RESERVE', arity: -4, maxArgs: 7, flags: BF_WRITE, keys: BF_KEYS, group: 'bf', since: '1.0.0', summary: 'Creates a new Bloom Filter', handler: bfReserve },
  { name: 'BF.ADD', arity: 3, flags: BF_WRITE, keys: BF_KEYS, group: 'bf', since: '1.0.0', summary: 'Adds an item to a Bloom Filter', handler: bfAdd },
  { name: 'BF.MADD', arity: -3, flags: BF_WRITE, keys: BF_KEYS, group: 'bf', since: '1.0.0', summary: 'Adds one or more items to a Bloom Filter. A filter will be created if it does not exist', handler: bfMadd },
  { name: 'BF.INSERT', arity: -4, flags: BF_WRITE, keys: BF_KEYS, group: 'bf', since: '1.0.0', summary: 'Adds one or more items to a Bloom Filter. A filter will be created if it does not exist', handler: bfInsert },
  { name: 'BF.EXISTS', arity: 3, flags: BF_READ, keys: BF_KEYS, group: 'bf', since: '1.0.0', summary: 'Checks whether an item exists in a Bloom Filter', handler: bfExists },
  { name: 'BF.MEXISTS', arity: -3, flags: BF_READ, keys: BF_KEYS, group: 'bf', since: '1.0.0', summary: 'Checks whether one or more items exist in a Bloom Filter', handler: bfMexists },
  { name: 'BF.INFO', arity: -2, maxArgs: 3, flags: BF_READ, keys: BF_KEYS, group: 'bf', since: '1.0.0', summary: 'Returns information about a Bloom Filter', handler: bfInfo },
  { name: 'BF.CARD', arity: 2, flags: BF_READ, keys: BF_KEYS, group: 'bf', since: '2.4.4', summary: 'Returns the cardinality of a Bloom filter', handler: bfCard },
  { name: 'BF.SCANDUMP', arity: 3, flags: BF_READ, keys: BF_KEYS, group: 'bf', since: '1.0.0', summary: 'Begins an incremental save of the bloom filter', handler: bfScandump },
  { name: 'BF.LOADCHUNK', arity: 4, flags: BF_WRITE, keys: BF_KEYS, group: 'bf', since: '1.0.0', summary: 'Restores a filter previously saved using SCANDUMP', handler: bfLoadchunk },
  { name: 'BF.SAVE', arity: 3, flags: ['readonly', 'admin', 'module'], keys: BF_KEYS, group: 'bf', since: '2.4.0', summary: 'Writes a filter to a header-plus-bitmap file under dir (bfs)', handler: bfSave },
  { name: 'BF.LOAD', arity: -3, maxArgs: 4, flags: ['write', 'denyoom', 'admin', 'module'], keys: BF_KEYS, group: 'bf', since: '2.4.0', summary: 'Reads a filter from a header-plus-bitmap file under dir (bfs)', handler: bfLoad },

  // Keyspace.
  { name: 'DEL', arity: -2, flags: ['write'], keys: [1, -1, 1], group: 'generic', since: '1.0.0', summary: 'Deletes one or more keys.', handler: del },
  { name: 'UNLINK', arity: -2, flags: ['write', 'fast'], keys: [1, -1, 1], group: 'generic', since: '4.0.0', summary: 'Asynchronously deletes one or more keys.', handler: del },
  { name: 'EXISTS', arity: -2, flags: ['readonly', 'fast'], keys: [1, -1, 1], group: 'generic', since: '1.0.0', summary: 'Determines whether one or more keys exist.', handler: exists },
  { name: 'TYPE', arity: 2, flags: ['readonly', 'fast'], keys: [1, 1, 1], group: 'generic', since: '1.0.0', summary: 'Determines the type of value stored at a key.', handler: type },
  { name: 'TTL', arity: 2, flags: ['readonly', 'fast'], keys: [1, 1, 1], group: 'generic', since: '1.0.0', summary: 'Returns the expiration time in seconds of a key.', handler: ttl },
  { name: 'PTTL', arity: 2, flags: ['readonly', 'fast'], keys: [1, 1, 1], group: 'generic', since: '2.6.0', summary: 'Returns the expiration time in milliseconds of a key.', handler: ttl },
  { name: 'RENAME', arity: 3, flags: ['write'], keys: [1, 2, 1], group: 'generic', since: '1.0.0', summary: 'Renames a key and overwrites the destination.', handler: rename },
  { name: 'RENAMENX', arity: 3, flags: ['write', 'fast'], keys: [1, 2, 1], group: 'generic', since: '1.0.0', summary: "Renames a key only when the target key name doesn't exist.", handler: renamenx },
  { name: 'KEYS', arity: 2, flags: ['readonly'], keys: NO_KEYS, group: 'generic', since: '1.0.0', summary: 'Returns all key names that match a pattern.', handler: keys },
  { name: 'SCAN', arity: -2, flags: ['readonly'], keys: NO_KEYS, group: 'generic', since: '2.8.0', summary: 'Iterates over the key names in the database.', handler: scan },
  { name: 'RANDOMKEY', arity: 1, flags: ['readonly'], keys: NO_KEYS, group: 'generic', since: '1.0.0', summary: 'Returns a random key name from the database.', handler: randomkey },
  { name: 'DBSIZE', arity: 1, flags: ['readonly', 'fast'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Returns the number of keys in the database.', handler: dbsize },
  { name: 'FLUSHALL', arity: -1, flags: ['write'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Removes all keys from all databases.', handler: flushall },
  { name: 'FLUSHDB', arity: -1, flags: ['write'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Remove all keys from the current database.', handler: flushall },
  { name: 'MEMORY', arity: -2, flags: ['readonly'], keys: NO_KEYS, group: 'server', since: '4.0.0', summary: 'Memory usage of a key: MEMORY USAGE key.', handler: memory },

  // Connection.
  { name: 'PING', arity: -1, maxArgs: 2, flags: ['fast', 'loading', 'stale'], keys: NO_KEYS, group: 'connection', since: '1.0.0', summary: 'Returns the server\'s liveliness response.', handler: ping },
  { name: 'ECHO', arity: 2, flags: ['fast', 'loading', 'stale'], keys: NO_KEYS, group: 'connection', since: '1.0.0', summary: 'Returns the given string.', handler: echo },
  { name: 'QUIT', arity: -1, flags: ['fast', 'loading', 'stale', 'no_auth'], keys: NO_KEYS, group: 'connection', since: '1.0.0', summary: 'Closes the connection.', handler: quit },
  { name: 'HELLO', arity: -1, flags: ['fast', 'loading', 'stale', 'no_auth'], keys: NO_KEYS, group: 'connection', since: '6.0.0', summary: 'Handshakes with the Redis server.', handler: hello },
  { name: 'AUTH', arity: -2, flags: ['fast', 'loading', 'stale', 'no_auth'], keys: NO_KEYS, group: 'connection', since: '1.0.0', summary: 'Authenticates the connection.', handler: auth },
  { name: 'SELECT', arity: 2, flags: ['fast', 'loading', 'stale'], keys: NO_KEYS, group: 'connection', since: '1.0.0', summary: 'Changes the selected database (bfs has only 0).', handler: select },
  { name: 'RESET', arity: 1, flags: ['fast', 'loading', 'stale', 'no_auth'], keys: NO_KEYS, group: 'connection', since: '6.2.0', summary: 'Resets the connection.', handler: reset },
  { name: 'CLIENT', arity: -2, flags: ['loading', 'stale'], keys: NO_KEYS, group: 'connection', since: '2.4.0', summary: 'A container for client connection commands.', handler: client },

  // Transactions (redis 7.0 multi.c). EXEC's handler is never called: dispatch runs it, since it
  // runs the queued commands as dispatch does.
  { name: 'MULTI', arity: 1, flags: ['noscript', 'loading', 'stale', 'fast', 'allow_busy'], keys: NO_KEYS, group: 'transactions', since: '1.2.0', summary: 'Starts a transaction.', handler: multi },
  { name: 'EXEC', arity: 1, flags: ['noscript', 'loading', 'stale', 'skip_slowlog'], keys: NO_KEYS, group: 'transactions', since: '1.2.0', summary: 'Executes all commands in a transaction.', handler: () => {} },
  { name: 'DISCARD', arity: 1, flags: ['noscript', 'loading', 'stale', 'fast', 'allow_busy'], keys: NO_KEYS, group: 'transactions', since: '2.0.0', summary: 'Discards a transaction.', handler: discard },
  { name: 'WATCH', arity: -2, flags: ['noscript', 'loading', 'stale', 'fast', 'allow_busy'], keys: [1, -1, 1], group: 'transactions', since: '2.2.0', summary: 'Monitors changes to keys to determine the execution of a transaction.', handler: watch },
  { name: 'UNWATCH', arity: 1, flags: ['noscript', 'loading', 'stale', 'fast', 'allow_busy'], keys: NO_KEYS, group: 'transactions', since: '2.2.0', summary: 'Forgets about watched keys of a transaction.', handler: unwatch },

  // Server.
  { name: 'COMMAND', arity: -1, flags: ['loading', 'stale'], keys: NO_KEYS, group: 'server', since: '2.8.13', summary: 'Returns detailed information about all commands.', handler: command },
  { name: 'INFO', arity: -1, flags: ['loading', 'stale'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Returns information and statistics about the server.', handler: info },
  { name: 'CONFIG', arity: -2, flags: ['admin', 'loading', 'stale'], keys: NO_KEYS, group: 'server', since: '2.0.0', summary: 'A container for server configuration commands.', handler: config },
  { name: 'TIME', arity: 1, flags: ['loading', 'stale', 'fast'], keys: NO_KEYS, group: 'server', since: '2.6.0', summary: 'Returns the server time.', handler: time },
  { name: 'MODULE', arity: -2, flags: ['admin', 'noscript'], keys: NO_KEYS, group: 'server', since: '4.0.0', summary: 'A container for module commands (LIST).', handler: module },
  { name: 'BGREWRITEAOF', arity: 1, flags: ['admin', 'noscript'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Asynchronously rewrites the append-only file to disk.', handler: bgrewriteaof },
  { name: 'SAVE', arity: 1, flags: ['admin', 'noscript', 'no_multi'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Synchronously saves the database(s) to disk.', handler: save },
  { name: 'BGSAVE', arity: -1, maxArgs: 2, flags: ['admin', 'noscript'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Asynchronously saves the database(s) to disk.', handler: bgsave },
  { name: 'LASTSAVE', arity: 1, flags: ['loading', 'stale', 'fast'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Returns the Unix timestamp of the last successful save to disk.', handler: lastsave },
  { name: 'SHUTDOWN', arity: -1, flags: ['admin', 'loading', 'stale', 'noscript', 'no_multi'], keys: NO_KEYS, group: 'server', since: '1.0.0', summary: 'Synchronously saves the database(s) to disk and shuts down the server.', handler: shutdown },
]
