/**
 * bfs as a library: the filter core, the server, and their types.
 *
 * ```ts
 * import { createServer, ScalableBloomFilter } from 'bfs'
 * const server = createServer({ config: { port: 0, dir: './data' } })
 * await server.start()
 * ```
 */
export { ScalableBloomFilter } from './core/scalable-filter.js'
export type { FilterOptions, FilterParts, LayerParts, FilterInfo, Hashing, AddOutcome } from './core/scalable-filter.js'
export { isFilterError } from './core/filter-error.js'
export type { FilterError, FilterErrorCode } from './core/filter-error.js'
export { createServer, BfsServer } from './server/server.js'
export type { ServerOptions, ShutdownOptions } from './server/server.js'
export { DEFAULT_CONFIG, CONFIG_KEYS, loadConfig, ConfigError } from './server/config.js'
export type { Config, ConfigKey } from './server/config.js'
export { BFS_VERSION, REDIS_VERSION } from './server/version.js'
export { ReplyError, ERR } from './commands/reply-error.js'
export type { CommandSpec, CommandHandler, CommandFlag } from './commands/table.js'
export type { CommandContext, ClientSession, ServerContext } from './commands/context.js'
