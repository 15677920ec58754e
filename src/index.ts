/**
 * bfs as a library: the filter in process, its file codec, the server, and the extension hook.
 *
 * ```ts
 * import { BloomFilter, CuckooFilter, createServer } from 'bloom-filter-server'
 *
 * const seen = new BloomFilter({ capacity: 1_000_000, errorRate: 0.001 })
 * seen.add('https://example.com/')           // true: new
 *
 * const sessions = new CuckooFilter({ capacity: 100_000 })  // deletes and counts (CF.*)
 * sessions.add('s-1'); sessions.delete('s-1')
 *
 * const server = createServer({ config: { port: 6379, dir: './data' } })
 * await server.start()                         // loads ./data first
 * server.registry.set('seen', seen.scalable)  // serve it: BF.EXISTS seen https://example.com/ → 1
 * ```
 *
 * Every export below carries its own documentation at its definition.
 *
 * @packageDocumentation
 */
export { ScalableBloomFilter } from './core/scalable-filter.js'
export type { FilterOptions, FilterParts, LayerParts, FilterInfo, Hashing, AddOutcome } from './core/scalable-filter.js'
export { PiecedBitmap } from './core/pieced-bitmap.js'
export type { Bitmap } from './core/pieced-bitmap.js'
export { isFilterError } from './core/filter-error.js'
export type { FilterError, FilterErrorCode } from './core/filter-error.js'
export { createServer, BfsServer } from './server/server.js'
export type { ServerOptions, ShutdownOptions } from './server/server.js'
export { DEFAULT_CONFIG, CONFIG_KEYS, ConfigError } from './runtime/config.js'
export { loadConfig } from './runtime/config-load.js'
export type { Config, ConfigKey } from './runtime/config.js'
export { BFS_VERSION, REDIS_VERSION } from './runtime/version.js'
export { ReplyError, ERR, FILTER_ERROR_TEXT } from './commands/kernel/reply-error.js'
export type {
  CommandSpec,
  CommandHandler,
  ExtensionHandler,
  CommandFlag,
  CommandEntry,
} from './commands/kernel/context.js'
export type { CommandDefinition, CommandTable } from './commands/kernel/table.js'
export type { CommandArgs } from './protocol/command-args.js'
export { COMMAND_FLAGS } from './commands/kernel/context.js'
export { defineCommand } from './commands/kernel/table.js'
export type { CommandContext, ClientSession, ServerContext } from './commands/kernel/context.js'
/** The client's selected database (SELECT): where an extension command's keys live. */
export { keyspace } from './commands/kernel/context.js'
export type { Databases } from './store/databases.js'
export type { Logger } from './runtime/logger.js'
export { parseInteger, parseDouble, isKeyword } from './commands/kernel/args.js'
export type { ReplyWriter } from './protocol/reply-writer.js'
export type { Protocol } from './protocol/reply-sink.js'
export { FilterRegistry } from './store/registry.js'
export type { FilterEntry, BloomEntry, WindowEntry, StoredFilter } from './store/registry.js'
export type { Stats } from './runtime/stats.js'
export { BloomFilter, FilterFullError, DEFAULT_EXPANSION, itemBytes } from './library/bloom-filter.js'
export type { BloomFilterOptions, Item } from './library/bloom-filter.js'
export { CuckooFilter, CuckooFilterFullError } from './library/cuckoo-filter.js'
export type { CuckooFilterOptions, CuckooFilterInfo } from './library/cuckoo-filter.js'
export type { FilterHealth, HealthVerdict } from './core/filter-health.js'
export { SlidingWindowFilter } from './library/sliding-window-filter.js'
export type { SlidingWindowOptions } from './library/sliding-window-filter.js'
export { WindowFilter } from './core/window-filter.js'
export type { WindowOptions, WindowParts, WindowInfo, WindowKind } from './core/window-filter.js'
export type { BloomLayer } from './core/bloom-layer.js'
export { encodeFilter, decodeFilter, encodedLength } from './format/codec.js'
export type { FilterRecord } from './format/codec.js'
export { DecodeError } from './format/decode-error.js'
export type { DecodeErrorCode } from './format/decode-error.js'
/** BF.* and APBF.* through an ioredis `Cluster`, each command sent to its key's shard (library/cluster-commands.ts). */
export { bloomCluster, clusterSlotOf, BLOOM_CLUSTER_COMMANDS } from './library/cluster-commands.js'
export type {
  BloomCluster,
  BloomClusterOptions,
  BloomClusterCommandName,
  ClusterArgument,
  ClusterCommandLike,
  ClusterCommandClass,
  ClusterLike,
} from './library/cluster-commands.js'
