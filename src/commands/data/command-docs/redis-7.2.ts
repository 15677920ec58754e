/**
 * Subcommands bfs has that redis 7.0 lacks, documented as redis 7.2 does (src/commands/*.json of
 * redis 7.2), in 7.0's reply form.
 */
import type { CommandDoc } from './doc-types.js'

export const REDIS_72_DOCS: Readonly<Record<string, CommandDoc>> = {
  'client|setinfo': {
    summary: 'Sets information specific to the client or connection.', since: '7.2.0', group: 'connection',
    complexity: 'O(1)',
    arguments: [
      { name: 'attr', type: 'oneof', arguments: [{ name: 'libname', type: 'string', token: 'lib-name' }, { name: 'libver', type: 'string', token: 'lib-ver' }] },
    ],
  },
  'client|no-touch': {
    summary: 'Controls whether commands sent by the client affect the LRU/LFU of accessed keys.', since: '7.2.0', group: 'connection',
    complexity: 'O(1)',
    arguments: [
      { name: 'enabled', type: 'oneof', arguments: [{ name: 'on', type: 'pure-token', token: 'ON' }, { name: 'off', type: 'pure-token', token: 'OFF' }] },
    ],
  },
}
