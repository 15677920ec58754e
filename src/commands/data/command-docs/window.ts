/**
 * The APBF.* commands' arguments and complexity (bfs's sliding-window filters, commands/filters/window.ts),
 * in the form of RedisBloom's command docs (command-docs/bloom.ts). Summary and since come from
 * the command table's rows; group `module`, module `bf`, as the BF.* commands.
 */
import type { ArgumentDoc, CommandDoc } from './doc-types.js'

const KEY: ArgumentDoc = { name: 'key', type: 'key' }
const ITEMS: ArgumentDoc = { name: 'item', type: 'string', flags: ['multiple'] }
const PER_ITEM = 'O(k * n), where k is the number of hash functions and n is the number of items'
const PER_QUERY = 'O((k + l) * n), where k + l is the number of slices and n is the number of items'

export const WINDOW_DOCS: Readonly<Record<string, CommandDoc>> = {
  'apbf.reserve': {
    complexity: 'O(1)',
    arguments: [
      KEY,
      {
        name: 'window',
        type: 'oneof',
        arguments: [
          { name: 'count', type: 'pure-token', token: 'COUNT' },
          { name: 'time', type: 'pure-token', token: 'TIME' },
        ],
      },
      { name: 'error_rate', type: 'double' },
      { name: 'capacity', type: 'integer' },
      { name: 'time_span', type: 'integer', flags: ['optional'] },
    ],
  },
  'apbf.add': { complexity: PER_ITEM, arguments: [KEY, ITEMS] },
  'apbf.addat': { complexity: PER_ITEM, arguments: [KEY, { name: 'unix-time-milliseconds', type: 'unix-time' }, ITEMS] },
  'apbf.exists': { complexity: PER_QUERY, arguments: [KEY, ITEMS] },
  'apbf.info': { complexity: 'O(k + l), the number of slices', arguments: [KEY] },
}
