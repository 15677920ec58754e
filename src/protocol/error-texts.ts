/**
 * The error catalogue: the wire text of every error reply bfs sends, the code word included
 * (`ERR`, `WRONGTYPE`, `MOVED`, ... or RedisBloom's texts that have none), in one file a reader
 * can scan. Fixed texts are the constants of {@link ERR}; a text that quotes an argument, a
 * number or a reason is a small builder function below it. Each names the source it was copied
 * from, so that a client cannot tell bfs from redis-server 7.0 with RedisBloom 2.4; "bfs's own"
 * marks the few texts neither has, with why.
 *
 * It lives in protocol/, the lowest folder whose code sends errors (the request parser's), so that
 * every layer above that replies with an error (store's -MISCONF, replication, cluster, commands,
 * the server) takes its text from here: strings only, no logic beyond putting an argument into its
 * place. The `ReplyError` class stays with the commands' kernel (commands/kernel/reply-error.ts,
 * which re-exports this file for handlers). test/architecture/error-catalogue.test.ts keeps it so:
 * no string in src/ outside this file begins with an error code word.
 *
 * Not here: log lines; the configuration's own refusals (runtime/: a value's parser words why it
 * refuses a value once, for the config file at start and for CONFIG SET, which quotes it through
 * {@link configSetFailedText}); and the tools' own messages.
 */
import type { FilterErrorCode } from '../core/filter-error.js'
import type { MergeMismatch } from '../core/merge.js'
import { MAX_WINDOW_MS } from '../core/window-filter.js'
import { MIN_WINDOW_ERROR_RATE } from '../core/window-sizing.js'

/** Wire texts, each as its source writes it. */
export const ERR = {
  // redis 7.0 server.c shared.syntaxerr and friends
  SYNTAX: 'ERR syntax error',
  NOT_INTEGER: 'ERR value is not an integer or out of range',
  NOT_FLOAT: 'ERR value is not a valid float',
  NO_SUCH_KEY: 'ERR no such key',
  WRONG_TYPE: 'WRONGTYPE Operation against a key holding the wrong kind of value',
  DB_INDEX_OUT_OF_RANGE: 'ERR DB index is out of range',
  // redis 7.0 server.c shared.err (a failed save inside DEBUG RELOAD)
  BARE: 'ERR',
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
  // bfs's own, APBF.RESERVE (RedisBloom has no window filter), in BF.RESERVE's wording
  // (RedisBloom 2.4 src/rebloom.c BFReserve_RedisCommand)
  WINDOW_BAD_TYPE: 'ERR bad window type (COUNT or TIME)',
  WINDOW_NO_TIME_SPAN: 'ERR TIME windows need a time span',
  WINDOW_COUNT_TIME_SPAN: 'ERR COUNT windows take no time span',
  WINDOW_BAD_TIME_SPAN: 'ERR bad time span',
  WINDOW_TIME_SPAN_RANGE: `ERR (0 < time span <= ${Math.floor(MAX_WINDOW_MS / 1000)})`,
  WINDOW_ERROR_RATE_TOO_SMALL: `ERR (${MIN_WINDOW_ERROR_RATE} <= error rate < 1)`,
  WINDOW_BAD_TIMESTAMP: 'ERR bad timestamp',
  // bfs: a filter loaded from an original-library file hashes with a seed RedisBloom cannot carry
  NOT_DUMPABLE: 'ERR this filter uses seeded hashing and cannot be dumped',
  // bfs: a filter that would pass the configured size limit (RedisBloom has none, issue #699)
  FILTER_TOO_LARGE: 'ERR filter would exceed the maximum filter size',
  // bfs: keys are held as latin1 strings, and V8's longest string has 2^29 - 24 characters,
  // 24 bytes short of proto-max-bulk-len's 512 MB (redis takes such a key). The number is
  // store/registry.ts MAX_KEY_BYTES, which this folder may not import; the catalogue's test
  // checks that the two agree.
  KEY_TOO_LONG: `ERR key or name longer than ${2 ** 29 - 24} bytes`,
  // bfs: a handler failed in a way it does not expect (logged); redis would have crashed
  INTERNAL: 'ERR internal error',

  // redis 7.0.15 networking.c clientAcceptHandler (its "Setup a an" included)
  PROTECTED_MODE_DENIED:
    'DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. ' +
    'In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you ' +
    "may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface " +
    'by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. ' +
    'Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, ' +
    "and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it " +
    "with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above " +
    'things in order for the server to start accepting connections from the outside.',

  // redis 7.0 server.c processCommand's refusals, in the order it checks them
  NOAUTH: 'NOAUTH Authentication required.',
  DEBUG_NOT_ALLOWED:
    'ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.',
  OOM: "OOM command not allowed when used memory > 'maxmemory'.",
  MISCONF_BGSAVE:
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. " +
    'Commands that may modify the data set are disabled, because this instance is configured to report ' +
    'errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check ' +
    'the Redis logs for details about the RDB error.',
  NOREPLICAS: 'NOREPLICAS Not enough good replicas to write.',
  READONLY: "READONLY You can't write against a read only replica.",
  MONITOR_KEYSPACE: "ERR Replica can't interact with the keyspace",
  MASTERDOWN: "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
  LOADING: 'LOADING Redis is loading the dataset in memory',
  NOT_IN_TRANSACTION: 'ERR Command not allowed inside a transaction',

  // redis 7.0 multi.c
  EXECABORT: 'EXECABORT Transaction discarded because of previous errors.',
  MULTI_NESTED: 'ERR MULTI calls can not be nested',
  DISCARD_WITHOUT_MULTI: 'ERR DISCARD without MULTI',
  WATCH_INSIDE_MULTI: 'ERR WATCH inside MULTI is not allowed',
  EXEC_WITHOUT_MULTI: 'ERR EXEC without MULTI',

  // redis 7.0 acl.c ACLCheckAllPerm's replies (server.c processCommand, rejectCommand)
  NOPERM_KEY: 'NOPERM this user has no permissions to access one of the keys used as arguments',
  NOPERM_CHANNEL: 'NOPERM this user has no permissions to access one of the channels used as arguments',
  // redis 7.0 acl.c aclCommand
  NO_ACLFILE:
    'ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.',
  DEFAULT_USER_UNDELETABLE: "ERR The 'default' user cannot be removed",
  ACL_SAVE_FAILED: 'ERR There was an error trying to save the ACLs. Please check the server logs for more information',

  // redis 7.0 acl.c authCommand and networking.c helloCommand
  WRONGPASS: 'WRONGPASS invalid username-password pair or user is disabled.',
  AUTH_WITHOUT_PASSWORD:
    'ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?',
  PROTOCOL_VERSION_NOT_INTEGER: 'ERR Protocol version is not an integer or out of range',
  NOPROTO: 'NOPROTO unsupported protocol version',
  // redis 7.0's words (7.2 added "<proto>")
  HELLO_NOAUTH:
    'NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time',
  // redis 7.0 networking.c clientSetName, clientSetinfo (7.2's CLIENT SETINFO), clientCommand
  CLIENT_NAME_CHARACTERS: 'ERR Client names cannot contain spaces, newlines or special characters.',
  CLIENT_LIB_CHARACTERS: 'ERR lib-name and lib-ver cannot contain spaces, newlines or special characters.',
  INVALID_CLIENT_ID: 'ERR Invalid client ID',
  NO_SUCH_CLIENT: 'ERR No such client',
  CLIENT_ID_NOT_POSITIVE: 'ERR client-id should be greater than 0',
  CLIENT_UNBLOCK_REASON: 'ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR',
  CLIENT_CACHING_NOT_TRACKING:
    'ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled',
  CLIENT_PAUSE_MODE: 'ERR CLIENT PAUSE mode must be WRITE or ALL',
  // bfs's own: client-side caching is not built, so CLIENT TRACKING ON is refused rather than ignored
  CLIENT_TRACKING_UNSUPPORTED: 'ERR CLIENT TRACKING is not supported by this server (bfs has no client-side caching)',
  // redis 7.0 blocked.c unblockClientOnError via CLIENT UNBLOCK ... ERROR
  UNBLOCKED_BY_CLIENT: 'UNBLOCKED client unblocked via CLIENT UNBLOCK',
  // redis 7.0 blocked.c disconnectAllBlockedClients (this node becomes a replica)
  UNBLOCKED_ROLE_CHANGE: 'UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)',
  // redis 7.0 timeout.c getTimeoutFromObjectOrReply (WAIT, CLIENT PAUSE)
  TIMEOUT_NOT_INTEGER: 'ERR timeout is not an integer or out of range',
  TIMEOUT_NEGATIVE: 'ERR timeout is negative',
  // redis 7.0 server.c monitorCommand, pubsub.c ssubscribeCommand: no blocking inside MULTI
  MONITOR_DENY_BLOCKING: "ERR MONITOR isn't allowed for DENY BLOCKING client",
  SSUBSCRIBE_DENY_BLOCKING: "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client",

  // redis 7.0 expire.c expireGenericCommand / parseExtendedExpireArgumentsOrReply
  EXPIRE_NX_XX_GT_LT: 'ERR NX and XX, GT or LT options at the same time are not compatible',
  EXPIRE_GT_LT: 'ERR GT and LT options at the same time are not compatible',
  // redis 7.0 db.c selectCommand, moveCommand, swapdbCommand, scanGenericCommand
  SELECT_IN_CLUSTER: 'ERR SELECT is not allowed in cluster mode',
  MOVE_IN_CLUSTER: 'ERR MOVE is not allowed in cluster mode',
  SAME_SOURCE_AND_DESTINATION: 'ERR source and destination objects are the same',
  SWAPDB_IN_CLUSTER: 'ERR SWAPDB is not allowed in cluster mode',
  INVALID_FIRST_DB: 'ERR invalid first DB index',
  INVALID_SECOND_DB: 'ERR invalid second DB index',
  INVALID_CURSOR: 'ERR invalid cursor',

  // redis 7.0 server.c getKeysSubcommandImpl (COMMAND GETKEYS)
  GETKEYS_INVALID_COMMAND: 'ERR Invalid command specified',
  GETKEYS_NO_KEYS: 'ERR The command has no key arguments',
  GETKEYS_ARGUMENT_COUNT: 'ERR Invalid number of arguments specified for command',
  GETKEYS_INVALID_ARGUMENTS: 'ERR Invalid arguments specified for command',
  // bfs's own: MODULE LOAD; the Bloom filter commands are built in and nothing else can be loaded
  MODULE_NOT_SUPPORTED: 'ERR bfs does not load modules: Bloom filter commands are built in',
  // redis 7.0 server.c shutdownCommand (ABORT) and prepareForShutdown (a failed save)
  NO_SHUTDOWN_IN_PROGRESS: 'ERR No shutdown in progress.',
  SHUTDOWN_FAILED: 'ERR Errors trying to SHUTDOWN. Check logs.',
  // redis 7.0 config.c configRewriteCommand
  NO_CONFIG_FILE: 'ERR The server is running without a config file',
  // redis 7.0 slowlog.c slowlogCommand
  SLOWLOG_COUNT: 'ERR count should be greater than or equal to -1',
  // redis 7.0 rdb.c saveCommand / bgsaveCommand, aof.c bgrewriteaofCommand
  BGSAVE_IN_PROGRESS: 'ERR Background save already in progress',
  BGREWRITEAOF_IN_PROGRESS: 'ERR Background append only file rewriting already in progress',
  // redis 7.0 debug.c DEBUG RELOAD's options; its load failure
  DEBUG_RELOAD_OPTIONS: 'ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.',
  DEBUG_RELOAD_LOAD_FAILED: 'ERR Error trying to load the RDB dump',
  // bfs's own: DEBUG RELOAD loads a snapshot into an empty dataset only, and needs a connection
  // to block while it loads (a socket client outside MULTI)
  DEBUG_RELOAD_MERGE:
    'ERR DEBUG RELOAD MERGE and NOFLUSH are not supported: bfs loads a snapshot into an empty dataset only',
  DEBUG_RELOAD_NEEDS_CONNECTION: 'ERR DEBUG RELOAD needs a client connection outside a transaction',

  // redis 7.0 replication.c replconfCommand, syncCommand, replicaofCommand; server.c waitCommand
  SYNC_PENDING_OUTPUT: 'ERR SYNC and PSYNC are invalid with pending output',
  FILTERED_REPLICA_NEEDS_EOF: 'ERR Filtered replica requires EOF capability',
  WAIT_ON_REPLICA:
    'ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.',
  REPLICAOF_FROM_REPLICA: 'ERR Command is not valid when client is a replica.',
  INVALID_MASTER_PORT: 'ERR Invalid master port',
  // redis 7.0 replication.c updateSlavesWaitingBgsave: the full sync's save failed
  BGSAVE_FAILED_FOR_REPLICATION: "ERR BGSAVE failed, replication can't continue",
  // bfs's own: PSYNC, SYNC and REPLCONF from a session with no socket (the HTTP API, the log's replay)
  NEEDS_CONNECTION: 'ERR this command needs a connection',

  // redis 7.0 cluster.c clusterCommand and its subcommands
  CLUSTER_DISABLED: 'ERR This instance has cluster support disabled',
  INVALID_SLOT: 'ERR Invalid slot',
  INVALID_SLOT_OR_COUNT: 'ERR Invalid slot or number of keys',
  INVALID_OR_OUT_OF_RANGE_SLOT: 'ERR Invalid or out of range slot',
  FLUSHSLOTS_NOT_EMPTY: 'ERR DB must be empty to perform CLUSTER FLUSHSLOTS.',
  EPOCH_WITH_OTHER_NODES: 'ERR The user can assign a config epoch only when the node does not know any other node.',
  EPOCH_ALREADY_SET: 'ERR Node config epoch is already non-zero',
  TARGET_NOT_MASTER: 'ERR Target node is not a master',
  SETSLOT_ON_REPLICA: 'ERR Please use SETSLOT only with masters.',
  SETSLOT_SYNTAX: 'ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP',
  FORGET_MYSELF: "ERR I tried hard but I can't forget myself...",
  FORGET_MY_MASTER: "ERR Can't forget my master!",
  RESET_WITH_KEYS: "ERR CLUSTER RESET can't be called with master nodes containing keys",
  NODE_NOT_MASTER: 'ERR The specified node is not a master',
  REPLICATE_MYSELF: "ERR Can't replicate myself",
  REPLICATE_A_REPLICA: 'ERR I can only replicate a master, not a replica.',
  REPLICATE_NOT_EMPTY: 'ERR To set a master the node must be empty and without assigned slots.',
  FAILOVER_ON_MASTER: 'ERR You should send CLUSTER FAILOVER to a replica',
  FAILOVER_MASTER_UNKNOWN: "ERR I'm a replica but my master is unknown to me",
  FAILOVER_MASTER_DOWN: 'ERR Master is down or failed, please use CLUSTER FAILOVER FORCE',
  // redis 7.0 cluster.c getNodeByQuery's refusals (clusterRedirectClient)
  CLUSTERDOWN_UNBOUND: 'CLUSTERDOWN Hash slot not served',
  CROSSSLOT: "CROSSSLOT Keys in request don't hash to the same slot",
  CLUSTERDOWN: 'CLUSTERDOWN The cluster is down',
  CLUSTERDOWN_READS_ONLY: 'CLUSTERDOWN The cluster is down and only accepts read commands',
  TRYAGAIN: 'TRYAGAIN Multiple keys request during rehashing of slot',

  // redis 7.0 cluster.c restoreCommand, verifyDumpPayload, createDumpPayload's reader
  BUSYKEY: 'BUSYKEY Target key name already exists.',
  BAD_PAYLOAD: 'ERR DUMP payload version or checksum are wrong',
  BAD_DATA_FORMAT: 'ERR Bad data format',
  INVALID_IDLETIME: 'ERR Invalid IDLETIME value, must be >= 0',
  INVALID_FREQ: 'ERR Invalid FREQ value, must be >= 0 and <= 255',
  INVALID_TTL: 'ERR Invalid TTL value, must be >= 0',
  // redis 7.0 cluster.c migrateCommand
  MIGRATE_KEYS_WITH_KEY: 'ERR When using MIGRATE KEYS option, the key argument must be set to the empty string',
  // bfs's own: MIGRATE blocks its client while it talks to the target, which a transaction or a
  // session without a socket cannot do
  MIGRATE_NEEDS_CONNECTION: 'ERR MIGRATE cannot run inside MULTI/EXEC or from this client in bfs',
  // bfs's own: BFS.RESTORE-PART, the parts of a filter too large for one RESTORE
  RESTORE_PART_SEQUENCE: 'ERR BFS.RESTORE-PART out of sequence: no such transfer, or a part is missing',
} as const

/** Core outcomes mapped to wire text (RedisBloom 2.4 src/rebloom.c bfInsertCommon). */
export const FILTER_ERROR_TEXT: Record<FilterErrorCode, string> = {
  'non-scaling-full': 'ERR non scaling filter is full',
  'too-large': ERR.FILTER_TOO_LARGE,
}

/**
 * The request parser's refusals (redis 7.0 networking.c processMultibulkBuffer and
 * processInlineBuffer), without the `ERR ` that {@link protocolErrorText} puts before them.
 */
export const PROTOCOL_ERROR = {
  INVALID_MULTIBULK_LENGTH: 'Protocol error: invalid multibulk length',
  INVALID_BULK_LENGTH: 'Protocol error: invalid bulk length',
  TOO_BIG_MBULK_COUNT: 'Protocol error: too big mbulk count string',
  TOO_BIG_BULK_COUNT: 'Protocol error: too big bulk count string',
  TOO_BIG_INLINE: 'Protocol error: too big inline request',
  UNBALANCED_QUOTES: 'Protocol error: unbalanced quotes in request',
} as const

/** redis 7.0 networking.c processMultibulkBuffer: a bulk that does not start with '$' (the byte as it came). */
export function expectedDollarText(got: string): string {
  return `Protocol error: expected '$', got '${got}'`
}

/** redis 7.0 networking.c: the reply to a protocol error (reply with 'latin1'). */
export function protocolErrorText(message: string): string {
  return `ERR ${message}`
}

/**
 * redis 7.0 networking.c addReplyError: a reason without a code word is sent after `ERR `. For
 * reasons: an ACL rule's refusal ({@link ACL_RULE_ERROR}), a path refused ({@link UNSAFE_PATH}),
 * a failed save's or a failed MIGRATE's own reason.
 */
export function errText(reason: string): string {
  return `ERR ${reason}`
}

// ---- Commands and their arguments ----

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
  return subcommandSyntaxWords(name, latin1(sub).slice(0, 128))
}

/**
 * redis 7.0 networking.c addReplySubcommandSyntaxError, for a command and subcommand the caller
 * has decoded (ACL as acl.c names it, CLUSTER's subcommands as their handlers decode them).
 */
export function subcommandSyntaxWords(command: string, sub: string): string {
  return `ERR unknown subcommand or wrong number of arguments for '${sub}'. Try ${command} HELP.`
}

/** redis 7.0 server.c processCommand: a RESP2 connection in the subscribed mode sent another command. */
export function subscribedModeText(fullName: string): string {
  return `ERR Can't execute '${fullName}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context`
}

/** redis 7.0 object.c getRangeLongFromObjectOrReply: an integer outside [min, max] ("must between" sic). */
export function valueOutOfRangeText(min: number, max: number): string {
  return `ERR value is out of range, value must between ${min} and ${max}`
}

// ---- Refusals before a command runs ----

/** redis 7.0 server.c writeCommandsDeniedByDiskError: the append-only log's last write failed (strerror's words). */
export function aofWriteErrorText(reason: string): string {
  return `MISCONF Errors writing to the AOF file: ${reason}`
}

/** redis 7.0 acl.c addACLLogEntry / rejectCommand: a command the user may not run. */
export function nopermCommandText(fullName: string): string {
  return `NOPERM this user has no permissions to run the '${fullName}' command`
}

/** redis 7.0 multi.c execCommand: a queued command the user's rules no longer allow, and why. */
export function aclChangedInExecText(reason: 'command' | 'key' | 'channel'): string {
  const why =
    reason === 'command'
      ? 'no permission to execute the command or subcommand'
      : reason === 'key'
        ? 'no permission to touch the specified keys'
        : 'no permission to access one of the channels used as arguments'
  return `NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: ${why}`
}

/** redis 7.0 multi.c execCommandAbort: a refused EXEC, with the refusal's reason without its "ERR ". */
export function execAbortText(refusal: string): string {
  return `EXECABORT Transaction discarded because of: ${refusal.startsWith('ERR ') ? refusal.slice(4) : refusal}`
}

/** redis 7.0 cluster.c clusterRedirectClient: the slot has moved to another node for good. */
export function movedText(slot: number, address: string): string {
  return `MOVED ${slot} ${address}`
}

/** redis 7.0 cluster.c clusterRedirectClient: the slot is migrating; ask the target this once. */
export function askText(slot: number, address: string): string {
  return `ASK ${slot} ${address}`
}

// ---- Filters ----

/**
 * bfs BF.MERGE: sources not reserved alike, naming what differs and the two keys, e.g.
 * `ERR filters differ in capacity (src1 has 1000, src2 has 2000)`; a difference in a later layer
 * names it: `... in capacity of layer 2 (...)`. Keys are latin1 strings (reply with 'latin1').
 */
export function mergeMismatchText(mismatch: MergeMismatch, firstKey: string, otherKey: string): string {
  const where = mismatch.layer === 0 ? '' : ` of layer ${mismatch.layer + 1}`
  return `ERR filters differ in ${mismatch.field}${where} (${firstKey} has ${mismatch.firstValue}, ${otherKey} has ${mismatch.otherValue})`
}

/** RedisBloom 2.4 src/rebloom.c CFReserve_RedisCommand: an option's value that is no integer. */
export function cfUnparsableOptionText(keyword: string): string {
  return `Couldn't parse ${keyword}`
}

/** RedisBloom 2.4 src/rebloom.c CFReserve_RedisCommand: an option's value out of its range. */
export function cfOptionRangeText(keyword: string, min: number, max: number): string {
  return `${keyword}: value must be an integer between ${min} and ${max}, inclusive.`
}

// ---- Keyspace ----

/** redis 7.0 expire.c parseExtendedExpireArgumentsOrReply: an option it does not know (reply with 'latin1'). */
export function unsupportedOptionText(option: string): string {
  return `ERR Unsupported option ${option}`
}

/** redis 7.0 expire.c expireGenericCommand: a time that overflows, with the command's name as sent, lower case. */
export function invalidExpireTimeText(command: string): string {
  return `ERR invalid expire time in '${command}' command`
}

// ---- Connections and clients ----

/** redis 7.0 networking.c helloCommand: an option it does not know (reply with 'latin1'). */
export function helloSyntaxText(option: string): string {
  return `ERR Syntax error in HELLO option '${option}'`
}

/** redis 7.0 networking.c clientCommand (CLIENT NO-EVICT and friends): an option it does not know. */
export function unrecognizedOptionText(option: string): string {
  return `ERR Unrecognized option '${option}'`
}

/** redis 7.0 networking.c getClientTypeByName's callers: CLIENT KILL TYPE / CLIENT LIST TYPE. */
export function unknownClientTypeText(name: string): string {
  return `ERR Unknown client type '${name}'`
}

/** redis 7.0 networking.c clientKillCommand: USER names no user (reply with 'latin1'). */
export function noSuchUserText(user: string): string {
  return `ERR No such user '${user}'`
}

// ---- ACL ----

/** redis 7.0 acl.c aclCommand CAT: a category it does not know (reply with 'latin1'). */
export function unknownCategoryText(category: string): string {
  return `ERR Unknown category '${category}'`
}

/** redis 7.0 acl.c aclCommand GENPASS: bits outside 1..max. */
export function genpassBitsText(maxBits: number): string {
  return `ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to ${maxBits}`
}

/** redis 7.0 acl.c aclCommand DRYRUN: no such user (reply with 'latin1'). */
export function userNotFoundText(user: string): string {
  return `ERR User '${user}' not found`
}

/** redis 7.0 acl.c aclCommand DRYRUN: no such command (reply with 'latin1'). */
export function commandNotFoundText(command: string): string {
  return `ERR Command '${command}' not found`
}

/** redis 7.0 acl.c ACLLoadFromFile: the aclfile could not be opened (strerror's words). */
export function aclFileOpenText(file: string, reason: string): string {
  return `ERR Error loading ACLs, opening file '${file}': ${reason}`
}

/**
 * redis 7.0 acl.c ACLSetUserStringError (and ACLSetUser's errno): why one ACL rule is refused.
 * ACL SETUSER sends one after `ERR ` inside {@link aclModifierText}; ACL LOAD and the aclfile at
 * start list them in the texts below.
 */
export const ACL_RULE_ERROR = {
  UNKNOWN_NAME: 'Unknown command or category name in ACL',
  SYNTAX: 'Syntax error',
  AFTER_ALLKEYS:
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
  AFTER_ALLCHANNELS:
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels",
  SUBCOMMAND_FIRST_ARG: 'Allowing first-arg of a subcommand is not supported',
  NO_SUCH_PASSWORD: 'The password you are trying to remove from the user does not exist',
  BAD_HASH: 'The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters',
  // redis 7.0 acl.c ACLLoadConfiguredUsers
  USERNAME_SPACES: "Usernames can't contain spaces or null characters",
} as const

/** redis 7.0 acl.c aclCommand SETUSER (ACLMergeSelectorArguments): a selector never closed. */
export function aclUnmatchedSelectorText(start: string): string {
  return `Unmatched parenthesis in acl selector starting at '${start}'.`
}

/** redis 7.0 acl.c aclCommand SETUSER: the first rule refused, and why ({@link ACL_RULE_ERROR}). */
export function aclModifierText(rule: string, reason: string): string {
  return `Error in ACL SETUSER modifier '${rule}': ${reason}`
}

/** redis 7.0 acl.c ACLLoadConfiguredUsers: a `user` line of the config file names a user twice. */
export function aclDuplicateUserText(name: string): string {
  return `Duplicate user '${name}' found`
}

/** redis 7.0 acl.c ACLLoadConfiguredUsers: a `user` line of the config file refused, and why. */
export function aclUserDeclarationText(name: string, reason: string): string {
  return `Error in user declaration '${name}': ${reason}`
}

// redis 7.0 acl.c ACLLoadFromFile: the problems of an aclfile's lines (`where` is `file:line`), each
// as redis appends it to the list it replies with.

/** redis 7.0 acl.c ACLLoadFromFile: a line that is not `user <name> ...`. */
export function aclFileNoUserText(where: string): string {
  return `${where} should start with user keyword followed by the username. `
}

/** redis 7.0 acl.c ACLLoadFromFile: a user name with a space or NUL (redis's stray leading quote included). */
export function aclFileBadUsernameText(where: string, name: string): string {
  return `'${where}: username '${name}' contains invalid characters. `
}

/** redis 7.0 acl.c ACLLoadFromFile: a user named twice. */
export function aclFileDuplicateUserText(name: string, line: number): string {
  return `WARNING: Duplicate user '${name}' found on line ${line}. `
}

/** redis 7.0 acl.c ACLLoadFromFile: a selector never closed. */
export function aclFileUnmatchedSelectorText(where: string): string {
  return `${where}: Unmatched parenthesis in selector definition.`
}

/** redis 7.0 acl.c ACLLoadFromFile: a rule naming an unknown command or category. */
export function aclFileOperationText(where: string, operation: string, reason: string): string {
  return `${where}: Error in applying operation '${operation}': ${reason}. `
}

/** redis 7.0 acl.c ACLLoadFromFile: the line's first other refused rule. */
export function aclFileRuleText(where: string, reason: string): string {
  return `${where}: ${reason}. `
}

/** redis 7.0 acl.c ACLLoadFromFile: the problems found, and that nothing was changed. */
export function aclFileNotLoadedText(problems: string): string {
  return `${problems}WARNING: ACL errors detected, no change to the previously active ACL rules was performed`
}

// ---- Server administration ----

/** redis 7.0 config.c configSetCommand: a name that is no config key. */
export function configSetUnknownText(name: string): string {
  return `ERR Unknown option or number of arguments for CONFIG SET - '${name}'`
}

/**
 * redis 7.0 config.c configSetCommand: a value refused, with the argument it concerns and why
 * ("can't set immutable config", "duplicate parameter", a value's own reason from runtime/'s
 * parsers, "Unable to turn on AOF. Check server logs." of updateAppendonly, "Unable to update TLS
 * configuration. Check server logs." of applyTlsCfg).
 */
export function configSetFailedText(name: string, reason: string): string {
  return `ERR CONFIG SET failed (possibly related to argument '${name}') - ${reason}`
}

/** redis 7.0 config.c configRewriteCommand: the rewrite failed (strerror's words). */
export function configRewriteFailedText(reason: string): string {
  return `ERR Rewriting config file: ${reason}`
}

/** redis 7.0 latency.c latencyCommand HISTORY/GRAPH: an event with no samples (reply with 'latin1'). */
export function noLatencySamplesText(event: string): string {
  return `ERR No samples available for event '${event}'`
}

/** bfs's own: BF.SAVE / BF.LOAD (RedisBloom has no such commands), the file that could not be written or read. */
export function filterFileText(
  verb: 'cannot write' | 'cannot read' | 'bad filter file',
  file: string,
  reason: string,
): string {
  return `ERR ${verb} ${file}: ${reason}`
}

/**
 * bfs's own: why BF.SAVE or BF.LOAD (RedisBloom has no such commands) refuses a client's path
 * (store/safe-path.ts: it must stay under `dir` and away from bfs's own files), sent after `ERR `.
 */
export const UNSAFE_PATH = {
  NOT_UTF8: 'path is not valid UTF-8',
  EMPTY: 'path is empty',
  NUL_BYTE: 'path contains a NUL byte',
  ABSOLUTE: 'path must be relative to dir',
  DOT_DOT: "path must not contain '..'",
  DIRECTORY: 'path names a directory, not a file',
  NO_SUCH_DIRECTORY: 'no such directory under dir',
  SYMLINK_ESCAPES: 'path escapes dir through a symlink',
  OWN_FILES: "path is inside bfs's own files",
  DANGLING_SYMLINK: 'path is a dangling symlink',
  NO_SUCH_FILE: 'no such file under dir',
} as const

/** bfs's own: a path into one of bfs's directories under `dir` (the snapshot's, the log's). */
export function ownDirectoryPathText(directory: string): string {
  return `path is inside bfs's own '${directory}' directory`
}

/** bfs's own: a path that is one of bfs's files (`what`: "logfile", "TLS key", ...) or a temporary of one. */
export function ownFilePathText(what: string, temporary: boolean): string {
  return temporary ? `path is a temporary of bfs's own ${what}` : `path is bfs's own ${what}`
}

// ---- Replication ----

/** redis 7.0 replication.c replconfCommand: an ip-address of NET_HOST_STR_LEN bytes or more. */
export function replconfIpTooLongText(bytes: number): string {
  return `ERR REPLCONF ip-address provided by replica instance is too long: ${bytes} bytes`
}

/** redis 7.0 replication.c replconfCommand: an rdb-filter-only option it does not know. */
export function unsupportedRdbFilterText(option: string): string {
  return `ERR Unsupported rdb-filter-only option: ${option}`
}

/** redis 7.0 replication.c replconfCommand: an option it does not know (reply with 'latin1'). */
export function unrecognizedReplconfText(option: string): string {
  return `ERR Unrecognized REPLCONF option: ${option}`
}

// ---- Cluster ----

/** redis 7.0 cluster.c: a node id (or, for REPLICAOF in cluster mode, bfs's host:port) it does not know. */
export function unknownNodeText(node: string): string {
  return `ERR Unknown node ${node}`
}

/** redis 7.0 cluster.c clusterCommand SETSLOT: a node id it does not know. */
export function dontKnowNodeText(id: string): string {
  return `ERR I don't know about node ${id}`
}

/** redis 7.0 cluster.c clusterCommand ADDSLOTS / DELSLOTS (and their RANGE forms): why a slot is refused. */
export function slotRefusalText(slot: number, why: 'unassigned' | 'busy' | 'repeated'): string {
  return why === 'unassigned'
    ? `ERR Slot ${slot} is already unassigned`
    : why === 'busy'
      ? `ERR Slot ${slot} is already busy`
      : `ERR Slot ${slot} specified multiple times`
}

/** redis 7.0 cluster.c clusterCommand ADDSLOTSRANGE / DELSLOTSRANGE: a range given backwards. */
export function slotRangeReversedText(start: number, end: number): string {
  return `ERR start slot number ${start} is greater than end slot number ${end}`
}

/** redis 7.0 cluster.c clusterCommand SET-CONFIG-EPOCH: a negative epoch. */
export function invalidConfigEpochText(epoch: number): string {
  return `ERR Invalid config epoch specified: ${epoch}`
}

/** redis 7.0 cluster.c clusterCommand (clusterSaveConfigOrDie's reply where it may fail). */
export function nodesConfSaveText(reason: string): string {
  return `ERR error saving the cluster node config: ${reason}`
}

/** redis 7.0 cluster.c clusterCommand SETSLOT MIGRATING / IMPORTING: who owns the slot. */
export function slotOwnerText(slot: number, owner: 'not-mine' | 'mine'): string {
  return owner === 'not-mine'
    ? `ERR I'm not the owner of hash slot ${slot}`
    : `ERR I'm already the owner of hash slot ${slot}`
}

/** redis 7.0 cluster.c clusterCommand SETSLOT NODE: the slot still has keys here. */
export function slotHasKeysText(slot: number): string {
  return `ERR Can't assign hashslot ${slot} to a different node while I still hold keys for this hash slot.`
}

/** redis 7.0 cluster.c clusterCommand MEET: a port or address that cannot be used. */
export function meetRefusalText(what: 'TCP base port' | 'TCP bus port' | 'node address', value: string): string {
  return `ERR Invalid ${what} specified: ${value}`
}

// ---- Migration ----

/** bfs's own: DUMP of a filter whose file cannot be encoded (its size past the format's limits). */
export function notDumpableText(reason: string): string {
  return `ERR the filter cannot be dumped: ${reason}`
}

/** bfs's own: BFS.RESTORE-PART bounds the transfers a server keeps open at once. */
export function tooManyTransfersText(max: number): string {
  return `ERR BFS.RESTORE-PART too many transfers open (${max}): finish or abandon one first`
}

/** redis 7.0 cluster.c migrateCommand: the target's own error, after its '-'. */
export function migrateTargetErrorText(error: string): string {
  return `ERR Target instance replied with error: ${error}`
}

/** redis 7.0 cluster.c migrateCommand's socket errors (connecting, writing, reading). */
export function migrateIoErrorText(stage: 'connecting' | 'writing' | 'reading'): string {
  return stage === 'connecting'
    ? 'IOERR error or timeout connecting to the client'
    : `IOERR error or timeout ${stage} to target instance`
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')
}
