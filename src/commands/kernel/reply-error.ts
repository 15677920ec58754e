/**
 * Error replies: one class thrown by argument parsing and handlers, caught once in dispatch, and
 * the catalogue of exact wire texts. Each text is copied from the source named beside it so a
 * client cannot tell bfs from redis-server 7.0 with RedisBloom 2.4.
 */
import { MAX_KEY_BYTES } from '../../store/registry.js'
import type { FilterErrorCode } from '../../core/filter-error.js'
import type { MergeMismatch } from '../../core/merge.js'

/**
 * An error reply. `message` is the whole text after the '-', code word included. `encoding` is
 * 'latin1' when the text quotes a client's argument decoded one character per byte, so that the
 * reply carries those bytes unchanged, as redis does (non-UTF-8 bytes included).
 */
export class ReplyError extends Error {
  constructor(message: string, readonly encoding: 'utf8' | 'latin1' = 'utf8') {
    super(message)
    this.name = 'ReplyError'
  }
}

/** Wire texts, each as its source writes it. */
export const ERR = {
  // redis 7.0 server.c shared.syntaxerr and friends
  SYNTAX: 'ERR syntax error',
  NOT_INTEGER: 'ERR value is not an integer or out of range',
  NOT_FLOAT: 'ERR value is not a valid float',
  NO_SUCH_KEY: 'ERR no such key',
  WRONG_TYPE: 'WRONGTYPE Operation against a key holding the wrong kind of value',
  DB_INDEX_OUT_OF_RANGE: 'ERR DB index is out of range',
  // RedisBloom 2.4 src/rebloom.c statusStrerror()
  NOT_FOUND: 'ERR not found',
  ITEM_EXISTS: 'ERR item exists',
  // RedisBloom 2.4 src/rebloom.c BFReserve_RedisCommand
  BAD_ERROR_RATE: 'ERR bad error rate',
  ERROR_RATE_RANGE: 'ERR (0 < error rate range < 1) ',
  BAD_CAPACITY: 'ERR bad capacity',
  CAPACITY_RANGE: 'ERR (capacity should be larger than 0)',
  NO_EXPANSION: 'ERR no expansion',
  BAD_EXPANSION: 'ERR bad expansion',
  NONSCALING_EXPAND: 'Nonscaling filters cannot expand',
  COULD_NOT_CREATE: 'ERR could not create filter',
  // RedisBloom 2.4 src/rebloom.c BFInsert_RedisCommand
  INSERT_BAD_ERROR_RATE: 'Bad error rate',
  INSERT_BAD_EXPANSION: 'Bad expansion',
  INSERT_BAD_CAPACITY: 'Bad capacity',
  INSERT_UNKNOWN_ARGUMENT: 'Unknown argument received',
  INSERT_BAD_ARGUMENT: 'Bad argument received',
  // RedisBloom 2.4 src/rebloom.c BFInfo_RedisCommand
  INVALID_INFO_VALUE: 'Invalid information value',
  // RedisBloom 2.4 src/rebloom.c BFScanDump_RedisCommand / BFLoadChunk_RedisCommand
  SCANDUMP_ITERATOR: 'Second argument must be numeric',
  LOADCHUNK_ITERATOR: 'ERR Second argument must be numeric',
  // RedisBloom 2.4 src/sb.c SB_NewChainFromHeader / SBChain_LoadEncodedChunk
  RECEIVED_BAD_DATA: 'ERR received bad data',
  INVALID_OFFSET: 'ERR invalid offset - no link found',
  CHUNK_TOO_BIG: 'ERR invalid chunk - Too big for current filter',
  // RedisBloom 2.4 src/rebloom.c, the CF.* commands
  CF_CAPACITY_TOO_SMALL: 'Capacity must be at least (BucketSize * 2)',
  CF_INSUFFICIENT_MEMORY: 'ERR Insufficient memory to create filter',
  CF_FULL: 'Filter is full',
  CF_ALLOCATION_FAILURE: 'Memory allocation failure',
  CF_MAX_EXPANSIONS: 'Maximum expansions reached',
  CF_NOT_FOUND: 'Not found',
  CF_COMPACT_NOT_FOUND: 'Cuckoo filter was not found',
  CF_INVALID_POSITION: 'Invalid position',
  CF_INVALID_HEADER: 'Invalid header',
  CF_COULD_NOT_CREATE: "Couldn't create filter!",
  CF_COULD_NOT_LOAD: "Couldn't load chunk!",
  // bfs: a filter loaded from an original-library file hashes with a seed RedisBloom cannot carry
  NOT_DUMPABLE: 'ERR this filter uses seeded hashing and cannot be dumped',
  // bfs: a filter that would pass the configured size limit (RedisBloom has none, issue #699)
  FILTER_TOO_LARGE: 'ERR filter would exceed the maximum filter size',
  // bfs: keys are held as latin1 strings, and V8's longest string has 2^29 - 24 characters,
  // 24 bytes short of proto-max-bulk-len's 512 MB (redis takes such a key)
  KEY_TOO_LONG: `ERR key or name longer than ${MAX_KEY_BYTES} bytes`,
  INTERNAL: 'ERR internal error',
  // redis 7.0.15 networking.c clientAcceptHandler (its "Setup a an" included)
  PROTECTED_MODE_DENIED:
    "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. " +
    'In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you ' +
    "may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface " +
    'by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. ' +
    'Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, ' +
    "and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it " +
    "with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above " +
    'things in order for the server to start accepting connections from the outside.',
} as const

/** Core outcomes mapped to wire text (RedisBloom 2.4 src/rebloom.c bfInsertCommon). */
export const FILTER_ERROR_TEXT: Record<FilterErrorCode, string> = {
  'non-scaling-full': 'ERR non scaling filter is full',
  'too-large': ERR.FILTER_TOO_LARGE,
}

/**
 * bfs BF.MERGE: sources not reserved alike, naming what differs and the two keys, e.g.
 * `ERR filters differ in capacity (src1 has 1000, src2 has 2000)`; a difference in a later layer
 * names it: `... in capacity of layer 2 (...)`. Keys are latin1 strings (reply with 'latin1').
 */
export function mergeMismatchText(mismatch: MergeMismatch, firstKey: string, otherKey: string): string {
  const where = mismatch.layer === 0 ? '' : ` of layer ${mismatch.layer + 1}`
  return `ERR filters differ in ${mismatch.field}${where} (${firstKey} has ${mismatch.firstValue}, ${otherKey} has ${mismatch.otherValue})`
}

/** redis 7.0 server.c processCommand: the text for a command name that is not in the table. */
export function unknownCommandText(argv: readonly Uint8Array[]): string {
  let args = ''
  for (let i = 1; i < argv.length && args.length < 128; i++) {
    args += `'${latin1(argv[i]!).slice(0, 128 - args.length)}' `
  }
  return `ERR unknown command '${latin1(argv[0]!).slice(0, 128)}', with args beginning with: ${args}`
}

/** redis 7.0 server.c / RedisModule_WrongArity: the name is the command's own, lower case. */
export function wrongArityText(name: string): string {
  return `ERR wrong number of arguments for '${name.toLowerCase()}' command`
}

/** redis 7.0: the reply to a subcommand a container command does not know. */
export function unknownSubcommandText(command: string, sub: Uint8Array): string {
  return `ERR unknown subcommand '${latin1(sub).slice(0, 128)}'. Try ${command.toUpperCase()} HELP.`
}

/**
 * redis 7.0 networking.c addReplySubcommandSyntaxError: a known subcommand with arguments its
 * handler refuses. The subcommand as the client sent it (cut at 128 bytes), the command
 * upper-cased as sdstoupper does (ASCII letters only). Reply with 'latin1'.
 */
export function subcommandSyntaxText(command: Uint8Array, sub: Uint8Array): string {
  const name = latin1(command).replace(/[a-z]+/g, (letters) => letters.toUpperCase())
  return `ERR unknown subcommand or wrong number of arguments for '${latin1(sub).slice(0, 128)}'. Try ${name} HELP.`
}

/** redis 7.0 server.c processCommand: a RESP2 connection in the subscribed mode sent another command. */
export function subscribedModeText(fullName: string): string {
  return `ERR Can't execute '${fullName}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context`
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')
}
