/**
 * The BF.* commands' arguments and complexity, from RedisBloom's own command docs (commands.json in
 * its repository; RedisBloom 2.4 registers none with redis, so redis-cli shows it nothing), and
 * those of bfs's own commands in the same form. Summary and since come from the command table's
 * rows; group is `module`, module `bf`, as redis 7.0 reports a module's commands.
 */
import type { ArgumentDoc, CommandDoc } from './doc-types.js'

const KEY: ArgumentDoc = { name: 'key', type: 'key' }
const ITEM: ArgumentDoc = { name: 'item', type: 'string' }
const ITEMS: ArgumentDoc = { name: 'item', type: 'string', flags: ['multiple'] }
const OPTIONAL = ['optional']
const ONE_HASH = 'O(k), where k is the number of hash functions used by the last sub-filter'
const PER_ITEM = 'O(k * n), where k is the number of hash functions and n is the number of items'
const PER_BIT = 'O(n), where n is the capacity'

export const BLOOM_DOCS: Readonly<Record<string, CommandDoc>> = {
  'bf.reserve': {
    complexity: 'O(1)',
    arguments: [
      KEY,
      { name: 'error_rate', type: 'double' },
      { name: 'capacity', type: 'integer' },
      { name: 'expansion', type: 'integer', token: 'EXPANSION', flags: OPTIONAL },
      { name: 'nonscaling', type: 'pure-token', token: 'NONSCALING', flags: OPTIONAL },
    ],
  },
  'bf.add': { complexity: ONE_HASH, arguments: [KEY, ITEM] },
  'bf.madd': { complexity: PER_ITEM, arguments: [KEY, ITEMS] },
  'bf.added': { complexity: PER_ITEM, arguments: [KEY, ITEMS] },
  'bf.insert': {
    complexity: PER_ITEM,
    arguments: [
      KEY,
      { name: 'capacity', type: 'integer', token: 'CAPACITY', flags: OPTIONAL },
      { name: 'error', type: 'double', token: 'ERROR', flags: OPTIONAL },
      { name: 'expansion', type: 'integer', token: 'EXPANSION', flags: OPTIONAL },
      { name: 'nocreate', type: 'pure-token', token: 'NOCREATE', flags: OPTIONAL },
      { name: 'nonscaling', type: 'pure-token', token: 'NONSCALING', flags: OPTIONAL },
      { name: 'items', type: 'pure-token', token: 'ITEMS' },
      ITEMS,
    ],
  },
  'bf.exists': { complexity: ONE_HASH, arguments: [KEY, ITEM] },
  'bf.mexists': { complexity: PER_ITEM, arguments: [KEY, ITEMS] },
  'bf.info': {
    complexity: 'O(1)',
    arguments: [
      KEY,
      {
        name: 'single_value',
        type: 'oneof',
        flags: OPTIONAL,
        arguments: ['capacity', 'size', 'filters', 'items', 'expansion'].map((name) => ({ name, type: 'pure-token', token: name.toUpperCase() })),
      },
    ],
  },
  'bf.card': { complexity: 'O(1)', arguments: [KEY] },
  'bf.scandump': { complexity: PER_BIT, arguments: [KEY, { name: 'iterator', type: 'integer' }] },
  'bf.loadchunk': { complexity: PER_BIT, arguments: [KEY, { name: 'iterator', type: 'integer' }, { name: 'data', type: 'string' }] },
  // Not in commands.json; its complexity as RedisBloom's later command info gives it.
  'bf.debug': { complexity: 'O(n), where n is the number of sub-filters', arguments: [KEY] },
  // bfs's own.
  'bf.merge': {
    complexity: 'O(n), where n is the total size of the source filters in bits',
    arguments: [{ name: 'destkey', type: 'key' }, { name: 'sourcekey', type: 'key', flags: ['multiple'] }],
    // As redis 7.0's SUNIONSTORE: the destination overwritten, the sources read (COMMAND INFO, GETKEYSANDFLAGS, ACL).
    key_specs: [
      { flags: ['OW', 'update'], begin_search: { type: 'index', spec: { index: 1 } }, find_keys: { type: 'range', spec: { lastkey: 0, keystep: 1, limit: 0 } } },
      { flags: ['RO', 'access'], begin_search: { type: 'index', spec: { index: 2 } }, find_keys: { type: 'range', spec: { lastkey: -1, keystep: 1, limit: 0 } } },
    ],
  },
  'bfs.restore-part': {
    complexity: 'O(n), where n is the size of the part in bytes',
    arguments: [
      KEY, { name: 'ttl', type: 'integer' }, { name: 'transfer-id', type: 'string' }, { name: 'seq', type: 'integer' }, { name: 'data', type: 'string' },
      { name: 'replace', type: 'pure-token', token: 'REPLACE', flags: OPTIONAL }, { name: 'absttl', type: 'pure-token', token: 'ABSTTL', flags: OPTIONAL },
    ],
  },
  'bf.save': { complexity: 'O(n), where n is the size of the filter in bits', arguments: [KEY, { name: 'path', type: 'string' }] },
  'bf.load': {
    complexity: 'O(n), where n is the size of the filter in bits',
    arguments: [KEY, { name: 'path', type: 'string' }, { name: 'replace', type: 'pure-token', token: 'REPLACE', flags: OPTIONAL }],
  },
  'bfs.health': { complexity: 'O(n), where n is the number of sub-filters', arguments: [KEY] },
}
