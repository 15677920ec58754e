/**
 * The CF.* commands' arguments and complexity, from RedisBloom's own command docs (commands.json in
 * its repository), and for CF.COMPACT and CF.DEBUG, which it does not document, in the same form.
 * Summary and since come from the command table's rows (commands/filters/cuckoo-commands.ts).
 */
import type { ArgumentDoc, CommandDoc } from './doc-types.js'

const KEY: ArgumentDoc = { name: 'key', type: 'key' }
const ITEM: ArgumentDoc = { name: 'item', type: 'string' }
const OPTIONAL = ['optional']
const ONE_ADD = 'O(k + i), where k is the number of sub-filters and i is maxIterations'
const MANY_ADDS = 'O(n * (k + i)), where n is the number of items, k is the number of sub-filters and i is maxIterations'
const ONE_LOOKUP = 'O(k), where k is the number of sub-filters'
const INSERT_ARGUMENTS: ArgumentDoc[] = [
  KEY,
  { name: 'capacity', type: 'integer', token: 'CAPACITY', flags: OPTIONAL },
  { name: 'nocreate', type: 'pure-token', token: 'NOCREATE', flags: OPTIONAL },
  { name: 'items', type: 'pure-token', token: 'ITEMS' },
  { name: 'item', type: 'string', flags: ['multiple'] },
]

export const CUCKOO_DOCS: Readonly<Record<string, CommandDoc>> = {
  'cf.reserve': {
    complexity: 'O(1)',
    arguments: [
      KEY,
      { name: 'capacity', type: 'integer' },
      { name: 'bucketsize', type: 'integer', token: 'BUCKETSIZE', flags: OPTIONAL },
      { name: 'maxiterations', type: 'integer', token: 'MAXITERATIONS', flags: OPTIONAL },
      { name: 'expansion', type: 'integer', token: 'EXPANSION', flags: OPTIONAL },
    ],
  },
  'cf.add': { complexity: ONE_ADD, arguments: [KEY, ITEM] },
  'cf.addnx': { complexity: ONE_ADD, arguments: [KEY, ITEM] },
  'cf.insert': { complexity: MANY_ADDS, arguments: INSERT_ARGUMENTS },
  'cf.insertnx': { complexity: MANY_ADDS, arguments: INSERT_ARGUMENTS },
  'cf.exists': { complexity: ONE_LOOKUP, arguments: [KEY, ITEM] },
  'cf.mexists': { complexity: 'O(k * n), where k is the number of sub-filters and n is the number of items', arguments: [KEY, { name: 'item', type: 'string', flags: ['multiple'] }] },
  'cf.del': { complexity: ONE_LOOKUP, arguments: [KEY, ITEM] },
  'cf.count': { complexity: ONE_LOOKUP, arguments: [KEY, ITEM] },
  'cf.compact': { complexity: 'O(n * k), where n is the number of buckets and k the number of sub-filters', arguments: [KEY] },
  'cf.scandump': { complexity: 'O(n), where n is the capacity', arguments: [KEY, { name: 'iterator', type: 'integer' }] },
  'cf.loadchunk': { complexity: 'O(n), where n is the capacity', arguments: [KEY, { name: 'iterator', type: 'integer' }, { name: 'data', type: 'string' }] },
  'cf.info': { complexity: 'O(1)', arguments: [KEY] },
  'cf.debug': { complexity: 'O(1)', arguments: [KEY] },
}
