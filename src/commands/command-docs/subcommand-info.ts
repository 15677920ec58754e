/**
 * COMMAND INFO's rows for the subcommands bfs has (its tenth element, a container's subcommands),
 * as redis 7.0.15 answers them: flags, [first, last, step] and ACL categories, taken from a real
 * redis-server's reply (tips and key specs come from the docs of the same name, command-docs/).
 * A subcommand redis 7.0 lacks (7.2's CLIENT SETINFO, NO-TOUCH) is listed with its container's
 * flags and no keys.
 */

export interface SubcommandInfo {
  readonly flags: readonly string[]
  readonly keys: readonly [number, number, number]
  readonly categories: readonly string[]
}

export const SUBCOMMAND_INFO: Readonly<Record<string, SubcommandInfo>> = {
  'client|caching': { flags: ['noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@slow', '@connection'] },
  'client|getname': { flags: ['noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@slow', '@connection'] },
  'client|getredir': { flags: ['noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@slow', '@connection'] },
  'client|help': { flags: ['loading', 'stale'], keys: [0, 0, 0], categories: ['@slow', '@connection'] },
  'client|id': { flags: ['noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@slow', '@connection'] },
  'client|info': { flags: ['noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@slow', '@connection'] },
  'client|kill': { flags: ['admin', 'noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous', '@connection'] },
  'client|list': { flags: ['admin', 'noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous', '@connection'] },
  'client|no-evict': { flags: ['admin', 'noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous', '@connection'] },
  'client|pause': { flags: ['admin', 'noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous', '@connection'] },
  'client|reply': { flags: ['noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@slow', '@connection'] },
  'client|setname': { flags: ['noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@slow', '@connection'] },
  'client|tracking': { flags: ['noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@slow', '@connection'] },
  'client|trackinginfo': { flags: ['noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@slow', '@connection'] },
  'client|unblock': { flags: ['admin', 'noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous', '@connection'] },
  'client|unpause': { flags: ['admin', 'noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous', '@connection'] },
  'command|count': { flags: ['loading', 'stale'], keys: [0, 0, 0], categories: ['@slow', '@connection'] },
  'command|docs': { flags: ['loading', 'stale'], keys: [0, 0, 0], categories: ['@slow', '@connection'] },
  'command|getkeys': { flags: ['loading', 'stale'], keys: [0, 0, 0], categories: ['@slow', '@connection'] },
  'command|getkeysandflags': { flags: ['loading', 'stale'], keys: [0, 0, 0], categories: ['@slow', '@connection'] },
  'command|help': { flags: ['loading', 'stale'], keys: [0, 0, 0], categories: ['@slow', '@connection'] },
  'command|info': { flags: ['loading', 'stale'], keys: [0, 0, 0], categories: ['@slow', '@connection'] },
  'command|list': { flags: ['loading', 'stale'], keys: [0, 0, 0], categories: ['@slow', '@connection'] },
  'config|get': { flags: ['admin', 'noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous'] },
  'config|help': { flags: ['loading', 'stale'], keys: [0, 0, 0], categories: ['@slow'] },
  'config|resetstat': { flags: ['admin', 'noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous'] },
  'config|rewrite': { flags: ['admin', 'noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous'] },
  'config|set': { flags: ['admin', 'noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous'] },
  'latency|doctor': { flags: ['admin', 'noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous'] },
  'latency|graph': { flags: ['admin', 'noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous'] },
  'latency|help': { flags: ['loading', 'stale'], keys: [0, 0, 0], categories: ['@slow'] },
  'latency|histogram': { flags: ['admin', 'noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous'] },
  'latency|history': { flags: ['admin', 'noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous'] },
  'latency|latest': { flags: ['admin', 'noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous'] },
  'latency|reset': { flags: ['admin', 'noscript', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous'] },
  'memory|doctor': { flags: [], keys: [0, 0, 0], categories: ['@slow'] },
  'memory|help': { flags: ['loading', 'stale'], keys: [0, 0, 0], categories: ['@slow'] },
  'memory|usage': { flags: ['readonly'], keys: [2, 2, 1], categories: ['@read', '@slow'] },
  'module|list': { flags: ['admin', 'noscript'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous'] },
  'module|load': { flags: ['admin', 'noscript', 'no_async_loading'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous'] },
  'module|loadex': { flags: ['admin', 'noscript', 'no_async_loading'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous'] },
  'module|unload': { flags: ['admin', 'noscript', 'no_async_loading'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous'] },
  'pubsub|channels': { flags: ['pubsub', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@pubsub', '@slow'] },
  'pubsub|help': { flags: ['loading', 'stale'], keys: [0, 0, 0], categories: ['@slow'] },
  'pubsub|numpat': { flags: ['pubsub', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@pubsub', '@slow'] },
  'pubsub|numsub': { flags: ['pubsub', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@pubsub', '@slow'] },
  'pubsub|shardchannels': { flags: ['pubsub', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@pubsub', '@slow'] },
  'pubsub|shardnumsub': { flags: ['pubsub', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@pubsub', '@slow'] },
  'slowlog|get': { flags: ['admin', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous'] },
  'slowlog|help': { flags: ['loading', 'stale'], keys: [0, 0, 0], categories: ['@slow'] },
  'slowlog|len': { flags: ['admin', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous'] },
  'slowlog|reset': { flags: ['admin', 'loading', 'stale'], keys: [0, 0, 0], categories: ['@admin', '@slow', '@dangerous'] },
}
